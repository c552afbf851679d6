//go:build unix

package sqlite_test

import (
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store/sqlite"
)

// TestFileMode: a new database file, its write-ahead log and its shared
// memory file are readable and writable by their owner only, whatever the
// umask; a file that exists keeps its mode, and the other two follow it.
func TestFileMode(t *testing.T) {
	for _, tc := range []struct {
		name  string
		umask int
		exist fs.FileMode // the mode of a file made before Open; 0: none
		want  fs.FileMode
	}{
		{"umask 022", 0o022, 0, 0o600},
		{"umask 000", 0, 0, 0o600},
		{"umask 277", 0o277, 0, 0o600},
		{"existing 0640", 0o022, 0o640, 0o640},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := newPath(t)
			if tc.exist != 0 {
				if err := os.WriteFile(path, nil, tc.exist); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tc.exist); err != nil { // whatever the umask
					t.Fatal(err)
				}
			}
			old := syscall.Umask(tc.umask)
			s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
			if err == nil {
				// A write, so that the log and the shared memory exist.
				create(t, s, scope, newTask("task-1", a2a.TaskStateWorking, 0))
			}
			syscall.Umask(old)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				fi, err := os.Stat(p)
				if err != nil {
					t.Error(err)
					continue
				}
				if got := fi.Mode().Perm(); got != tc.want {
					t.Errorf("%s has mode %v, want %v", p, got, tc.want)
				}
			}
		})
	}
}
