package workloads

import "runtime"

// files_read: task i reads DIR/<lcg(42)[i] % 20>.txt whole and digests it
// with FNV-1a 64 (digest=on). Checksum: sum over tasks of digest + bytes
// read (with digest=off, of the bytes read).
var filesReadSpec = &Spec{
	Name:           "files_read",
	Variants:       filesVariants,
	DefaultVariant: "readfile",
	Params:         filesParams,
	NeedsDataDir:   true,
	Run:            runFilesRead,
}

func runFilesRead(c *Context) (Outcome, error) {
	r, err := newFilesRun(c)
	if err != nil {
		return Outcome{}, err
	}

	reads, err := runIOTasks(c.N, c.Timer, r.chanPerTask, func(i int, out *fileRead) error {
		return readWhole(r.paths[r.picks[i]], r.opt, out, r.gate)
	})
	if err != nil {
		return Outcome{}, err
	}
	var sum uint64
	for _, r := range reads {
		sum += r.digest + r.size
	}
	// With retain=content every file's content stays reachable until here.
	runtime.KeepAlive(reads)
	return Outcome{Checksum: sum, TasksOK: int64(len(reads))}, nil
}
