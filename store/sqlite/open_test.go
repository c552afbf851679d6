package sqlite_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

// openChildEnv, when set, makes TestMigrationRaceProcesses one of the
// processes that open the file: its value is the database path.
const openChildEnv = "A2A_SQLITE_OPEN_CHILD"

// openChildReady is the line a child prints once it is about to open.
const openChildReady = "open child ready"

// TestMigrationRaceProcesses is TestMigrationRace with processes: several
// open a new file at once, each with its own locks on the file (SQLite
// shares them among the connections of one process), migrate it and
// write. All succeed, and each migration is applied once.
func TestMigrationRaceProcesses(t *testing.T) {
	if path := os.Getenv(openChildEnv); path != "" {
		openChild(t, path)
		return
	}
	path := newPath(t)
	const n = 4
	type child struct {
		cmd         *exec.Cmd
		stdin       io.WriteCloser
		stderr      bytes.Buffer
		ready, done chan struct{} // it printed openChildReady; its stdout ended
	}
	children := make([]*child, n)
	for i := range children {
		c := &child{
			cmd:   exec.Command(os.Args[0], "-test.run=^TestMigrationRaceProcesses$"),
			ready: make(chan struct{}),
			done:  make(chan struct{}),
		}
		c.cmd.Env = append(os.Environ(), openChildEnv+"="+path)
		c.cmd.Stderr = &c.stderr
		out, err := c.cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if c.stdin, err = c.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			c.cmd.Process.Kill()
			<-c.done
			c.cmd.Wait()
		})
		go func() {
			defer close(c.done)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == openChildReady {
					close(c.ready)
				}
			}
		}()
		children[i] = c
	}
	// The start of a test binary takes much longer than an Open: wait
	// until they are all ready, then let them go together.
	for i, c := range children {
		select {
		case <-c.ready:
		case <-c.done:
			c.cmd.Wait()
			t.Fatalf("child %d ended before it was ready: %v\n%s", i, c.cmd.ProcessState, c.stderr.Bytes())
		}
	}
	for _, c := range children {
		c.stdin.Close()
	}
	for i, c := range children {
		<-c.done
		if err := c.cmd.Wait(); err != nil || bytes.Contains(c.stderr.Bytes(), []byte(childFailed)) {
			t.Errorf("child %d: %v\n%s", i, err, c.stderr.Bytes())
		}
	}
	checkMigrations(t, path)
	s := openStore(t, path, sqlite.Options{})
	res, err := s.List(t.Context(), scope, store.ListQuery{Limit: 2 * n})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tasks) != n {
		t.Errorf("%d tasks, want one from each of the %d children", len(res.Tasks), n)
	}
}

// openChild waits for its stdin to close, opens the store at path and
// writes a task.
func openChild(t *testing.T, path string) {
	fmt.Println(openChildReady)
	io.Copy(io.Discard, os.Stdin)
	s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, childFailed, err)
		t.Fatal(err)
	}
	defer s.Close()
	task := newTask(fmt.Sprintf("task-%d", os.Getpid()), a2a.TaskStateWorking, 0)
	if err := s.Append(t.Context(), scope, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
		fmt.Fprintln(os.Stderr, childFailed, err)
		t.Fatal(err)
	}
}
