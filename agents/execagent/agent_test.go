//go:build unix

package execagent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/execagent"
	"github.com/goa2a/a2a/server"
)

func newHandler(t *testing.T, c execagent.Command) *server.Handler {
	t.Helper()
	agent, err := execagent.New(c)
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.NewHandler(execagent.Card("http://127.0.0.1/a2a/jsonrpc", "http://127.0.0.1/a2a/rest", c.Args), agent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("agents still running: %v", err)
		}
	})
	return h
}

func send(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "m-"+text, text)}
}

func TestAgentCompletes(t *testing.T) {
	t.Parallel()
	h := newHandler(t, execagent.Command{Args: []string{"tr", "a-z", "A-Z"}})
	resp, err := h.SendMessage(t.Context(), send("hello"))
	if err != nil {
		t.Fatal(err)
	}
	task, ok := resp.Result.(*a2a.Task)
	if !ok {
		t.Fatalf("result %T", resp.Result)
	}
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("task %+v", task)
	}
	art := task.Artifacts[0]
	if art.ArtifactID != execagent.OutputArtifactID || art.Name != "output.txt" || art.Text() != "HELLO\n" {
		t.Errorf("artifact %+v", art)
	}
	if msg := task.Status.Message.Text(); !strings.HasPrefix(msg, "tr finished in ") || !strings.HasSuffix(msg, ": 1 line of output.") {
		t.Errorf("status message %q", msg)
	}
}

// TestAgentStreams: working, then chunks of one artifact (the first names
// it, later ones append, the last has lastChunk), then completed.
func TestAgentStreams(t *testing.T) {
	t.Parallel()
	h := newHandler(t, execagent.Command{Args: []string{"/bin/sh", "-c", "echo a; sleep 0.2; echo b"}})
	var states []a2a.TaskState
	var arts []*a2a.TaskArtifactUpdateEvent
	for ev, err := range h.SendStreamingMessage(t.Context(), send("go")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.Event.(type) {
		case *a2a.Task:
			states = append(states, e.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, e.Status.State)
		case *a2a.TaskArtifactUpdateEvent:
			arts = append(arts, e)
		}
	}
	want := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted}
	if !slices.Equal(states, want) {
		t.Errorf("states %v, want %v", states, want)
	}
	if len(arts) < 2 {
		t.Fatalf("%d artifact events", len(arts))
	}
	var text strings.Builder
	for i, a := range arts {
		first, last := i == 0, i == len(arts)-1
		if a.Artifact.ArtifactID != "output" || a.Append == first || a.LastChunk != last || (a.Artifact.Name != "") != first {
			t.Errorf("chunk %d: %+v", i, a)
		}
		text.WriteString(a.Artifact.Text())
	}
	if text.String() != "a\nb\n" {
		t.Errorf("output %q", text.String())
	}
}

func TestAgentFails(t *testing.T) {
	t.Parallel()
	h := newHandler(t, execagent.Command{Args: []string{"/bin/sh", "-c", "echo partial; echo 'something broke' >&2; exit 3"}})
	resp, err := h.SendMessage(t.Context(), send("go"))
	if err != nil {
		t.Fatal(err)
	}
	task := resp.Result.(*a2a.Task)
	if task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("state %v", task.Status.State)
	}
	msg := task.Status.Message
	if got := msg.Text(); got != "sh failed: exit status 3.\nsomething broke" {
		t.Errorf("status text %q", got)
	}
	var data struct {
		ExitCode int    `json:"exitCode"`
		Stderr   string `json:"stderr"`
	}
	if len(msg.Parts) != 2 {
		t.Fatalf("parts %+v", msg.Parts)
	}
	if err := msg.Parts[1].Content.(a2a.Data).Decode(&data); err != nil || data.ExitCode != 3 || data.Stderr != "something broke" {
		t.Errorf("data %+v: %v", data, err)
	}
	if len(task.Artifacts) != 1 || task.Artifacts[0].Text() != "partial\n" {
		t.Errorf("artifacts %+v", task.Artifacts)
	}
}

func TestAgentCannotStart(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "not-executable")
	if err := os.WriteFile(script, []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, execagent.Command{Args: []string{script}})
	resp, err := h.SendMessage(t.Context(), send("go"))
	if err != nil {
		t.Fatal(err)
	}
	task := resp.Result.(*a2a.Task)
	if task.Status.State != a2a.TaskStateFailed || !strings.Contains(task.Status.Message.Text(), "Could not start not-executable: ") {
		t.Errorf("task %v: %q", task.Status.State, task.Status.Message.Text())
	}
}

// TestAgentCanceled: CancelTask kills the program (its pid is gone) and
// the task ends canceled; the agent returns, so Close finds it done.
func TestAgentCanceled(t *testing.T) {
	t.Parallel()
	h := newHandler(t, execagent.Command{Args: []string{"/bin/sh", "-c", "echo $$; exec sleep 30"}})
	var taskID string
	pid := 0
	var final a2a.TaskState
	for ev, err := range h.SendStreamingMessage(t.Context(), send("go")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.Event.(type) {
		case *a2a.Task:
			taskID = e.ID
		case *a2a.TaskArtifactUpdateEvent:
			pid, _ = strconv.Atoi(strings.TrimSpace(e.Artifact.Text()))
			if _, err := h.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: taskID}); err != nil {
				t.Fatal(err)
			}
		case *a2a.TaskStatusUpdateEvent:
			final = e.Status.State
		}
	}
	if final != a2a.TaskStateCanceled || pid == 0 {
		t.Fatalf("final state %v, pid %d", final, pid)
	}
	waitGone(t, pid, true)
	task, err := h.GetTask(t.Context(), &a2a.GetTaskRequest{ID: taskID})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Errorf("task %+v: %v", task, err)
	}
}
