//go:build unix

package cli

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/proctest"
)

// TestServeExec: each message runs the command with its text on stdin; the
// output comes back as one artifact, streamed in chunks, on both bindings.
func TestServeExec(t *testing.T) {
	t.Parallel()
	ts := startServe(t, "--exec", `sh -c 'echo one; cat; sleep 0.2; echo two'`)
	for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON} {
		t.Run(binding, func(t *testing.T) {
			c := ts.client(t, binding)
			resp, err := c.SendMessage(t.Context(), textRequest("ping"))
			if err != nil {
				t.Fatal(err)
			}
			task, ok := resp.Result.(*a2a.Task)
			if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Text() != "one\nping\ntwo\n" {
				t.Fatalf("result %+v", resp.Result)
			}

			var chunks []*a2a.TaskArtifactUpdateEvent
			var states []a2a.TaskState
			for ev, err := range c.SendStreamingMessage(t.Context(), textRequest("pong")) {
				if err != nil {
					t.Fatal(err)
				}
				switch e := ev.(type) {
				case *a2a.Task:
					states = append(states, e.Status.State)
				case *a2a.TaskStatusUpdateEvent:
					states = append(states, e.Status.State)
				case *a2a.TaskArtifactUpdateEvent:
					chunks = append(chunks, e)
				}
			}
			if len(states) != 3 || states[1] != a2a.TaskStateWorking || states[2] != a2a.TaskStateCompleted {
				t.Errorf("states %v", states)
			}
			var out strings.Builder
			for i, ch := range chunks {
				first, last := i == 0, i == len(chunks)-1
				if ch.Artifact.ArtifactID != "output" || ch.Append == first || ch.LastChunk != last {
					t.Errorf("chunk %d: %+v", i, ch)
				}
				out.WriteString(ch.Artifact.Text())
			}
			// The sleep splits the output in at least two chunks.
			if len(chunks) < 2 || out.String() != "one\npong\ntwo\n" {
				t.Errorf("%d chunks: %q", len(chunks), out.String())
			}
		})
	}
}

// TestServeExecFails: a command exiting non-zero fails the task with its
// exit status and the tail of its standard error.
func TestServeExecFails(t *testing.T) {
	t.Parallel()
	ts := startServe(t, "--exec", `sh -c 'echo partial; i=0; while [ $i -lt 25 ]; do echo "warning $i" >&2; i=$((i+1)); done; echo "fatal: disk full" >&2; exit 7'`)
	resp, err := ts.client(t, a2a.BindingJSONRPC).SendMessage(t.Context(), textRequest("go"))
	if err != nil {
		t.Fatal(err)
	}
	task := resp.Result.(*a2a.Task)
	if task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("state %v", task.Status.State)
	}
	text := task.Status.Message.Text()
	lines := strings.Split(text, "\n")
	if lines[0] != "sh failed: exit status 7." || len(lines) != 21 || lines[1] != "warning 6" || lines[20] != "fatal: disk full" {
		t.Errorf("status message:\n%s", text)
	}
	var data struct {
		ExitCode int    `json:"exitCode"`
		Stderr   string `json:"stderr"`
	}
	if err := task.Status.Message.Parts[1].Content.(a2a.Data).Decode(&data); err != nil || data.ExitCode != 7 || !strings.HasSuffix(data.Stderr, "fatal: disk full") {
		t.Errorf("data part %+v: %v", data, err)
	}
	if len(task.Artifacts) != 1 || task.Artifacts[0].Text() != "partial\n" {
		t.Errorf("artifacts %+v", task.Artifacts)
	}
}

// TestServeExecCanceled: canceling the task kills the command and its
// children (their pids are gone) and the task ends canceled.
func TestServeExecCanceled(t *testing.T) {
	t.Parallel()
	ts := startServe(t, "--exec", `sh -c 'sleep 30 & echo $$ $!; wait'`)
	c := ts.client(t, a2a.BindingHTTPJSON)
	var (
		taskID string
		out    strings.Builder
		pids   []int
		final  *a2a.TaskStatusUpdateEvent
		once   sync.Once
	)
	for ev, err := range c.SendStreamingMessage(t.Context(), textRequest("go")) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			taskID = e.ID
		case *a2a.TaskArtifactUpdateEvent:
			out.WriteString(e.Artifact.Text())
			if f := strings.Fields(out.String()); len(f) == 2 && strings.HasSuffix(out.String(), "\n") {
				once.Do(func() {
					for _, s := range f {
						n, _ := strconv.Atoi(s)
						pids = append(pids, n)
					}
					if _, err := ts.client(t, a2a.BindingJSONRPC).CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: taskID}); err != nil {
						t.Error(err)
					}
				})
			}
		case *a2a.TaskStatusUpdateEvent:
			final = e
		}
	}
	if final == nil || final.Status.State != a2a.TaskStateCanceled || len(pids) != 2 {
		t.Fatalf("final %+v, pids %v", final, pids)
	}
	waitFor(t, "the shell to be reaped", func() bool { exists, _ := proctest.State(pids[0]); return !exists })
	waitFor(t, "the shell's child to die", func() bool { exists, zombie := proctest.State(pids[1]); return !exists || zombie })
	waitFor(t, "the agent to return", func() bool { return ts.run.srv.Running() == 0 })
	task, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: taskID})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Errorf("task %+v: %v", task, err)
	}
	if code := ts.stop(t); code != ExitOK {
		t.Errorf("exit %d", code)
	}
	checkStore(t, ts.run.store)
}

// TestServeExecTimeout: --exec-timeout kills a run that takes too long.
func TestServeExecTimeout(t *testing.T) {
	t.Parallel()
	ts := startServe(t, "--exec", "sleep 30", "--exec-timeout", "200ms")
	resp, err := ts.client(t, a2a.BindingJSONRPC).SendMessage(t.Context(), textRequest("go"))
	if err != nil {
		t.Fatal(err)
	}
	// The status says the timeout ended it, not the 30 s sleep.
	task := resp.Result.(*a2a.Task)
	if task.Status.State != a2a.TaskStateFailed || !strings.HasPrefix(task.Status.Message.Text(), "sleep failed: timed out after ") {
		t.Errorf("task %v %q", task.Status.State, task.Status.Message.Text())
	}
}

// TestServeTestRunnerExec: --agent test-runner with --exec runs the test
// runner in real mode.
func TestServeTestRunnerExec(t *testing.T) {
	t.Parallel()
	ts := startServe(t, "--agent", "test-runner", "--exec", `printf 'ok  \texample.com/a\t0.1s\nok  \texample.com/b\t(cached)\n'`)
	resp, err := ts.client(t, a2a.BindingHTTPJSON).SendMessage(t.Context(), textRequest("Run the unit tests"))
	if err != nil {
		t.Fatal(err)
	}
	task := resp.Result.(*a2a.Task)
	if task.Status.State != a2a.TaskStateCompleted || task.Status.Message.Text() != "2 packages passed" || len(task.Artifacts) != 2 ||
		task.Artifacts[0].ArtifactID != "test-log" || task.Artifacts[1].ArtifactID != "summary" {
		t.Errorf("task %+v", task)
	}
}
