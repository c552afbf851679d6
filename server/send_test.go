package server_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

// sendResult is the outcome of a SendMessage run in a goroutine.
type sendResult struct {
	res *a2a.SendMessageResponse
	err error
}

func sendAsync(h *server.Handler, ctx context.Context, req *a2a.SendMessageRequest) <-chan sendResult {
	ch := make(chan sendResult, 1)
	go func() {
		res, err := h.SendMessage(ctx, req)
		ch <- sendResult{res, err}
	}()
	return ch
}

func TestSendMessageBlocksUntilSettled(t *testing.T) {
	t.Parallel()
	tests := []a2a.TaskState{
		a2a.TaskStateCompleted,
		a2a.TaskStateFailed,
		a2a.TaskStateRejected,
		a2a.TaskStateCanceled,
		a2a.TaskStateInputRequired,
		a2a.TaskStateAuthRequired,
	}
	for _, final := range tests {
		t.Run(final.String(), func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			working, release := make(chan struct{}), make(chan struct{})
			h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
				if err := w.Working(ctx, "working"); err != nil {
					return err
				}
				if err := w.Artifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("partial")}}); err != nil {
					return err
				}
				close(working)
				if err := await(ctx, release); err != nil {
					return err
				}
				return w.Status(ctx, final, &a2a.Message{Parts: []a2a.Part{a2a.TextPart("final")}})
			})
			done := sendAsync(h, ctx, newRequest("go"))
			recv(t, working)
			select {
			case r := <-done:
				t.Fatalf("SendMessage returned while the task was working: %+v, %v", r.res, r.err)
			default:
			}
			close(release)
			r := recv(t, done)
			if r.err != nil {
				t.Fatal(r.err)
			}
			task, ok := r.res.Result.(*a2a.Task)
			if !ok {
				t.Fatalf("result is %T, want a task", r.res.Result)
			}
			if task.Status.State != final {
				t.Errorf("returned state %v, want %v", task.Status.State, final)
			}
			if got := task.Status.Message.Text(); got != "final" {
				t.Errorf("status message %q, want %q", got, "final")
			}
			if len(task.Artifacts) != 1 || task.Artifacts[0].Text() != "partial" {
				t.Errorf("artifacts %+v, want the one emitted", task.Artifacts)
			}
		})
	}
}

func TestSendMessageReturnImmediately(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	submitted, release := make(chan string, 1), make(chan struct{})
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Message.Text() == "reply" {
			return scripted(ctx, req, w)
		}
		if err := w.Submit(ctx); err != nil {
			return err
		}
		submitted <- req.TaskID
		if err := await(ctx, release); err != nil {
			return err
		}
		return w.Complete(ctx, "done")
	})

	req := immediate(newRequest("go"))
	task := sendTask(t, h, ctx, req)
	id := recv(t, submitted) // the agent is blocked from here on
	if task.ID != id {
		t.Errorf("task id %q, want the agent's %q", task.ID, id)
	}
	if task.Status.State != a2a.TaskStateSubmitted {
		t.Errorf("state %v, want submitted", task.Status.State)
	}
	if task.Status.Timestamp.IsZero() {
		t.Error("submitted status has no timestamp")
	}
	if task.ContextID == "" {
		t.Error("task has no contextId")
	}
	if len(task.History) != 1 || task.History[0].MessageID != req.Message.MessageID {
		t.Fatalf("history %+v, want the user message", task.History)
	}
	if m := task.History[0]; m.TaskID != task.ID || m.ContextID != task.ContextID {
		t.Errorf("user message taskId=%q contextId=%q, want %q %q", m.TaskID, m.ContextID, task.ID, task.ContextID)
	}
	if got := getTask(t, h, ctx, task.ID).Status.State; got != a2a.TaskStateSubmitted {
		t.Errorf("GetTask state %v while the agent is blocked, want submitted", got)
	}
	if n := server.Subscribers(h, task.ID); n != 0 {
		t.Errorf("%d subscribers after SendMessage returned, want 0", n)
	}
	close(release)
	waitState(t, h, ctx, task.ID, a2a.TaskStateCompleted)

	t.Run("no effect on a reply", func(t *testing.T) {
		res, err := h.SendMessage(ctx, immediate(newRequest("reply")))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := res.Result.(*a2a.Message); !ok {
			t.Errorf("result is %T, want the direct message", res.Result)
		}
	})
}

