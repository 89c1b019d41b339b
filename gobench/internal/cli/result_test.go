package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFormatChecksum(t *testing.T) {
	cases := map[uint64]string{
		0:                  "0000000000000000",
		0x71c:              "000000000000071c",
		0x466afa5d3cf3e4c4: "466afa5d3cf3e4c4",
		^uint64(0):         "ffffffffffffffff",
	}
	for in, want := range cases {
		if got := FormatChecksum(in); got != want {
			t.Errorf("FormatChecksum(%#x) = %q, want %q", in, got, want)
		}
	}
}

func TestResultJSONExtras(t *testing.T) {
	spawned := int64(5)
	r := Result{
		Lang: "go", Workload: "w", Variant: "v", N: 3,
		Params:    map[string]string{"b": "2", "a": "1"},
		SpawnedNs: &spawned,
		Extra:     []Field{{"bytes", 7}, {"note", "x"}},
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.HasPrefix(s, `{"lang":"go","workload":"w","variant":"v","n":3,`) {
		t.Errorf("unexpected key order: %s", s)
	}
	if !strings.HasSuffix(s, `"spawned_ns":5,"bytes":7,"note":"x"}`) {
		t.Errorf("extras not appended: %s", s)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("invalid JSON %s: %v", s, err)
	}
}

func TestResultJSONOmitsSpawned(t *testing.T) {
	b, err := json.Marshal(Result{Lang: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "spawned_ns") {
		t.Errorf("spawned_ns present without MarkSpawned: %s", b)
	}
}

func TestResultJSONDuplicateExtra(t *testing.T) {
	for _, extra := range [][]Field{
		{{"checksum", 1}},
		{{"x", 1}, {"x", 2}},
	} {
		if _, err := json.Marshal(Result{Extra: extra}); err == nil {
			t.Errorf("extras %v: expected an error", extra)
		}
	}
}
