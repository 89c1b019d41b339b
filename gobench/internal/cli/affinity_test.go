package cli

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestAllowedCPUs: the CPUs the kernel lists for this process in
// /proc/self/status (Cpus_allowed_list, e.g. "0-1" or "0,2-3").
func TestAllowedCPUs(t *testing.T) {
	got, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	var want []int
	for _, line := range strings.Split(string(status), "\n") {
		list, ok := strings.CutPrefix(line, "Cpus_allowed_list:")
		if !ok {
			continue
		}
		for _, part := range strings.Split(strings.TrimSpace(list), ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, _ := strconv.Atoi(lo)
			b := a
			if isRange {
				b, _ = strconv.Atoi(hi)
			}
			for cpu := a; cpu <= b; cpu++ {
				want = append(want, cpu)
			}
		}
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("AllowedCPUs() = %v, /proc/self/status lists %v", got, want)
	}
}
