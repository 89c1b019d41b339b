package workloads

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"gobench/internal/cli"
)

func TestTvtStartDelay(t *testing.T) {
	cases := map[int]time.Duration{
		0: 0,
		// 2654435761 mod 200000.
		1: 35761 * time.Microsecond,
		// 5308871522 mod 2^32 = 1013904226.
		2: 104226 * time.Microsecond,
		// 10000 * 2654435761 = 26544357610000; mod 2^32 = 1459720720.
		10000: 120720 * time.Microsecond,
	}
	for i, want := range cases {
		if got := tvtStartDelay(i); got != want {
			t.Errorf("tvtStartDelay(%d) = %v, want %v", i, got, want)
		}
	}
	for i := range 100000 {
		if d := tvtStartDelay(i); d < 0 || d >= 200*time.Millisecond {
			t.Fatalf("tvtStartDelay(%d) = %v, out of range", i, d)
		}
	}
}

func TestThreadsVsTasksChecksums(t *testing.T) {
	cases := []struct {
		n          int
		iterations string
	}{
		{1, "2"}, {10, "2"}, {1000, "2"}, {100, "0"}, {3, "5"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("n=%d/iterations=%s", c.n, c.iterations), func(t *testing.T) {
			t.Parallel()
			out := runWith(t, "threads_vs_tasks", "goroutine", c.n, 2, kv("iterations", c.iterations))
			var it uint64
			if _, err := fmt.Sscan(c.iterations, &it); err != nil {
				t.Fatal(err)
			}
			if want := uint64(c.n) * it; out.Checksum != want || out.TasksOK != int64(c.n) {
				t.Errorf("got checksum %016x, tasks_ok %d, want %016x, %d", out.Checksum, out.TasksOK, want, c.n)
			}
		})
	}
}

func TestThreadsVsTasksTiming(t *testing.T) {
	// Worker 2 starts last of the first three (104.226 ms), then sleeps 3 * 10 ms.
	c, err := threadsVsTasksSpec.NewContext(cli.Args{N: 3, Params: []cli.Param{kv("iterations", "3")}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := threadsVsTasksSpec.Run(c); err != nil {
		t.Fatal(err)
	}
	span, err := c.Timer.Span()
	if err != nil {
		t.Fatal(err)
	}
	if min := 104226*time.Microsecond + 30*time.Millisecond; span.Elapsed < min {
		t.Errorf("elapsed %v < %v", span.Elapsed, min)
	}
	if !span.HasSpawns || span.Spawned > span.Elapsed {
		t.Errorf("bad spawn mark %+v", span)
	}
}

func TestThreadsVsTasksParams(t *testing.T) {
	e := Catalog()["threads_vs_tasks"]
	if fmt.Sprint(e.Variants) != "[goroutine]" || e.DefaultVariant != "goroutine" ||
		len(e.Params) != 1 || e.Params["iterations"] != "100" {
		t.Errorf("catalog entry %+v", e)
	}
	bad := []cli.Args{
		{N: 1, Params: []cli.Param{kv("iterations", "-1")}},
		{N: 1, Params: []cli.Param{kv("iterations", "x")}},
		{N: 1, Params: []cli.Param{kv("duration_ms", "1")}},
		{N: 1, Variant: "thread"},
	}
	for _, args := range bad {
		_, err := threadsVsTasksSpec.NewContext(args, 1)
		var ue *cli.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%+v: got %v, want a UsageError", args, err)
		}
	}
}
