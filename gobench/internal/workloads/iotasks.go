package workloads

import (
	"fmt"
	"sync"

	"gobench/internal/cli"
)

// ioResult is what one task of an I/O workload hands back.
type ioResult[R any] struct {
	val R
	err error
}

// runIOTasks runs task(i, &out) on its own goroutine for every i in [0, n)
// and returns the outs in task order. It starts t immediately before the
// first goroutine is spawned and stops it once the last result has been
// collected.
//
// A task writes its result through out rather than returning it, and the
// goroutine bodies are as small as they can be: a goroutine starts with a
// 2 KiB stack, and os.ReadFile under a few larger frames (results returned by
// value through a generic wrapper, about 440 bytes more) made every file
// task grow (copy) its stack: 15% of files_read's CPU samples at N = 100,000.
// Now about one goroutine in six grows, as in the article's own program.
//
// With chanPerTask false, every goroutine writes its result into its own slot
// of a preallocated slice and a sync.WaitGroup waits for all of them. With
// chanPerTask true, every goroutine gets a channel of capacity 1 and the
// results are received in spawn order, as the original article did.
//
// If any task failed, the error names the first failed task (by index) and
// how many failed in all.
func runIOTasks[R any](n int, t *cli.Timer, chanPerTask bool, task func(i int, out *R) error) ([]R, error) {
	vals := make([]R, n)
	errs := make([]error, n)
	if chanPerTask {
		chans := make([]chan ioResult[R], n)
		t.Start()
		for i := range n {
			ch := make(chan ioResult[R], 1)
			chans[i] = ch
			go func() {
				var r ioResult[R]
				r.err = task(i, &r.val)
				ch <- r
			}()
		}
		t.MarkSpawned()
		for i, ch := range chans {
			r := <-ch
			vals[i], errs[i] = r.val, r.err
		}
		t.Stop()
	} else {
		var wg sync.WaitGroup
		t.Start()
		for i := range n {
			wg.Go(func() { errs[i] = task(i, &vals[i]) })
		}
		t.MarkSpawned()
		wg.Wait()
		t.Stop()
	}

	var first error
	failed := 0
	for i, err := range errs {
		if err != nil {
			if first == nil {
				first = fmt.Errorf("task %d: %w", i, err)
			}
			failed++
		}
	}
	if failed > 1 {
		return vals, fmt.Errorf("%w (%d of %d tasks failed)", first, failed, n)
	}
	return vals, first
}

// joinErrs combines errors into one single-line error, skipping nils.
func joinErrs(errs ...error) error {
	var out error
	for _, err := range errs {
		switch {
		case err == nil:
		case out == nil:
			out = err
		default:
			out = fmt.Errorf("%w; %w", out, err)
		}
	}
	return out
}
