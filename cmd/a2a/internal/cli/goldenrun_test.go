package cli_test

import (
	"strings"
	"testing"
	"time"
)

// runUntil runs the binary with args until its stdout holds want, and
// returns that run; it fails the test after a generous wait.
func runUntil(t *testing.T, base, want string, args ...string) result {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := run(t, base, args...)
		if strings.Contains(r.stdout, want) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("a2a %v never printed %q; last run: exit %d\nstdout:\n%s\nstderr:\n%s", args, want, r.code, r.stdout, r.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
