package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gobench/internal/cpus"
)

// threadsOf runs the built program through argv (a wrapper, then the
// program and its arguments) and returns the threads of its result line.
func threadsOf(t *testing.T, argv ...string) float64 {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
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
	return threads
}

// sleepArgs is a run that takes a few milliseconds.
var sleepArgs = []string{"sleep", "--n", "10", "--param", "work=0"}

// TestThreadsAffinity: without --threads the program uses the CPUs of its
// affinity mask; --threads always wins.
func TestThreadsAffinity(t *testing.T) {
	bin := binary(t)
	if got, want := threadsOf(t, append([]string{bin}, sleepArgs...)...), cpus.Usable(); got != float64(want) {
		t.Errorf("no --threads: threads %v, want %d", got, want)
	}
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Skip("taskset not in PATH")
	}
	if got := threadsOf(t, append([]string{taskset, "-c", "0", bin}, sleepArgs...)...); got != 1 {
		t.Errorf("taskset -c 0: threads %v, want 1", got)
	}
	if got := threadsOf(t, append(append([]string{taskset, "-c", "0", bin}, sleepArgs...), "--threads", "3")...); got != 3 {
		t.Errorf("taskset -c 0 with --threads 3: threads %v, want 3", got)
	}
}

// TestThreadsCPUQuota runs the program in a new cgroup with a one-CPU quota
// (quota = period = 100000) and expects one thread. It needs root and a
// kernel that lets it create the cgroup; otherwise it skips and says why.
func TestThreadsCPUQuota(t *testing.T) {
	bin := binary(t)
	if os.Geteuid() != 0 {
		t.Skip("creating a cgroup needs root")
	}
	if a := cpus.Affinity(); a < 2 {
		t.Skipf("only %d CPU in the affinity mask: a one-CPU quota would change nothing", a)
	}
	dir, err := makeQuotaCgroup(t)
	if err != nil {
		t.Skipf("cannot create a cgroup with a CPU quota: %v", err)
	}
	script := `echo $$ > "$1/cgroup.procs" && shift && exec "$@"`
	argv := append([]string{"sh", "-c", script, "sh", dir, bin}, sleepArgs...)
	if got := threadsOf(t, argv...); got != 1 {
		t.Errorf("one-CPU quota in %s: threads %v, want 1", dir, got)
	}
}

// makeQuotaCgroup creates a cgroup with a one-CPU quota under the mount of
// the cgroup v1 cpu controller or, failing that, of a cgroup v2 hierarchy
// with the cpu controller, and removes it when the test ends.
func makeQuotaCgroup(t *testing.T) (string, error) {
	t.Helper()
	mountinfo, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	mounts := cpus.CgroupMounts(string(mountinfo))
	// v1 first: on a hybrid machine the v2 hierarchy has no cpu controller.
	slices.SortStableFunc(mounts, func(a, b cpus.Mount) int {
		switch {
		case a.V2 == b.V2:
			return 0
		case !a.V2:
			return -1
		}
		return 1
	})
	var whyNot []string
	for _, m := range mounts {
		dir := filepath.Join(m.Point, fmt.Sprintf("gobench-test-%d", os.Getpid()))
		var files [][2]string
		if m.V2 {
			ctl, err := os.ReadFile(filepath.Join(m.Point, "cgroup.controllers"))
			if err != nil || !slices.Contains(strings.Fields(string(ctl)), "cpu") {
				whyNot = append(whyNot, m.Point+": no cpu controller in cgroup v2")
				continue
			}
			if err := os.WriteFile(filepath.Join(m.Point, "cgroup.subtree_control"), []byte("+cpu"), 0); err != nil {
				whyNot = append(whyNot, fmt.Sprintf("%s: enable cpu: %v", m.Point, err))
				continue
			}
			files = [][2]string{{"cpu.max", "100000 100000"}}
		} else {
			files = [][2]string{{"cpu.cfs_period_us", "100000"}, {"cpu.cfs_quota_us", "100000"}}
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			whyNot = append(whyNot, err.Error())
			continue
		}
		t.Cleanup(func() {
			if err := os.Remove(dir); err != nil {
				t.Errorf("remove the test cgroup: %v", err)
			}
		})
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f[0]), []byte(f[1]), 0); err != nil {
				return "", fmt.Errorf("write %s: %w", f[0], err)
			}
		}
		return dir, nil
	}
	if len(whyNot) == 0 {
		return "", fmt.Errorf("no cgroup v1 cpu or cgroup v2 hierarchy mounted")
	}
	return "", fmt.Errorf("%s", strings.Join(whyNot, "; "))
}
