package workloads

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// maxMillis is the largest millisecond count a time.Duration can hold.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// idle_tasks: N tasks wait and finish; peak memory divided by N is the cost
// of one idle task. With wait=sleep each task sleeps duration_ms; with
// wait=release each task blocks on one channel that the main goroutine
// closes right after the last spawn (closing wakes every waiter, so no
// wake-up is lost), and duration_ms is not used. alive_at_spawn is N minus
// the tasks that had finished when the last one had been spawned (an atomic
// counter read right after the last spawn): N by construction with release,
// and with sleep whether all N were alive at once. After the last task has
// finished the process stays alive for linger_ms, so that a memory timeline
// shows when the runtime gives memory back; the result line is printed after
// that. Checksum: tasks completed.
var idleTasksSpec = &Spec{
	Name:           "idle_tasks",
	Variants:       []string{"goroutine"},
	DefaultVariant: "goroutine",
	Params: []Param{
		{Name: "wait", Default: "sleep", Choices: []string{"sleep", "release"}},
		{Name: "duration_ms", Default: "1000", Min: 0, Max: maxMillis},
		{Name: "linger_ms", Default: "0", Min: 0, Max: maxMillis},
	},
	Run: runIdleTasks,
}

func runIdleTasks(c *Context) (Outcome, error) {
	if c.Variant != "goroutine" {
		return Outcome{}, fmt.Errorf("variant %q not implemented", c.Variant)
	}
	duration := time.Duration(c.Int("duration_ms")) * time.Millisecond
	linger := time.Duration(c.Int("linger_ms")) * time.Millisecond
	done := make([]bool, c.N)
	release := make(chan struct{})
	var finished atomic.Int64
	var wg sync.WaitGroup

	wait := c.Params["wait"]
	if wait != "sleep" && wait != "release" {
		return Outcome{}, fmt.Errorf("wait %q not implemented", wait)
	}

	c.Timer.Start()
	if wait == "release" {
		for i := range done {
			wg.Go(func() {
				<-release
				done[i] = true
				finished.Add(1)
			})
		}
	} else {
		for i := range done {
			wg.Go(func() {
				time.Sleep(duration)
				done[i] = true
				finished.Add(1)
			})
		}
	}
	c.Timer.MarkSpawned()
	alive := int64(c.N) - finished.Load()
	close(release) // wakes every task with wait=release; no task waits on it otherwise
	wg.Wait()
	c.Timer.Stop()

	var completed int64
	for _, d := range done {
		if d {
			completed++
		}
	}
	if completed != int64(c.N) {
		return Outcome{}, fmt.Errorf("%d of %d tasks completed", completed, c.N)
	}

	// Keep the process and its runtime alive; nothing is allocated meanwhile.
	time.Sleep(linger)
	span, err := c.Timer.Span()
	if err != nil {
		return Outcome{}, err
	}
	lingerEnd := time.Since(span.Start)
	c.SetExtra("finished_ns", span.Elapsed.Nanoseconds())
	c.SetExtra("linger_end_ns", lingerEnd.Nanoseconds())
	c.SetExtra("alive_at_spawn", alive)
	return Outcome{Checksum: uint64(completed), TasksOK: completed}, nil
}
