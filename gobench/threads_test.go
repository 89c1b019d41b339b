package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"gobench/internal/cli"
)

// threadsOf runs the built program through argv (a wrapper, then the
// program and its arguments) and returns the threads of its result line and
// where they came from.
func threadsOf(t *testing.T, argv ...string) (float64, any) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	// The runtime's default is the test's subject: no GOMAXPROCS from the
	// environment (the harness removes it too).
	for _, kv := range cmd.Environ() {
		if !strings.HasPrefix(kv, "GOMAXPROCS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%q: %v\n%s", argv, err, stderr.String())
	}
	m := lastLine(t, string(out))
	rt, _ := m["runtime"].(map[string]any)
	if rt["gomaxprocs"] != m["threads"] {
		t.Errorf("runtime.gomaxprocs %v != threads %v", rt["gomaxprocs"], m["threads"])
	}
	threads, _ := m["threads"].(float64)
	return threads, m["threads_source"]
}

// sleepArgs is a run that takes a few milliseconds.
var sleepArgs = []string{"sleep", "--n", "10", "--param", "work=0"}

// TestThreadsFlagAndDefault: --threads sets GOMAXPROCS whatever the
// affinity mask; without it the runtime's default GOMAXPROCS stands (one CPU
// in the mask: 1) and the result line says it is the default.
func TestThreadsFlagAndDefault(t *testing.T) {
	bin := binary(t)
	for _, threads := range []int{1, 3} {
		got, source := threadsOf(t, append([]string{bin}, append(sleepArgs, "--threads", strconv.Itoa(threads))...)...)
		if got != float64(threads) || source != "--threads" {
			t.Errorf("--threads %d: threads %v from %v", threads, got, source)
		}
	}
	if got, source := threadsOf(t, append([]string{bin}, sleepArgs...)...); got < 1 || source != "default" {
		t.Errorf("no --threads: threads %v from %v, want at least 1 from the default", got, source)
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset not in PATH")
	}
	if got, source := threadsOf(t, append([]string{taskset, "-c", "0", bin}, sleepArgs...)...); got != 1 || source != "default" {
		t.Errorf("taskset -c 0: threads %v from %v, want 1 from the default", got, source)
	}
	if got, source := threadsOf(t, append(append([]string{taskset, "-c", "0", bin}, sleepArgs...), "--threads", "3")...); got != 3 || source != "--threads" {
		t.Errorf("taskset -c 0 with --threads 3: threads %v from %v, want 3 from --threads", got, source)
	}
}

// TestCPUsReportTheAffinityMask: the result line names the CPUs the program
// was started on: CPU 0 alone under taskset -c 0 (and CPU 1 alone where the
// machine has it).
func TestCPUsReportTheAffinityMask(t *testing.T) {
	bin := binary(t)
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset not in PATH")
	}
	all, err := cli.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	for _, cpu := range all[:min(2, len(all))] {
		out, err := exec.Command(taskset, append([]string{"-c", strconv.Itoa(cpu), bin}, sleepArgs...)...).Output()
		if err != nil {
			t.Fatalf("taskset -c %d: %v", cpu, err)
		}
		m := lastLine(t, string(out))
		if got, _ := m["cpus"].([]any); len(got) != 1 || got[0] != float64(cpu) {
			t.Errorf("taskset -c %d: cpus %v, want [%d]", cpu, m["cpus"], cpu)
		}
	}
}
