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
	for _, wait := range []string{"sleep", "release"} {
		for _, n := range []int{1, 10, 1000, 20000} {
			for _, d := range []string{"0", "10"} {
				t.Run(fmt.Sprintf("wait=%s/n=%d/duration_ms=%s", wait, n, d), func(t *testing.T) {
					t.Parallel()
					c, err := idleTasksSpec.NewContext(cli.Args{N: n, Params: []cli.Param{
						kv("wait", wait), kv("duration_ms", d)}}, 2)
					if err != nil {
						t.Fatal(err)
					}
					out, err := idleTasksSpec.Run(c)
					if err != nil {
						t.Fatal(err)
					}
					if out.Checksum != uint64(n) || out.TasksOK != int64(n) {
						t.Errorf("got checksum %016x, tasks_ok %d, want %d", out.Checksum, out.TasksOK, n)
					}
					// With release no task can finish before the release, which
					// follows the last spawn.
					alive := extraInt64(t, c, "alive_at_spawn")
					if (wait == "release" && alive != int64(n)) || alive < 0 || alive > int64(n) {
						t.Errorf("alive_at_spawn = %d of %d", alive, n)
					}
				})
			}
		}
	}
}

// TestIdleTasksAliveAtSpawn: tasks that sleep far longer than spawning
// them takes are all alive after the last spawn; with release they are by
// construction, and duration_ms is not slept.
func TestIdleTasksAliveAtSpawn(t *testing.T) {
	cases := []struct {
		wait, duration string
		n              int
	}{
		{"sleep", "2000", 100},
		{"release", "0", 5000},
		{"release", "600000", 5000},
	}
	for _, tc := range cases {
		c, err := idleTasksSpec.NewContext(cli.Args{N: tc.n, Params: []cli.Param{
			kv("wait", tc.wait), kv("duration_ms", tc.duration)}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := idleTasksSpec.Run(c); err != nil {
			t.Fatal(err)
		}
		if alive := extraInt64(t, c, "alive_at_spawn"); alive != int64(tc.n) {
			t.Errorf("%+v: alive_at_spawn = %d, want %d", tc, alive, tc.n)
		}
		span, err := c.Timer.Span()
		if err != nil {
			t.Fatal(err)
		}
		if tc.wait == "release" && span.Elapsed >= 600*time.Second {
			t.Errorf("%+v: release waited %v: duration_ms was slept", tc, span.Elapsed)
		}
		if tc.wait == "sleep" && span.Elapsed < 2*time.Second {
			t.Errorf("%+v: elapsed %v, shorter than duration_ms", tc, span.Elapsed)
		}
	}
}

func TestIdleTasksPhases(t *testing.T) {
	for _, wait := range []string{"sleep", "release"} {
		t.Run("wait="+wait, func(t *testing.T) { testIdleTasksPhases(t, wait) })
	}
}

func testIdleTasksPhases(t *testing.T, wait string) {
	const duration, linger = 20 * time.Millisecond, 50 * time.Millisecond
	c, err := idleTasksSpec.NewContext(cli.Args{N: 100, Params: []cli.Param{
		kv("wait", wait), kv("duration_ms", "20"), kv("linger_ms", "50")}}, 2)
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
	slept := time.Duration(0) // release does not sleep duration_ms
	if wait == "sleep" {
		slept = duration
	}
	if finished < slept.Nanoseconds() {
		t.Errorf("finished_ns %d < duration %v", finished, slept)
	}
	if lingerEnd < finished+linger.Nanoseconds() {
		t.Errorf("linger_end_ns %d < finished_ns %d + %v", lingerEnd, finished, linger)
	}
	if total < slept+linger {
		t.Errorf("Run returned after %v, before duration + linger", total)
	}
	keys := c.Extra()
	if len(keys) != 3 || keys[0].Key != "finished_ns" || keys[1].Key != "linger_end_ns" || keys[2].Key != "alive_at_spawn" {
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
	if fmt.Sprint(e.Variants) != "[goroutine]" || e.DefaultVariant != "goroutine" || len(e.Params) != 3 ||
		e.Params["wait"] != "sleep" || e.Params["duration_ms"] != "1000" || e.Params["linger_ms"] != "0" {
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
		{kv("wait", "")},
		{kv("wait", "Release")},
		{kv("wait", "yield")},
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
