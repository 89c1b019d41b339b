package workloads

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"gobench/internal/cli"
)

// runIOWorkload validates a command line with --data-dir (and the database
// URL main takes from BENCH_DSN) against a workload and runs it.
func runIOWorkload(name, variant string, n int, dataDir, dsn string, params ...cli.Param) (Outcome, *Context, error) {
	spec, ok := Lookup(name)
	if !ok {
		return Outcome{}, nil, &cli.UsageError{Msg: "unknown workload " + name}
	}
	args := cli.Args{Workload: name, N: n, Variant: variant, DataDir: dataDir, DSN: dsn, Params: params}
	c, err := spec.NewContext(args, 2)
	if err != nil {
		return Outcome{}, nil, err
	}
	out, err := spec.Run(c)
	if err != nil {
		return Outcome{}, c, err
	}
	if _, err := c.Timer.Span(); err != nil {
		return Outcome{}, c, err
	}
	return out, c, nil
}

// fixtureFile is file k of the files fixture: 3*(k+1) lines, line j being
// 63 copies of 'a' + (k+j)%26 and a newline.
func fixtureFile(k int) []byte {
	var b bytes.Buffer
	for j := range 3 * (k + 1) {
		b.Write(bytes.Repeat([]byte{byte('a' + (k+j)%26)}, 63))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// writeFilesFixture creates the 20 fixture files in a new temporary
// directory and returns it.
func writeFilesFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for k := range filesFixtureCount {
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(k)+".txt"), fixtureFile(k), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFNV1a64(t *testing.T) {
	cases := map[string]uint64{
		"":       0xcbf29ce484222325,
		"a":      0xaf63dc4c8601ec8c,
		"foobar": 0x85944171f73967e8,
	}
	for in, want := range cases {
		if got := fnv1a64([]byte(in)); got != want {
			t.Errorf("fnv1a64(%q) = %#x, want %#x", in, got, want)
		}
	}
}

func TestFixtureFile(t *testing.T) {
	f := fixtureFile(1)
	if len(f) != 6*64 || f[0] != 'b' || f[63] != '\n' || f[64] != 'c' || f[len(f)-2] != 'g' {
		t.Errorf("fixture file 1: %q", f)
	}
}

var (
	filesRetains = []string{"digest", "content"}
	filesDigests = []string{"on", "off"}
)

func TestFilesReadChecksums(t *testing.T) {
	dir := writeFilesFixture(t)
	// tests/reference.py: with digest=off the checksum is the bytes read.
	want := map[string]map[int]uint64{
		"on":  {10: 0xc83d885177b2f53f, 1000: 0x3ee62239fbe5c46b, 10000: 0x747ebf5186eb7821},
		"off": {10: 0x5280, 1000: 0x1ea500, 10000: 0x1330080},
	}
	for _, variant := range filesReadSpec.Variants {
		for _, retain := range filesRetains {
			for _, digest := range filesDigests {
				for _, n := range []int{10, 1000, 10000} {
					t.Run(fmt.Sprintf("%s/%s/%s/n=%d", variant, retain, digest, n), func(t *testing.T) {
						out, c, err := runIOWorkload("files_read", variant, n, dir, "",
							kv("retain", retain), kv("digest", digest))
						if err != nil {
							t.Fatal(err)
						}
						if w := want[digest][n]; out.Checksum != w || out.TasksOK != int64(n) {
							t.Errorf("checksum %016x tasks_ok %d, want %016x %d", out.Checksum, out.TasksOK, w, n)
						}
						if span, err := c.Timer.Span(); err != nil || !span.HasSpawns {
							t.Errorf("timer: %+v, %v", span, err)
						}
					})
				}
			}
		}
	}
}

func TestFilesRWChecksums(t *testing.T) {
	// The digest is not part of files_rw's checksum: digest=off gives the same.
	// Each includes the fixture bytes and the first byte of every task's read
	// (0xf044, 0x1f65b2 and 0x134ea4c without the first bytes; 0x9dc4, 0xc0b2
	// and 0x1e9cc, the appends and final sizes alone, left the reads out).
	want := map[int]uint64{10: 0xf472, 1000: 0x21058e, 10000: 0x14529a2}
	for _, variant := range filesRWSpec.Variants {
		for _, retain := range filesRetains {
			for _, digest := range filesDigests {
				for _, n := range []int{10, 1000, 10000} {
					t.Run(fmt.Sprintf("%s/%s/%s/n=%d", variant, retain, digest, n), func(t *testing.T) {
						dir := writeFilesFixture(t)
						out, _, err := runIOWorkload("files_rw", variant, n, dir, "", kv("retain", retain), kv("digest", digest))
						if err != nil {
							t.Fatal(err)
						}
						if out.Checksum != want[n] || out.TasksOK != int64(n) {
							t.Errorf("checksum %016x tasks_ok %d, want %016x %d", out.Checksum, out.TasksOK, want[n], n)
						}
					})
				}
			}
		}
	}
}

// TestFilesRWAppends checks the files themselves: every even file picked by
// some task got its lines appended, and odd files are untouched.
func TestFilesRWAppends(t *testing.T) {
	dir := writeFilesFixture(t)
	const n = 100
	if _, _, err := runIOWorkload("files_rw", "", n, dir, ""); err != nil {
		t.Fatal(err)
	}
	appends := make([]int, filesFixtureCount)
	for _, k := range filesPick(n) {
		if k%2 == 0 {
			appends[k]++
		}
	}
	for k := range filesFixtureCount {
		got, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(k)+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		want := append(fixtureFile(k), bytes.Repeat(filesAppended, appends[k])...)
		if !bytes.Equal(got, want) {
			t.Errorf("file %d: %d bytes, want %d (%d appends)", k, len(got), len(want), appends[k])
		}
	}
}

// TestFilesRWCreates checks that a missing even file is created by the
// append (mode 0644) and then read.
func TestFilesRWCreates(t *testing.T) {
	dir := writeFilesFixture(t)
	// Task 0 picks file 42 % 20 = 2.
	path := filepath.Join(dir, "2.txt")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	out, _, err := runIOWorkload("files_rw", "", 1, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != int64(len(filesAppended)) || st.Mode().Perm()&^0o644 != 0 {
		t.Errorf("created file: size %d mode %v", st.Size(), st.Mode())
	}
	var total uint64
	for k := range filesFixtureCount {
		if k != 2 {
			total += uint64(len(fixtureFile(k)))
		}
	}
	// Task 0's read of the created file begins with the appended string's 'A'.
	if want := 1 + total + uint64(len(filesAppended)) + 'A'; out.Checksum != want {
		t.Errorf("checksum %d, want %d", out.Checksum, want)
	}
}

func TestFilesMissingFile(t *testing.T) {
	for _, name := range []string{"files_read", "files_rw"} {
		for _, variant := range []string{"readfile", "chan-per-task"} {
			dir := t.TempDir()
			_, _, err := runIOWorkload(name, variant, 3, dir, "")
			var ue *cli.UsageError
			if !errors.Is(err, os.ErrNotExist) || errors.As(err, &ue) {
				t.Errorf("%s/%s on an empty dir: got %v, want a not-exist runtime error", name, variant, err)
			}
		}
	}
	// files_rw with a file that cannot be opened for writing.
	dir := writeFilesFixture(t)
	if err := os.Remove(filepath.Join(dir, "2.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "2.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runIOWorkload("files_rw", "", 1, dir, ""); err == nil {
		t.Error("files_rw appending to a directory: no error")
	}
}

func TestRunIOTasksErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, chanPerTask := range []bool{false, true} {
		vals, err := runIOTasks(5, new(cli.Timer), chanPerTask, func(i int, out *int) error {
			if i%2 == 1 {
				return boom
			}
			*out = i * 10
			return nil
		})
		if !errors.Is(err, boom) || err.Error() != "task 1: boom (2 of 5 tasks failed)" {
			t.Errorf("chanPerTask=%v: err = %v", chanPerTask, err)
		}
		if len(vals) != 5 || vals[4] != 40 {
			t.Errorf("chanPerTask=%v: vals = %v", chanPerTask, vals)
		}
	}
}

func TestFilesParams(t *testing.T) {
	bad := []cli.Args{
		{N: 1, DataDir: "/d", Variant: "tokio-fs"},
		{N: 1, DataDir: "/d", Params: []cli.Param{kv("retain", "all")}},
		{N: 1, DataDir: "/d", Params: []cli.Param{kv("digest", "yes")}},
		{N: 1, DataDir: "/d", Params: []cli.Param{kv("flush", "off")}},
		{N: 1, DataDir: "/d", Params: []cli.Param{kv("driver", "mattn")}},
		{N: 1},
	}
	for _, spec := range []*Spec{filesReadSpec, filesRWSpec} {
		for _, a := range bad {
			_, err := spec.NewContext(a, 1)
			var ue *cli.UsageError
			if !errors.As(err, &ue) {
				t.Errorf("%s %+v: got %v, want a UsageError", spec.Name, a, err)
			}
		}
	}
}

// TestNewFilesRun: both file workloads set up their run from the command
// line alike.
func TestNewFilesRun(t *testing.T) {
	for _, spec := range []*Spec{filesReadSpec, filesRWSpec} {
		for variant, chanPerTask := range map[string]bool{"readfile": false, "chan-per-task": true} {
			args := cli.Args{N: 7, DataDir: "/d", Variant: variant,
				Params: []cli.Param{kv("retain", "content"), kv("digest", "off")}}
			c, err := spec.NewContext(args, 1)
			if err != nil {
				t.Fatal(err)
			}
			r, err := newFilesRun(c)
			if err != nil {
				t.Fatalf("%s %s: %v", spec.Name, variant, err)
			}
			if r.chanPerTask != chanPerTask || r.opt != (filesOptions{retain: true, digest: false}) {
				t.Errorf("%s %s: chanPerTask %v, options %+v", spec.Name, variant, r.chanPerTask, r.opt)
			}
			if len(r.paths) != filesFixtureCount || r.paths[3] != "/d/3.txt" ||
				fmt.Sprint(r.picks) != fmt.Sprint(filesPick(7)) {
				t.Errorf("%s %s: paths %v, picks %v", spec.Name, variant, r.paths, r.picks)
			}
			extra := c.Extra()
			if len(extra) != 1 || extra[0].Key != "open_file_bound" || extra[0].Value != int64(cap(r.gate)) {
				t.Errorf("%s %s: extra %v, gate of %d", spec.Name, variant, extra, cap(r.gate))
			}
		}
		c := &Context{N: 1, Variant: "tokio-fs", Params: spec.Defaults(), Timer: new(cli.Timer)}
		if _, err := newFilesRun(c); err == nil {
			t.Errorf("%s: variant tokio-fs accepted", spec.Name)
		}
	}
}

// taskRead is what a files_rw task hands back for content with digest=on.
func taskRead(content []byte) rwRead {
	r := rwRead{fileRead: fileRead{size: uint64(len(content)), digest: fnv1a64(content)}}
	if len(content) > 0 {
		r.first = content[0]
	}
	return r
}

// TestFilesRWRefusesAnotherFilesRead: file 1's fixture is file 0's plus 192
// bytes, the size of 12 appends, so once file 0 got 12 appends a read of file
// 1 has a size of file 0's history. Its first byte ('b', not 'a') refuses it,
// with digest=off too, where the size alone let it pass.
func TestFilesRWRefusesAnotherFilesRead(t *testing.T) {
	dir := writeFilesFixture(t)
	paths := filesPaths(dir)
	picks := make([]uint64, 12) // 12 tasks, all of file 0
	for range picks {
		if err := appendFile(paths[0], filesAppended, newFileGate(16)); err != nil {
			t.Fatal(err)
		}
	}
	hs, err := filesRWHistories(paths, picks)
	if err != nil {
		t.Fatal(err)
	}
	h := hs[0]
	right := append(fixtureFile(0), bytes.Repeat(filesAppended, 12)...)
	wrong := fixtureFile(1)
	if len(wrong) != len(right) {
		t.Fatalf("file 1 has %d bytes, file 0 after 12 appends %d", len(wrong), len(right))
	}
	for _, digest := range []bool{false, true} {
		if got, err := h.check(taskRead(right), true, digest); err != nil || got != 192+'a' {
			t.Errorf("digest=%v, file 0 read: %d, %v; want %d", digest, got, err, 192+'a')
		}
		if _, err := h.check(taskRead(wrong), true, digest); err == nil {
			t.Errorf("digest=%v: a read of file 1 was accepted as file 0's", digest)
		}
	}
}

// TestFilesRWRefusesSwappedFiles: a fixture whose 0.txt and 1.txt hold each
// other's content fails the run with digest=on and off alike: the histories,
// taken from the files themselves, fit every read, but the reads do not begin
// with the files' letters.
func TestFilesRWRefusesSwappedFiles(t *testing.T) {
	for _, variant := range filesRWSpec.Variants {
		for _, digest := range filesDigests {
			dir := writeFilesFixture(t)
			paths := filesPaths(dir)
			if err := os.WriteFile(paths[0], fixtureFile(1), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(paths[1], fixtureFile(0), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := runIOWorkload("files_rw", variant, 100, dir, "", kv("digest", digest))
			if err == nil {
				t.Errorf("%s digest=%s: swapped files accepted", variant, digest)
			}
		}
	}
}

// TestFilesRWHistoryChecksEveryRead: a read passes only if its size and
// digest are those of the file after some number of appends and it begins
// with the file's first letter, and a task that appended must see its own
// append.
func TestFilesRWHistoryChecksEveryRead(t *testing.T) {
	dir := writeFilesFixture(t)
	paths := filesPaths(dir)
	// Two appends to file 2 (tasks 0 and 1 of N = 4 pick 2, 2, 7, 17).
	picks := filesPick(4)
	for range 2 {
		if err := appendFile(paths[2], filesAppended, newFileGate(16)); err != nil {
			t.Fatal(err)
		}
	}
	hs, err := filesRWHistories(paths, picks)
	if err != nil {
		t.Fatal(err)
	}
	h := hs[2]
	base := uint64(len(fixtureFile(2)))
	if h.base != base || h.letter != 'c' || h.appends != 2 || h.size() != base+32 {
		t.Fatalf("history %+v, want base %d and 2 appends", h, base)
	}
	for m := range uint64(3) {
		content := append(fixtureFile(2), bytes.Repeat(filesAppended, int(m))...)
		got, err := h.check(taskRead(content), m > 0, true)
		if err != nil || got != base+'c' {
			t.Errorf("m=%d: %d, %v; want %d", m, got, err, base+'c')
		}
	}
	full := append(fixtureFile(2), bytes.Repeat(filesAppended, 2)...)
	read := func(size uint64, digest uint64, first byte) rwRead {
		return rwRead{fileRead: fileRead{size: size, digest: digest}, first: first}
	}
	bad := map[string]struct {
		r        rwRead
		appended bool
		digest   bool
	}{
		"nothing read":          {read(0, 0, 0), false, false},
		"short read":            {read(base+8, 0, 'c'), false, false},
		"more than the appends": {read(base+48, 0, 'c'), false, false},
		"digest skipped":        {read(uint64(len(full)), 0, 'c'), true, true},
		"wrong content":         {read(base, fnv1a64(fixtureFile(3)[:base]), 'd'), false, true},
		"wrong first byte":      {read(uint64(len(full)), 0, 'd'), true, false},
		"first byte not handed": {read(uint64(len(full)), 0, 0), true, false},
		"own append missing":    {taskRead(fixtureFile(2)), true, true},
	}
	for name, c := range bad {
		if _, err := h.check(c.r, c.appended, c.digest); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// digest=off: the size and the first byte alone are checked.
	if got, err := h.check(read(uint64(len(full)), 0, 'c'), true, false); err != nil || got != base+'c' {
		t.Errorf("digest=off: %d, %v", got, err)
	}

	// A file that does not end in its appends is refused.
	if err := os.WriteFile(paths[4], append(fixtureFile(4), []byte("Appended strinG\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := filesRWHistories(paths, []uint64{4}); err == nil {
		t.Error("a file with a foreign tail was accepted")
	}
}
