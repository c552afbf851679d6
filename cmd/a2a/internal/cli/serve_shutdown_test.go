//go:build unix

package cli

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/internal/proctest"
)

// streamResult is how a stream ended: its last event and its error.
type streamResult struct {
	last any // a2a.Event, or the result of a blocking send
	err  error
}

// inFlight opens a stream and a blocking send against ts and waits until
// both tasks run. onArtifact sees the stream's artifact text.
func inFlight(t *testing.T, ts *testServe, c *client.Client, onArtifact func(string)) (<-chan streamResult, <-chan streamResult) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	streamc := make(chan streamResult, 1)
	go func() {
		var r streamResult
		for ev, err := range c.SendStreamingMessage(ctx, textRequest("stream")) {
			if err != nil {
				r.err = err
				break
			}
			r.last = ev
			if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && onArtifact != nil {
				onArtifact(a.Artifact.Text())
			}
		}
		streamc <- r
	}()
	sendc := make(chan streamResult, 1)
	go func() {
		resp, err := c.SendMessage(ctx, textRequest("blocking"))
		if err != nil {
			sendc <- streamResult{err: err}
			return
		}
		sendc <- streamResult{last: resp.Result}
	}()
	waitFor(t, "two running tasks", func() bool { return ts.run.srv.Running() == 2 })
	return streamc, sendc
}

func receive(t *testing.T, what string, c <-chan streamResult) streamResult {
	t.Helper()
	select {
	case r := <-c:
		return r
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not end", what)
		return streamResult{}
	}
}

// TestServeShutdownLetsTasksFinish: on shutdown, tasks that finish within
// the grace period complete normally: the open stream gets its final
// event, the blocking send its completed task. Meanwhile /readyz says 503
// and no new connection is accepted.
func TestServeShutdownLetsTasksFinish(t *testing.T) {
	t.Parallel()
	ts := startServe(t, "--exec", `sh -c 'sleep 1; echo done'`, "--grace", "20s", "--ops-addr", "127.0.0.1:0")
	streamc, sendc := inFlight(t, ts, ts.client(t, a2a.BindingHTTPJSON), nil)

	start := time.Now()
	ts.cancel() // SIGTERM
	waitFor(t, "/readyz to say 503", func() bool { code, _ := httpGet(t, ts.ops+"/readyz"); return code == http.StatusServiceUnavailable })
	if code, _ := httpGet(t, ts.ops+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d while shutting down", code)
	}
	waitFor(t, "new connections to be refused", func() bool {
		resp, err := http.Get(ts.base + "/.well-known/agent-card.json")
		if err == nil {
			resp.Body.Close()
		}
		return err != nil
	})

	s := receive(t, "the stream", streamc)
	if ev, ok := s.last.(*a2a.TaskStatusUpdateEvent); s.err != nil || !ok || ev.Status.State != a2a.TaskStateCompleted {
		t.Errorf("stream ended with %+v, %v", s.last, s.err)
	}
	b := receive(t, "the blocking send", sendc)
	if task, ok := b.last.(*a2a.Task); b.err != nil || !ok || task.Status.State != a2a.TaskStateCompleted || task.Artifacts[0].Text() != "done\n" {
		t.Errorf("blocking send returned %+v, %v", b.last, b.err)
	}
	if code := ts.stop(t); code != ExitOK {
		t.Errorf("exit %d\n%s", code, ts.stderr.String())
	}
	// Generous, for a busy machine: what it catches is a drain that
	// hangs on, not a slow one.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	tasks := checkStore(t, ts.run.store)
	if len(tasks) != 2 {
		t.Errorf("%d tasks stored", len(tasks))
	}
	for _, task := range tasks {
		if task.Status.State != a2a.TaskStateCompleted {
			t.Errorf("task %s %v", task.ID, task.Status.State)
		}
	}
	if !strings.Contains(ts.stdout.String(), "stopping: letting 2 running task(s) finish (up to 20s)\nstopped\n") {
		t.Errorf("stdout:\n%s", ts.stdout.String())
	}
}

// TestServeShutdownGraceExpires: tasks still running when the grace period
// ends are canceled: their processes are killed, the tasks fail saying the
// server shut down, the stream ends with an error frame, the blocking send
// with an error, and the server exits 0 within the grace period.
func TestServeShutdownGraceExpires(t *testing.T) {
	t.Parallel()
	ts := startServe(t, "--exec", `sh -c 'echo $$; exec sleep 30'`, "--grace", "2s")
	pidc := make(chan int, 1)
	streamc, sendc := inFlight(t, ts, ts.client(t, a2a.BindingJSONRPC), func(text string) {
		if pid, err := strconv.Atoi(strings.TrimSpace(text)); err == nil {
			pidc <- pid
		}
	})
	var pid int
	select {
	case pid = <-pidc:
	case <-time.After(10 * time.Second):
		t.Fatal("no pid from the stream")
	}

	start := time.Now()
	ts.cancel() // SIGTERM
	s := receive(t, "the stream", streamc)
	if !errors.Is(s.err, a2a.ErrUnavailable) && !errors.Is(s.err, a2a.ErrInternal) {
		t.Errorf("stream ended with %+v, %v; want an unavailable error frame", s.last, s.err)
	}
	if b := receive(t, "the blocking send", sendc); b.err == nil {
		t.Errorf("blocking send returned %+v", b.last)
	}
	if code := ts.stop(t); code != ExitOK {
		t.Errorf("exit %d\n%s", code, ts.stderr.String())
	}
	// The commands sleep 30 s: a server that waited for them rather than
	// for its grace would take that long. The limit is far above the
	// grace, for a busy machine.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("shutdown took %v with a grace of 2s and commands that sleep 30s", d)
	}
	waitFor(t, "the command to be killed", func() bool { exists, _ := proctest.State(pid); return !exists })
	tasks := checkStore(t, ts.run.store)
	if len(tasks) != 2 {
		t.Errorf("%d tasks stored", len(tasks))
	}
	for _, task := range tasks {
		if task.Status.State != a2a.TaskStateFailed || task.Status.Message.Text() != "The server shut down before the task finished." {
			t.Errorf("task %s %v %q", task.ID, task.Status.State, task.Status.Message.Text())
		}
	}
}
