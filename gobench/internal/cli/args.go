// Package cli holds what every workload shares: the command line, the timer,
// the result line and process limits.
package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Usage is the one-line synopsis printed with every usage error.
const Usage = "usage: gobench <workload> --n N [--variant V] [--threads T] [--data-dir DIR] [--param KEY=VALUE ...] | gobench list; mysql and postgres read the database URL from the environment variable " + DSNEnv

// ErrHelp is returned by Parse when help was requested.
var ErrHelp = errors.New("help requested")

// UsageError is a bad command line; the program exits with status 2.
type UsageError struct {
	Msg string
}

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, a...)}
}

// Args is the parsed command line. Zero values mean "not given".
type Args struct {
	Workload string
	N        int
	Variant  string
	Threads  int
	DataDir  string
	// DSN is the database URL from the environment variable BENCH_DSN, set
	// by the caller; Parse never sets it (there is no --dsn flag).
	DSN string
	// Params holds --param KEY=VALUE pairs in the order given.
	Params []Param
}

// Param is one --param KEY=VALUE pair.
type Param struct {
	Key, Value string
}

// Parse parses the arguments after the program name.
// "list" is returned as a workload named "list" with no flags.
func Parse(argv []string) (Args, error) {
	var a Args
	if len(argv) == 0 {
		return a, usagef("missing workload")
	}
	if argv[0] == "-h" || argv[0] == "--help" || argv[0] == "help" {
		return a, ErrHelp
	}
	if strings.HasPrefix(argv[0], "-") {
		return a, usagef("first argument must be a workload name, got %q", argv[0])
	}
	a.Workload = argv[0]
	if a.Workload == "list" {
		if len(argv) > 1 {
			return a, usagef("list takes no arguments")
		}
		return a, nil
	}
	seen := map[string]bool{}
	rest := argv[1:]
	for len(rest) > 0 {
		arg := rest[0]
		rest = rest[1:]
		if arg == "-h" || arg == "--help" {
			return a, ErrHelp
		}
		name, value, hasValue := strings.Cut(arg, "=")
		if name == "--dsn" {
			// Checked first: whatever follows is a secret and is never echoed.
			return a, usagef("--dsn is not accepted (a password in the command line is visible to every user): set the environment variable %s to the database URL instead", DSNEnv)
		}
		if !strings.HasPrefix(name, "--") {
			return a, usagef("unexpected argument %q", arg)
		}
		if !hasValue {
			if len(rest) == 0 {
				return a, usagef("flag %s needs a value", name)
			}
			value, rest = rest[0], rest[1:]
		}
		if name != "--param" {
			if seen[name] {
				return a, usagef("flag %s given twice", name)
			}
			seen[name] = true
		}
		if err := a.set(name, value); err != nil {
			return a, err
		}
	}
	if !seen["--n"] {
		return a, usagef("missing --n")
	}
	return a, nil
}

func (a *Args) set(name, value string) error {
	switch name {
	case "--n":
		n, err := positiveInt(value)
		if err != nil {
			return usagef("--n: %v", err)
		}
		a.N = n
	case "--threads":
		n, err := positiveInt(value)
		if err != nil {
			return usagef("--threads: %v", err)
		}
		a.Threads = n
	case "--variant":
		if value == "" {
			return usagef("--variant: empty value")
		}
		a.Variant = value
	case "--data-dir":
		if value == "" {
			return usagef("--data-dir: empty value")
		}
		a.DataDir = value
	case "--param":
		k, v, ok := strings.Cut(value, "=")
		if !ok || k == "" {
			return usagef("--param: want KEY=VALUE, got %q", value)
		}
		for _, p := range a.Params {
			if p.Key == k {
				return usagef("--param %s given twice", k)
			}
		}
		a.Params = append(a.Params, Param{Key: k, Value: v})
	default:
		return usagef("unknown flag %s", name)
	}
	return nil
}

func positiveInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a positive integer, got %q", s)
	}
	return n, nil
}