func TestSendMessageDirectReply(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Message.Text() == "own message" {
			return w.ReplyMessage(ctx, &a2a.Message{MessageID: "agent-msg", TaskID: "bogus", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("mine")}})
		}
		return w.Reply(ctx, a2a.TextPart("hello"))
	})
	tests := []struct {
		name      string
		text      string
		contextID string
		wantID    string // "" means any non-empty id
		wantText  string
	}{
		{"new context", "hi", "", "", "hello"},
		{"given context", "hi", "ctx-given", "", "hello"},
		{"agent-built message", "own message", "", "agent-msg", "mine"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := testCtx(t)
			req := newRequest(tc.text)
			req.Message.ContextID = tc.contextID
			res, err := h.SendMessage(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			m, ok := res.Result.(*a2a.Message)
			if !ok {
				t.Fatalf("result is %T, want *a2a.Message", res.Result)
			}
			switch {
			case m.ContextID == "":
				t.Error("reply has no contextId")
			case tc.contextID != "" && m.ContextID != tc.contextID:
				t.Errorf("reply contextId %q, want the given %q", m.ContextID, tc.contextID)
			}
			if m.TaskID != "" {
				t.Errorf("reply taskId %q, want none", m.TaskID)
			}
			if m.Role != a2a.RoleAgent {
				t.Errorf("reply role %v, want ROLE_AGENT", m.Role)
			}
			if m.MessageID == "" || (tc.wantID != "" && m.MessageID != tc.wantID) {
				t.Errorf("reply messageId %q, want %q", m.MessageID, tc.wantID)
			}
			if m.Text() != tc.wantText {
				t.Errorf("reply text %q, want %q", m.Text(), tc.wantText)
			}
		})
	}
	t.Run("no task is created", func(t *testing.T) {
		t.Parallel()
		h := newHandler(t, nil, scripted)
		ctx := testCtx(t)
		if _, err := h.SendMessage(ctx, newRequest("reply")); err != nil {
			t.Fatal(err)
		}
		res, err := h.ListTasks(ctx, &a2a.ListTasksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if res.TotalSize != 0 {
			t.Errorf("ListTasks total %d after a direct reply, want 0", res.TotalSize)
		}
	})
}

// threeSteps reports two working statuses with messages, then completes.
func threeSteps(ctx context.Context, req *server.Request, w *server.Writer) error {
	if err := w.Working(ctx, "step 1"); err != nil {
		return err
	}
	if err := w.Working(ctx, "step 2"); err != nil {
		return err
	}
	return w.Complete(ctx, "done")
}

func TestSendMessageHistory(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	h := newHandler(t, nil, threeSteps)
	req := newRequest("do it")
	req.Message.ContextID = "ctx-1"
	task := sendTask(t, h, ctx, req)

	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %v, want completed", task.Status.State)
	}
	if want := []string{"do it", "step 1", "step 2"}; !slices.Equal(texts(task.History), want) {
		t.Fatalf("history %q, want %q", texts(task.History), want)
	}
	user := task.History[0]
	if user.MessageID != req.Message.MessageID || user.Role != a2a.RoleUser {
		t.Errorf("first history message is %s/%v, want the user's %s", user.MessageID, user.Role, req.Message.MessageID)
	}
	if user.TaskID != task.ID || user.ContextID != "ctx-1" || task.ContextID != "ctx-1" {
		t.Errorf("user message taskId=%q contextId=%q, task contextId=%q; want %q and ctx-1", user.TaskID, user.ContextID, task.ContextID, task.ID)
	}
	ids := map[string]bool{}
	for _, m := range append(task.History[1:], *task.Status.Message) {
		if m.Role != a2a.RoleAgent || m.TaskID != task.ID || m.ContextID != task.ContextID || m.MessageID == "" {
			t.Errorf("status message %q: role %v taskId %q contextId %q messageId %q; want an agent message of the task", m.Text(), m.Role, m.TaskID, m.ContextID, m.MessageID)
		}
		if ids[m.MessageID] {
			t.Errorf("message id %q repeated", m.MessageID)
		}
		ids[m.MessageID] = true
	}
	if got := task.Status.Message.Text(); got != "done" {
		t.Errorf("status message %q, want %q", got, "done")
	}
	// The caller's request is not modified.
	if req.Message.TaskID != "" {
		t.Errorf("SendMessage wrote taskId %q into the caller's message", req.Message.TaskID)
	}
}

