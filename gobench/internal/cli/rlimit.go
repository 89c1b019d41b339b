package cli

import (
	"fmt"
	"syscall"
)

// RaiseNoFile raises the soft open-file limit to the hard limit.
func RaiseNoFile() error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("getrlimit(RLIMIT_NOFILE): %w", err)
	}
	if lim.Cur == lim.Max {
		return nil
	}
	lim.Cur = lim.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("setrlimit(RLIMIT_NOFILE, %d): %w", lim.Max, err)
	}
	return nil
}

// NoFileSoftLimit returns the soft open-file limit.
func NoFileSoftLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("getrlimit(RLIMIT_NOFILE): %w", err)
	}
	return lim.Cur, nil
}
