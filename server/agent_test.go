package server_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

// syncBuffer is a bytes.Buffer safe for a logger used by agent goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestAgentFailsTask(t *testing.T) {
	t.Parallel()
	// An agent that started a task and then failed in any way leaves it
	// failed, with a reason, and the Handler serves on.
	tests := []struct {
		name   string
		agent  server.AgentFunc
		reason string // a substring of the failed status message
	}{
		{"panic", func(ctx context.Context, req *server.Request, w *server.Writer) error {
			if err := w.Working(ctx, "working"); err != nil {
				return err
			}
			panic("boom")
		}, "failed unexpectedly"},
		{"error", func(ctx context.Context, req *server.Request, w *server.Writer) error {
			if err := w.Working(ctx, "working"); err != nil {
				return err
			}
			return errors.New("the disk is full")
		}, "the disk is full"},
		{"return while working", func(ctx context.Context, req *server.Request, w *server.Writer) error {
			return w.Working(ctx, "working")
		}, "stopped before the task finished"},
		{"return after submitting", func(ctx context.Context, req *server.Request, w *server.Writer) error {
			return w.Submit(ctx)
		}, "stopped before the task finished"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var log syncBuffer
			h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
				if req.Message.Text() == "ok" {
					return w.Complete(ctx, "fine")
				}
				return tc.agent(ctx, req, w)
			}, server.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
			ctx := testCtx(t)
			task := sendTask(t, h, ctx, newRequest("go"))
			if task.Status.State != a2a.TaskStateFailed {
				t.Fatalf("state %v, want failed", task.Status.State)
			}
			m := task.Status.Message
			if m == nil || !strings.Contains(m.Text(), tc.reason) || m.Role != a2a.RoleAgent || m.TaskID != task.ID || m.ContextID != task.ContextID {
				t.Errorf("failed status message %+v, want an agent message of the task containing %q", m, tc.reason)
			}
			if tc.name == "panic" {
				if strings.Contains(m.Text(), "boom") {
					t.Errorf("status message %q leaks the panic value", m.Text())
				}
				if !strings.Contains(log.String(), "boom") {
					t.Errorf("log %q does not record the panic", log.String())
				}
			}
			if got := getTask(t, h, ctx, task.ID).Status.State; got != a2a.TaskStateFailed {
				t.Errorf("GetTask state %v, want failed", got)
			}
			// The Handler keeps serving.
			if got := sendTask(t, h, ctx, newRequest("ok")); got.Status.State != a2a.TaskStateCompleted {
				t.Errorf("next task %v, want completed", got.Status.State)
			}
		})
	}
}

func TestAgentFailsBeforeTask(t *testing.T) {
	t.Parallel()
	refusal := a2a.NewError(a2a.CodeContentTypeNotSupported, "no images, please").With("mediaType", "image/png")
	tests := []struct {
		name  string
		agent server.AgentFunc
		want  *a2a.Error // the kind the caller gets, through a2a.AsError
	}{
		{"returns nothing", func(ctx context.Context, req *server.Request, w *server.Writer) error {
			return nil
		}, a2a.ErrInvalidAgentResponse},
		{"panics", func(ctx context.Context, req *server.Request, w *server.Writer) error {
			panic("boom")
		}, a2a.ErrInternal},
		{"returns an error", func(ctx context.Context, req *server.Request, w *server.Writer) error {
			return errors.New("database password is hunter2")
		}, a2a.ErrInternal},
		{"returns an A2A error", func(ctx context.Context, req *server.Request, w *server.Writer) error {
			return refusal
		}, a2a.ErrContentTypeNotSupported},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
				if req.Message.Text() == "ok" {
					return w.Reply(ctx, a2a.TextPart("fine"))
				}
				return tc.agent(ctx, req, w)
			})
			ctx := testCtx(t)
			_, err := h.SendMessage(ctx, newRequest("go"))
			if err == nil {
				t.Fatal("SendMessage succeeded")
			}
			e := a2a.AsError(err) // what a binding sends
			wantErr(t, e, tc.want)
			if strings.Contains(e.Text(), "hunter2") || strings.Contains(e.Text(), "boom") {
				t.Errorf("error message %q leaks the agent's internals", e.Text())
			}
			if err := firstErr(h.SendStreamingMessage(ctx, newRequest("go"))); err == nil {
				t.Error("SendStreamingMessage succeeded")
			} else {
				wantErr(t, a2a.AsError(err), tc.want)
			}
			// No task was left behind, and the Handler keeps serving.
			res, err := h.ListTasks(ctx, &a2a.ListTasksRequest{})
			if err != nil || res.TotalSize != 0 {
				t.Errorf("ListTasks total %v (%v), want no task", res, err)
			}
			if _, err := h.SendMessage(ctx, newRequest("ok")); err != nil {
				t.Errorf("next message: %v", err)
			}
		})
	}
}