func TestStatusMessageJoinsHistoryWhenReplaced(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	next, reached := make(chan struct{}), make(chan struct{})
	steps := []func(context.Context, *server.Writer) error{
		func(ctx context.Context, w *server.Writer) error { return w.Working(ctx, "step 1") },
		func(ctx context.Context, w *server.Writer) error { return w.Working(ctx, "") },
		func(ctx context.Context, w *server.Writer) error {
			return w.Artifact(ctx, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("x")}})
		},
		func(ctx context.Context, w *server.Writer) error { return w.Working(ctx, "step 3") },
		func(ctx context.Context, w *server.Writer) error { return w.Complete(ctx, "done") },
	}
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		for _, step := range steps {
			if err := await(ctx, next); err != nil {
				return err
			}
			if err := step(ctx, w); err != nil {
				return err
			}
			if err := w.Flush(ctx); err != nil {
				return err
			}
			reached <- struct{}{}
		}
		return nil
	})
	// The agent creates the task with its first step; return at once.
	done := sendAsync(h, ctx, immediate(newRequest("go")))
	next <- struct{}{}
	recv(t, reached)
	r := recv(t, done)
	if r.err != nil {
		t.Fatal(r.err)
	}
	id := r.res.Result.(*a2a.Task).ID

	want := []struct {
		history []string
		status  string // "" for no status message
	}{
		{[]string{"go"}, "step 1"},
		{[]string{"go", "step 1"}, ""},
		{[]string{"go", "step 1"}, ""}, // an artifact does not replace the status
		{[]string{"go", "step 1"}, "step 3"},
		{[]string{"go", "step 1", "step 3"}, "done"},
	}
	for i, w := range want {
		if i > 0 {
			next <- struct{}{}
			recv(t, reached)
		}
		task := getTask(t, h, ctx, id)
		if !slices.Equal(texts(task.History), w.history) {
			t.Errorf("after step %d: history %q, want %q", i+1, texts(task.History), w.history)
		}
		if got := task.Status.Message.Text(); got != w.status || (w.status == "") != (task.Status.Message == nil) {
			t.Errorf("after step %d: status message %v %q, want %q", i+1, task.Status.Message != nil, got, w.status)
		}
	}
}

func TestHistoryLength(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Message.Text() == "hold" {
			return w.Submit(ctx) // and return: the task fails, after the first frame
		}
		return threeSteps(ctx, req, w)
	})
	stored := sendTask(t, h, testCtx(t), newRequest("do it"))
	full := []string{"do it", "step 1", "step 2"}

	// want is the n most recent of all, nil for none.
	want := func(all []string, n *int32) []string {
		if n == nil {
			return all
		}
		if *n == 0 {
			return nil
		}
		return all[max(0, len(all)-int(*n)):]
	}
	calls := []struct {
		name  string
		field string
		all   []string // the history before trimming
		get   func(t *testing.T, ctx context.Context, n *int32) (*a2a.Task, error)
	}{
		{"SendMessage", "configuration.historyLength", full, func(t *testing.T, ctx context.Context, n *int32) (*a2a.Task, error) {
			req := newRequest("do it")
			req.Configuration = &a2a.SendMessageConfiguration{HistoryLength: n}
			res, err := h.SendMessage(ctx, req)
			if err != nil {
				return nil, err
			}
			return res.Result.(*a2a.Task), nil
		}},
		{"SendMessage returnImmediately", "configuration.historyLength", []string{"hold"}, func(t *testing.T, ctx context.Context, n *int32) (*a2a.Task, error) {
			req := immediate(newRequest("hold"))
			req.Configuration.HistoryLength = n
			res, err := h.SendMessage(ctx, req)
			if err != nil {
				return nil, err
			}
			return res.Result.(*a2a.Task), nil
		}},
		{"SendStreamingMessage first frame", "configuration.historyLength", []string{"hold"}, func(t *testing.T, ctx context.Context, n *int32) (*a2a.Task, error) {
			req := newRequest("hold")
			req.Configuration = &a2a.SendMessageConfiguration{HistoryLength: n}
			for ev, err := range h.SendStreamingMessage(ctx, req) {
				if err != nil {
					return nil, err
				}
				return asTask(t, ev), nil
			}
			t.Fatal("empty stream")
			return nil, nil
		}},
		{"GetTask", "historyLength", full, func(t *testing.T, ctx context.Context, n *int32) (*a2a.Task, error) {
			return h.GetTask(ctx, &a2a.GetTaskRequest{ID: stored.ID, HistoryLength: n})
		}},
		{"ListTasks", "historyLength", full, func(t *testing.T, ctx context.Context, n *int32) (*a2a.Task, error) {
			res, err := h.ListTasks(ctx, &a2a.ListTasksRequest{HistoryLength: n})
			if err != nil {
				return nil, err
			}
			for i := range res.Tasks {
				if res.Tasks[i].ID == stored.ID {
					return &res.Tasks[i], nil
				}
			}
			t.Fatalf("ListTasks does not list task %s", stored.ID)
			return nil, nil
		}},
	}
	lengths := []*int32{nil, a2a.Ptr[int32](0), a2a.Ptr[int32](1), a2a.Ptr[int32](2), a2a.Ptr[int32](3), a2a.Ptr[int32](100), a2a.Ptr[int32](-1), a2a.Ptr[int32](-100)}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, n := range lengths {
				name := "unset"
				if n != nil {
					name = strconv.Itoa(int(*n))
				}
				t.Run(name, func(t *testing.T) {
					ctx := v1(testCtx(t))
					task, err := c.get(t, ctx, n)
					if n != nil && *n < 0 {
						wantViolation(t, err, c.field)
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					w := want(c.all, n)
					if !slices.Equal(texts(task.History), w) {
						t.Errorf("history %q, want %q", texts(task.History), w)
					}
					if w == nil && task.History != nil {
						t.Errorf("history is %#v, want it omitted (nil)", task.History)
					}
				})
			}
		})
	}
	t.Run("trimming leaves the task whole", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		for _, n := range []int32{0, 1} {
			if _, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: stored.ID, HistoryLength: &n}); err != nil {
				t.Fatal(err)
			}
		}
		if got := getTask(t, h, ctx, stored.ID); !slices.Equal(texts(got.History), full) {
			t.Errorf("history %q after trimmed reads, want %q", texts(got.History), full)
		}
	})
}

