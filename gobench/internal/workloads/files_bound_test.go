package workloads

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// setSoftNoFile sets the soft open-file limit of the test process to soft
// and restores the old one when the test ends. The test must not be run in
// parallel with others: the limit is the whole process's.
func setSoftNoFile(t *testing.T, soft uint64) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	if soft > old.Max {
		t.Skipf("hard open-file limit %d is below %d", old.Max, soft)
	}
	lim := old
	lim.Cur = soft
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
			t.Errorf("restoring RLIMIT_NOFILE: %v", err)
		}
	})
}

func TestOpenFileBound(t *testing.T) {
	for _, tc := range []struct{ soft, want uint64 }{
		{20000, 20000 - fdReserve},
		{fdReserve + 64, 64},
		{fdReserve + minOpenFileBound + 1, minOpenFileBound + 1},
		{fdReserve + minOpenFileBound, minOpenFileBound},
		{fdReserve, minOpenFileBound},
		{10, minOpenFileBound},
	} {
		t.Run(fmt.Sprint(tc.soft), func(t *testing.T) {
			setSoftNoFile(t, tc.soft)
			got, err := openFileBound()
			if err != nil || uint64(got) != tc.want {
				t.Errorf("soft limit %d: bound %d, %v; want %d", tc.soft, got, err, tc.want)
			}
		})
	}
}

// holdOpen runs n goroutines that each take a slot of g, open one of the
// fixture files in dir, call hold (with the file still open if the open
// succeeded), then close the file and give the slot back. It returns the
// most files the goroutines had open at once and the errors.
func holdOpen(dir string, n int, g fileGate, hold func()) (int64, error) {
	var open, most atomic.Int64
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			g.acquire()
			defer g.release()
			f, err := os.Open(filepath.Join(dir, fmt.Sprintf("%d.txt", i%filesFixtureCount)))
			if err != nil {
				errs[i] = err
				hold()
				return
			}
			now := open.Add(1)
			for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
			}
			hold()
			open.Add(-1)
			errs[i] = f.Close()
		})
	}
	wg.Wait()
	return most.Load(), errors.Join(errs...)
}

// TestFileGateBoundsOpenFiles: with the soft open-file limit at fdReserve +
// 64, 2,000 goroutines that each keep a file open for a while never have
// more than 64 open at once through a gate of 64, and all succeed; without a
// bound (a gate with a slot for each of them) the same goroutines, keeping
// their files open until every one has tried to open its own, fail with
// EMFILE.
func TestFileGateBoundsOpenFiles(t *testing.T) {
	dir := writeFilesFixture(t)
	const n, bound = 2000, 64
	setSoftNoFile(t, fdReserve+bound)

	most, err := holdOpen(dir, n, newFileGate(bound), func() {
		// Long enough that the goroutines waiting for a slot pile up.
		time.Sleep(200 * time.Microsecond)
	})
	if err != nil {
		t.Fatalf("through a gate of %d: %v", bound, err)
	}
	if most > bound || most < bound/2 {
		t.Errorf("through a gate of %d: at most %d files open at once", bound, most)
	}
	t.Logf("through a gate of %d: at most %d files open at once", bound, most)

	var tried sync.WaitGroup
	tried.Add(n)
	most, err = holdOpen(dir, n, newFileGate(n), func() {
		tried.Done()
		tried.Wait()
	})
	if !errors.Is(err, syscall.EMFILE) {
		t.Errorf("without a bound: got %v, want EMFILE", err)
	}
	t.Logf("without a bound: %d files open at once, then EMFILE", most)
}

// TestFilesLowOpenFileLimit runs both file workloads, both variants, with
// N = 2,000 under a soft open-file limit of fdReserve + 64: they report a
// bound of 64, succeed, and give the checksum they give under the normal
// limit.
func TestFilesLowOpenFileLimit(t *testing.T) {
	const n, bound = 2000, 64
	for _, name := range []string{"files_read", "files_rw"} {
		for _, variant := range filesVariants {
			t.Run(name+"/"+variant, func(t *testing.T) {
				out, c, err := runIOWorkload(name, variant, n, writeFilesFixture(t), "")
				if err != nil {
					t.Fatal(err)
				}
				want := out.Checksum
				if got := extraInt64(t, c, "open_file_bound"); got < 1000 {
					t.Errorf("under the normal limit: open_file_bound = %d", got)
				}

				dir := writeFilesFixture(t)
				setSoftNoFile(t, fdReserve+bound)
				out, c, err = runIOWorkload(name, variant, n, dir, "")
				if err != nil {
					t.Fatalf("soft limit %d: %v", fdReserve+bound, err)
				}
				if out.Checksum != want || out.TasksOK != n {
					t.Errorf("checksum %016x tasks_ok %d, want %016x %d", out.Checksum, out.TasksOK, want, n)
				}
				if got := extraInt64(t, c, "open_file_bound"); got != bound {
					t.Errorf("open_file_bound = %d, want %d", got, bound)
				}
			})
		}
	}
}
