package workloads

import (
	"errors"
	"fmt"
	"testing"

	"gobench/internal/cli"
)

func TestPingPongChecksums(t *testing.T) {
	cases := []struct {
		n    int
		want uint64
	}{
		{1, 1},
		{2, 3},
		{1000, 0x7a314},
		{100000, 100000 * 100001 / 2},
	}
	for _, mode := range []string{"lockstep", "pipelined"} {
		for _, buffer := range []string{"0", "1", "64"} {
			for _, threads := range []int{1, 2} {
				for _, c := range cases {
					name := fmt.Sprintf("%s/buffer=%s/threads=%d/n=%d", mode, buffer, threads, c.n)
					t.Run(name, func(t *testing.T) {
						ctx, err := pingPongSpec.NewContext(cli.Args{N: c.n, Params: []cli.Param{
							kv("mode", mode), kv("buffer", buffer)}}, threads)
						if err != nil {
							t.Fatal(err)
						}
						out, err := pingPongSpec.Run(ctx)
						if err != nil {
							t.Fatal(err)
						}
						if out.Checksum != c.want || out.TasksOK != int64(c.n) {
							t.Errorf("got checksum %016x, tasks_ok %d, want %016x, %d",
								out.Checksum, out.TasksOK, c.want, c.n)
						}
						span, err := ctx.Timer.Span()
						if err != nil {
							t.Fatal(err)
						}
						extra := ctx.Extra()
						if len(extra) != 1 || extra[0].Key != "round_trips_per_s" {
							t.Fatalf("extra keys %v", extra)
						}
						rate, ok := extra[0].Value.(float64)
						want := float64(c.n) / span.Elapsed.Seconds()
						if !ok || rate <= 0 || rate != want {
							t.Errorf("round_trips_per_s = %v, want %v", extra[0].Value, want)
						}
					})
				}
			}
		}
	}
}

func TestPingPongParams(t *testing.T) {
	e := Catalog()["ping_pong"]
	if fmt.Sprint(e.Variants) != "[channels]" || e.DefaultVariant != "channels" ||
		len(e.Params) != 2 || e.Params["buffer"] != "1" || e.Params["mode"] != "lockstep" {
		t.Errorf("catalog entry %+v", e)
	}
	// `list` states the limits the harness's plan must keep within
	if b := e.Limits["buffer"]; b.Min == nil || b.Max == nil || *b.Min != 0 || *b.Max != maxPingPongBuffer ||
		fmt.Sprint(e.Limits["mode"].Choices) != "[lockstep pipelined]" {
		t.Errorf("limits %+v", e.Limits)
	}
	bad := []cli.Args{
		{N: 1, Params: []cli.Param{kv("buffer", "-1")}},
		{N: 1, Params: []cli.Param{kv("buffer", "one")}},
		{N: 1, Params: []cli.Param{kv("buffer", fmt.Sprint(maxPingPongBuffer+1))}},
		{N: 1, Params: []cli.Param{kv("mode", "async")}},
		{N: 1, Params: []cli.Param{kv("mode", "")}},
		{N: 1, Params: []cli.Param{kv("iterations", "1")}},
		{N: 1, Variant: "multi-thread"},
	}
	for _, args := range bad {
		_, err := pingPongSpec.NewContext(args, 1)
		var ue *cli.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%+v: got %v, want a UsageError", args, err)
		}
	}
}
