//go:build linux || darwin

package main

import "syscall"

// raiseFileLimit raises the soft limit of open files (RLIMIT_NOFILE) to the
// hard limit, as -streams needs a descriptor per stream on each side, and
// returns the new soft limit.
func raiseFileLimit() (uint64, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, err
	}
	if rl.Cur < rl.Max {
		rl.Cur = rl.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return 0, err
		}
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			return 0, err
		}
	}
	return uint64(rl.Cur), nil
}