func TestMultiTurn(t *testing.T) {
	t.Parallel()

	t.Run("continues an input-required task", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		second, release := make(chan *server.Request, 1), make(chan struct{})
		h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
			if req.Task == nil {
				return w.RequireInput(ctx, "Which base?")
			}
			second <- req
			if err := await(ctx, release); err != nil {
				return err
			}
			return w.Complete(ctx, "Reviewed against "+req.Message.Text())
		})
		first := sendTask(t, h, ctx, newRequest("review this"))
		if first.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("state %v, want input-required", first.Status.State)
		}

		// Only the taskId: the contextId is inferred.
		reply := continueRequest(first.ID, "main")
		cont := sendTask(t, h, ctx, immediate(reply))
		req := recv(t, second)
		if cont.ID != first.ID || cont.Status.State != a2a.TaskStateWorking {
			t.Errorf("continued task %s is %v, want %s working", cont.ID, cont.Status.State, first.ID)
		}
		if req.Task == nil || req.Task.ID != first.ID {
			t.Fatalf("agent Request.Task = %+v, want task %s", req.Task, first.ID)
		}
		if req.TaskID != first.ID || req.ContextID != first.ContextID {
			t.Errorf("agent TaskID=%q ContextID=%q, want %q %q", req.TaskID, req.ContextID, first.ID, first.ContextID)
		}
		if req.Message.MessageID != reply.Message.MessageID || req.Message.TaskID != first.ID || req.Message.ContextID != first.ContextID {
			t.Errorf("agent message %s taskId=%q contextId=%q, want %s with the task's ids", req.Message.MessageID, req.Message.TaskID, req.Message.ContextID, reply.Message.MessageID)
		}
		mid := getTask(t, h, ctx, first.ID)
		if mid.Status.State != a2a.TaskStateWorking {
			t.Errorf("state %v while the agent works on the answer, want working", mid.Status.State)
		}
		if want := []string{"review this", "Which base?", "main"}; !slices.Equal(texts(mid.History), want) {
			t.Errorf("history %q, want %q", texts(mid.History), want)
		}
		close(release)
		final := waitState(t, h, ctx, first.ID, a2a.TaskStateCompleted)
		if want := []string{"review this", "Which base?", "main"}; !slices.Equal(texts(final.History), want) {
			t.Errorf("final history %q, want %q", texts(final.History), want)
		}
		if m := final.History[2]; m.ContextID != first.ContextID || m.TaskID != first.ID || m.Role != a2a.RoleUser {
			t.Errorf("answer in history has contextId %q taskId %q role %v, want the task's ids and ROLE_USER", m.ContextID, m.TaskID, m.Role)
		}
		if got := final.Status.Message.Text(); got != "Reviewed against main" {
			t.Errorf("status message %q", got)
		}
	})

	t.Run("blocking continuation", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		h := newHandler(t, nil, scripted)
		first := sendTask(t, h, ctx, newRequest("input"))
		second := sendTask(t, h, ctx, continueRequest(first.ID, "input"))
		if second.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("state %v after the second turn, want input-required", second.Status.State)
		}
		r := continueRequest(first.ID, "complete")
		r.Message.ContextID = first.ContextID // matching ids are fine
		third := sendTask(t, h, ctx, r)
		if third.Status.State != a2a.TaskStateCompleted {
			t.Errorf("state %v after the third turn, want completed", third.Status.State)
		}
		if want := []string{"input", "Which one?", "input", "Which one?", "complete"}; !slices.Equal(texts(third.History), want) {
			t.Errorf("history %q, want %q", texts(third.History), want)
		}
	})

	t.Run("auth-required task accepts a message", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		h := newHandler(t, nil, scripted)
		first := sendTask(t, h, ctx, newRequest("auth"))
		if first.Status.State != a2a.TaskStateAuthRequired {
			t.Fatalf("state %v, want auth-required", first.Status.State)
		}
		if got := sendTask(t, h, ctx, continueRequest(first.ID, "complete")); got.Status.State != a2a.TaskStateCompleted {
			t.Errorf("state %v, want completed", got.Status.State)
		}
	})

	t.Run("contextId without taskId starts a task in that context", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		h := newHandler(t, nil, scripted)
		first := sendTask(t, h, ctx, newRequest("complete"))
		r := newRequest("complete")
		r.Message.ContextID = first.ContextID
		second := sendTask(t, h, ctx, r)
		if second.ID == first.ID || second.ContextID != first.ContextID {
			t.Errorf("second task %s in context %s, want a new task in %s", second.ID, second.ContextID, first.ContextID)
		}
		other := sendTask(t, h, ctx, newRequest("complete"))
		if other.ContextID == first.ContextID || other.ContextID == "" {
			t.Errorf("a message without contextId got context %q, want a new one", other.ContextID)
		}
	})
}

