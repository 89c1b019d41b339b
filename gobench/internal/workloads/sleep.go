package workloads

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"gobench/internal/cli"
	"gobench/internal/lcg"
)

// sleep: task i runs a CPU kernel, sleeps lcg(42)[i] % 300 ms and returns the
// kernel's result. Checksum: sum of results plus sum of sleep milliseconds.
// alive_at_spawn, as in idle_tasks: N minus the tasks that had finished their
// sleep when the last one had been spawned (each task adds itself to an atomic
// counter as its sleep ends; the counter is read right after the last spawn).
// A task whose sleep is short (some sleep 0 ms) can end before the last one
// starts, and then the peak memory holds fewer than N tasks.
var sleepSpec = &Spec{
	Name:           "sleep",
	Variants:       []string{"waitgroup", "chan-per-task", "chan-shared", "chan-shared-buffered"},
	DefaultVariant: "waitgroup",
	Params: []Param{
		{Name: "kernel", Default: "xorshift", Choices: []string{"xorshift", "article"}},
		{Name: "work", Default: "50000", Min: 0, Max: math.MaxInt64},
	},
	Run: runSleep,
}

// sleepKernel returns the function of --param kernel.
func sleepKernel(name string) (func(i int, work int64) uint64, error) {
	switch name {
	case "xorshift":
		return xorshiftKernel, nil
	case "article":
		return articleKernel, nil
	}
	return nil, fmt.Errorf("kernel %q not implemented", name)
}

// xorshiftKernel applies work xorshift64 steps to i+1.
func xorshiftKernel(i int, work int64) uint64 {
	x := uint64(i) + 1
	for range work {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}

// articleKernel is the original post's loop. Its result is never used, so it
// is dead code; it is kept exactly as written to show what that changes.
func articleKernel(_ int, work int64) uint64 {
	n := 0.0
	for range work {
		if n > 1000 {
			n /= 850
		}
		n *= 4
	}
	return 0
}

func runSleep(c *Context) (Outcome, error) {
	kernel, err := sleepKernel(c.Params["kernel"])
	if err != nil {
		return Outcome{}, err
	}
	work := c.Int("work")
	ms := lcg.Mod(42, c.N, 300)
	var sumMs uint64
	for _, m := range ms {
		sumMs += m
	}
	t := &sleepTimer{Timer: c.Timer, n: c.N}
	task := func(i int) uint64 {
		r := kernel(i, work)
		time.Sleep(time.Duration(ms[i]) * time.Millisecond)
		t.finished.Add(1)
		return r
	}

	var sum uint64
	var ok int64
	switch c.Variant {
	case "waitgroup":
		sum, ok = sleepWaitGroup(c.N, t, task)
	case "chan-per-task":
		sum, ok = sleepChanPerTask(c.N, t, task)
	case "chan-shared":
		sum, ok = sleepChanShared(c.N, 0, t, task)
	case "chan-shared-buffered":
		sum, ok = sleepChanShared(c.N, c.N, t, task)
	default:
		return Outcome{}, fmt.Errorf("variant %q not implemented", c.Variant)
	}
	c.SetExtra("alive_at_spawn", t.alive)
	return Outcome{Checksum: sum + sumMs, TasksOK: ok}, nil
}

// sleepTimer is the workload timer that also counts the tasks alive when the
// last one has been spawned: every task adds itself to finished as its sleep
// ends, and MarkSpawned reads the counter.
type sleepTimer struct {
	*cli.Timer
	n        int
	finished atomic.Int64
	alive    int64
}

// MarkSpawned marks the end of the spawn phase and records alive_at_spawn.
func (t *sleepTimer) MarkSpawned() {
	t.Timer.MarkSpawned()
	t.alive = int64(t.n) - t.finished.Load()
}

// sleepWaitGroup writes each result into its own slot of a preallocated slice.
func sleepWaitGroup(n int, t *sleepTimer, task func(int) uint64) (uint64, int64) {
	results := make([]uint64, n)
	var wg sync.WaitGroup
	t.Start()
	for i := range n {
		wg.Go(func() { results[i] = task(i) })
	}
	t.MarkSpawned()
	wg.Wait()
	t.Stop()
	var sum uint64
	for _, r := range results {
		sum += r
	}
	return sum, int64(len(results))
}

// sleepChanPerTask gives every goroutine a channel of capacity 1 and receives
// from them in spawn order.
func sleepChanPerTask(n int, t *sleepTimer, task func(int) uint64) (uint64, int64) {
	chans := make([]chan uint64, n)
	t.Start()
	for i := range n {
		ch := make(chan uint64, 1)
		chans[i] = ch
		go func() { ch <- task(i) }()
	}
	t.MarkSpawned()
	var sum uint64
	var ok int64
	for _, ch := range chans {
		sum += <-ch
		ok++
	}
	t.Stop()
	return sum, ok
}

// sleepChanShared sends every result on one channel of the given capacity
// and receives them in completion order.
func sleepChanShared(n, capacity int, t *sleepTimer, task func(int) uint64) (uint64, int64) {
	ch := make(chan uint64, capacity)
	t.Start()
	for i := range n {
		go func() { ch <- task(i) }()
	}
	t.MarkSpawned()
	var sum uint64
	var ok int64
	for range n {
		sum += <-ch
		ok++
	}
	t.Stop()
	return sum, ok
}
