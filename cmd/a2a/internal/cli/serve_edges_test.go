package cli_test

import (
	"os"
	"strings"
	"testing"
)

// runServe runs the built binary's a2a serve, which is meant to stop at
// once, with each of the replacements (old, new, ...) made in its output.
func runServe(t *testing.T, replace []string, args ...string) result {
	t.Helper()
	r := run(t, "\x00", append([]string{"serve"}, args...)...)
	rep := strings.NewReplacer(replace...)
	r.stdout, r.stderr = rep.Replace(r.stdout), rep.Replace(r.stderr)
	return r
}

// TestServeWildcardAddrRefused: --addr on every interface without
// --public-url is refused before anything listens, naming the fix.
func TestServeWildcardAddrRefused(t *testing.T) {
	t.Parallel()
	var replace []string
	if host, err := os.Hostname(); err == nil && host != "" {
		replace = []string{"//" + host + ":", "//HOSTNAME:"}
	}
	r := runServe(t, replace, "--addr", ":18082", "--store", "memory")
	goldenRun(t, "serve-addr-wildcard", r)
}
