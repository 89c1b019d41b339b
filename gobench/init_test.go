package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNoInitWork: the program's own packages build nothing at start-up
// (workload specs are static data), so that the fixed memory of a run is
// the runtime's and the drivers' alone. GODEBUG=inittrace=1 prints one line
// per package whose init runs code.
func TestNoInitWork(t *testing.T) {
	bin := binary(t)
	cmd := exec.Command(bin, "idle_tasks", "--n", "1", "--param", "duration_ms=0")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "init runtime @") {
		t.Fatalf("no init trace: %q", stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(line, "init gobench") {
			t.Errorf("package init at start-up: %s", line)
		}
	}
}
