//go:build unix

package testrunner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/execagent"
	"github.com/goa2a/a2a/kit/testrunner"
	"github.com/goa2a/a2a/server"
)

// run sends one message to a test-runner in real mode and collects the
// stream.
func run(t *testing.T, c execagent.Command) (log string, arts []*a2a.TaskArtifactUpdateEvent, final *a2a.TaskStatusUpdateEvent) {
	t.Helper()
	h, err := server.NewHandler(testrunner.Card("http://127.0.0.1/j", "http://127.0.0.1/r"), &testrunner.Agent{Command: c})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	var b strings.Builder
	msg := a2a.NewTextMessage(a2a.RoleUser, "m1", "Run the tests")
	for ev, err := range h.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.Event.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			arts = append(arts, e)
			if e.Artifact.ArtifactID == "test-log" {
				b.WriteString(e.Artifact.Text())
			}
		case *a2a.TaskStatusUpdateEvent:
			final = e
		}
	}
	return b.String(), arts, final
}

// TestRealGoTest runs `go test -v ./...` on a small module with a passing,
// a failing and a skipped test, and checks the log, summary and result.
func TestRealGoTest(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/demo\n\ngo 1.21\n",
		"a/a_test.go": `package a

import "testing"

func TestGood(t *testing.T) {}
func TestBad(t *testing.T)  { t.Fatal("boom") }
func TestLater(t *testing.T) { t.Skip("later") }
`,
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log, arts, final := run(t, execagent.Command{
		Args: []string{goTool, "test", "-v", "-count=1", "./..."},
		Dir:  dir,
		Env:  []string{"GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local"},
	})
	if !strings.Contains(log, "--- FAIL: TestBad") || !strings.Contains(log, "--- PASS: TestGood") {
		t.Errorf("log:\n%s", log)
	}
	if final == nil || final.Status.State != a2a.TaskStateCompleted || final.Status.Message.Text() != "1 failed, 1 passed" {
		t.Fatalf("final status %+v", final)
	}
	last := arts[len(arts)-1]
	if last.Artifact.ArtifactID != "summary" || len(last.Artifact.Parts) != 1 {
		t.Fatalf("last artifact %+v", last)
	}
	var sum testrunner.Summary
	if err := last.Artifact.Parts[0].Content.(a2a.Data).Decode(&sum); err != nil {
		t.Fatal(err)
	}
	if sum.Passed != 1 || sum.Failed != 1 || sum.Skipped != 1 || sum.Unit != "test" || sum.ExitCode != 1 ||
		len(sum.Failures) != 1 || sum.Failures[0].Test != "TestBad" || !strings.HasSuffix(sum.Failures[0].Error, "boom") ||
		sum.Failures[0].Package != "example.com/demo/a" {
		t.Errorf("summary %+v", sum)
	}
	// The log is one artifact: named first, appended after, ended once.
	var logChunks []*a2a.TaskArtifactUpdateEvent
	for _, a := range arts {
		if a.Artifact.ArtifactID == "test-log" {
			logChunks = append(logChunks, a)
		}
	}
	for i, c := range logChunks {
		first, lastChunk := i == 0, i == len(logChunks)-1
		if c.Append == first || c.LastChunk != lastChunk || (c.Artifact.Name == "test-log.txt") != first {
			t.Errorf("log chunk %d: append=%v lastChunk=%v name=%q", i, c.Append, c.LastChunk, c.Artifact.Name)
		}
	}
}

// TestRealCommandFails: a command that fails without any test result
// fails the task with its exit status and the end of its output.
func TestRealCommandFails(t *testing.T) {
	t.Parallel()
	_, arts, final := run(t, execagent.Command{Args: []string{"/bin/sh", "-c", "echo 'go: cannot find main module' >&2; exit 1"}})
	if final == nil || final.Status.State != a2a.TaskStateFailed {
		t.Fatalf("final %+v", final)
	}
	if got := final.Status.Message.Text(); got != "sh failed: exit status 1.\ngo: cannot find main module" {
		t.Errorf("status message %q", got)
	}
	for _, a := range arts {
		if a.Artifact.ArtifactID == "summary" {
			t.Errorf("summary artifact for a failed run: %+v", a)
		}
	}
}