func TestMultiTurnErrors(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	var calls atomic.Int32
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		calls.Add(1)
		return scripted(ctx, req, w)
	})
	task := func(text string) *a2a.Task { return sendTask(t, h, ctx, newRequest(text)) }
	open := task("input")
	canceled := task("input")
	if _, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: canceled.ID}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		req   *a2a.SendMessageRequest
		check func(t *testing.T, err error)
	}{
		{"completed task", continueRequest(task("complete").ID, "more"), terminalErr(a2a.TaskStateCompleted)},
		{"failed task", continueRequest(task("fail").ID, "more"), terminalErr(a2a.TaskStateFailed)},
		{"rejected task", continueRequest(task("reject").ID, "more"), terminalErr(a2a.TaskStateRejected)},
		{"canceled task", continueRequest(canceled.ID, "more"), terminalErr(a2a.TaskStateCanceled)},
		{"unknown task", continueRequest("no-such-task", "more"), func(t *testing.T, err error) {
			e := wantErr(t, err, a2a.ErrTaskNotFound)
			if e.Metadata["taskId"] != "no-such-task" {
				t.Errorf("metadata taskId %q", e.Metadata["taskId"])
			}
		}},
		{"mismatched contextId", func() *a2a.SendMessageRequest {
			r := continueRequest(open.ID, "more")
			r.Message.ContextID = "another-context"
			return r
		}(), func(t *testing.T, err error) { wantViolation(t, err, "message.contextId") }},
	}
	before := calls.Load()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.SendMessage(ctx, tc.req)
			tc.check(t, err)
			tc.check(t, firstErr(h.SendStreamingMessage(ctx, tc.req)))
		})
	}
	if n := calls.Load() - before; n != 0 {
		t.Errorf("the agent was called %d times for refused messages", n)
	}
	if got := getTask(t, h, ctx, open.ID); got.Status.State != a2a.TaskStateInputRequired || len(got.History) != 1 {
		t.Errorf("open task is %v with %d history messages after a refused message, want untouched", got.Status.State, len(got.History))
	}
}

