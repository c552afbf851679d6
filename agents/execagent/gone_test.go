//go:build unix

package execagent_test

import (
	"testing"
	"time"

	"github.com/goa2a/a2a/internal/proctest"
)

// waitGone waits for process pid to be gone. With reaped, a zombie does
// not count: the process was our child, and we must have waited for it.
// Without, a zombie counts as gone: an orphan is its init's to reap.
func waitGone(t *testing.T, pid int, reaped bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		exists, zombie := proctest.State(pid)
		if !exists || (zombie && !reaped) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("process %d still exists (zombie: %v)", pid, zombie)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
