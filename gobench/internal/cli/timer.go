package cli

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// Timer measures the timed phase of a workload. Start it immediately before
// the first task is spawned, call MarkSpawned once every task has been
// spawned (if the workload spawns tasks), and Stop it when the last result
// has been collected.
type Timer struct {
	start, spawned, stop time.Time
	t0Mono               int64
	err                  error
}

// Start begins the timed phase and records CLOCK_MONOTONIC for alignment
// with external samplers.
func (t *Timer) Start() {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.err = err
	}
	t.t0Mono = ts.Nano()
	t.start = time.Now()
}

// MarkSpawned records that all tasks have been spawned.
func (t *Timer) MarkSpawned() { t.spawned = time.Now() }

// Stop ends the timed phase.
func (t *Timer) Stop() { t.stop = time.Now() }

// Span is what a finished Timer reports.
type Span struct {
	Start     time.Time
	Elapsed   time.Duration
	T0MonoNs  int64
	Spawned   time.Duration
	HasSpawns bool
}

// Span checks that the timer was used correctly and returns its readings.
func (t *Timer) Span() (Span, error) {
	switch {
	case t.err != nil:
		return Span{}, t.err
	case t.start.IsZero():
		return Span{}, errors.New("timer was never started")
	case t.stop.IsZero():
		return Span{}, errors.New("timer was never stopped")
	}
	s := Span{
		Start:    t.start,
		Elapsed:  t.stop.Sub(t.start),
		T0MonoNs: t.t0Mono,
	}
	if !t.spawned.IsZero() {
		s.Spawned = t.spawned.Sub(t.start)
		s.HasSpawns = true
	}
	return s, nil
}
