package workloads

import (
	"testing"

	"gobench/internal/cli"
)

// runWorkload validates a command line against a workload and runs it.
func runWorkload(name, variant string, n, threads int, params ...cli.Param) (Outcome, error) {
	spec, ok := Lookup(name)
	if !ok {
		return Outcome{}, &cli.UsageError{Msg: "unknown workload " + name}
	}
	c, err := spec.NewContext(cli.Args{Workload: name, N: n, Variant: variant, Params: params}, threads)
	if err != nil {
		return Outcome{}, err
	}
	out, err := spec.Run(c)
	if err != nil {
		return Outcome{}, err
	}
	if _, err := c.Timer.Span(); err != nil {
		return Outcome{}, err
	}
	return out, nil
}

// runWith is runWorkload that fails the test on error.
func runWith(t *testing.T, name, variant string, n, threads int, params ...cli.Param) Outcome {
	t.Helper()
	out, err := runWorkload(name, variant, n, threads, params...)
	if err != nil {
		t.Fatalf("%s/%s: %v", name, variant, err)
	}
	return out
}

// kv builds one --param pair.
func kv(key, value string) cli.Param {
	return cli.Param{Key: key, Value: value}
}
