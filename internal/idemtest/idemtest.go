// Package idemtest checks that SendMessage is idempotent on a store: a
// client that sends a message again with the same messageId, from the same
// principal and tenant, gets what the first attempt got (its task, or its
// direct reply) and the agent does not run again, on the Handler that
// answered the first attempt or on another one sharing the store; attempts
// sent at once to two Handlers give one task. Each store's tests run it
// with two Handlers on two Store values of one database (or one value of
// an in-process store), as two replicas would.
package idemtest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
)

// timeout bounds every call: generous, for a loaded machine.
const timeout = 60 * time.Second

// Run runs the checks on Handlers made over the two stores that newStores
// returns, which must share their tasks.
func Run(t *testing.T, newStores func(t *testing.T) (store.Store, store.Store)) {
	for _, tt := range []struct {
		name string
		fn   func(t *testing.T, p *pair)
		opts []server.Option
	}{
		{"Blocking", testBlocking, nil},
		{"Reply", testReply, nil},
		{"DifferentContent", testDifferentContent, nil},
		{"OtherCaller", testOtherCaller, nil},
		{"ReturnImmediately", testReturnImmediately, nil},
		{"Stream", testStream, nil},
		{"StreamWhileRunning", testStreamWhileRunning, nil},
		{"Continue", testContinue, nil},
		{"Credentials", testCredentials, nil},
		{"AtOnce", testAtOnce, nil},
		{"ReplyAtOnce", testReplyAtOnce, nil},
		{"Forget", testForget, []server.Option{server.WithMessageIDRetention(time.Millisecond)}},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newPair(t, newStores, tt.opts...)) })
	}
}

// agent is the test agent. Its message says what it does: "complete"
// completes the task; "reply" answers with a direct reply; "input" asks
// for input, and completes the task when answered; "auth" asks for
// authorization, and completes it when answered; "gate" works, waits for
// its gate to open, then completes.
type agent struct {
	runs    atomic.Int64 // executions started
	mu      sync.Mutex
	gates   map[string]chan struct{} // by task id
	started chan string              // task ids of "gate" executions, as each starts
}

func (a *agent) gate(id string) chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gates == nil {
		a.gates = make(map[string]chan struct{})
	}
	g, ok := a.gates[id]
	if !ok {
		g = make(chan struct{})
		a.gates[id] = g
	}
	return g
}

