// Command gobench runs one benchmark workload and prints its result as a
// single JSON line on stdout.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"gobench/internal/cli"
	"gobench/internal/workloads"
)

func main() {
	start := time.Now()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, start))
}

// run executes the command line and returns the exit status:
// 0 on success, 1 on a runtime failure, 2 on a usage error.
// The database URL comes from the environment variable BENCH_DSN, never from
// argv; no message shows its password.
func run(argv []string, stdout, stderr io.Writer, start time.Time) int {
	dsn := os.Getenv(cli.DSNEnv)
	fail := func(code int, err error) int {
		msg := err.Error()
		if code == 2 {
			msg += "; " + cli.Usage
		}
		fmt.Fprintf(stderr, "gobench: %s\n", cli.OneLine(cli.Scrub(msg, dsn)))
		return code
	}
	if err := cli.RaiseNoFile(); err != nil {
		return fail(1, err)
	}
	args, err := cli.Parse(argv)
	if errors.Is(err, cli.ErrHelp) {
		if _, err := fmt.Fprintln(stdout, cli.Usage); err != nil {
			return fail(1, err)
		}
		return 0
	}
	if err != nil {
		return fail(2, err)
	}
	args.DSN = dsn
	if args.Workload == "list" {
		if err := writeJSON(stdout, listing{Lang: "go", Workloads: workloads.Catalog()}); err != nil {
			return fail(1, err)
		}
		return 0
	}
	spec, ok := workloads.Lookup(args.Workload)
	if !ok {
		return fail(2, fmt.Errorf("unknown workload %q", args.Workload))
	}

	// The CPU set the program was started on (the launcher's --cpus sets
	// it), read before the workload starts anything.
	cpus, err := cli.AllowedCPUs()
	if err != nil {
		return fail(1, err)
	}

	// --threads sets GOMAXPROCS. Without it the runtime's documented default
	// stands (package runtime, GOMAXPROCS, "Default": the GOMAXPROCS
	// environment variable if set, otherwise chosen from the logical CPUs,
	// the affinity mask and, on Linux, the cgroup CPU quota), and the result
	// line says so. The harness passes --threads on every sample.
	threadsSource := cli.ThreadsFromFlag
	if args.Threads > 0 {
		runtime.GOMAXPROCS(args.Threads)
	} else {
		threadsSource = cli.ThreadsFromDefault
	}
	threads := runtime.GOMAXPROCS(0)

	ctx, err := spec.NewContext(args, threads)
	if err != nil {
		return fail(2, err)
	}
	out, err := spec.Run(ctx)
	if err != nil {
		return fail(1, fmt.Errorf("%s: %w", spec.Name, err))
	}
	threads = ctx.Threads // a workload may set its own (Context.SetThreads)
	span, err := ctx.Timer.Span()
	if err != nil {
		return fail(1, fmt.Errorf("%s: %w", spec.Name, err))
	}

	res := cli.Result{
		Lang:          "go",
		Workload:      spec.Name,
		Variant:       ctx.Variant,
		N:             ctx.N,
		Threads:       threads,
		ThreadsSource: threadsSource,
		CPUs:          cpus,
		ElapsedNs:     span.Elapsed.Nanoseconds(),
		SetupNs:       span.Start.Sub(start).Nanoseconds(),
		Checksum:      cli.FormatChecksum(out.Checksum),
		TasksOK:       out.TasksOK,
		Params:        ctx.Params,
		Runtime:       cli.RuntimeInfo{Version: runtime.Version(), GOMAXPROCS: threads},
		T0MonoNs:      span.T0MonoNs,
		Extra:         ctx.Extra(),
	}
	if span.HasSpawns {
		ns := span.Spawned.Nanoseconds()
		res.SpawnedNs = &ns
	}
	if err := writeJSON(stdout, res); err != nil {
		return fail(1, err)
	}
	return 0
}

// listing is the output of `gobench list`.
type listing struct {
	Lang      string                            `json:"lang"`
	Workloads map[string]workloads.CatalogEntry `json:"workloads"`
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}
