package lcg

import "testing"

func TestFirstValues(t *testing.T) {
	want := []uint64{42, 2027382, 1226992407, 551494037}
	got := Values(42, len(want))
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("x[%d] = %d, want %d", i, got[i], want[i])
		}
	}
}

func TestGenMatchesValues(t *testing.T) {
	g := New(17)
	for i, v := range Values(17, 1000) {
		if got := g.Next(); got != v {
			t.Fatalf("element %d: Next() = %d, Values = %d", i, got, v)
		}
	}
}

func TestMod(t *testing.T) {
	want := []uint64{42, 2027382 % 300, 1226992407 % 300, 551494037 % 300}
	got := Mod(42, 4, 300)
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d = %d, want %d", i, got[i], want[i])
		}
	}
}

func TestStaysInRange(t *testing.T) {
	for i, v := range Values(42, 100000) {
		if v == 0 || v >= Modulus {
			t.Fatalf("element %d = %d out of range", i, v)
		}
	}
}