// terminalErr checks the error for a message to a task in a terminal state.
func terminalErr(state a2a.TaskState) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		e := wantErr(t, err, a2a.ErrUnsupportedOperation)
		if e.Metadata["state"] != state.String() || e.Metadata["taskId"] == "" {
			t.Errorf("metadata %v, want taskId and state %v", e.Metadata, state)
		}
	}
}

func TestSendMessageValidation(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		calls.Add(1)
		return scripted(ctx, req, w)
	})
	t.Cleanup(func() { // after every case, parallel ones included
		if n := calls.Load(); n != 0 {
			t.Errorf("the agent was called %d times for invalid requests", n)
		}
	})
	msg := func(mod func(m *a2a.Message)) *a2a.SendMessageRequest {
		r := newRequest("hello")
		mod(r.Message)
		return r
	}
	withConfig := func(c a2a.SendMessageConfiguration) *a2a.SendMessageRequest {
		r := newRequest("hello")
		r.Configuration = &c
		return r
	}
	hook := func(url string, auth *a2a.AuthenticationInfo) a2a.SendMessageConfiguration {
		return a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: url, Authentication: auth}}
	}
	tests := []struct {
		name   string
		req    *a2a.SendMessageRequest
		fields []string
	}{
		{"nil request", nil, []string{"message"}},
		{"no message", &a2a.SendMessageRequest{}, []string{"message"}},
		{"no messageId", msg(func(m *a2a.Message) { m.MessageID = "" }), []string{"message.messageId"}},
		{"agent role", msg(func(m *a2a.Message) { m.Role = a2a.RoleAgent }), []string{"message.role"}},
		{"unspecified role", msg(func(m *a2a.Message) { m.Role = a2a.RoleUnspecified }), []string{"message.role"}},
		{"nil parts", msg(func(m *a2a.Message) { m.Parts = nil }), []string{"message.parts"}},
		{"empty parts", msg(func(m *a2a.Message) { m.Parts = []a2a.Part{} }), []string{"message.parts"}},
		{"part without content", msg(func(m *a2a.Message) {
			m.Parts = append(m.Parts, a2a.Part{MediaType: "text/plain"})
		}), []string{"message.parts[1]"}},
		{"several faults", msg(func(m *a2a.Message) { m.MessageID, m.Parts = "", nil }), []string{"message.messageId", "message.parts"}},
		{"negative historyLength", withConfig(a2a.SendMessageConfiguration{HistoryLength: a2a.Ptr[int32](-1)}), []string{"configuration.historyLength"}},
		{"push config without url", withConfig(hook("", nil)), []string{"configuration.taskPushNotificationConfig.url"}},
		{"push config relative url", withConfig(hook("/hook", nil)), []string{"configuration.taskPushNotificationConfig.url"}},
		{"push config ftp url", withConfig(hook("ftp://example.com/hook", nil)), []string{"configuration.taskPushNotificationConfig.url"}},
		{"push config bad url", withConfig(hook("https://exa mple.com/%zz", nil)), []string{"configuration.taskPushNotificationConfig.url"}},
		{"push config auth without scheme", withConfig(hook("https://example.com/hook", &a2a.AuthenticationInfo{Credentials: "secret"})), []string{"configuration.taskPushNotificationConfig.authentication.scheme"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := v1(testCtx(t))
			_, err := h.SendMessage(ctx, tc.req)
			streamErr := firstErr(h.SendStreamingMessage(ctx, tc.req))
			for _, f := range tc.fields {
				wantViolation(t, err, f)
				wantViolation(t, streamErr, f)
			}
		})
	}
}

