package workloads

import (
	"fmt"
	"testing"

	"gobench/internal/cli"
)

func TestCPULoopsChecksums(t *testing.T) {
	cases := []struct {
		n        int
		inner, u string
		want     uint64
		fullSize bool
	}{
		// the checksum is N x a[i]: every element holds the same value
		{100, "1000", "10", 100 * 0x11be, false},
		{1000, "1000", "7", 1000 * 0xbdf, false},
		// The default grid point: 10^9 iterations, run once per variant.
		{10000, "100000", "10", 10000 * 0x6ddfa, true},
		// r = 42 % 5 = 2; inner = 0 leaves only r.
		{5, "0", "3", 5 * 2, false},
		// Remainder path of the unrolled loop: sum of j%4 for j < 7 is 9, r = 42 % 50.
		{50, "7", "4", 50 * (9 + 42), false},
	}
	for _, variant := range cpuLoopsSpec.Variants {
		for _, threads := range []int{1, 3} {
			for _, c := range cases {
				name := fmt.Sprintf("%s/threads=%d/n=%d/inner=%s/u=%s", variant, threads, c.n, c.inner, c.u)
				t.Run(name, func(t *testing.T) {
					if c.fullSize && (testing.Short() || threads != 3) {
						t.Skip("full-size grid point: once per variant, not with -short")
					}
					out := runWith(t, "cpu_loops", variant, c.n, threads,
						cli.Param{Key: "inner", Value: c.inner}, cli.Param{Key: "u", Value: c.u})
					if out.Checksum != c.want {
						t.Errorf("checksum = %016x, want %016x", out.Checksum, c.want)
					}
					if out.TasksOK != int64(c.n) {
						t.Errorf("tasks_ok = %d, want %d", out.TasksOK, c.n)
					}
				})
			}
		}
	}
}

func TestCPULoopsWraps(t *testing.T) {
	// With u > inner every j % u is j, so a[0] = inner*(inner-1)/2 + r,
	// which exceeds 2^32 here and must wrap.
	const inner, u, r = 1 << 17, 1 << 31, 5
	want := uint32((uint64(inner)*(inner-1)/2 + r) % (1 << 32))
	loops := map[string]func([]uint32, uint32, uint32, uint32){
		"plain":    loopsPlain,
		"local":    loopsLocal,
		"unrolled": loopsUnrolled,
		"parallel": func(a []uint32, inner, u, r uint32) { loopsParallel(a, inner, u, r, 4) },
	}
	for name, loop := range loops {
		a := make([]uint32, 3)
		loop(a, inner, u, r)
		for i, got := range a {
			if got != want {
				t.Errorf("%s: a[%d] = %d, want %d", name, i, got, want)
			}
		}
	}
}

func TestCPULoopsNoSpawnMark(t *testing.T) {
	c, err := cpuLoopsSpec.NewContext(cli.Args{N: 4, Variant: "parallel",
		Params: []cli.Param{kv("inner", "10")}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cpuLoopsSpec.Run(c); err != nil {
		t.Fatal(err)
	}
	span, err := c.Timer.Span()
	if err != nil {
		t.Fatal(err)
	}
	if span.HasSpawns {
		t.Error("cpu_loops must not report spawned_ns")
	}
}
