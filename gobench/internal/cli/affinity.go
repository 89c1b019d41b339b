package cli

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// AllowedCPUs returns the CPUs the calling thread may run on (its affinity
// mask, which every thread of the process inherits unless it is changed), in
// increasing order: the CPU set the program was started on.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	n := set.Count()
	cpus := make([]int, 0, n)
	for cpu := 0; len(cpus) < n; cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("sched_getaffinity returned no CPU")
	}
	return cpus, nil
}
