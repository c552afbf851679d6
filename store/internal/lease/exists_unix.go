//go:build unix

package lease

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// processExists reports whether process pid is running. A zombie (dead,
// not yet reaped by its parent) is not running.
func processExists(pid int) bool {
	if pid <= 0 {
		return false
	}
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
			return b[i+2] != 'Z' && b[i+2] != 'X'
		}
		return true
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		return false // /proc works and pid is not in it
	}
	err := syscall.Kill(pid, 0)
	return !errors.Is(err, syscall.ESRCH)
}