func TestSendMessageContentTypes(t *testing.T) {
	t.Parallel()
	raw := func(mt string) a2a.Part { return a2a.Part{Content: a2a.Raw("x"), MediaType: mt} }
	data, _ := a2a.DataPart(map[string]any{"k": "v"})
	text := a2a.TextPart("hi")
	tests := []struct {
		name     string
		modes    []string
		skill    []string
		parts    []a2a.Part
		rejected string // the media type refused, "" when accepted
	}{
		{"text accepted", []string{"text/plain"}, nil, []a2a.Part{text}, ""},
		{"text refused", []string{"application/json"}, nil, []a2a.Part{text}, "text/plain"},
		{"data refused", []string{"text/plain"}, nil, []a2a.Part{data}, "application/json"},
		{"raw refused", []string{"text/plain"}, nil, []a2a.Part{raw("image/png")}, "image/png"},
		{"second part refused", []string{"text/plain"}, nil, []a2a.Part{text, raw("application/pdf")}, "application/pdf"},
		{"url refused", []string{"image/*"}, nil, []a2a.Part{{Content: a2a.URL("https://example.com/a.pdf"), MediaType: "application/pdf"}}, "application/pdf"},
		{"raw without media type", []string{"text/plain"}, nil, []a2a.Part{raw("")}, ""},
		{"type wildcard", []string{"image/*"}, nil, []a2a.Part{raw("image/png")}, ""},
		{"type wildcard is not a prefix", []string{"text/*"}, nil, []a2a.Part{raw("textual/plain")}, "textual/plain"},
		{"full wildcard", []string{"*/*"}, nil, []a2a.Part{raw("application/zip"), text}, ""},
		{"parameters and case", []string{"text/plain"}, nil, []a2a.Part{{Content: a2a.Text("hi"), MediaType: "Text/Plain; charset=utf-8"}}, ""},
		{"mode with parameters", []string{"text/plain; charset=utf-8"}, nil, []a2a.Part{text}, ""},
		{"skill input mode", []string{"text/plain"}, []string{"image/png"}, []a2a.Part{raw("image/png")}, ""},
		{"no modes declared", nil, nil, []a2a.Part{raw("application/zip")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			card := testCard(func(c *a2a.AgentCard) {
				c.DefaultInputModes = tc.modes
				c.Skills[0].InputModes = tc.skill
			})
			h := newHandler(t, card, func(ctx context.Context, req *server.Request, w *server.Writer) error {
				calls.Add(1)
				return w.Complete(ctx, "ok")
			})
			ctx := testCtx(t)
			req := newRequest("")
			req.Message.Parts = tc.parts
			_, err := h.SendMessage(ctx, req)
			if tc.rejected == "" {
				if err != nil {
					t.Fatalf("error %v, want the message accepted", err)
				}
				return
			}
			e := wantErr(t, err, a2a.ErrContentTypeNotSupported)
			if got := e.Metadata["mediaType"]; got != tc.rejected {
				t.Errorf("metadata mediaType %q, want %q", got, tc.rejected)
			}
			if n := calls.Load(); n != 0 {
				t.Errorf("the agent was called %d times", n)
			}
		})
	}
	t.Run("continuation", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		h := newHandler(t, testCard(func(c *a2a.AgentCard) { c.DefaultInputModes = []string{"text/plain"} }), scripted)
		open := sendTask(t, h, ctx, newRequest("input"))
		req := continueRequest(open.ID, "")
		req.Message.Parts = []a2a.Part{raw("image/png")}
		_, err := h.SendMessage(ctx, req)
		if e := wantErr(t, err, a2a.ErrContentTypeNotSupported); e.Metadata["mediaType"] != "image/png" {
			t.Errorf("metadata mediaType %q, want image/png", e.Metadata["mediaType"])
		}
		if got := getTask(t, h, ctx, open.ID); got.Status.State != a2a.TaskStateInputRequired || len(got.History) != 1 {
			t.Errorf("task is %v with %d history messages, want untouched", got.Status.State, len(got.History))
		}
	})
}

func TestSendMessageRequestFields(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	got := make(chan *server.Request, 1)
	writer := make(chan [2]string, 1)
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		got <- req
		writer <- [2]string{w.TaskID(), w.ContextID()}
		m := w.NewMessage(a2a.TextPart("made by the writer"))
		return w.Status(ctx, a2a.TaskStateCompleted, m)
	})
	req := newRequest("hello")
	req.Tenant = "acme"
	req.Metadata = map[string]any{"k": "v"}
	req.Configuration = &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain"}}
	task := sendTask(t, h, ctx, req)
	r := recv(t, got)
	if r.TaskID != task.ID || r.ContextID != task.ContextID || r.Task != nil {
		t.Errorf("Request TaskID=%q ContextID=%q Task=%v, want %q %q nil", r.TaskID, r.ContextID, r.Task, task.ID, task.ContextID)
	}
	if r.Tenant != "acme" || r.Metadata["k"] != "v" || r.Configuration == nil || !slices.Equal(r.Configuration.AcceptedOutputModes, []string{"text/plain"}) {
		t.Errorf("Request Tenant=%q Metadata=%v Configuration=%+v, want the request's", r.Tenant, r.Metadata, r.Configuration)
	}
	if r.Message.MessageID != req.Message.MessageID || r.Message.TaskID != task.ID || r.Message.ContextID != task.ContextID {
		t.Errorf("Request.Message ids %q/%q/%q", r.Message.MessageID, r.Message.TaskID, r.Message.ContextID)
	}
	if w := recv(t, writer); w != [2]string{task.ID, task.ContextID} {
		t.Errorf("Writer TaskID/ContextID %q, want %q %q", w, task.ID, task.ContextID)
	}
	if m := task.Status.Message; m == nil || m.TaskID != task.ID || m.ContextID != task.ContextID || m.Role != a2a.RoleAgent {
		t.Errorf("status message %+v, want an agent message of the task", m)
	}
}

