package workloads

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gobench/internal/cli"
	"gobench/internal/lcg"
)

// The files fixture: DIR/0.txt .. DIR/19.txt, made by the harness.
const filesFixtureCount = 20

// fileRead is what one task of the file workloads hands back.
type fileRead struct {
	digest uint64
	size   uint64
	// content is the whole file with retain=content, nil otherwise.
	content []byte
}

// filesPaths returns the path of every fixture file, indexed by file number.
func filesPaths(dir string) []string {
	paths := make([]string, filesFixtureCount)
	for k := range paths {
		paths[k] = filepath.Join(dir, strconv.Itoa(k)+".txt")
	}
	return paths
}

// filesPick returns the file number of every task: lcg(42)[i] % 20.
func filesPick(n int) []uint64 {
	return lcg.Mod(42, n, filesFixtureCount)
}

// filesOptions are the params both file workloads take.
type filesOptions struct {
	// retain=content: hand back every file's content, kept until the end.
	retain bool
	// digest=on: FNV-1a over every file read; off: only its size (the
	// article's programs computed nothing from what they read).
	digest bool
}

func filesOptionsOf(c *Context) filesOptions {
	return filesOptions{retain: c.Params["retain"] == "content", digest: c.Params["digest"] == "on"}
}

// fdReserve is the number of file descriptors kept free of the file tasks'
// own. Besides the tasks' files the program holds stdin, stdout and stderr,
// the runtime's netpoller (an epoll and an eventfd) and the cgroup CPU quota
// files the runtime keeps open (one or two): 8 at most, more only if the
// process was started with descriptors left open by its parent (the harness's
// launcher leaves none). 64 is that with ample room, and the same reserve
// rustbench keeps for its own descriptors beside one per tokio blocking
// thread (its FD_RESERVE is 512 + 64). A goroutine never holds more than one
// file at a time, and every open of a task passes the gate, so nothing else
// needs a descriptor while the tasks run.
const fdReserve = 64

// minOpenFileBound keeps the gate usable under a tiny open-file limit, as
// rustbench's bound does (its .max(16)).
const minOpenFileBound = 16

// openFileBound returns how many files the tasks of a file workload may have
// open at once: the soft open-file limit (main has raised it to the hard
// limit) minus fdReserve, at least minOpenFileBound. rustbench bounds its
// tokio-fs appends with the same rule (append_handle_bound).
func openFileBound() (int, error) {
	soft, err := cli.NoFileSoftLimit()
	if err != nil {
		return 0, err
	}
	bound := uint64(minOpenFileBound)
	if soft > fdReserve+minOpenFileBound {
		bound = soft - fdReserve
	}
	// An unlimited soft limit (RLIM_INFINITY) still gives a channel
	// capacity that make accepts.
	return int(min(bound, 1<<30)), nil
}

// fileGate is a counting semaphore over open files: a buffered channel with
// one slot per file that may be open at once. A task takes a slot (a send)
// before it opens a file and gives it back (a receive) once the file is
// closed, so at most cap(g) task files are open at any moment.
//
// Without it the goroutines of a file workload have no bound on the files
// they hold open: a goroutine whose open has returned may wait for a P, or
// for its thread, before it reads and closes, and files_rw at N = 100,000
// under a limit of 20,000 could end with "too many open files" (in one run
// 10,343 of the 100,000 tasks failed). Below the bound the gate never blocks;
// each file costs one send and one receive on a channel of empty structs (no
// allocation, no copy).
type fileGate chan struct{}

// newFileGate returns a gate of bound slots.
func newFileGate(bound int) fileGate {
	return make(fileGate, bound)
}

// filesGate returns the gate of a file workload's run, of openFileBound
// slots, and reports the bound in the result line as open_file_bound.
func filesGate(c *Context) (fileGate, error) {
	bound, err := openFileBound()
	if err != nil {
		return nil, err
	}
	c.SetExtra("open_file_bound", int64(bound))
	return newFileGate(bound), nil
}

// filesRun is what both file workloads set up before the timer: the path of
// every fixture file, the file of every task, the params, how results are
// collected and the gate of the tasks' open files.
type filesRun struct {
	paths       []string
	picks       []uint64
	opt         filesOptions
	chanPerTask bool
	gate        fileGate
}

// newFilesRun sets up a run of a file workload (variants filesVariants,
// params filesParams). It reports the gate's bound as open_file_bound.
func newFilesRun(c *Context) (filesRun, error) {
	chanPerTask, err := chanPerTaskVariant(c.Variant, "readfile")
	if err != nil {
		return filesRun{}, err
	}
	gate, err := filesGate(c)
	if err != nil {
		return filesRun{}, err
	}
	return filesRun{
		paths:       filesPaths(c.DataDir),
		picks:       filesPick(c.N),
		opt:         filesOptionsOf(c),
		chanPerTask: chanPerTask,
		gate:        gate,
	}, nil
}

func (g fileGate) acquire() { g <- struct{}{} }
func (g fileGate) release() { <-g }

// readWhole reads a file with os.ReadFile into out: its size, its digest
// (0 with digest=off) and, with retain, the content. The file is open, and
// holds a slot of g, only inside os.ReadFile.
func readWhole(path string, opt filesOptions, out *fileRead, g fileGate) error {
	g.acquire()
	b, err := os.ReadFile(path)
	g.release()
	if err != nil {
		return err
	}
	out.size = uint64(len(b))
	if opt.digest {
		out.digest = fnv1a64(b)
	}
	if opt.retain {
		out.content = b
	}
	return nil
}

// fnvOffset is the 64-bit FNV-1a hash of no bytes.
const fnvOffset = 0xcbf29ce484222325

// fnv1a64 is the 64-bit FNV-1a hash.
func fnv1a64(b []byte) uint64 {
	return fnv1a64More(fnvOffset, b)
}

// fnv1a64More continues the FNV-1a hash h over b: fnv1a64More(fnv1a64(a), b)
// is fnv1a64 of a followed by b.
func fnv1a64More(h uint64, b []byte) uint64 {
	const prime = 0x100000001b3
	for _, c := range b {
		h ^= uint64(c)
		h *= prime
	}
	return h
}

// The variants and params that files_read and files_rw share.
var (
	filesVariants = []string{"readfile", "chan-per-task"}
	filesParams   = []Param{
		{Name: "retain", Default: "digest", Choices: []string{"digest", "content"}},
		{Name: "digest", Default: "on", Choices: []string{"on", "off"}},
	}
)

// chanPerTaskVariant maps a variant to how results are collected: plain
// (results written into a slice) or "chan-per-task" (one channel per task,
// as the article's Go programs did).
func chanPerTaskVariant(variant, plain string) (bool, error) {
	switch variant {
	case plain:
		return false, nil
	case "chan-per-task":
		return true, nil
	}
	return false, fmt.Errorf("variant %q not implemented", variant)
}
