//go:build unix

package cli_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
	"github.com/goa2a/a2a/store/sqlite"
	"github.com/jackc/pgx/v5"
)

// The crash tests run a2a serve as a child process on a durable store,
// drive hundreds of concurrent blocking and streaming sends at it, kill -9
// it in the middle, start it again on the same store and check the promise
// of the task log: every task state and artifact chunk a client saw is
// still there, and no task is left submitted or working once the restarted
// server has recovered.

// crashWorkers is how many clients send at once, half blocking, half
// streaming, each sending task after task.
const crashWorkers = 240

// seen is what clients saw of one task.
type seen struct {
	state     a2a.TaskState
	artifacts map[string]string // artifact id -> text of the chunks seen
}

// observations collects what every client saw.
type observations struct {
	mu       sync.Mutex
	tasks    map[string]*seen
	finished atomic.Int64 // tasks seen in a terminal state
}

func stateRank(s a2a.TaskState) int {
	switch {
	case s == a2a.TaskStateSubmitted:
		return 1
	case s == a2a.TaskStateWorking:
		return 2
	case s.Terminal():
		return 3
	}
	return 0
}

func (o *observations) task(id string) *seen {
	s := o.tasks[id]
	if s == nil {
		s = &seen{artifacts: map[string]string{}}
		o.tasks[id] = s
	}
	return s
}

// saw records a state of a task. Callers hold o.mu.
func (o *observations) saw(id string, st a2a.TaskState) {
	s := o.task(id)
	if stateRank(st) > stateRank(s.state) {
		s.state = st
		if st.Terminal() {
			o.finished.Add(1)
		}
	}
}

// sawTask records a task snapshot: its state and whole artifacts.
func (o *observations) sawTask(t *a2a.Task) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.saw(t.ID, t.Status.State)
	for _, a := range t.Artifacts {
		o.task(t.ID).artifacts[a.ArtifactID] = a.Text()
	}
}

// sawEvent records a streamed event.
func (o *observations) sawEvent(ev a2a.Event) {
	switch e := ev.(type) {
	case *a2a.Task:
		o.sawTask(e)
	case *a2a.TaskStatusUpdateEvent:
		o.mu.Lock()
		o.saw(e.TaskID, e.Status.State)
		o.mu.Unlock()
	case *a2a.TaskArtifactUpdateEvent:
		o.mu.Lock()
		arts := o.task(e.TaskID).artifacts
		if e.Append {
			arts[e.Artifact.ArtifactID] += e.Artifact.Text()
		} else {
			arts[e.Artifact.ArtifactID] = e.Artifact.Text()
		}
		o.mu.Unlock()
	}
}

// crashServer is a2a serve as a child process.
type crashServer struct {
	cmd    *exec.Cmd
	stdout lines
	stderr lines
	base   string
	exited chan struct{}
}

func startCrashServer(t *testing.T, args ...string) *crashServer {
	t.Helper()
	s := &crashServer{exited: make(chan struct{})}
	s.cmd = exec.Command(binary, append([]string{"serve", "--addr", "127.0.0.1:0", "--agent", "test-runner", "--grace", "5s"}, args...)...)
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() { s.kill() })
	card := s.stdout.waitMatch(t, regexp.MustCompile(`agent card  (http://\S+)`))
	s.base = strings.TrimSuffix(card, "/.well-known/agent-card.json")
	return s
}

// kill sends SIGKILL and waits until the process is reaped, so that its
// pid is free and the next server sees it dead.
func (s *crashServer) kill() {
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

func (s *crashServer) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("a2a serve did not stop on SIGTERM\n%s", s.stderr.String())
	}
	if code := s.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("a2a serve exited %d after SIGTERM\n%s", code, s.stderr.String())
	}
}

