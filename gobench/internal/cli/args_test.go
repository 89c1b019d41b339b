package cli

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseForms(t *testing.T) {
	a, err := Parse([]string{"sleep", "--n", "10", "--variant=chan-shared", "--threads=3",
		"--param", "work=5", "--param=kernel=article", "--data-dir", "/d"})
	if err != nil {
		t.Fatal(err)
	}
	want := Args{
		Workload: "sleep", N: 10, Variant: "chan-shared", Threads: 3, DataDir: "/d",
		Params: []Param{{"work", "5"}, {"kernel", "article"}},
	}
	if !reflect.DeepEqual(a, want) {
		t.Errorf("got %+v, want %+v", a, want)
	}
}

func TestParseList(t *testing.T) {
	a, err := Parse([]string{"list"})
	if err != nil || a.Workload != "list" {
		t.Fatalf("got %+v, %v", a, err)
	}
}

func TestParseHelp(t *testing.T) {
	for _, argv := range [][]string{{"--help"}, {"-h"}, {"sleep", "--help"}} {
		if _, err := Parse(argv); !errors.Is(err, ErrHelp) {
			t.Errorf("%q: got %v, want ErrHelp", argv, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	bad := [][]string{
		{},
		{"--n", "1"},
		{"sleep"},
		{"sleep", "--n"},
		{"sleep", "--n", "0"},
		{"sleep", "--n", "-3"},
		{"sleep", "--n", "abc"},
		{"sleep", "--n=1.5"},
		{"sleep", "--n", "1", "--n", "2"},
		{"sleep", "--n", "1", "--threads", "0"},
		{"sleep", "--n", "1", "--bogus", "x"},
		{"sleep", "--n", "1", "extra"},
		{"sleep", "--n", "1", "--param", "novalue"},
		{"sleep", "--n", "1", "--param", "=v"},
		{"sleep", "--n", "1", "--param", "a=1", "--param", "a=2"},
		{"sleep", "--n", "1", "--variant="},
		{"list", "--n", "1"},
	}
	for _, argv := range bad {
		_, err := Parse(argv)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: got %v, want a UsageError", argv, err)
		}
	}
}

// TestParseRefusesDSN: the database URL never comes from argv; the message
// names BENCH_DSN and never echoes what followed --dsn.
func TestParseRefusesDSN(t *testing.T) {
	for _, argv := range [][]string{
		{"mysql", "--n", "1", "--dsn", "mysql://u:secret@h/db"},
		{"mysql", "--dsn=mysql://u:secret@h/db", "--n", "1"},
		{"sleep", "--n", "1", "--dsn"},
		{"postgres", "--n", "1", "--dsn="},
	} {
		_, err := Parse(argv)
		var ue *UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: got %v, want a UsageError", argv, err)
			continue
		}
		if !strings.Contains(err.Error(), "BENCH_DSN") || strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: message %q", argv, err)
		}
	}
}
