package workloads

import (
	"fmt"
	"sync"
	"testing"

	"gobench/internal/cli"
)

func TestXorshiftKernel(t *testing.T) {
	cases := []struct {
		i    int
		work int64
		want uint64
	}{
		{0, 0, 1},
		{41, 0, 42},
		// 2 ^ 2<<13 = 0x4002; ^ >>7 = 0x4082; ^ <<17 = 0x81044082.
		{1, 1, 0x81044082},
		{0, 3, 0x9b1e842f6e862629},
	}
	for _, c := range cases {
		if got := xorshiftKernel(c.i, c.work); got != c.want {
			t.Errorf("xorshiftKernel(%d, %d) = %#x, want %#x", c.i, c.work, got, c.want)
		}
	}
}

func TestArticleKernel(t *testing.T) {
	for _, work := range []int64{0, 1, 50000} {
		if got := articleKernel(7, work); got != 0 {
			t.Errorf("articleKernel(7, %d) = %d, want 0", work, got)
		}
	}
}

func TestSleepChecksums(t *testing.T) {
	cases := []struct {
		n      int
		params []cli.Param
		want   uint64
	}{
		{10, []cli.Param{kv("work", "1000"), kv("kernel", "xorshift")}, 0x542f24434f64913f},
		{10, nil, 0x466afa5d3cf3e4c4},
		{100, []cli.Param{kv("work", "1000")}, 0x2e2768dda01da53c},
		{10, []cli.Param{kv("kernel", "article")}, 0x71c},
		{10, []cli.Param{kv("kernel", "article"), kv("work", "7")}, 0x71c},
		{100, []cli.Param{kv("kernel", "article")}, 0x3b56},
	}
	// Sleeping dominates, so every run goes at once; the whole test takes
	// about as long as the longest sleep (< 300 ms).
	type run struct {
		name string
		want uint64
		n    int
		out  Outcome
		err  error
	}
	var runs []*run
	var wg sync.WaitGroup
	for _, variant := range sleepSpec.Variants {
		for _, c := range cases {
			r := &run{name: fmt.Sprintf("%s/n=%d/%v", variant, c.n, c.params), want: c.want, n: c.n}
			runs = append(runs, r)
			wg.Go(func() { r.out, r.err = runWorkload("sleep", variant, c.n, 2, c.params...) })
		}
	}
	wg.Wait()
	for _, r := range runs {
		switch {
		case r.err != nil:
			t.Errorf("%s: %v", r.name, r.err)
		case r.out.Checksum != r.want:
			t.Errorf("%s: checksum = %016x, want %016x", r.name, r.out.Checksum, r.want)
		case r.out.TasksOK != int64(r.n):
			t.Errorf("%s: tasks_ok = %d, want %d", r.name, r.out.TasksOK, r.n)
		}
	}
}

func TestSleepMarksSpawned(t *testing.T) {
	for _, variant := range sleepSpec.Variants {
		t.Run(variant, func(t *testing.T) {
			t.Parallel()
			c, err := sleepSpec.NewContext(cli.Args{N: 3, Variant: variant,
				Params: []cli.Param{kv("work", "0")}}, 1)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sleepSpec.Run(c); err != nil {
				t.Fatal(err)
			}
			span, err := c.Timer.Span()
			if err != nil {
				t.Fatal(err)
			}
			if !span.HasSpawns || span.Spawned > span.Elapsed {
				t.Errorf("bad spawn mark %+v", span)
			}
		})
	}
}

// TestSleepAliveAtSpawn: every variant reports alive_at_spawn, the tasks not
// yet finished when the last had been spawned (as idle_tasks does). At N = 10
// the shortest sleep is 42 ms, far longer than spawning ten tasks takes, so all
// are alive; at N = 100,000 with work=0 the tasks that sleep 0 ms (the first is
// task 254) end while later ones are still being spawned.
func TestSleepAliveAtSpawn(t *testing.T) {
	for _, variant := range sleepSpec.Variants {
		for _, n := range []int{10, 100000} {
			t.Run(fmt.Sprintf("%s/n=%d", variant, n), func(t *testing.T) {
				t.Parallel()
				c, err := sleepSpec.NewContext(cli.Args{N: n, Variant: variant,
					Params: []cli.Param{kv("work", "0")}}, 2)
				if err != nil {
					t.Fatal(err)
				}
				out, err := sleepSpec.Run(c)
				if err != nil {
					t.Fatal(err)
				}
				if out.TasksOK != int64(n) {
					t.Fatalf("tasks_ok = %d, want %d", out.TasksOK, n)
				}
				alive := extraInt64(t, c, "alive_at_spawn")
				if n == 10 && alive != 10 {
					t.Errorf("alive_at_spawn = %d, want 10 (every task sleeps at least 42 ms)", alive)
				}
				if n == 100000 && (alive < 0 || alive >= int64(n)) {
					t.Errorf("alive_at_spawn = %d of %d: the tasks that sleep 0 ms should have ended", alive, n)
				}
			})
		}
	}
}