func TestAgentErrorAfterInterrupt(t *testing.T) {
	t.Parallel()
	// An interrupted task waits on the client: an error returned with it
	// does not fail it.
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.RequireInput(ctx, "Which one?"); err != nil {
			return err
		}
		return errors.New("late trouble")
	})
	ctx := testCtx(t)
	task := sendTask(t, h, ctx, newRequest("go"))
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("state %v, want input-required", task.Status.State)
	}
}

func TestWriterRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// run performs writes and returns their errors; the test checks
		// them against want.
		run  func(ctx context.Context, req *server.Request, w *server.Writer) []error
		want []error // nil entries mean success
		end  a2a.TaskState
	}{
		{"reply twice", func(ctx context.Context, req *server.Request, w *server.Writer) []error {
			return []error{w.Reply(ctx, a2a.TextPart("one")), w.Reply(ctx, a2a.TextPart("two"))}
		}, []error{nil, server.ErrReplied}, a2a.TaskStateUnspecified},
		{"task after reply", func(ctx context.Context, req *server.Request, w *server.Writer) []error {
			return []error{
				w.Reply(ctx, a2a.TextPart("one")),
				w.Submit(ctx),
				w.Working(ctx, ""),
				w.Artifact(ctx, a2a.Artifact{Parts: []a2a.Part{a2a.TextPart("x")}}),
			}
		}, []error{nil, server.ErrReplied, server.ErrReplied, server.ErrReplied}, a2a.TaskStateUnspecified},
		{"reply after task", func(ctx context.Context, req *server.Request, w *server.Writer) []error {
			return []error{w.Submit(ctx), w.Reply(ctx, a2a.TextPart("one")), w.Complete(ctx, "")}
		}, []error{nil, server.ErrReplied, nil}, a2a.TaskStateCompleted},
		{"writes after a terminal state", func(ctx context.Context, req *server.Request, w *server.Writer) []error {
			return []error{
				w.Complete(ctx, "done"),
				w.Working(ctx, "again"),
				w.Fail(ctx, "no"),
				w.Artifact(ctx, a2a.Artifact{Parts: []a2a.Part{a2a.TextPart("x")}}),
			}
		}, []error{nil, server.ErrTaskClosed, server.ErrTaskClosed, server.ErrTaskClosed}, a2a.TaskStateCompleted},
		{"invalid states", func(ctx context.Context, req *server.Request, w *server.Writer) []error {
			return []error{
				w.Status(ctx, a2a.TaskStateUnspecified, nil),
				w.Status(ctx, a2a.TaskState(42), nil),
				w.Reject(ctx, "no"),
			}
		}, []error{errAny, errAny, nil}, a2a.TaskStateRejected},
		{"artifact without parts", func(ctx context.Context, req *server.Request, w *server.Writer) []error {
			return []error{w.Artifact(ctx, a2a.Artifact{ArtifactID: "a"}), w.Complete(ctx, "")}
		}, []error{errAny, nil}, a2a.TaskStateCompleted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan []error, 1)
			h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
				got <- tc.run(ctx, req, w)
				return nil
			})
			ctx := testCtx(t)
			res, err := h.SendMessage(ctx, newRequest("go"))
			if err != nil {
				t.Fatal(err)
			}
			errs := recv(t, got)
			for i, want := range tc.want {
				switch {
				case want == nil && errs[i] != nil:
					t.Errorf("write %d: %v, want success", i, errs[i])
				case want == errAny && errs[i] == nil:
					t.Errorf("write %d succeeded, want an error", i)
				case want != nil && want != errAny && !errors.Is(errs[i], want):
					t.Errorf("write %d: %v, want %v", i, errs[i], want)
				}
			}
			if tc.end == a2a.TaskStateUnspecified {
				if m, ok := res.Result.(*a2a.Message); !ok || m.Text() != "one" {
					t.Errorf("result %#v, want the first reply", res.Result)
				}
				return
			}
			task, ok := res.Result.(*a2a.Task)
			if !ok {
				t.Fatalf("result %T, want a task", res.Result)
			}
			if task.Status.State != tc.end {
				t.Errorf("state %v, want %v", task.Status.State, tc.end)
			}
		})
	}

	t.Run("reply in a continuation", func(t *testing.T) {
		t.Parallel()
		got := make(chan error, 1)
		h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
			if req.Task == nil {
				return w.RequireInput(ctx, "Which one?")
			}
			got <- w.Reply(ctx, a2a.TextPart("a direct reply"))
			return w.Complete(ctx, "done")
		})
		ctx := testCtx(t)
		task := sendTask(t, h, ctx, newRequest("go"))
		if final := sendTask(t, h, ctx, continueRequest(task.ID, "this")); final.Status.State != a2a.TaskStateCompleted {
			t.Errorf("state %v, want completed", final.Status.State)
		}
		if err := recv(t, got); !errors.Is(err, server.ErrReplied) {
			t.Errorf("Reply in a continuation: %v, want ErrReplied", err)
		}
	})

	t.Run("generated ids and forced fields", func(t *testing.T) {
		t.Parallel()
		h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
			if err := w.Artifact(ctx, a2a.Artifact{Parts: []a2a.Part{a2a.TextPart("x")}}); err != nil {
				return err
			}
			m := &a2a.Message{MessageID: "agent-1", TaskID: "other", ContextID: "other", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("done")}}
			return w.Status(ctx, a2a.TaskStateCompleted, m)
		})
		task := sendTask(t, h, testCtx(t), newRequest("go"))
		if len(task.Artifacts) != 1 || task.Artifacts[0].ArtifactID == "" {
			t.Errorf("artifacts %+v, want one with a generated id", task.Artifacts)
		}
		m := task.Status.Message
		if m.MessageID != "agent-1" || m.TaskID != task.ID || m.ContextID != task.ContextID || m.Role != a2a.RoleAgent {
			t.Errorf("status message ids %q/%q/%q role %v, want agent-1, the task's ids, ROLE_AGENT", m.MessageID, m.TaskID, m.ContextID, m.Role)
		}
	})

	t.Run("concurrent writes", func(t *testing.T) {
		t.Parallel()
		const writers, each = 8, 25
		h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
			var wg sync.WaitGroup
			errs := make(chan error, writers*each)
			for i := range writers {
				wg.Go(func() {
					for j := range each {
						id := strconv.Itoa(i) + "-" + strconv.Itoa(j)
						errs <- w.Artifact(ctx, a2a.Artifact{ArtifactID: id, Parts: []a2a.Part{a2a.TextPart(id)}})
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					return err
				}
			}
			return w.Complete(ctx, "done")
		})
		task := sendTask(t, h, testCtx(t), newRequest("go"))
		if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != writers*each {
			t.Errorf("state %v with %d artifacts, want completed with %d", task.Status.State, len(task.Artifacts), writers*each)
		}
	})
}

// errAny stands for "some error" in TestWriterRules.
var errAny = errors.New("any error")
