package workloads

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"gobench/internal/cli"
)

// stuckQueries fails the first UPDATE with boom; every other statement
// blocks until ctx is cancelled (or, should nothing cancel it, gives up
// after a while with errNotAborted).
type stuckQueries struct {
	updates    atomic.Int64
	notAborted atomic.Int64
}

var (
	boom          = errors.New("boom")
	errNotAborted = errors.New("still waiting: the first failure did not abort the others")
)

func (q *stuckQueries) wait(ctx context.Context) (int64, error) {
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(20 * time.Second):
		q.notAborted.Add(1)
		return 0, errNotAborted
	}
}

func (q *stuckQueries) update(ctx context.Context, _ int64) (int64, error) {
	if q.updates.Add(1) == 1 {
		return 0, boom
	}
	return q.wait(ctx)
}

func (q *stuckQueries) byID(ctx context.Context, _ int64) (int64, error)  { return q.wait(ctx) }
func (q *stuckQueries) byAge(ctx context.Context, _ int64) (int64, error) { return q.wait(ctx) }

// TestUsersTasksFirstFailure: the first task to fail calls onFail once,
// which here cancels every other task; the error reported is that first
// failure as onFail returned it, with the count of failed tasks.
func TestUsersTasksFirstFailure(t *testing.T) {
	const n = 500
	for _, chanPerTask := range []bool{false, true} {
		t.Run(fmt.Sprintf("chanPerTask=%v", chanPerTask), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var calls atomic.Int64
			onFail := func(err error) error {
				calls.Add(1)
				cancel()
				return fmt.Errorf("%w (what the driver knows)", err)
			}
			c := &Context{N: n, Timer: new(cli.Timer)}
			q := new(stuckQueries)
			_, err := runUsersTasks(ctx, c, q, chanPerTask, false, onFail)
			want := regexp.MustCompile(fmt.Sprintf(`^task \d+: update id \d+: boom \(what the driver knows\) \(%d of %d tasks failed\)$`, n, n))
			if err == nil || !want.MatchString(err.Error()) || !errors.Is(err, boom) {
				t.Errorf("err = %v, want %v", err, want)
			}
			if calls.Load() != 1 || q.notAborted.Load() != 0 {
				t.Errorf("onFail called %d times; %d tasks were not aborted", calls.Load(), q.notAborted.Load())
			}
		})
	}
}
