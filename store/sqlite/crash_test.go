package sqlite_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

// crashChildEnv, when set, makes TestKill9 the writer process that gets
// killed: its value is the database path.
const crashChildEnv = "A2A_SQLITE_CRASH_CHILD"

// TestKill9 kills a process that is appending, with SIGKILL, and checks
// that the database is sound, that every Append the process saw succeed is
// there, and that its unfinished tasks are orphans at once.
func TestKill9(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(t, path)
		return
	}
	path := newPath(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill9$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	// The child dies by SIGKILL, so its own failures (an error it met, a
	// data race the race detector found) never reach its exit status, and
	// go test shows nothing of a passing test: the parent looks for them
	// in the child's stderr, which exec copies into childErr until Wait
	// returns.
	var childErr bytes.Buffer
	cmd.Stderr = io.MultiWriter(os.Stderr, &childErr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Lines are "task-id seq": that Append returned nil.
	acked := make(map[string]int64)
	sc := bufio.NewScanner(out)
	for n := 0; n < 300 && sc.Scan(); n++ {
		var (
			id  string
			seq int64
		)
		if _, err := fmt.Sscanf(sc.Text(), "%s %d", &id, &seq); err != nil {
			continue // the test framework's own output
		}
		acked[id] = max(acked[id], seq)
	}
	cmd.Process.Kill()
	cmd.Wait()
	for _, bad := range []string{"WARNING: DATA RACE", "panic:", childFailed} {
		if bytes.Contains(childErr.Bytes(), []byte(bad)) {
			t.Errorf("the child's stderr has %q; see above", bad)
		}
	}
	if len(acked) == 0 {
		t.Fatal("the child acknowledged no appends")
	}

	s := openStore(t, path, sqlite.Options{})
	if err := s.Check(t.Context()); err != nil {
		t.Fatalf("Check after kill -9: %v", err)
	}
	var ids []string
	for id, seq := range acked {
		ids = append(ids, id)
		_, got, err := s.Get(t.Context(), scope, id)
		if err != nil {
			t.Errorf("Get(%s) after kill -9: %v", id, err)
			continue
		}
		if got < seq {
			t.Errorf("%s is at seq %d after kill -9, but the child saw seq %d committed", id, got, seq)
		}
		evs, err := s.Events(t.Context(), scope, id, 0)
		if err != nil || int64(len(evs)) != got {
			t.Errorf("Events(%s) = %d events, %v; want %d", id, len(evs), err, got)
		}
		for i, ev := range evs {
			if ev.Seq != int64(i)+1 {
				t.Errorf("%s: event %d has seq %d", id, i, ev.Seq)
				break
			}
		}
	}
	refs, err := s.Orphans(t.Context(), []a2a.TaskState{a2a.TaskStateWorking}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var orphans []string
	for _, ref := range refs {
		orphans = append(orphans, ref.ID)
	}
	for _, id := range ids {
		if !slices.Contains(orphans, id) {
			t.Errorf("task %s of the killed process is not an orphan (orphans: %v)", id, orphans)
		}
	}
}

// childFailed starts the lines of the child's own failures on its stderr.
const childFailed = "crash child failed:"

// crashChild appends to a few tasks until it is killed, printing each
// Append that succeeded. Each goroutine has its own err: they once shared
// the one of Open, a data race that could hand one writer another's
// outcome.
func crashChild(t *testing.T, path string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, childFailed, err)
		t.Error(err)
	}
	s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		fail(err)
		return
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			var err error
			task := newTask(fmt.Sprintf("crash-%d", w), a2a.TaskStateWorking, w)
			if err = s.Append(t.Context(), scope, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
				fail(err)
				return
			}
			for seq := int64(1); ; seq++ {
				mu.Lock()
				fmt.Printf("%s %d\n", task.ID, seq)
				mu.Unlock()
				if task, err = step(t.Context(), s, scope, task, seq, a2a.TaskStateWorking, strings.Repeat("x", 10)); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