// crashTest drives load at a server on storeArg, kills it, restarts it
// and checks what clients saw; then verify inspects the store itself.
func crashTest(t *testing.T, storeArg string, verify func(t *testing.T)) {
	args := []string{"--store", storeArg, "--data-dir", t.TempDir()}
	first := startCrashServer(t, args...)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: crashWorkers}}
	c, err := client.New(ctx, first.base, client.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}

	obs := &observations{tasks: map[string]*seen{}}
	var killed atomic.Bool
	var wg sync.WaitGroup
	prompts := []string{
		"Run the unit tests for payments-api at commit a41d7c3",
		"Run the unit tests for payments-api at commit 9f3c2e1",
		"Run the full suite for payments-api at commit a41d7c3",
		"Run the unit tests for payments-api at commit deadbee",
	}
	var sends, sendErrs atomic.Int64
	for w := range crashWorkers {
		wg.Go(func() {
			for i := 0; !killed.Load(); i++ {
				req := &a2a.SendMessageRequest{Message: client.TextMessage(prompts[(w+i)%len(prompts)])}
				sends.Add(1)
				if w%2 == 0 {
					resp, err := c.SendMessage(ctx, req)
					if err != nil {
						sendErrs.Add(1)
						return
					}
					if task, ok := resp.Result.(*a2a.Task); ok {
						obs.sawTask(task)
					}
					continue
				}
				for ev, err := range c.SendStreamingMessage(ctx, req) {
					if err != nil {
						sendErrs.Add(1)
						return
					}
					obs.sawEvent(ev)
				}
			}
		})
	}
	// Kill once tasks have finished and many are mid-way.
	deadline := time.Now().Add(30 * time.Second)
	for obs.finished.Load() < crashWorkers && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	killed.Store(true)
	first.kill()
	wg.Wait()
	cancel()

	obs.mu.Lock()
	var working, finished, chunks int
	for _, s := range obs.tasks {
		if s.state.Terminal() {
			finished++
		} else {
			working++
			if s.artifacts["test-log"] != "" {
				chunks++
			}
		}
	}
	obs.mu.Unlock()
	t.Logf("before the kill: %d sends, %d tasks seen, %d finished, %d still running (%d with log chunks seen); %d calls cut by the kill",
		sends.Load(), len(obs.tasks), finished, working, chunks, sendErrs.Load())
	if finished == 0 || working == 0 || chunks == 0 {
		t.Fatalf("the kill should come with tasks finished (%d) and running (%d), some with chunks seen (%d)", finished, working, chunks)
	}

	second := startCrashServer(t, args...)
	ctx2 := context.WithoutCancel(t.Context())
	c2, err := client.New(ctx2, second.base)
	if err != nil {
		t.Fatal(err)
	}
	// The restarted server recovers at once: its predecessor's process is
	// gone, so nothing waits for a lease to run out.
	deadline = time.Now().Add(20 * time.Second)
	for {
		left := 0
		for _, st := range []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking} {
			res, err := c2.ListTasks(ctx2, &a2a.ListTasksRequest{Status: st, PageSize: a2a.Ptr[int32](1)})
			if err != nil {
				t.Fatal(err)
			}
			left += int(res.TotalSize)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tasks still submitted or working 20s after the restart\n%s", left, second.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	obs.mu.Lock()
	defer obs.mu.Unlock()
	recovered := 0
	for id, s := range obs.tasks {
		task, err := c2.GetTask(ctx2, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Errorf("task %s, seen %v before the kill: %v", id, s.state, err)
			continue
		}
		got := task.Status.State
		switch {
		case s.state.Terminal() && got != s.state:
			t.Errorf("task %s was seen %v, is %v after the restart", id, s.state, got)
		case !got.Terminal():
			t.Errorf("task %s is %v after recovery", id, got)
		case !s.state.Terminal() && got == a2a.TaskStateFailed:
			if m := task.Status.Message; m != nil && strings.Contains(m.Text(), "stopped before the task finished") {
				recovered++
			}
		}
		stored := map[string]string{}
		for _, a := range task.Artifacts {
			stored[a.ArtifactID] = a.Text()
		}
		for aid, text := range s.artifacts {
			if !strings.HasPrefix(stored[aid], text) {
				t.Errorf("task %s: artifact %s was seen as %q, stored as %q", id, aid, text, stored[aid])
			}
		}
	}
	t.Logf("after the restart: %d tasks failed by recovery", recovered)
	if recovered == 0 {
		t.Error("no task seen running before the kill was failed by recovery")
	}
	second.stop(t)
	verify(t)
}

// verifyLogs checks every task in a store: events numbered without gaps,
// and a snapshot in the state of its last status event.
func verifyLogs(t *testing.T, st store.Store) {
	t.Helper()
	ctx := t.Context()
	var after *store.Cursor
	n := 0
	for {
		res, err := st.List(ctx, store.Scope{}, store.ListQuery{After: after, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range res.Tasks {
			n++
			evs, err := st.Events(ctx, store.Scope{}, task.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			last := a2a.TaskStateUnspecified
			for i, ev := range evs {
				if ev.Seq != int64(i+1) {
					t.Fatalf("task %s: event %d has seq %d", task.ID, i, ev.Seq)
				}
				switch p := ev.Payload.(type) {
				case *a2a.Task:
					last = p.Status.State
				case *a2a.TaskStatusUpdateEvent:
					last = p.Status.State
				}
			}
			if last != task.Status.State {
				t.Errorf("task %s: snapshot %v, last status event %v", task.ID, task.Status.State, last)
			}
		}
		if !res.More {
			break
		}
		l := res.Tasks[len(res.Tasks)-1]
		after = &store.Cursor{Timestamp: l.Status.Timestamp.Time, ID: l.ID}
	}
	t.Logf("store: %d task logs consistent", n)
	if n == 0 {
		t.Error("the store holds no tasks")
	}
}

// postgresDSN is the PostgreSQL server of the tests (see README).
func postgresDSN() string {
	if dsn := os.Getenv("A2A_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	return "host=/var/run/postgresql dbname=test"
}

func TestCrashSQLite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tasks.db")
	crashTest(t, "sqlite:"+path, func(t *testing.T) {
		st, err := sqlite.Open(t.Context(), path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.Check(t.Context()); err != nil {
			t.Errorf("PRAGMA integrity_check: %v", err)
		}
		verifyLogs(t, st)
	})
}

func TestCrashPostgres(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, postgresDSN())
	if err != nil {
		t.Fatalf("PostgreSQL is not reachable at %q (start it with .ci/postgres-up): %v", postgresDSN(), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	schema := fmt.Sprintf("crash_%d_%d", os.Getpid(), time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), postgresDSN())
		if err == nil {
			conn.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			conn.Close(context.Background())
		}
	})
	dsn := postgresDSN() + " search_path=" + schema
	crashTest(t, "postgres:"+dsn, func(t *testing.T) {
		st, err := postgres.Open(t.Context(), dsn, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.Check(t.Context()); err != nil {
			t.Errorf("Check: %v", err)
		}
		verifyLogs(t, st)
	})
}
