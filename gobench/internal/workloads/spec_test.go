package workloads

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"gobench/internal/cli"
)

func TestRegistryConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range All() {
		if seen[s.Name] {
			t.Errorf("workload %q registered twice", s.Name)
		}
		seen[s.Name] = true
		if !slices.Contains(s.Variants, s.DefaultVariant) {
			t.Errorf("%s: default variant %q not in %v", s.Name, s.DefaultVariant, s.Variants)
		}
		if s.Run == nil {
			t.Errorf("%s: no Run", s.Name)
		}
		for _, p := range s.Params {
			if err := p.Validate(p.Default); err != nil {
				t.Errorf("%s: default %s=%q is invalid: %v", s.Name, p.Name, p.Default, err)
			}
		}
	}
	for _, name := range []string{"sleep", "cpu_loops"} {
		if _, ok := Lookup(name); !ok {
			t.Errorf("workload %q missing", name)
		}
	}
}

func TestCatalog(t *testing.T) {
	c := Catalog()
	sleep, ok := c["sleep"]
	if !ok {
		t.Fatal("sleep missing from catalog")
	}
	if sleep.DefaultVariant != "waitgroup" || sleep.Params["kernel"] != "xorshift" || sleep.Params["work"] != "50000" {
		t.Errorf("sleep entry: %+v", sleep)
	}
	loops := c["cpu_loops"]
	if loops.DefaultVariant != "plain" || loops.Params["u"] != "10" || loops.Params["inner"] != "100000" {
		t.Errorf("cpu_loops entry: %+v", loops)
	}
}

func TestNewContextDefaults(t *testing.T) {
	c, err := sleepSpec.NewContext(cli.Args{N: 5, Params: []cli.Param{kv("work", "7")}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if c.Variant != "waitgroup" || c.N != 5 || c.Threads != 3 {
		t.Errorf("context: %+v", c)
	}
	if c.Params["work"] != "7" || c.Params["kernel"] != "xorshift" {
		t.Errorf("params: %v", c.Params)
	}
	if c.Int("work") != 7 {
		t.Errorf("Int(work) = %d", c.Int("work"))
	}
}

func TestNewContextErrors(t *testing.T) {
	p := func(k, v string) []cli.Param { return []cli.Param{{Key: k, Value: v}} }
	fixture := &Spec{Name: "fixture", Variants: []string{"a"}, DefaultVariant: "a", NeedsDataDir: true}
	cases := []struct {
		spec *Spec
		args cli.Args
	}{
		{sleepSpec, cli.Args{N: 1, Variant: "nope"}},
		{sleepSpec, cli.Args{N: 1, Params: p("bogus", "1")}},
		{sleepSpec, cli.Args{N: 1, Params: p("kernel", "fast")}},
		{sleepSpec, cli.Args{N: 1, Params: p("work", "-1")}},
		{sleepSpec, cli.Args{N: 1, Params: p("work", "abc")}},
		{sleepSpec, cli.Args{N: 1, Params: p("work", "")}},
		{sleepSpec, cli.Args{N: 1, Params: p("work", "1e3")}},
		{sleepSpec, cli.Args{N: 1, DataDir: "/tmp"}},
		{cpuLoopsSpec, cli.Args{N: 1, Variant: "waitgroup"}},
		{cpuLoopsSpec, cli.Args{N: 1, Params: p("u", "0")}},
		{cpuLoopsSpec, cli.Args{N: 1, Params: p("u", "4294967296")}},
		{cpuLoopsSpec, cli.Args{N: 1, Params: p("inner", "-5")}},
		{cpuLoopsSpec, cli.Args{N: 1, Params: p("kernel", "xorshift")}},
		{fixture, cli.Args{N: 1}},
	}
	for _, c := range cases {
		_, err := c.spec.NewContext(c.args, 1)
		var ue *cli.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%s %+v: got %v, want a UsageError", c.spec.Name, c.args, err)
		}
	}
	if _, err := fixture.NewContext(cli.Args{N: 1, DataDir: "/d"}, 1); err != nil {
		t.Errorf("fixture with --data-dir: %v", err)
	}
}

// TestNewContextDSN: a server workload takes BENCH_DSN (cli.Args.DSN) and
// needs it; any other workload ignores it.
func TestNewContextDSN(t *testing.T) {
	for _, spec := range All() {
		if spec.NeedsDSN {
			continue
		}
		a := cli.Args{N: 1, DSN: "mysql://u:p@h/db"}
		if spec.NeedsDataDir {
			a.DataDir = "/d"
		}
		c, err := spec.NewContext(a, 1)
		if err != nil || c.DSN != "" {
			t.Errorf("%s with a DSN: %+v, %v", spec.Name, c, err)
		}
	}
	for _, spec := range []*Spec{mysqlSpec, postgresSpec} {
		c, err := spec.NewContext(cli.Args{N: 1, DSN: "x://u:p@h/db"}, 1)
		if err != nil || c.DSN != "x://u:p@h/db" {
			t.Errorf("%s: %+v, %v", spec.Name, c, err)
		}
		_, err = spec.NewContext(cli.Args{N: 1}, 1)
		var ue *cli.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "BENCH_DSN") {
			t.Errorf("%s without a DSN: %v, want a UsageError naming BENCH_DSN", spec.Name, err)
		}
	}
}
