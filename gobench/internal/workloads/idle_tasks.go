package workloads

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// maxMillis is the largest millisecond count a time.Duration can hold.
const maxMillis = math.MaxInt64 / int64(time.Millisecond)

// idle_tasks: N tasks each sleep duration_ms and finish; peak memory divided
// by N is the cost of one idle task. After the last task has finished the
// process stays alive for linger_ms, so that a memory timeline shows when the
// runtime gives memory back; the result line is printed after that.
// Checksum: tasks completed.
var idleTasksSpec = &Spec{
	Name:           "idle_tasks",
	Variants:       []string{"goroutine"},
	DefaultVariant: "goroutine",
	Params: []Param{
		{Name: "duration_ms", Default: "1000", Validate: intRange(0, maxMillis)},
		{Name: "linger_ms", Default: "0", Validate: intRange(0, maxMillis)},
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
	var wg sync.WaitGroup

	c.Timer.Start()
	for i := range done {
		wg.Go(func() {
			time.Sleep(duration)
			done[i] = true
		})
	}
	c.Timer.MarkSpawned()
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
	return Outcome{Checksum: uint64(completed), TasksOK: completed}, nil
}