func TestSendMessageManyEvents(t *testing.T) {
	t.Parallel()
	// Far more events than a subscriber buffers: the blocking caller may
	// be cut off and must still return the settled task.
	const n = 300
	tests := []struct {
		name   string
		append bool
	}{{"artifacts", false}, {"chunks", true}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
				for i := range n {
					id := "a" + strconv.Itoa(i)
					if tc.append {
						id = "log"
					}
					art := a2a.Artifact{ArtifactID: id, Parts: []a2a.Part{a2a.TextPart(strconv.Itoa(i) + ";")}}
					if err := w.ArtifactChunk(ctx, art, tc.append && i > 0, i == n-1); err != nil {
						return err
					}
				}
				return w.Complete(ctx, "done")
			})
			task := sendTask(t, h, testCtx(t), newRequest("go"))
			if task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("state %v, want completed", task.Status.State)
			}
			wantArtifacts, wantParts := n, 1
			if tc.append {
				wantArtifacts, wantParts = 1, n
			}
			if len(task.Artifacts) != wantArtifacts || len(task.Artifacts[0].Parts) != wantParts {
				t.Fatalf("%d artifacts, first with %d parts; want %d with %d", len(task.Artifacts), len(task.Artifacts[0].Parts), wantArtifacts, wantParts)
			}
			if tc.append && task.Artifacts[0].Text()[:6] != "0;1;2;" {
				t.Errorf("chunks out of order: %q...", task.Artifacts[0].Text()[:6])
			}
		})
	}
}

func TestSendMessageCallerGivesUp(t *testing.T) {
	t.Parallel()

	t.Run("before the task exists", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		started, release := make(chan string, 1), make(chan struct{})
		h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
			started <- req.TaskID
			if err := await(ctx, release); err != nil {
				return err
			}
			return w.RequireInput(ctx, "Which one?")
		})
		callCtx, cancel := context.WithCancel(ctx)
		done := sendAsync(h, callCtx, newRequest("go"))
		id := recv(t, started)
		cancel()
		if r := recv(t, done); !errors.Is(r.err, a2a.ErrUnavailable) {
			t.Fatalf("SendMessage error %v, want Unavailable after the caller gave up", r.err)
		}
		close(release) // the agent goes on and interrupts the task
		waitState(t, h, ctx, id, a2a.TaskStateInputRequired)
		if n := server.Subscribers(h, id); n != 0 {
			t.Errorf("%d subscribers left on the task by a caller that gave up, want 0", n)
		}
	})

	t.Run("while waiting for the task", func(t *testing.T) {
		t.Parallel()
		ctx := testCtx(t)
		working, release := make(chan string, 1), make(chan struct{})
		h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
			if err := w.Working(ctx, ""); err != nil {
				return err
			}
			working <- req.TaskID
			if err := await(ctx, release); err != nil {
				return err
			}
			return w.RequireInput(ctx, "Which one?")
		})
		callCtx, cancel := context.WithCancel(ctx)
		done := sendAsync(h, callCtx, newRequest("go"))
		id := recv(t, working)
		cancel()
		if r := recv(t, done); !errors.Is(r.err, a2a.ErrUnavailable) {
			t.Fatalf("SendMessage error %v, want Unavailable after the caller gave up", r.err)
		}
		if n := server.Subscribers(h, id); n != 0 {
			t.Errorf("%d subscribers left by a caller that gave up, want 0", n)
		}
		// The task lives on without its caller.
		close(release)
		waitState(t, h, ctx, id, a2a.TaskStateInputRequired)
	})
}