func (a *agent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	a.runs.Add(1)
	if req.Task != nil { // an answer
		return w.Complete(ctx, "answered: "+req.Message.Text())
	}
	switch req.Message.Text() {
	case "reply":
		return w.Reply(ctx, a2a.TextPart("hello"))
	case "input":
		return w.RequireInput(ctx, "Which one?")
	case "auth":
		return w.RequireAuth(ctx, "Sign in, please.")
	case "gate":
		if err := w.Working(ctx, "waiting"); err != nil {
			return err
		}
		if err := w.Flush(ctx); err != nil {
			return err
		}
		a.started <- req.TaskID
		select {
		case <-a.gate(req.TaskID):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return w.Complete(ctx, "done")
}

var card = &a2a.AgentCard{
	Name: "idem", Description: "test", Version: "1",
	SupportedInterfaces: []a2a.AgentInterface{{URL: "http://127.0.0.1/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}},
	Capabilities:        a2a.AgentCapabilities{Streaming: a2a.Ptr(true)},
}

// pair is two Handlers, one on each store, with one agent.
type pair struct {
	h   [2]*server.Handler
	a   *agent
	ctx context.Context // alice's
	ids atomic.Int64
}

func newPair(t *testing.T, newStores func(t *testing.T) (store.Store, store.Store), opts ...server.Option) *pair {
	s1, s2 := newStores(t)
	p := &pair{a: &agent{started: make(chan string, 16)}}
	for i, st := range []store.Store{s1, s2} {
		h, err := server.NewHandler(card, p.a, append([]server.Option{server.WithStore(st), server.WithMaintenanceInterval(-1)}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			if err := h.Close(ctx); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		p.h[i] = h
	}
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	p.ctx = server.WithPrincipal(ctx, "alice")
	return p
}

// message returns a new client message with text: its id is unique to
// the test run.
func (p *pair) message(text string) *a2a.Message {
	id := "m-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatInt(p.ids.Add(1), 10)
	return a2a.NewTextMessage(a2a.RoleUser, id, text)
}

// clone returns a copy of m that shares nothing with it: a retry as a
// client decodes it again.
func clone(m *a2a.Message) *a2a.Message {
	c := *m
	c.Parts = append([]a2a.Part(nil), m.Parts...)
	return &c
}

func send(ctx context.Context, h *server.Handler, m *a2a.Message, cfg *a2a.SendMessageConfiguration) (a2a.SendMessageResult, error) {
	res, err := h.SendMessage(ctx, &a2a.SendMessageRequest{Message: clone(m), Configuration: cfg})
	if err != nil {
		return nil, err
	}
	return res.Result, nil
}

// sendTask sends m to h and returns the task of the answer.
func (p *pair) sendTask(t *testing.T, h *server.Handler, m *a2a.Message, cfg *a2a.SendMessageConfiguration) *a2a.Task {
	t.Helper()
	res, err := send(p.ctx, h, m, cfg)
	if err != nil {
		t.Fatalf("SendMessage(%s %q): %v", m.MessageID, m.Text(), err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage(%s %q) returned a %T, want a task", m.MessageID, m.Text(), res)
	}
	return task
}

// total returns the number of alice's tasks, as h lists them.
func (p *pair) total(t *testing.T, h *server.Handler) int {
	t.Helper()
	res, err := h.ListTasks(p.ctx, &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	return int(res.TotalSize)
}

// checkRuns reports whether the agent has run want times.
func (p *pair) checkRuns(t *testing.T, want int64) {
	t.Helper()
	if got := p.a.runs.Load(); got != want {
		t.Errorf("the agent ran %d times, want %d", got, want)
	}
}

// wantReused fails unless err is InvalidParams on message.messageId.
func wantReused(t *testing.T, what string, err error) {
	t.Helper()
	var e *a2a.Error
	if !errors.As(err, &e) || e.Code != a2a.CodeInvalidParams {
		t.Fatalf("%s: err = %v, want InvalidParams", what, err)
	}
	for _, v := range e.Violations {
		if v.Field == "message.messageId" {
			return
		}
	}
	t.Errorf("%s: %v names no violation of message.messageId", what, err)
}

func blocking() *a2a.SendMessageConfiguration { return nil }

func immediately() *a2a.SendMessageConfiguration {
	return &a2a.SendMessageConfiguration{ReturnImmediately: true}
}

// testBlocking: a blocking send, retried on each Handler, gets its task,
// settled, and the agent runs once.
func testBlocking(t *testing.T, p *pair) {
	m := p.message("complete")
	first := p.sendTask(t, p.h[0], m, blocking())
	if first.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("first attempt: %v", first.Status.State)
	}
	for i, h := range p.h {
		got := p.sendTask(t, h, m, blocking())
		if got.ID != first.ID || got.Status.State != a2a.TaskStateCompleted {
			t.Errorf("retry on Handler %d: task %s in %v, want %s completed", i, got.ID, got.Status.State, first.ID)
		}
		if len(got.History) != len(first.History) || len(got.Artifacts) != len(first.Artifacts) {
			t.Errorf("retry on Handler %d: %d history entries and %d artifacts, want %d and %d", i, len(got.History), len(got.Artifacts), len(first.History), len(first.Artifacts))
		}
	}
	// The retry may say which task it retries, and its context.
	retry := clone(m)
	retry.ContextID = first.ContextID
	if got := p.sendTask(t, p.h[1], retry, blocking()); got.ID != first.ID {
		t.Errorf("retry with the contextId: task %s, want %s", got.ID, first.ID)
	}
	retry.TaskID = first.ID
	if got := p.sendTask(t, p.h[1], retry, blocking()); got.ID != first.ID {
		t.Errorf("retry with the taskId: task %s, want %s", got.ID, first.ID)
	}
	p.checkRuns(t, 1)
	if n := p.total(t, p.h[1]); n != 1 {
		t.Errorf("%d tasks, want 1", n)
	}
}

// testReply: a message answered with a direct reply gets the same reply
// again, from either Handler.
func testReply(t *testing.T, p *pair) {
	m := p.message("reply")
	res, err := send(p.ctx, p.h[0], m, blocking())
	if err != nil {
		t.Fatal(err)
	}
	first, ok := res.(*a2a.Message)
	if !ok {
		t.Fatalf("first attempt: %T, want a message", res)
	}
	for i, h := range p.h {
		for _, stream := range []bool{false, true} {
			var got a2a.SendMessageResult
			if stream {
				evs, err := collect(h.SendStreamingMessage(p.ctx, &a2a.SendMessageRequest{Message: clone(m)}))
				if err != nil || len(evs) != 1 {
					t.Fatalf("streamed retry on Handler %d: %d frames, %v; want 1", i, len(evs), err)
				}
				got, _ = evs[0].Event.(*a2a.Message)
			} else if got, err = send(p.ctx, h, m, blocking()); err != nil {
				t.Fatalf("retry on Handler %d: %v", i, err)
			}
			reply, ok := got.(*a2a.Message)
			if !ok || reply.MessageID != first.MessageID || reply.Text() != first.Text() || reply.ContextID != first.ContextID {
				t.Errorf("retry on Handler %d (stream %v): %+v, want the reply %+v", i, stream, got, first)
			}
		}
	}
	p.checkRuns(t, 1)
	if n := p.total(t, p.h[0]); n != 0 {
		t.Errorf("%d tasks, want none", n)
	}
	// Another message's content under the id is refused.
	other := clone(m)
	other.Parts = []a2a.Part{a2a.TextPart("complete")}
	_, err = send(p.ctx, p.h[1], other, blocking())
	wantReused(t, "a different message with a replied id", err)
	other = clone(m)
	other.TaskID = "some-task"
	_, err = send(p.ctx, p.h[1], other, blocking())
	wantReused(t, "a replied id continuing a task", err)
}

// testDifferentContent: the id of a message that created a task, sent
// with anything else different, is InvalidParams, and nothing runs.
func testDifferentContent(t *testing.T, p *pair) {
	m := p.message("complete")
	first := p.sendTask(t, p.h[0], m, blocking())
	other := p.sendTask(t, p.h[0], p.message("complete"), blocking())
	variants := map[string]func(m *a2a.Message){
		"text":             func(m *a2a.Message) { m.Parts = []a2a.Part{a2a.TextPart("reply")} },
		"more parts":       func(m *a2a.Message) { m.Parts = append(m.Parts, a2a.TextPart("and more")) },
		"metadata":         func(m *a2a.Message) { m.Metadata = map[string]any{"k": "v"} },
		"extensions":       func(m *a2a.Message) { m.Extensions = []string{"https://example.com/ext"} },
		"referenceTaskIds": func(m *a2a.Message) { m.ReferenceTaskIDs = []string{first.ID} },
		"contextId":        func(m *a2a.Message) { m.ContextID = other.ContextID },
		"taskId":           func(m *a2a.Message) { m.TaskID, m.ContextID = other.ID, other.ContextID },
	}
	for name, change := range variants {
		retry := clone(m)
		change(retry)
		for i, h := range p.h {
			_, err := send(p.ctx, h, retry, blocking())
			wantReused(t, fmt.Sprintf("a retry with another %s on Handler %d", name, i), err)
		}
	}
	p.checkRuns(t, 2)
	if n := p.total(t, p.h[1]); n != 2 {
		t.Errorf("%d tasks, want 2", n)
	}
	// The same content with metadata keys in another order and numbers
	// written otherwise is the same message.
	m = p.message("complete")
	m.Metadata = map[string]any{"a": 1.0, "b": []any{"x", 2.5}}
	first = p.sendTask(t, p.h[0], m, blocking())
	retry := clone(m)
	retry.Metadata = map[string]any{"b": []any{"x", 2.5}, "a": float64(1)}
	if got := p.sendTask(t, p.h[1], retry, blocking()); got.ID != first.ID {
		t.Errorf("retry with equal metadata: task %s, want %s", got.ID, first.ID)
	}
}

// testOtherCaller: the same id from another principal, or to another
// tenant, is another message.
func testOtherCaller(t *testing.T, p *pair) {
	m := p.message("complete")
	first := p.sendTask(t, p.h[0], m, blocking())
	bob := server.WithPrincipal(p.ctx, "bob")
	res, err := send(bob, p.h[1], m, blocking())
	if err != nil {
		t.Fatalf("bob's send: %v", err)
	}
	if task, ok := res.(*a2a.Task); !ok || task.ID == first.ID {
		t.Errorf("bob's send with alice's id: %+v, want a task of his own", res)
	}
	r, err := p.h[1].SendMessage(p.ctx, &a2a.SendMessageRequest{Message: clone(m), Tenant: "other"})
	if err != nil {
		t.Fatalf("a send to another tenant: %v", err)
	}
	if task, ok := r.Result.(*a2a.Task); !ok || task.ID == first.ID {
		t.Errorf("a send to another tenant with the id: %+v, want a task of its own", r.Result)
	}
	p.checkRuns(t, 3)
}

// testReturnImmediately: a retry with returnImmediately gets the task as
// it is; a blocking one waits until it settles, on either Handler.
func testReturnImmediately(t *testing.T, p *pair) {
	m := p.message("gate")
	first := p.sendTask(t, p.h[0], m, immediately())
	if id := recv(t, p.a.started, "the agent's start"); id != first.ID {
		t.Fatalf("agent started %s, want %s", id, first.ID)
	}
	for i, h := range p.h {
		got := p.sendTask(t, h, m, immediately())
		if got.ID != first.ID || got.Status.State.Terminal() {
			t.Errorf("immediate retry on Handler %d: %s in %v, want %s, running", i, got.ID, got.Status.State, first.ID)
		}
	}
	done := make(chan *a2a.Task, 2)
	errs := make(chan error, 2)
	for _, h := range p.h {
		go func() {
			res, err := send(p.ctx, h, m, blocking())
			if err != nil {
				errs <- err
				return
			}
			task, _ := res.(*a2a.Task)
			done <- task
		}()
	}
	close(p.a.gate(first.ID)) // before or after they wait: either way they get it settled
	for range p.h {
		select {
		case task := <-done:
			if task == nil || task.ID != first.ID || task.Status.State != a2a.TaskStateCompleted {
				t.Errorf("blocking retry: %+v, want %s completed", task, first.ID)
			}
		case err := <-errs:
			t.Errorf("blocking retry: %v", err)
		case <-time.After(timeout):
			t.Fatalf("no answer to a blocking retry within %v", timeout)
		}
	}
	p.checkRuns(t, 1)
}

// collect reads a stream to its end.
func collect(stream iter.Seq2[server.StreamEvent, error]) ([]server.StreamEvent, error) {
	var evs []server.StreamEvent
	for ev, err := range stream {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// testStream: a streamed retry of a finished task is the task, one frame.
func testStream(t *testing.T, p *pair) {
	m := p.message("complete")
	evs, err := collect(p.h[0].SendStreamingMessage(p.ctx, &a2a.SendMessageRequest{Message: clone(m)}))
	if err != nil || len(evs) == 0 {
		t.Fatalf("first stream: %d frames, %v", len(evs), err)
	}
	first, ok := evs[0].Event.(*a2a.Task)
	if !ok {
		t.Fatalf("first frame: %T", evs[0].Event)
	}
	for i, h := range p.h {
		evs, err := collect(h.SendStreamingMessage(p.ctx, &a2a.SendMessageRequest{Message: clone(m)}))
		if err != nil || len(evs) != 1 {
			t.Fatalf("streamed retry on Handler %d: %d frames, %v; want 1", i, len(evs), err)
		}
		task, ok := evs[0].Event.(*a2a.Task)
		if !ok || task.ID != first.ID || task.Status.State != a2a.TaskStateCompleted {
			t.Errorf("streamed retry on Handler %d: %+v, want task %s completed", i, evs[0].Event, first.ID)
		}
		if evs[0].ID == "" {
			t.Errorf("streamed retry on Handler %d: the frame has no id", i)
		}
	}
	// A blocking retry of a streamed message, and the other way round.
	if got := p.sendTask(t, p.h[1], m, blocking()); got.ID != first.ID {
		t.Errorf("blocking retry of a streamed message: %s, want %s", got.ID, first.ID)
	}
	p.checkRuns(t, 1)
}

// testStreamWhileRunning: a streamed retry of a running task sends the
// task, then follows it to its end, as SubscribeToTask does.
func testStreamWhileRunning(t *testing.T, p *pair) {
	m := p.message("gate")
	first := p.sendTask(t, p.h[0], m, immediately())
	recv(t, p.a.started, "the agent's start")
	for i, h := range p.h {
		var (
			evs []server.StreamEvent
			err error
		)
		stream := h.SendStreamingMessage(p.ctx, &a2a.SendMessageRequest{Message: clone(m)})
		for ev, e := range stream {
			if e != nil {
				err = e
				break
			}
			evs = append(evs, ev)
			if len(evs) == 1 && i == len(p.h)-1 {
				close(p.a.gate(first.ID)) // the last stream sees the task end
			}
			if len(evs) == 1 && i < len(p.h)-1 {
				break // the others stop after the task
			}
		}
		if err != nil || len(evs) == 0 {
			t.Fatalf("streamed retry on Handler %d: %d frames, %v", i, len(evs), err)
		}
		if task, ok := evs[0].Event.(*a2a.Task); !ok || task.ID != first.ID || task.Status.State.Terminal() {
			t.Errorf("streamed retry on Handler %d: first frame %+v, want task %s running", i, evs[0].Event, first.ID)
		}
		if i < len(p.h)-1 {
			continue
		}
		last, ok := evs[len(evs)-1].Event.(*a2a.TaskStatusUpdateEvent)
		if !ok || last.Status.State != a2a.TaskStateCompleted {
			t.Errorf("streamed retry on Handler %d: last frame %+v, want the completed status", i, evs[len(evs)-1].Event)
		}
	}
	p.checkRuns(t, 1)
}

// testContinue: a retried answer to an interrupted task gets the task
// the answer continued, and the agent does not run for it again.
func testContinue(t *testing.T, p *pair) {
	task := p.sendTask(t, p.h[0], p.message("input"), blocking())
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task is %v, want input-required", task.Status.State)
	}
	answer := p.message("the red one")
	answer.TaskID = task.ID
	done := p.sendTask(t, p.h[0], answer, blocking())
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("answer: %v", done.Status.State)
	}
	for i, h := range p.h {
		got := p.sendTask(t, h, answer, blocking())
		if got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted || len(got.History) != len(done.History) {
			t.Errorf("retried answer on Handler %d: %s in %v with %d history entries, want %s completed with %d",
				i, got.ID, got.Status.State, len(got.History), task.ID, len(done.History))
		}
	}
	p.checkRuns(t, 2)
	// The answer's id with other content, or for another task, is refused.
	other := clone(answer)
	other.Parts = []a2a.Part{a2a.TextPart("the blue one")}
	_, err := send(p.ctx, p.h[1], other, blocking())
	wantReused(t, "another answer with the id", err)
	second := p.sendTask(t, p.h[1], p.message("input"), blocking())
	other = clone(answer)
	other.TaskID = second.ID
	_, err = send(p.ctx, p.h[1], other, blocking())
	wantReused(t, "the answer's id for another task", err)
	// The first message's id, given with its task, is a retry too.
	first := p.message("input")
	created := p.sendTask(t, p.h[0], first, blocking())
	again := clone(first)
	again.TaskID = created.ID
	if got := p.sendTask(t, p.h[1], again, blocking()); got.ID != created.ID || got.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("the creating message again with its taskId: %s in %v, want %s input-required", got.ID, got.Status.State, created.ID)
	}
	p.checkRuns(t, 4)
}

// testCredentials: an answer to auth-required is stored with its
// credentials withheld; its retry matches on what is kept.
func testCredentials(t *testing.T, p *pair) {
	task := p.sendTask(t, p.h[0], p.message("auth"), blocking())
	if task.Status.State != a2a.TaskStateAuthRequired {
		t.Fatalf("task is %v, want auth-required", task.Status.State)
	}
	answer := p.message("token s3cret")
	answer.TaskID = task.ID
	done := p.sendTask(t, p.h[0], answer, blocking())
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("answer: %v", done.Status.State)
	}
	for i, h := range p.h {
		if got := p.sendTask(t, h, answer, blocking()); got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted {
			t.Errorf("retried credentials on Handler %d: %s in %v, want %s completed", i, got.ID, got.Status.State, task.ID)
		}
	}
	// The parts are not kept, so not compared; their number is.
	other := clone(answer)
	other.Parts = []a2a.Part{a2a.TextPart("token other")}
	if got := p.sendTask(t, p.h[1], other, blocking()); got.ID != task.ID {
		t.Errorf("retried credentials with other text: %s, want %s", got.ID, task.ID)
	}
	other.Parts = append(other.Parts, a2a.TextPart("more"))
	_, err := send(p.ctx, p.h[1], other, blocking())
	wantReused(t, "retried credentials with more parts", err)
	p.checkRuns(t, 2)
}

// testAtOnce: the same message sent to both Handlers at once, several
// times, gives one task, and every attempt gets it.
func testAtOnce(t *testing.T, p *pair) {
	const attempts = 8
	for round := range 3 {
		m := p.message("complete")
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			tasks = make([]*a2a.Task, attempts)
			errs  = make([]error, attempts)
		)
		for i := range attempts {
			wg.Go(func() {
				<-start
				cfg := blocking()
				if i%4 == 3 {
					cfg = immediately()
				}
				res, err := send(p.ctx, p.h[i%2], m, cfg)
				tasks[i], _ = res.(*a2a.Task)
				errs[i] = err
			})
		}
		close(start)
		wg.Wait()
		for i := range attempts {
			switch {
			case errs[i] != nil:
				t.Errorf("round %d, attempt %d: %v", round, i, errs[i])
			case tasks[i] == nil:
				t.Errorf("round %d, attempt %d: no task", round, i)
			case tasks[i].ID != tasks[0].ID:
				t.Errorf("round %d: attempts got tasks %s and %s", round, tasks[0].ID, tasks[i].ID)
			case i%4 != 3 && tasks[i].Status.State != a2a.TaskStateCompleted:
				t.Errorf("round %d, blocking attempt %d: %v", round, i, tasks[i].Status.State)
			}
		}
	}
	for i, h := range p.h {
		if n := p.total(t, h); n != 3 {
			t.Errorf("Handler %d lists %d tasks, want 3", i, n)
		}
	}
}

// testReplyAtOnce: the same with an agent that replies: every attempt
// gets one reply.
func testReplyAtOnce(t *testing.T, p *pair) {
	const attempts = 8
	m := p.message("reply")
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		replies = make([]*a2a.Message, attempts)
		errs    = make([]error, attempts)
	)
	for i := range attempts {
		wg.Go(func() {
			<-start
			res, err := send(p.ctx, p.h[i%2], m, blocking())
			replies[i], _ = res.(*a2a.Message)
			errs[i] = err
		})
	}
	close(start)
	wg.Wait()
	for i := range attempts {
		switch {
		case errs[i] != nil:
			t.Errorf("attempt %d: %v", i, errs[i])
		case replies[i] == nil:
			t.Errorf("attempt %d: no reply", i)
		case replies[i].MessageID != replies[0].MessageID:
			t.Errorf("attempts got replies %s and %s", replies[0].MessageID, replies[i].MessageID)
		}
	}
}

// testForget: once the maintenance pass has forgotten an id, it is a new
// message. The Handlers keep ids for a millisecond.
func testForget(t *testing.T, p *pair) {
	m := p.message("complete")
	first := p.sendTask(t, p.h[0], m, blocking())
	time.Sleep(5 * time.Millisecond) // more than the period, however slow the machine
	rep, err := p.h[1].Maintain(p.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Forgotten < 1 {
		t.Errorf("the maintenance pass forgot %d message ids, want at least 1", rep.Forgotten)
	}
	if got := p.sendTask(t, p.h[0], m, blocking()); got.ID == first.ID {
		t.Errorf("a send with a forgotten id got the first task %s, want a new one", got.ID)
	}
	p.checkRuns(t, 2)
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(timeout):
		t.Fatalf("no %s within %v", what, timeout)
		panic("unreachable")
	}
}
