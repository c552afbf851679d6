//go:build unix

// Package proctest tells tests whether a process is gone.
package proctest

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// State reports whether process pid exists and, when it does, whether it
// is a zombie (dead, waiting for its parent to reap it). Zombies are only
// seen through /proc, on Linux.
func State(pid int) (exists, zombie bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err == nil {
		// The state is the field after the parenthesised command name.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
			s := b[i+2]
			return true, s == 'Z' || s == 'X'
		}
		return true, false
	}
	if _, perr := os.Stat("/proc/self/stat"); perr == nil {
		return false, false // /proc works, and pid is not in it
	}
	err = syscall.Kill(pid, 0)
	return !errors.Is(err, syscall.ESRCH), false
}
