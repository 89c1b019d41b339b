package workloads

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"gobench/internal/cli"
)

// extraInt64 returns an int64 extra key of a finished run.
func extraInt64(t *testing.T, c *Context, key string) int64 {
	t.Helper()
	for _, f := range c.Extra() {
		if f.Key == key {
			v, ok := f.Value.(int64)
			if !ok {
				t.Fatalf("extra %s = %#v, want an int64", key, f.Value)
			}
			return v
		}
	}
	t.Fatalf("extra %s missing from %v", key, c.Extra())
	return 0
}

func TestIdleTasksChecksums(t *testing.T) {
	for _, n := range []int{1, 10, 1000, 20000} {
		for _, d := range []string{"0", "10"} {
			t.Run(fmt.Sprintf("n=%d/duration_ms=%s", n, d), func(t *testing.T) {
				t.Parallel()
				out := runWith(t, "idle_tasks", "", n, 2, kv("duration_ms", d))
				if out.Checksum != uint64(n) || out.TasksOK != int64(n) {
					t.Errorf("got checksum %016x, tasks_ok %d, want %d", out.Checksum, out.TasksOK, n)
				}
			})
		}
	}
}

func TestIdleTasksPhases(t *testing.T) {
	const duration, linger = 20 * time.Millisecond, 50 * time.Millisecond
	c, err := idleTasksSpec.NewContext(cli.Args{N: 100, Params: []cli.Param{
		kv("duration_ms", "20"), kv("linger_ms", "50")}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	out, err := idleTasksSpec.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	total := time.Since(begin)
	if out.Checksum != 100 || out.TasksOK != 100 {
		t.Errorf("outcome %+v", out)
	}
	span, err := c.Timer.Span()
	if err != nil {
		t.Fatal(err)
	}
	finished := extraInt64(t, c, "finished_ns")
	lingerEnd := extraInt64(t, c, "linger_end_ns")
	if finished != span.Elapsed.Nanoseconds() {
		t.Errorf("finished_ns %d != elapsed_ns %d", finished, span.Elapsed.Nanoseconds())
	}
	if !span.HasSpawns || span.Spawned > span.Elapsed {
		t.Errorf("bad spawn mark %+v", span)
	}
	if finished < duration.Nanoseconds() {
		t.Errorf("finished_ns %d < duration %v", finished, duration)
	}
	if lingerEnd < finished+linger.Nanoseconds() {
		t.Errorf("linger_end_ns %d < finished_ns %d + %v", lingerEnd, finished, linger)
	}
	if total < duration+linger {
		t.Errorf("Run returned after %v, before duration + linger", total)
	}
	if keys := c.Extra(); len(keys) != 2 || keys[0].Key != "finished_ns" || keys[1].Key != "linger_end_ns" {
		t.Errorf("extra keys %v", keys)
	}
}

func TestIdleTasksNoLinger(t *testing.T) {
	c, err := idleTasksSpec.NewContext(cli.Args{N: 3, Params: []cli.Param{kv("duration_ms", "0")}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := idleTasksSpec.Run(c); err != nil {
		t.Fatal(err)
	}
	if f, l := extraInt64(t, c, "finished_ns"), extraInt64(t, c, "linger_end_ns"); l < f {
		t.Errorf("linger_end_ns %d < finished_ns %d", l, f)
	}
}

func TestIdleTasksParams(t *testing.T) {
	e := Catalog()["idle_tasks"]
	if fmt.Sprint(e.Variants) != "[goroutine]" || e.DefaultVariant != "goroutine" ||
		len(e.Params) != 2 || e.Params["duration_ms"] != "1000" || e.Params["linger_ms"] != "0" {
		t.Errorf("catalog entry %+v", e)
	}
	bad := [][]cli.Param{
		{kv("duration_ms", "-1")},
		{kv("duration_ms", "abc")},
		{kv("duration_ms", "1.5")},
		{kv("duration_ms", "9223372036855")},
		{kv("linger_ms", "-1")},
		{kv("linger_ms", "")},
		{kv("iterations", "1")},
	}
	for _, params := range bad {
		_, err := idleTasksSpec.NewContext(cli.Args{N: 1, Params: params}, 1)
		var ue *cli.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: got %v, want a UsageError", params, err)
		}
	}
	for _, args := range []cli.Args{{N: 1, Variant: "spawn"}, {N: 1, DataDir: "/tmp"}} {
		if _, err := idleTasksSpec.NewContext(args, 1); err == nil {
			t.Errorf("%+v accepted", args)
		}
	}
}
