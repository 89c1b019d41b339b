package main

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
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
	m := runResult(t, "files_read", "--n", "1000", "--data-dir", dir,
		"--variant", "chan-per-task", "--param", "retain=content")
	checkResult(t, m, "files_read", "3ee62239fbe5c46b", 1000)
	if params, _ := m["params"].(map[string]any); params["retain"] != "content" {
		t.Errorf("params = %v", m["params"])
	}

	m2 := runResult(t, "files_rw", "--n", "10", "--data-dir", dir)
	checkResult(t, m2, "files_rw", "000000000000f472", 10)

	// Both report the bound on files open at once: the soft open-file limit,
	// which run raised to the hard limit, less a reserve.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	for _, r := range []map[string]any{m, m2} {
		if b, ok := r["open_file_bound"].(float64); !ok || b < 16 || b >= float64(lim.Cur) {
			t.Errorf("%v: open_file_bound = %v with a soft limit of %d", r["workload"], r["open_file_bound"], lim.Cur)
		}
	}
}

// TestRunIOFailures checks that a failing read, open or connection exits 1
// with one line on stderr that carries the OS or driver message and never
// the password of BENCH_DSN.
func TestRunIOFailures(t *testing.T) {
	empty := t.TempDir()
	cases := []struct {
		dsn  string
		args []string
		want string
	}{
		{"", []string{"files_read", "--n", "5", "--data-dir", empty}, "no such file or directory"},
		{"", []string{"files_rw", "--n", "5", "--data-dir", empty, "--variant", "chan-per-task"}, "no such file or directory"},
		{"", []string{"sqlite", "--n", "5", "--data-dir", empty}, "users.db: no such file or directory"},
		{"mysql://u:secret@127.0.0.1:1/db", []string{"mysql", "--n", "5"}, "connection refused"},
		{"postgres://u:secret@127.0.0.1:1/db", []string{"postgres", "--n", "5"}, "connection refused"},
		{"u:secret@tcp(h:1)/db", []string{"mysql", "--n", "5"}, "invalid BENCH_DSN u:***@tcp(h:1)/db"},
		{"mysql://u:secret@h:port/db", []string{"mysql", "--n", "5"}, "invalid BENCH_DSN mysql://u:***@h:port/db"},
		{"postgres://u:secret@h:1/db?pool_max_conns=3", []string{"postgres", "--n", "5"}, "invalid BENCH_DSN postgres://u:***@h:1/db"},
	}
	for _, c := range cases {
		t.Setenv("BENCH_DSN", c.dsn)
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
		{"files_read", "--n", "1", "--data-dir", "/d", "--param", "digest=yes"},
		{"files_rw", "--n", "1", "--data-dir", "/d", "--param", "flush=off"},
		{"files_rw", "--n", "1", "--data-dir", "/d", "--variant", "tokio-fs"},
		{"sqlite", "--n", "1", "--data-dir", "/d", "--param", "driver=sqlx"},
		{"sqlite", "--n", "1", "--data-dir", "/d", "--param", "journal=memory"},
		{"sqlite", "--n", "1", "--data-dir", "/d", "--param", "pool=-1"},
		{"mysql", "--n", "1", "--param", "pool=0"},
		{"postgres", "--n", "1", "--param", "driver=sqlx"},
		{"postgres", "--n", "1", "--variant", "serialized-writes"},
	}
	t.Setenv("BENCH_DSN", "mysql://u:p@h/db")
	assertUsageErrors(t, bad)
}

// TestDSNFromEnvironment: --dsn is refused (exit 2, naming BENCH_DSN); a
// server workload without BENCH_DSN exits 2 naming it; a workload without a
// server ignores it.
func TestDSNFromEnvironment(t *testing.T) {
	t.Setenv("BENCH_DSN", "mysql://u:secret@127.0.0.1:1/db")
	for _, args := range [][]string{
		{"mysql", "--n", "1", "--dsn", "mysql://u:secret@127.0.0.1:1/db"},
		{"sleep", "--n", "1", "--dsn=postgres://u:secret@h/db"},
	} {
		code, stdout, stderr := runMain(t, args...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 ||
			!strings.Contains(stderr, "--dsn is not accepted") || !strings.Contains(stderr, "BENCH_DSN") ||
			strings.Contains(stderr, "secret") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 naming BENCH_DSN", args, code, stdout, stderr)
		}
	}

	for _, dsn := range []string{"", "unset"} {
		if dsn == "unset" {
			os.Unsetenv("BENCH_DSN") // t.Setenv above restores it
		} else {
			t.Setenv("BENCH_DSN", dsn)
		}
		for _, w := range []string{"mysql", "postgres"} {
			code, stdout, stderr := runMain(t, w, "--n", "1")
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 ||
				!strings.Contains(stderr, w+": needs a database server: set the environment variable BENCH_DSN") {
				t.Errorf("%s with BENCH_DSN %s: exit %d, stdout %q, stderr %q", w, dsn, code, stdout, stderr)
			}
		}
	}

	t.Setenv("BENCH_DSN", "not even a URL")
	checkResult(t, runResult(t, "sleep", "--n", "3", "--param", "work=0"), "sleep", "0000000000000219", 3)
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

// TestServerDSNFromEnvironment gives the test servers' address to the
// program through BENCH_DSN with a wrong password: the driver's
// authentication error must come back (exit 1), which shows that the URL
// reached the driver, and no password may appear. (A run that succeeds
// writes to the users table, which the server tests of the workloads
// package, running in parallel, own.)
func TestServerDSNFromEnvironment(t *testing.T) {
	for _, s := range []struct{ workload, env, want string }{
		{"mysql", "BENCH_TEST_MYSQL_DSN", "Access denied for user"},
		{"postgres", "BENCH_TEST_POSTGRES_DSN", "password authentication failed"},
	} {
		t.Run(s.workload, func(t *testing.T) {
			dsn := os.Getenv(s.env)
			if dsn == "" {
				t.Skipf("%s not set: no server to test against", s.env)
			}
			u, err := url.Parse(dsn)
			if err != nil {
				t.Fatalf("%s does not parse", s.env)
			}
			right, _ := u.User.Password()
			const wrong = "not-the-password-7f3a"
			u.User = url.UserPassword(u.User.Username(), wrong)
			t.Setenv("BENCH_DSN", u.String())
			code, stdout, stderr := runMain(t, s.workload, "--n", "1", "--param", "pool=1")
			if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, s.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 1 and one line with %q", code, stdout, stderr, s.want)
			}
			if strings.Contains(stderr, wrong) || (right != "" && strings.Contains(stderr, right)) {
				t.Errorf("stderr shows a password: %q", stderr)
			}
		})
	}
}
