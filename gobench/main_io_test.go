package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// writeFiles creates the files fixture (0.txt .. 19.txt) in a new directory.
func writeFiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for k := range 20 {
		var b bytes.Buffer
		for j := range 3 * (k + 1) {
			b.Write(bytes.Repeat([]byte{byte('a' + (k+j)%26)}, 63))
			b.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(k)+".txt"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRunFiles(t *testing.T) {
	dir := writeFiles(t)
	code, stdout, stderr := runMain(t, "files_read", "--n", "1000", "--data-dir", dir,
		"--variant", "chan-per-task", "--param", "retain=content")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m := lastLine(t, stdout)
	checkResult(t, m, "files_read", "3ee62239fbe5c46b", 1000)
	if params, _ := m["params"].(map[string]any); params["retain"] != "content" {
		t.Errorf("params = %v", m["params"])
	}

	code, stdout, stderr = runMain(t, "files_rw", "--n", "10", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkResult(t, lastLine(t, stdout), "files_rw", "0000000000009dc4", 10)
}

// TestRunIOFailures checks that a failing read, open or connection exits 1
// with one line on stderr that carries the OS or driver message.
func TestRunIOFailures(t *testing.T) {
	empty := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"files_read", "--n", "5", "--data-dir", empty}, "no such file or directory"},
		{[]string{"files_rw", "--n", "5", "--data-dir", empty, "--variant", "chan-per-task"}, "no such file or directory"},
		{[]string{"sqlite", "--n", "5", "--data-dir", empty}, "users.db: no such file or directory"},
		{[]string{"mysql", "--n", "5", "--dsn", "mysql://u:secret@127.0.0.1:1/db"}, "connection refused"},
		{[]string{"postgres", "--n", "5", "--dsn", "postgres://u:secret@127.0.0.1:1/db"}, "connection refused"},
		{[]string{"mysql", "--n", "5", "--dsn", "u:secret@tcp(h:1)/db"}, "invalid --dsn"},
	}
	for _, c := range cases {
		code, stdout, stderr := runMain(t, c.args...)
		if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, c.want) || strings.Contains(stderr, "secret") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1 and one line with %q",
				c.args, code, stdout, stderr, c.want)
		}
	}
}

func TestIOUsageErrors(t *testing.T) {
	bad := [][]string{
		{"files_read", "--n", "1"},
		{"files_read", "--n", "1", "--data-dir", "/d", "--param", "retain=all"},
		{"files_rw", "--n", "1", "--data-dir", "/d", "--variant", "tokio-fs"},
		{"sqlite", "--n", "1", "--data-dir", "/d", "--param", "driver=sqlx"},
		{"sqlite", "--n", "1", "--data-dir", "/d", "--param", "journal=memory"},
		{"sqlite", "--n", "1", "--data-dir", "/d", "--param", "pool=-1"},
		{"mysql", "--n", "1", "--dsn", "mysql://u:p@h/db", "--param", "pool=0"},
		{"mysql", "--n", "1"},
		{"postgres", "--n", "1", "--dsn", "postgres://u:p@h/db", "--param", "driver=sqlx"},
		{"postgres", "--n", "1", "--dsn", "postgres://u:p@h/db", "--variant", "serialized-writes"},
	}
	assertUsageErrors(t, bad)
}

func TestListIO(t *testing.T) {
	l := listCatalogue(t)
	sq := l.Workloads["sqlite"]
	if !slices.Equal(sq.Variants, []string{"pool", "chan-per-task", "serialized-writes"}) ||
		sq.DefaultVariant != "pool" || sq.Params["journal"] != "wal" || sq.Params["pool"] != "8" ||
		sq.Params["driver"] != "mattn" {
		t.Errorf("sqlite = %+v", sq)
	}
	for _, name := range []string{"files_read", "files_rw", "mysql", "postgres"} {
		if _, ok := l.Workloads[name]; !ok {
			t.Errorf("%s missing from list", name)
		}
	}
}
