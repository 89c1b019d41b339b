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

// runIOTasks runs task(i) on its own goroutine for every i in [0, n) and
// returns the results in task order. It starts t immediately before the
// first goroutine is spawned and stops it once the last result has been
// collected.
//
// With chanPerTask false, every goroutine writes its result into its own slot
// of a preallocated slice and a sync.WaitGroup waits for all of them. With
// chanPerTask true, every goroutine gets a channel of capacity 1 and the
// results are received in spawn order, as the original article did.
//
// If any task failed, the error names the first failed task (by index) and
// how many failed in all.
func runIOTasks[R any](n int, t *cli.Timer, chanPerTask bool, task func(i int) (R, error)) ([]R, error) {
	results := make([]ioResult[R], n)
	run := func(i int) ioResult[R] {
		v, err := task(i)
		return ioResult[R]{val: v, err: err}
	}
	if chanPerTask {
		chans := make([]chan ioResult[R], n)
		t.Start()
		for i := range n {
			ch := make(chan ioResult[R], 1)
			chans[i] = ch
			go func() { ch <- run(i) }()
		}
		t.MarkSpawned()
		for i, ch := range chans {
			results[i] = <-ch
		}
		t.Stop()
	} else {
		var wg sync.WaitGroup
		t.Start()
		for i := range n {
			wg.Go(func() { results[i] = run(i) })
		}
		t.MarkSpawned()
		wg.Wait()
		t.Stop()
	}

	vals := make([]R, n)
	var first error
	failed := 0
	for i, r := range results {
		if r.err != nil {
			if first == nil {
				first = fmt.Errorf("task %d: %w", i, r.err)
			}
			failed++
		}
		vals[i] = r.val
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
