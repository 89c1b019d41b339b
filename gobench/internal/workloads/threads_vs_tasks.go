package workloads

import (
	"fmt"
	"math"
	"sync"
	"time"
)

// threads_vs_tasks: N workers; worker i first sleeps
// ((i * 2654435761) mod 2^32) mod 200000 microseconds, which spreads the
// workers over 200 ms, then sleeps 10 ms `iterations` times.
// Checksum: total iterations done (N * iterations).
var threadsVsTasksSpec = &Spec{
	Name:           "threads_vs_tasks",
	Variants:       []string{"goroutine"},
	DefaultVariant: "goroutine",
	Params: []Param{
		{Name: "iterations", Default: "100", Min: 0, Max: math.MaxInt64},
	},
	Run: runThreadsVsTasks,
}

// tvtTick is the sleep of one iteration.
const tvtTick = 10 * time.Millisecond

// tvtStartDelay is worker i's first sleep.
func tvtStartDelay(i int) time.Duration {
	us := (uint64(i) * 2654435761) % (1 << 32) % 200000
	return time.Duration(us) * time.Microsecond
}

func runThreadsVsTasks(c *Context) (Outcome, error) {
	if c.Variant != "goroutine" {
		return Outcome{}, fmt.Errorf("variant %q not implemented", c.Variant)
	}
	iterations := c.Int("iterations")
	delays := make([]time.Duration, c.N)
	for i := range delays {
		delays[i] = tvtStartDelay(i)
	}
	results := make([]uint64, c.N)
	var wg sync.WaitGroup

	c.Timer.Start()
	for i := range results {
		wg.Go(func() {
			time.Sleep(delays[i])
			var done uint64
			for range iterations {
				time.Sleep(tvtTick)
				done++
			}
			results[i] = done
		})
	}
	c.Timer.MarkSpawned()
	wg.Wait()
	c.Timer.Stop()

	var sum uint64
	for _, r := range results {
		sum += r
	}
	return Outcome{Checksum: sum, TasksOK: int64(len(results))}, nil
}
