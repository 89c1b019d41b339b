package workloads

import (
	"os"
	"runtime"
)

// files_rw: task i picks file k = lcg(42)[i] % 20; if k is even it appends
// "Appended string\n" to DIR/<k>.txt; then every task reads DIR/<k>.txt whole
// and digests it. Checksum: number of appends plus the total size of the 20
// files, taken after the timer stops.
var filesRWSpec = &Spec{
	Name:           "files_rw",
	Variants:       filesVariants,
	DefaultVariant: "readfile",
	Params:         filesParams,
	NeedsDataDir:   true,
	Run:            runFilesRW,
}

// filesAppended is what every appending task writes.
var filesAppended = []byte("Appended string\n")

func runFilesRW(c *Context) (Outcome, error) {
	paths := filesPaths(c.DataDir)
	picks := filesPick(c.N)
	opt := filesOptionsOf(c)
	chanPerTask, err := chanPerTaskVariant(c.Variant, "readfile")
	if err != nil {
		return Outcome{}, err
	}
	var appends uint64
	for _, k := range picks {
		if k%2 == 0 {
			appends++
		}
	}

	gate, err := filesGate(c)
	if err != nil {
		return Outcome{}, err
	}

	reads, err := runIOTasks(c.N, c.Timer, chanPerTask, func(i int, out *fileRead) error {
		path := paths[picks[i]]
		if picks[i]%2 == 0 {
			if err := appendFile(path, filesAppended, gate); err != nil {
				return err
			}
		}
		return readWhole(path, opt, out, gate)
	})
	if err != nil {
		return Outcome{}, err
	}
	// With retain=content every file's content stays reachable until here.
	runtime.KeepAlive(reads)

	sum := appends
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return Outcome{}, err
		}
		sum += uint64(st.Size())
	}
	return Outcome{Checksum: sum, TasksOK: int64(len(reads))}, nil
}

// appendFile opens path write-only for appending (creating it with mode 0644
// if missing), writes b completely and closes it, holding a slot of g from
// before the open until the close has returned. An *os.File is unbuffered:
// once Write returns, the bytes are in the file and visible to any reader.
func appendFile(path string, b []byte, g fileGate) error {
	g.acquire()
	defer g.release()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	// Write returns an error whenever it wrote fewer than len(b) bytes.
	if _, err := f.Write(b); err != nil {
		return joinErrs(err, f.Close())
	}
	return f.Close()
}
