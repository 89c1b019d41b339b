package workloads

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
)

// files_rw: task i picks file k = lcg(42)[i] % 20; if k is even it appends
// "Appended string\n" to DIR/<k>.txt; then every task reads DIR/<k>.txt whole
// and digests it. After the timer stops, every task's read is checked
// against the contents its file can have had (filesRWHistory), and its first
// byte against file k's first letter. Checksum: number of appends plus the
// total size of the 20 files, plus for every read its fixture bytes (its size
// less the appended strings it held) and its first byte.
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

// rwRead is what one task of files_rw hands back: its read, and the first
// byte of what it read (0 if it read nothing), which says which file it read
// even with digest=off.
type rwRead struct {
	fileRead
	first byte
}

// readWholeFirst is readWhole (which files_read keeps as it is) for
// files_rw: the same read, size, digest and retained content, and the first
// byte read besides. The file is open, and holds a slot of g, only inside
// os.ReadFile.
func readWholeFirst(path string, opt filesOptions, out *rwRead, g fileGate) error {
	g.acquire()
	b, err := os.ReadFile(path)
	g.release()
	if err != nil {
		return err
	}
	out.size = uint64(len(b))
	if len(b) > 0 {
		out.first = b[0]
	}
	if opt.digest {
		out.digest = fnv1a64(b)
	}
	if opt.retain {
		out.content = b
	}
	return nil
}

func runFilesRW(c *Context) (Outcome, error) {
	r, err := newFilesRun(c)
	if err != nil {
		return Outcome{}, err
	}
	var appends uint64
	for _, k := range r.picks {
		if k%2 == 0 {
			appends++
		}
	}

	reads, err := runIOTasks(c.N, c.Timer, r.chanPerTask, func(i int, out *rwRead) error {
		path := r.paths[r.picks[i]]
		if r.picks[i]%2 == 0 {
			if err := appendFile(path, filesAppended, r.gate); err != nil {
				return err
			}
		}
		return readWholeFirst(path, r.opt, out, r.gate)
	})
	if err != nil {
		return Outcome{}, err
	}
	// With retain=content every file's content stays reachable until here.
	runtime.KeepAlive(reads)

	histories, err := filesRWHistories(r.paths, r.picks)
	if err != nil {
		return Outcome{}, err
	}
	sum := appends
	for _, h := range histories {
		sum += h.size()
	}
	for i, read := range reads {
		k := r.picks[i]
		part, err := histories[k].check(read, k%2 == 0, r.opt.digest)
		if err != nil {
			return Outcome{}, fmt.Errorf("task %d, %s: %w", i, r.paths[k], err)
		}
		sum += part
	}
	return Outcome{Checksum: sum, TasksOK: int64(len(reads))}, nil
}

// fileHistory is every content a file of files_rw can have held during a
// run: its fixture content followed by m appended strings, m = 0 .. appends,
// in that order (an append adds the whole string or nothing: one write of 16
// bytes, which never straddles a page since every size is a multiple of 16).
type fileHistory struct {
	// base is the size of the fixture content.
	base uint64
	// letter is the first byte of the fixture content of file k:
	// 'a' + k%26 (fixtureLetter).
	letter byte
	// appends is the number of tasks that appended to the file.
	appends uint64
	// digests[m] is the FNV-1a digest of the content after m appends.
	digests []uint64
}

func (h fileHistory) size() uint64 {
	return h.base + h.appends*uint64(len(filesAppended))
}

// fixtureLetter is the first byte of fixture file k: its line 0 is made of
// the letter 'a' + k%26.
func fixtureLetter(k int) byte {
	return byte('a' + k%26)
}

// first is the first byte of the file's content at size: the fixture's
// letter, or with no fixture content (a file the appends created) the
// appended string's, or 0 for nothing.
func (h fileHistory) first(size uint64) byte {
	switch {
	case h.base > 0:
		return h.letter
	case size > 0:
		return filesAppended[0]
	}
	return 0
}

// check returns what one task's read adds to the checksum: its fixture bytes
// (its size less the appended strings it held) plus its first byte. It
// returns an error if no content of the file's history has that size (and,
// with digest, that digest), if the read does not begin with the file's first
// byte (a read of another file), or if a task that appended read the file
// without its own append.
func (h fileHistory) check(r rwRead, appended, digest bool) (uint64, error) {
	step := uint64(len(filesAppended))
	if r.size < h.base || (r.size-h.base)%step != 0 || (r.size-h.base)/step > h.appends {
		return 0, fmt.Errorf("read %d bytes, but the file only ever had %d + 16 m bytes, m = 0 .. %d",
			r.size, h.base, h.appends)
	}
	m := (r.size - h.base) / step
	if want := h.first(r.size); r.first != want {
		return 0, fmt.Errorf("read %d bytes beginning with %q, but the file begins with %q",
			r.size, r.first, want)
	}
	if appended && m == 0 {
		return 0, fmt.Errorf("read %d bytes, the file without the task's own append", r.size)
	}
	if digest && r.digest != h.digests[m] {
		return 0, fmt.Errorf("read %d bytes with digest %016x, but the file had digest %016x at that size",
			r.size, r.digest, h.digests[m])
	}
	return h.base + uint64(r.first), nil
}

// filesRWHistories reads the 20 files after the tasks (outside the timer)
// and returns the history of each: the final file must end in exactly one
// appended string per appending task, and what comes before them is the
// fixture content.
func filesRWHistories(paths []string, picks []uint64) ([]fileHistory, error) {
	appends := make([]uint64, len(paths))
	for _, k := range picks {
		if k%2 == 0 {
			appends[k]++
		}
	}
	step := uint64(len(filesAppended))
	histories := make([]fileHistory, len(paths))
	for k, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		tail := appends[k] * step
		if uint64(len(b)) < tail {
			return nil, fmt.Errorf("%s: %d bytes after %d appends of %d bytes", p, len(b), appends[k], step)
		}
		base := uint64(len(b)) - tail
		h := fileHistory{base: base, letter: fixtureLetter(k), appends: appends[k], digests: make([]uint64, appends[k]+1)}
		h.digests[0] = fnv1a64(b[:base])
		for m := range appends[k] {
			s := b[base+m*step : base+(m+1)*step]
			if !bytes.Equal(s, filesAppended) {
				return nil, fmt.Errorf("%s: append %d of %d is %q", p, m+1, appends[k], s)
			}
			h.digests[m+1] = fnv1a64More(h.digests[m], s)
		}
		histories[k] = h
	}
	return histories, nil
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
