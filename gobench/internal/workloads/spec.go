package workloads

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"

	"gobench/internal/cli"
)

// Spec describes one workload.
type Spec struct {
	Name           string
	Variants       []string
	DefaultVariant string
	Params         []Param
	NeedsDataDir   bool
	// NeedsDSN: the workload talks to a database server whose URL comes
	// from the environment variable BENCH_DSN (cli.Args.DSN).
	NeedsDSN bool
	// Run performs the workload. It must start c.Timer immediately before the
	// first task is spawned and stop it once the last result is collected.
	Run func(c *Context) (Outcome, error)
}

// Param is one --param knob of a workload: one of Choices when they are
// set, otherwise a base-10 integer in [Min, Max]. Specs are plain data so
// that the compiler lays them out statically: the program builds nothing at
// start-up for workloads it does not run.
type Param struct {
	Name     string
	Default  string
	Choices  []string
	Min, Max int64
}

// Outcome is what a workload run produces.
type Outcome struct {
	Checksum uint64
	TasksOK  int64
}

// Context is everything a workload run needs. All fields are validated
// before Run is called.
type Context struct {
	N       int
	Variant string
	// Threads is the effective GOMAXPROCS.
	Threads int
	DataDir string
	// DSN is the database URL of a server workload (from BENCH_DSN).
	DSN string
	// Params holds every param of the workload, defaults included.
	Params map[string]string
	Timer  *cli.Timer
	extra  []cli.Field
}

// SetThreads runs the rest of the workload with GOMAXPROCS n and reports n:
// a workload whose work is one loop on one thread takes 1, as Rust's takes no
// runtime and reports 1 (docs/workloads.md, "The same threads"). Call it
// during setup, before c.Timer.Start().
func (c *Context) SetThreads(n int) {
	runtime.GOMAXPROCS(n)
	c.Threads = n
}

// Defaults returns the default value of every param.
func (s *Spec) Defaults() map[string]string {
	m := make(map[string]string, len(s.Params))
	for _, p := range s.Params {
		m[p.Name] = p.Default
	}
	return m
}

// NewContext validates the command line against the spec and returns the
// context for Run. Every error it returns is a *cli.UsageError.
func (s *Spec) NewContext(a cli.Args, threads int) (*Context, error) {
	usage := func(format string, args ...any) error {
		return &cli.UsageError{Msg: s.Name + ": " + fmt.Sprintf(format, args...)}
	}
	c := &Context{
		N:       a.N,
		Variant: a.Variant,
		Threads: threads,
		DataDir: a.DataDir,
		Params:  s.Defaults(),
		Timer:   new(cli.Timer),
	}
	if c.Variant == "" {
		c.Variant = s.DefaultVariant
	}
	if !slices.Contains(s.Variants, c.Variant) {
		return nil, usage("unknown variant %q (have %v)", c.Variant, s.Variants)
	}
	switch {
	case s.NeedsDataDir && c.DataDir == "":
		return nil, usage("--data-dir is required")
	case !s.NeedsDataDir && c.DataDir != "":
		return nil, usage("does not take --data-dir")
	case s.NeedsDSN && a.DSN == "":
		return nil, usage("needs a database server: set the environment variable %s to its URL, scheme://user:pass@host:port/db", cli.DSNEnv)
	}
	// A workload without a server ignores BENCH_DSN.
	if s.NeedsDSN {
		c.DSN = a.DSN
	}
	for _, kv := range a.Params {
		i := slices.IndexFunc(s.Params, func(p Param) bool { return p.Name == kv.Key })
		if i < 0 {
			return nil, usage("unknown param %q", kv.Key)
		}
		if err := s.Params[i].Validate(kv.Value); err != nil {
			return nil, usage("param %s=%q: %v", kv.Key, kv.Value, err)
		}
		c.Params[kv.Key] = kv.Value
	}
	return c, nil
}

// Int returns a validated integer param. A param that does not parse here
// means the spec's validator is wrong, so it panics.
func (c *Context) Int(name string) int64 {
	v, ok := c.Params[name]
	if !ok {
		panic("workloads: no param " + name)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		panic(fmt.Sprintf("workloads: param %s=%q passed validation but is not an integer", name, v))
	}
	return n
}

// SetExtra adds a workload-specific key to the result object.
func (c *Context) SetExtra(key string, value any) {
	c.extra = append(c.extra, cli.Field{Key: key, Value: value})
}

// Extra returns the keys added with SetExtra, in order.
func (c *Context) Extra() []cli.Field {
	return c.extra
}

// Validate checks a value of the param.
func (p Param) Validate(s string) error {
	if p.Choices != nil {
		if !slices.Contains(p.Choices, s) {
			return fmt.Errorf("must be one of %v", p.Choices)
		}
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer")
	}
	if n < p.Min || n > p.Max {
		return fmt.Errorf("must be between %d and %d", p.Min, p.Max)
	}
	return nil
}
