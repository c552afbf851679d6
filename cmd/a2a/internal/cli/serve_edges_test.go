package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// TestServeDataDirNotWritable: a data directory, or the directory of a
// --store sqlite:PATH, that takes no new files is named as not writable,
// rather than left to SQLite's "unable to open database file (14)".
func TestServeDataDirNotWritable(t *testing.T) {
	t.Parallel()
	dir := unwritableDir(t)
	// The golden holds the line as a person reads it, less what differs
	// by how the directory was made unwritable.
	reason := regexp.MustCompile(`\((permission denied|operation not permitted|read-only file system)\)`)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"serve-data-dir-not-writable", []string{"--data-dir", dir}},
		{"serve-data-dir-under-not-writable", []string{"--data-dir", filepath.Join(dir, "a2a")}},
		{"serve-store-not-writable", []string{"--data-dir", t.TempDir(), "--store", "sqlite:" + filepath.Join(dir, "tasks.db")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runServe(t, []string{dir, "DIR"}, append([]string{"--addr", "127.0.0.1:0"}, tc.args...)...)
			r.stderr = reason.ReplaceAllString(r.stderr, "(REASON)")
			goldenRun(t, tc.name, r)
		})
	}
}

// unwritableDir returns a directory in which this process cannot create
// files. Permission bits do that for anyone but root; for root, an
// immutable directory (chattr +i, where the file system and the
// capabilities allow) or sysfs, which takes no new files from anyone.
func unwritableDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "read-only")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	if takesFiles(dir) && exec.Command("chattr", "+i", dir).Run() == nil {
		t.Cleanup(func() { exec.Command("chattr", "-i", dir).Run() })
	}
	for _, d := range []string{dir, "/sys"} {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() && !takesFiles(d) {
			return d
		}
	}
	t.Skip("no directory refuses new files to this process (root without chattr +i, and no /sys)")
	return ""
}

// takesFiles reports whether a file can be created in dir.
func takesFiles(dir string) bool {
	f, err := os.CreateTemp(dir, "probe-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}
