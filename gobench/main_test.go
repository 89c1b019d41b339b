package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut, time.Now())
	return code, out.String(), errOut.String()
}

// runResult runs main with args, fails the test unless it exits 0, and
// returns the result object on the last line of its stdout.
func runResult(t *testing.T, args ...string) map[string]any {
	t.Helper()
	code, stdout, stderr := runMain(t, args...)
	if code != 0 {
		t.Fatalf("%q: exit %d: %s", args, code, stderr)
	}
	return lastLine(t, stdout)
}

// lastLine decodes the last line of stdout as a JSON object.
func lastLine(t *testing.T, stdout string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &m); err != nil {
		t.Fatalf("last line of stdout is not a JSON object: %v\n%s", err, stdout)
	}
	return m
}

func checkResult(t *testing.T, m map[string]any, workload, checksum string, n float64) {
	t.Helper()
	checkSchema(t, m)
	if m["lang"] != "go" || m["workload"] != workload || m["checksum"] != checksum ||
		m["n"] != n || m["tasks_ok"] != n {
		t.Errorf("unexpected result %v", m)
	}
	rt, _ := m["runtime"].(map[string]any)
	if rt["version"] != runtime.Version() || rt["gomaxprocs"] != m["threads"] {
		t.Errorf("runtime = %v, threads = %v", rt, m["threads"])
	}
	for _, k := range []string{"elapsed_ns", "setup_ns", "t0_mono_ns"} {
		if v, _ := m[k].(float64); v <= 0 {
			t.Errorf("%s = %v, want > 0", k, m[k])
		}
	}
}

func TestRunSleep(t *testing.T) {
	m := runResult(t, "sleep", "--n=10", "--variant", "chan-per-task",
		"--threads", "1", "--param", "work=1000")
	checkResult(t, m, "sleep", "542f24434f64913f", 10)
	if m["variant"] != "chan-per-task" || m["threads"] != 1.0 || m["threads_source"] != "--threads" {
		t.Errorf("variant/threads: %v", m)
	}
	if m["alive_at_spawn"] != 10.0 { // every task sleeps at least 42 ms at N = 10
		t.Errorf("alive_at_spawn = %v, want 10", m["alive_at_spawn"])
	}
	params, _ := m["params"].(map[string]any)
	if params["kernel"] != "xorshift" || params["work"] != "1000" {
		t.Errorf("params = %v", params)
	}
	if v, _ := m["spawned_ns"].(float64); v <= 0 {
		t.Errorf("spawned_ns = %v", m["spawned_ns"])
	}
}

func TestRunCPULoops(t *testing.T) {
	m := runResult(t, "cpu_loops", "--n", "100", "--param", "inner=1000", "--variant", "parallel")
	checkResult(t, m, "cpu_loops", "000000000006ee38", 100) // 100 elements of 0x11be
	// Without --threads the process's GOMAXPROCS stands, and the line says so.
	if m["variant"] != "parallel" || m["threads"] != float64(runtime.GOMAXPROCS(0)) || m["threads_source"] != "default" {
		t.Errorf("variant/threads: %v", m)
	}
	// The one-thread loops run and report 1 thread whatever --threads says, as Rust's do.
	for _, variant := range []string{"plain", "local", "unrolled"} {
		m = runResult(t, "cpu_loops", "--n", "100", "--param", "inner=1000", "--variant", variant, "--threads", "2")
		checkResult(t, m, "cpu_loops", "000000000006ee38", 100)
		if m["threads"] != 1.0 || m["threads_source"] != "--threads" {
			t.Errorf("%s: threads = %v (%v), want 1", variant, m["threads"], m["threads_source"])
		}
	}
	if _, ok := m["spawned_ns"]; ok {
		t.Errorf("cpu_loops reported spawned_ns: %v", m)
	}
}

// listEntry is one workload of the catalogue that "list" prints.
type listEntry struct {
	Variants       []string          `json:"variants"`
	DefaultVariant string            `json:"default_variant"`
	Params         map[string]string `json:"params"`
}

// catalogue is what "list" prints.
type catalogue struct {
	Lang      string               `json:"lang"`
	Workloads map[string]listEntry `json:"workloads"`
}

// listCatalogue runs "list" and parses its output.
func listCatalogue(t *testing.T) catalogue {
	t.Helper()
	code, stdout, stderr := runMain(t, "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var l catalogue
	if err := json.Unmarshal([]byte(stdout), &l); err != nil {
		t.Fatalf("list output is not JSON: %v\n%s", err, stdout)
	}
	return l
}

// assertUsageErrors checks that every command line exits 2 with one line on
// stderr and nothing on stdout.
func assertUsageErrors(t *testing.T, bad [][]string) {
	t.Helper()
	for _, args := range bad {
		code, stdout, stderr := runMain(t, args...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one stderr line", args, code, stdout, stderr)
		}
	}
}

func TestList(t *testing.T) {
	l := listCatalogue(t)
	if l.Lang != "go" {
		t.Errorf("lang = %q", l.Lang)
	}
	sleep, ok := l.Workloads["sleep"]
	if !ok || sleep.DefaultVariant != "waitgroup" || len(sleep.Variants) != 4 ||
		sleep.Params["kernel"] != "xorshift" || sleep.Params["work"] != "50000" {
		t.Errorf("sleep = %+v", sleep)
	}
	loops, ok := l.Workloads["cpu_loops"]
	if !ok || loops.DefaultVariant != "plain" || len(loops.Variants) != 4 ||
		loops.Params["u"] != "10" || loops.Params["inner"] != "100000" {
		t.Errorf("cpu_loops = %+v", loops)
	}
}

func TestUsageErrors(t *testing.T) {
	bad := [][]string{
		{},
		{"nosuch", "--n", "1"},
		{"sleep"},
		{"sleep", "--n", "0"},
		{"sleep", "--n", "1", "--variant", "nope"},
		{"sleep", "--n", "1", "--param", "bogus=1"},
		{"sleep", "--n", "1", "--param", "work=-1"},
		{"cpu_loops", "--n", "1", "--param", "u=0"},
		{"sleep", "--n", "1", "--threads", "0"},
	}
	assertUsageErrors(t, bad)
}

// The program built once for the tests that run it as the harness does.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// binary builds the program (once per test run) and returns its path.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not in PATH")
	}
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "gobench-test-")
		if built.err != nil {
			return
		}
		bin := filepath.Join(built.dir, "gobench")
		// -trimpath as the harness builds it (bench_src/run/build.py), which also
		// reuses the packages that build compiled.
		if out, err := exec.Command(goCmd, "build", "-trimpath", "-o", bin, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		built.bin = bin
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// TestBinary builds the program and runs it as the harness does.
func TestBinary(t *testing.T) {
	bin := binary(t)
	out, err := exec.Command(bin, "sleep", "--n", "10", "--param", "work=50000").Output()
	if err != nil {
		t.Fatalf("sleep: %v", err)
	}
	checkResult(t, lastLine(t, string(out)), "sleep", "466afa5d3cf3e4c4", 10)

	cmd := exec.Command(bin, "sleep", "--n", "0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 {
		t.Errorf("--n 0: got %v, want exit status 2", err)
	}
	if !strings.Contains(stderr.String(), "--n") {
		t.Errorf("--n 0: stderr %q", stderr.String())
	}
}
