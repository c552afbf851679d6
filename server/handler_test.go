package server_test

// Black-box tests of the protocol rules of server.Handler, called in
// process with no wire format. This file holds the shared helpers and the
// tests of the rules every operation shares: service parameters, tenants
// and principals, the extended card, and Close. The other files are by
// topic: send_test.go, tasks_test.go, stream_test.go, push_test.go and
// agent_test.go.
//
// Agents are small server.AgentFuncs built for each case. Tests control
// their timing with channels; the only polling is waitState, which waits
// for a task to reach a state with a deadline.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store/memory"
)

// testTimeout bounds every wait of a test, so a broken rule fails the test
// instead of hanging it.
const testTimeout = 10 * time.Second

// TestMain checks that the tests leave no goroutine behind: every Handler
// is closed, every agent has returned and every stream was released.
func TestMain(m *testing.M) {
	base := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > base {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			fmt.Fprintf(os.Stderr, "leaked goroutines: %d at start, %d at end\n%s\n", base, n, buf)
			code = 1
		}
	}
	os.Exit(code)
}

// testCard is a card declaring streaming and push notifications, accepting
// text and JSON.
func testCard(mods ...func(*a2a.AgentCard)) *a2a.AgentCard {
	c := &a2a.AgentCard{
		Name:        "test",
		Description: "An agent for the Handler tests.",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "http://127.0.0.1/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
		},
		Version: "1.0.0",
		Capabilities: a2a.AgentCapabilities{
			Streaming:         a2a.Ptr(true),
			PushNotifications: a2a.Ptr(true),
		},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{{ID: "test", Name: "Test", Description: "Tests.", Tags: []string{"test"}}},
	}
	for _, m := range mods {
		m(c)
	}
	return c
}

// newHandler returns a Handler for agent with the card (testCard when nil),
// closed when the test ends.
func newHandler(t *testing.T, card *a2a.AgentCard, agent server.AgentFunc, opts ...server.Option) *server.Handler {
	t.Helper()
	if card == nil {
		card = testCard()
	}
	h, err := server.NewHandler(card, agent, opts...)
	if err != nil {
		t.Fatalf("NewHandler: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return h
}

// testCtx is the context of the calls of a test: it ends when the test
// does, or after testTimeout.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// v1 is ctx as a binding hands it over for an A2A-Version 1.0 request.
func v1(ctx context.Context) context.Context {
	return server.WithServiceParams(ctx, server.ServiceParams{Version: a2a.ProtocolVersion})
}

var messageIDs atomic.Int64

// newMessage returns a user message with one text part and a fresh id.
func newMessage(text string) *a2a.Message {
	return a2a.NewTextMessage(a2a.RoleUser, "msg-"+strconv.FormatInt(messageIDs.Add(1), 10), text)
}

// newRequest returns a SendMessage request carrying a new message.
func newRequest(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: newMessage(text)}
}

// continueRequest returns a request continuing task taskID.
func continueRequest(taskID, text string) *a2a.SendMessageRequest {
	r := newRequest(text)
	r.Message.TaskID = taskID
	return r
}

// immediate sets returnImmediately on r.
func immediate(r *a2a.SendMessageRequest) *a2a.SendMessageRequest {
	if r.Configuration == nil {
		r.Configuration = &a2a.SendMessageConfiguration{}
	}
	r.Configuration.ReturnImmediately = true
	return r
}

// sendTask sends req and returns the task of the answer.
func sendTask(t *testing.T, h *server.Handler, ctx context.Context, req *a2a.SendMessageRequest) *a2a.Task {
	t.Helper()
	res, err := h.SendMessage(ctx, req)
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := res.Result.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage returned %T, want *a2a.Task", res.Result)
	}
	return task
}

// getTask returns the task with the full history.
func getTask(t *testing.T, h *server.Handler, ctx context.Context, id string) *a2a.Task {
	t.Helper()
	task, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatalf("GetTask(%s): %v", id, err)
	}
	return task
}

// scripted is an agent whose message text says what it does: "reply"
// answers with a direct message, "input" and "auth" interrupt the task,
// "fail" and "reject" end it so, "artifact" emits one artifact and
// completes, and anything else completes with the status message "done".
func scripted(ctx context.Context, req *server.Request, w *server.Writer) error {
	switch req.Message.Text() {
	case "reply":
		return w.Reply(ctx, a2a.TextPart("hello"))
	case "input":
		return w.RequireInput(ctx, "Which one?")
	case "auth":
		return w.RequireAuth(ctx, "Please sign in.")
	case "fail":
		return w.Fail(ctx, "It failed.")
	case "reject":
		return w.Reject(ctx, "No.")
	case "artifact":
		if err := w.Artifact(ctx, a2a.Artifact{ArtifactID: "out", Parts: []a2a.Part{a2a.TextPart("result")}}); err != nil {
			return err
		}
	}
	return w.Complete(ctx, "done")
}

// wantErr fails unless err is an A2A error of want's kind, and returns it.
func wantErr(t *testing.T, err error, want *a2a.Error) *a2a.Error {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want.Code)
	}
	var e *a2a.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *a2a.Error", err)
	}
	return e
}

// wantViolation fails unless err is InvalidParams naming field.
func wantViolation(t *testing.T, err error, field string) {
	t.Helper()
	e := wantErr(t, err, a2a.ErrInvalidParams)
	for _, v := range e.Violations {
		if v.Field == field {
			if v.Description == "" {
				t.Errorf("violation of %s has no description", field)
			}
			return
		}
	}
	t.Fatalf("InvalidParams violations %+v do not name %q", e.Violations, field)
}

// recv returns the next value of ch, failing the test after testTimeout.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatalf("timed out waiting on %T", ch)
		panic("unreachable")
	}
}

// await is how agents wait for a test: it returns when ch is ready or with
// ctx's error when the agent's context ends first.
func await(ctx context.Context, ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitState polls GetTask until the task is in state, failing the test at
// the deadline. It returns the task as it then stands.
func waitState(t *testing.T, h *server.Handler, ctx context.Context, id string, state a2a.TaskState) *a2a.Task {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		task, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err == nil && task.Status.State == state {
			return task
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("task %s never reached %v: %v", id, state, err)
			}
			t.Fatalf("task %s is %v, never reached %v", id, task.Status.State, state)
		}
		time.Sleep(time.Millisecond)
	}
}

// stream reads a Handler stream one frame at a time.
type stream struct {
	t    *testing.T
	ctx  context.Context // the context of the stream's call
	next func() (server.StreamEvent, error, bool)
	stop func()
}

// openStream starts reading seq, which was made with ctx. The stream is
// released when the test ends.
func openStream(t *testing.T, ctx context.Context, seq iter.Seq2[server.StreamEvent, error]) *stream {
	next, stop := iter.Pull2(seq)
	t.Cleanup(stop)
	return &stream{t: t, ctx: ctx, next: next, stop: stop}
}

// Next returns the next frame; the stream must not end or fail.
func (s *stream) Next() server.StreamEvent {
	s.t.Helper()
	ev, err, ok := s.next()
	switch {
	case !ok:
		s.t.Fatalf("stream ended, want another frame (context: %v)", s.ctx.Err())
	case err != nil:
		s.t.Fatalf("stream failed: %v", err)
	}
	return ev
}

// Err returns the error the stream fails with; it must fail at once.
func (s *stream) Err() error {
	s.t.Helper()
	ev, err, ok := s.next()
	switch {
	case !ok:
		s.t.Fatal("stream ended without an error")
	case err == nil:
		s.t.Fatalf("stream yielded %T, want an error", ev.Event)
	}
	if _, _, ok := s.next(); ok {
		s.t.Error("stream went on after its error")
	}
	return err
}

// End checks that the stream is over, and that it ended by itself, not
// because its context expired.
func (s *stream) End() {
	s.t.Helper()
	if ev, err, ok := s.next(); ok {
		s.t.Fatalf("stream yielded %s %T (err %v), want its end", ev.ID, ev.Event, err)
	}
	if err := s.ctx.Err(); err != nil {
		s.t.Fatalf("stream ended only because its context ended: %v", err)
	}
}

// Rest reads the stream to its end, which must come by itself.
func (s *stream) Rest() []server.StreamEvent {
	s.t.Helper()
	var out []server.StreamEvent
	for {
		ev, err, ok := s.next()
		if !ok {
			break
		}
		if err != nil {
			s.t.Fatalf("stream failed after %d frames: %v", len(out), err)
		}
		out = append(out, ev)
	}
	if err := s.ctx.Err(); err != nil {
		s.t.Fatalf("stream ended only because its context ended: %v", err)
	}
	return out
}

// asTask returns the frame's task.
func asTask(t *testing.T, ev server.StreamEvent) *a2a.Task {
	t.Helper()
	task, ok := ev.Event.(*a2a.Task)
	if !ok {
		t.Fatalf("frame %s is %T, want *a2a.Task", ev.ID, ev.Event)
	}
	return task
}

// asStatus returns the frame's status update.
func asStatus(t *testing.T, ev server.StreamEvent) *a2a.TaskStatusUpdateEvent {
	t.Helper()
	u, ok := ev.Event.(*a2a.TaskStatusUpdateEvent)
	if !ok {
		t.Fatalf("frame %s is %T, want *a2a.TaskStatusUpdateEvent", ev.ID, ev.Event)
	}
	return u
}

// asArtifact returns the frame's artifact update.
func asArtifact(t *testing.T, ev server.StreamEvent) *a2a.TaskArtifactUpdateEvent {
	t.Helper()
	u, ok := ev.Event.(*a2a.TaskArtifactUpdateEvent)
	if !ok {
		t.Fatalf("frame %s is %T, want *a2a.TaskArtifactUpdateEvent", ev.ID, ev.Event)
	}
	return u
}

// seqOf parses a frame id "taskID:seq".
func seqOf(t *testing.T, taskID string, ev server.StreamEvent) int64 {
	t.Helper()
	id, n, ok := strings.Cut(ev.ID, ":")
	if !ok || id != taskID {
		t.Fatalf("frame id %q, want %q:<seq>", ev.ID, taskID)
	}
	seq, err := strconv.ParseInt(n, 10, 64)
	if err != nil || seq < 1 {
		t.Fatalf("frame id %q has no valid seq", ev.ID)
	}
	return seq
}

// states lists the states of the status updates among frames.
func states(frames []server.StreamEvent) []a2a.TaskState {
	var out []a2a.TaskState
	for _, f := range frames {
		if u, ok := f.Event.(*a2a.TaskStatusUpdateEvent); ok {
			out = append(out, u.Status.State)
		}
	}
	return out
}

// texts lists the texts of messages.
func texts(ms []a2a.Message) []string {
	out := make([]string, len(ms))
	for i := range ms {
		out[i] = ms[i].Text()
	}
	return out
}

// fakeClock is a controllable clock for server.WithClock: each reading
// returns the current time and then advances it by step.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func newClock(step time.Duration) *fakeClock {
	return &fakeClock{now: time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC), step: step}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now
	c.now = c.now.Add(c.step)
	return now
}

func TestNewHandlerRejectsBadConfiguration(t *testing.T) {
	t.Parallel()
	agent := server.AgentFunc(scripted)
	tests := []struct {
		name  string
		card  *a2a.AgentCard
		agent server.Agent
		opts  []server.Option
	}{
		{"nil card", nil, agent, nil},
		{"nil agent", testCard(), nil, nil},
		{"no name", testCard(func(c *a2a.AgentCard) { c.Name = "" }), agent, nil},
		{"no version", testCard(func(c *a2a.AgentCard) { c.Version = "" }), agent, nil},
		{"no interface", testCard(func(c *a2a.AgentCard) { c.SupportedInterfaces = nil }), agent, nil},
		{"interface without url", testCard(func(c *a2a.AgentCard) { c.SupportedInterfaces[0].URL = "" }), agent, nil},
		{"interface without version", testCard(func(c *a2a.AgentCard) { c.SupportedInterfaces[0].ProtocolVersion = "" }), agent, nil},
		{"nil store", testCard(), agent, []server.Option{server.WithStore(nil)}},
		{"nil clock", testCard(), agent, []server.Option{server.WithClock(nil)}},
		{"nil id generator", testCard(), agent, []server.Option{server.WithIDGenerator(nil)}},
		{"nil logger", testCard(), agent, []server.Option{server.WithLogger(nil)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, err := server.NewHandler(tc.card, tc.agent, tc.opts...)
			if err == nil {
				_ = h.Close(context.Background())
				t.Fatal("NewHandler succeeded, want an error")
			}
		})
	}
}

// operation is one of the eleven operations, called on a fresh task where
// it needs one. Setup runs in process (no service parameters); only the
// call itself uses ctx.
type operation struct {
	name string
	call func(t *testing.T, h *server.Handler, ctx context.Context) error
}

// firstErr is the error of the first item of a stream, or nil.
func firstErr(seq iter.Seq2[server.StreamEvent, error]) error {
	for _, err := range seq {
		return err
	}
	return nil
}

// operations needs a Handler running scripted, with streaming, push
// notifications and an extended card.
func operations() []operation {
	inputTask := func(t *testing.T, h *server.Handler) string {
		t.Helper()
		return sendTask(t, h, testCtx(t), newRequest("input")).ID
	}
	withConfig := func(t *testing.T, h *server.Handler) string {
		t.Helper()
		id := inputTask(t, h)
		if _, err := h.CreateTaskPushNotificationConfig(testCtx(t), &a2a.TaskPushNotificationConfig{TaskID: id, ID: "cfg", URL: "https://example.com/hook"}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	return []operation{
		{"SendMessage", func(t *testing.T, h *server.Handler, ctx context.Context) error {
			_, err := h.SendMessage(ctx, newRequest("complete"))
			return err
		}},
		{"SendStreamingMessage", func(t *testing.T, h *server.Handler, ctx context.Context) error {
			return firstErr(h.SendStreamingMessage(ctx, newRequest("complete")))
		}},
		{"GetTask", func(t *testing.T, h *server.Handler, ctx context.Context) error {
			_, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: inputTask(t, h)})
			return err
		}},
		{"ListTasks", func(t *testing.T, h *server.Handler, ctx context.Context) error {
			_, err := h.ListTasks(ctx, &a2a.ListTasksRequest{})
			return err
		}},
		{"CancelTask", func(t *testing.T, h *server.Handler, ctx context.Context) error {
			_, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: inputTask(t, h)})
			return err
		}},
		{"SubscribeToTask", func(t *testing.T, h *server.Handler, ctx context.Context) error {
			return firstErr(h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: inputTask(t, h)}))
		}},
		{"CreateTaskPushNotificationConfig", func(t *testing.T, h *server.Handler, ctx context.Context) error {
			_, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: inputTask(t, h), URL: "https://example.com/hook"})
			return err
		}},
		{"GetTaskPushNotificationConfig", func(t *testing.T, h *server.Handler, ctx context.Context) error {
			_, err := h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: withConfig(t, h), ID: "cfg"})
			return err
		}},
		{"ListTaskPushNotificationConfigs", func(t *testing.T, h *server.Handler, ctx context.Context) error {
			_, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: withConfig(t, h)})
			return err
		}},
		{"DeleteTaskPushNotificationConfig", func(t *testing.T, h *server.Handler, ctx context.Context) error {
			return h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: withConfig(t, h), ID: "cfg"})
		}},
		{"GetExtendedAgentCard", func(t *testing.T, h *server.Handler, ctx context.Context) error {
			_, err := h.GetExtendedAgentCard(server.WithPrincipal(ctx, "alice"), &a2a.GetExtendedAgentCardRequest{})
			return err
		}},
	}
}

// fullCard declares every optional capability.
func fullCard(c *a2a.AgentCard) { c.Capabilities.ExtendedAgentCard = a2a.Ptr(true) }

func extendedCard() server.Option {
	ext := testCard(fullCard, func(c *a2a.AgentCard) { c.Name = "test (extended)" })
	return server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) { return ext, nil })
}

func TestServiceParamsVersion(t *testing.T) {
	t.Parallel()
	h := newHandler(t, testCard(fullCard), scripted, extendedCard())
	tests := []struct {
		name      string
		params    *server.ServiceParams // nil: an in-process call
		requested string                // "" when the version is supported
	}{
		{name: "in process", params: nil},
		{name: "1.0", params: &server.ServiceParams{Version: "1.0"}},
		{name: "1.0.2 patch ignored", params: &server.ServiceParams{Version: "1.0.2"}},
		{name: "missing means 0.3", params: &server.ServiceParams{Version: ""}, requested: "0.3 (no header)"},
		{name: "0.3", params: &server.ServiceParams{Version: "0.3"}, requested: "0.3"},
		{name: "1.1", params: &server.ServiceParams{Version: "1.1"}, requested: "1.1"},
		{name: "2.0", params: &server.ServiceParams{Version: "2.0"}, requested: "2.0"},
		{name: "1.01", params: &server.ServiceParams{Version: "1.01"}, requested: "1.01"},
		{name: "1", params: &server.ServiceParams{Version: "1"}, requested: "1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, op := range operations() {
				t.Run(op.name, func(t *testing.T) {
					t.Parallel()
					ctx := testCtx(t)
					if tc.params != nil {
						ctx = server.WithServiceParams(ctx, *tc.params)
					}
					err := op.call(t, h, ctx)
					if tc.requested == "" {
						if err != nil {
							t.Fatalf("error = %v, want none", err)
						}
						return
					}
					e := wantErr(t, err, a2a.ErrVersionNotSupported)
					if got := e.Metadata["requested"]; got != tc.requested {
						t.Errorf("metadata requested = %q, want %q", got, tc.requested)
					}
					if got := e.Metadata["supported"]; got != a2a.ProtocolVersion {
						t.Errorf("metadata supported = %q, want %q", got, a2a.ProtocolVersion)
					}
				})
			}
		})
	}
}

// TestServiceParamsV03 checks which calls WithV03 serves as v0.3 ones:
// those the binding translated (V03), with A2A-Version 0.3 or none.
func TestServiceParamsV03(t *testing.T) {
	t.Parallel()
	h := newHandler(t, testCard(fullCard), scripted, extendedCard(), server.WithV03())
	tests := []struct {
		name                string
		params              server.ServiceParams
		requested, supports string // "" when the call is served
	}{
		{name: "translated, no header", params: server.ServiceParams{V03: true}},
		{name: "translated, 0.3", params: server.ServiceParams{Version: "0.3", V03: true}},
		{name: "translated, 0.3.0", params: server.ServiceParams{Version: "0.3.0", V03: true}},
		{name: "1.0", params: server.ServiceParams{Version: "1.0"}},
		{name: "untranslated, no header", params: server.ServiceParams{}, requested: "0.3 (no header)", supports: "1.0"},
		{name: "untranslated, 0.3", params: server.ServiceParams{Version: "0.3"}, requested: "0.3", supports: "1.0"},
		{name: "translated, 1.0", params: server.ServiceParams{Version: "1.0", V03: true}, requested: "1.0", supports: "1.0"},
		{name: "0.2", params: server.ServiceParams{Version: "0.2", V03: true}, requested: "0.2", supports: "1.0, 0.3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, op := range operations() {
				t.Run(op.name, func(t *testing.T) {
					t.Parallel()
					err := op.call(t, h, server.WithServiceParams(testCtx(t), tc.params))
					if tc.requested == "" {
						if err != nil {
							t.Fatalf("error = %v, want none", err)
						}
						return
					}
					e := wantErr(t, err, a2a.ErrVersionNotSupported)
					if got := e.Metadata["requested"]; got != tc.requested {
						t.Errorf("metadata requested = %q, want %q", got, tc.requested)
					}
					if got := e.Metadata["supported"]; got != tc.supports {
						t.Errorf("metadata supported = %q, want %q", got, tc.supports)
					}
				})
			}
		})
	}
	if _, err := newHandler(t, nil, scripted).ProtocolVersion(""); !errors.Is(err, a2a.ErrVersionNotSupported) {
		t.Errorf("without WithV03, ProtocolVersion(\"\") error = %v, want VersionNotSupported", err)
	}
	for _, v := range []string{"", "0.3", "0.3.1"} {
		if got, err := h.ProtocolVersion(v); got != "0.3" || err != nil {
			t.Errorf("ProtocolVersion(%q) = %q, %v; want 0.3", v, got, err)
		}
	}
}

func TestServiceParamsRequiredExtension(t *testing.T) {
	t.Parallel()
	const required, optional = "https://example.com/ext/required/v1", "https://example.com/ext/optional/v1"
	card := testCard(fullCard, func(c *a2a.AgentCard) {
		c.Capabilities.Extensions = []a2a.AgentExtension{{URI: required, Required: true}, {URI: optional}}
	})
	seen := make(chan []string, 1)
	h := newHandler(t, card, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Message.Text() == "record" {
			seen <- req.Extensions
		}
		return scripted(ctx, req, w)
	}, extendedCard())
	tests := []struct {
		name    string
		params  *server.ServiceParams
		wantErr bool
	}{
		{"in process", nil, false},
		{"none declared", &server.ServiceParams{Version: "1.0"}, true},
		{"only the optional one", &server.ServiceParams{Version: "1.0", Extensions: []string{optional}}, true},
		{"another version of it", &server.ServiceParams{Version: "1.0", Extensions: []string{"https://example.com/ext/required/v2"}}, true},
		{"the required one", &server.ServiceParams{Version: "1.0", Extensions: []string{required}}, false},
		{"both", &server.ServiceParams{Version: "1.0", Extensions: []string{optional, required}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range operations() {
				t.Run(op.name, func(t *testing.T) {
					ctx := testCtx(t)
					if tc.params != nil {
						ctx = server.WithServiceParams(ctx, *tc.params)
					}
					err := op.call(t, h, ctx)
					if !tc.wantErr {
						if err != nil {
							t.Fatalf("error = %v, want none", err)
						}
						return
					}
					e := wantErr(t, err, a2a.ErrExtensionSupportRequired)
					if got := e.Metadata["extension"]; got != required {
						t.Errorf("metadata extension = %q, want %q", got, required)
					}
				})
			}
		})
	}
	// The agent learns which extensions the client declared.
	ctx := server.WithServiceParams(testCtx(t), server.ServiceParams{Version: "1.0", Extensions: []string{optional, required}})
	sendTask(t, h, ctx, newRequest("record"))
	if got := recv(t, seen); !slices.Equal(got, []string{optional, required}) {
		t.Errorf("Request.Extensions = %q, want %q", got, []string{optional, required})
	}
}

func TestGetExtendedAgentCard(t *testing.T) {
	t.Parallel()
	ext := testCard(fullCard, func(c *a2a.AgentCard) { c.Name = "extended" })
	fixed := func(c *a2a.AgentCard, err error) server.Option {
		return server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) { return c, err })
	}
	tests := []struct {
		name string
		cap  *bool
		opts []server.Option
		want *a2a.Error // nil: returns ext
	}{
		{"capability absent", nil, []server.Option{fixed(ext, nil)}, a2a.ErrUnsupportedOperation},
		{"capability false", a2a.Ptr(false), []server.Option{fixed(ext, nil)}, a2a.ErrUnsupportedOperation},
		{"declared, not configured", a2a.Ptr(true), nil, a2a.ErrExtendedAgentCardNotConfigured},
		{"declared, configured nil card", a2a.Ptr(true), []server.Option{fixed(nil, nil)}, a2a.ErrExtendedAgentCardNotConfigured},
		{"declared, source fails", a2a.Ptr(true), []server.Option{fixed(nil, errors.New("card store down"))}, a2a.ErrInternal},
		{"declared, source denies", a2a.Ptr(true), []server.Option{fixed(nil, a2a.NewError(a2a.CodePermissionDenied, ""))}, a2a.ErrPermissionDenied},
		{"declared, configured", a2a.Ptr(true), []server.Option{fixed(ext, nil)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHandler(t, testCard(func(c *a2a.AgentCard) { c.Capabilities.ExtendedAgentCard = tc.cap }), scripted, tc.opts...)
			got, err := h.GetExtendedAgentCard(server.WithPrincipal(v1(testCtx(t)), "alice"), &a2a.GetExtendedAgentCardRequest{})
			if tc.want != nil {
				wantErr(t, err, tc.want)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != ext {
				t.Errorf("GetExtendedAgentCard = %q, want the configured card", got.Name)
			}
		})
	}
	t.Run("varies by caller", func(t *testing.T) {
		t.Parallel()
		h := newHandler(t, testCard(fullCard), scripted, server.WithExtendedCard(func(ctx context.Context) (*a2a.AgentCard, error) {
			c := *ext
			name, _ := ctx.Value(callerKey{}).(string)
			c.Name = "card for " + name
			return &c, nil
		}))
		got, err := h.GetExtendedAgentCard(context.WithValue(server.WithPrincipal(v1(testCtx(t)), "alice"), callerKey{}, "alice"), &a2a.GetExtendedAgentCardRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "card for alice" {
			t.Errorf("card name = %q, want %q", got.Name, "card for alice")
		}
	})
}

// callerKey carries a caller's name to an extended card source.
type callerKey struct{}

// scopeCase describes an owner and another caller who must not see the
// owner's tasks.
type scopeCase struct {
	name                     string
	owner, other             func(context.Context) context.Context
	ownerTenant, otherTenant string
}

func asPrincipal(p string) func(context.Context) context.Context {
	return func(ctx context.Context) context.Context { return server.WithPrincipal(ctx, p) }
}

func anonymous(ctx context.Context) context.Context { return ctx }

var scopeCases = []scopeCase{
	{"other tenant", anonymous, anonymous, "a", "b"},
	{"other principal", asPrincipal("alice"), asPrincipal("bob"), "", ""},
	{"anonymous caller", asPrincipal("alice"), anonymous, "", ""},
	{"principal caller of anonymous task", anonymous, asPrincipal("bob"), "", ""},
	{"same principal, other tenant", asPrincipal("alice"), asPrincipal("alice"), "a", "b"},
	{"other principal, same tenant", asPrincipal("alice"), asPrincipal("bob"), "a", "a"},
}

func TestScopeIsolation(t *testing.T) {
	t.Parallel()
	for _, sc := range scopeCases {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			h := newHandler(t, nil, scripted)
			base := testCtx(t)
			ownerCtx, otherCtx := sc.owner(v1(base)), sc.other(v1(base))

			// The owner's interrupted task, with a webhook.
			req := newRequest("input")
			req.Tenant = sc.ownerTenant
			task := sendTask(t, h, ownerCtx, req)
			if _, err := h.CreateTaskPushNotificationConfig(ownerCtx, &a2a.TaskPushNotificationConfig{Tenant: sc.ownerTenant, TaskID: task.ID, ID: "cfg", URL: "https://example.com/hook"}); err != nil {
				t.Fatal(err)
			}
			// The other caller's own task.
			otherReq := newRequest("input")
			otherReq.Tenant = sc.otherTenant
			otherTask := sendTask(t, h, otherCtx, otherReq)

			notFound := func(t *testing.T, err error) {
				t.Helper()
				e := wantErr(t, err, a2a.ErrTaskNotFound)
				if got := e.Metadata["taskId"]; got != task.ID {
					t.Errorf("metadata taskId = %q, want %q", got, task.ID)
				}
			}
			t.Run("GetTask", func(t *testing.T) {
				_, err := h.GetTask(otherCtx, &a2a.GetTaskRequest{Tenant: sc.otherTenant, ID: task.ID})
				notFound(t, err)
			})
			t.Run("CancelTask", func(t *testing.T) {
				_, err := h.CancelTask(otherCtx, &a2a.CancelTaskRequest{Tenant: sc.otherTenant, ID: task.ID})
				notFound(t, err)
			})
			t.Run("SubscribeToTask", func(t *testing.T) {
				notFound(t, firstErr(h.SubscribeToTask(otherCtx, &a2a.SubscribeToTaskRequest{Tenant: sc.otherTenant, ID: task.ID})))
			})
			t.Run("SubscribeToTask resuming", func(t *testing.T) {
				ctx := server.WithServiceParams(base, server.ServiceParams{Version: "1.0", LastEventID: task.ID + ":1"})
				notFound(t, firstErr(h.SubscribeToTask(sc.other(ctx), &a2a.SubscribeToTaskRequest{Tenant: sc.otherTenant, ID: task.ID})))
			})
			t.Run("SendMessage continuing", func(t *testing.T) {
				r := continueRequest(task.ID, "complete")
				r.Tenant = sc.otherTenant
				_, err := h.SendMessage(otherCtx, r)
				notFound(t, err)
			})
			t.Run("ListTasks", func(t *testing.T) {
				res, err := h.ListTasks(otherCtx, &a2a.ListTasksRequest{Tenant: sc.otherTenant})
				if err != nil {
					t.Fatal(err)
				}
				if res.TotalSize != 1 || len(res.Tasks) != 1 || res.Tasks[0].ID != otherTask.ID {
					t.Errorf("ListTasks = %d tasks (total %d), want only the caller's own task %s", len(res.Tasks), res.TotalSize, otherTask.ID)
				}
				res, err = h.ListTasks(otherCtx, &a2a.ListTasksRequest{Tenant: sc.otherTenant, ContextID: task.ContextID})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Tasks) != 0 || res.TotalSize != 0 {
					t.Errorf("ListTasks by the owner's contextId = %d tasks (total %d), want none", len(res.Tasks), res.TotalSize)
				}
			})
			t.Run("CreateTaskPushNotificationConfig", func(t *testing.T) {
				_, err := h.CreateTaskPushNotificationConfig(otherCtx, &a2a.TaskPushNotificationConfig{Tenant: sc.otherTenant, TaskID: task.ID, URL: "https://evil.example.com/hook"})
				notFound(t, err)
			})
			t.Run("GetTaskPushNotificationConfig", func(t *testing.T) {
				_, err := h.GetTaskPushNotificationConfig(otherCtx, &a2a.GetTaskPushNotificationConfigRequest{Tenant: sc.otherTenant, TaskID: task.ID, ID: "cfg"})
				notFound(t, err)
			})
			t.Run("ListTaskPushNotificationConfigs", func(t *testing.T) {
				_, err := h.ListTaskPushNotificationConfigs(otherCtx, &a2a.ListTaskPushNotificationConfigsRequest{Tenant: sc.otherTenant, TaskID: task.ID})
				notFound(t, err)
			})
			t.Run("DeleteTaskPushNotificationConfig", func(t *testing.T) {
				err := h.DeleteTaskPushNotificationConfig(otherCtx, &a2a.DeleteTaskPushNotificationConfigRequest{Tenant: sc.otherTenant, TaskID: task.ID, ID: "cfg"})
				notFound(t, err)
			})

			// Nothing the other caller tried changed the owner's task.
			got, err := h.GetTask(ownerCtx, &a2a.GetTaskRequest{Tenant: sc.ownerTenant, ID: task.ID})
			if err != nil {
				t.Fatalf("owner's GetTask: %v", err)
			}
			if got.Status.State != a2a.TaskStateInputRequired || len(got.History) != 1 {
				t.Errorf("owner's task is %v with %d history messages, want untouched (input-required, 1)", got.Status.State, len(got.History))
			}
			if _, err := h.GetTaskPushNotificationConfig(ownerCtx, &a2a.GetTaskPushNotificationConfigRequest{Tenant: sc.ownerTenant, TaskID: task.ID, ID: "cfg"}); err != nil {
				t.Errorf("owner's push config: %v", err)
			}
			res, err := h.ListTasks(ownerCtx, &a2a.ListTasksRequest{Tenant: sc.ownerTenant})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tasks) != 1 || res.Tasks[0].ID != task.ID {
				t.Errorf("owner's ListTasks = %d tasks, want only %s", len(res.Tasks), task.ID)
			}
			// And the owner can still finish it.
			r := continueRequest(task.ID, "complete")
			r.Tenant = sc.ownerTenant
			if got := sendTask(t, h, ownerCtx, r); got.Status.State != a2a.TaskStateCompleted {
				t.Errorf("owner's continued task is %v, want completed", got.Status.State)
			}
		})
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	started := make(chan string, 10)
	canceled := make(chan error, 10)
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Message.Text() != "block" {
			return scripted(ctx, req, w)
		}
		if err := w.Working(ctx, "started"); err != nil {
			return err
		}
		started <- req.TaskID
		<-ctx.Done()
		canceled <- ctx.Err()
		return ctx.Err()
	})

	running := sendTask(t, h, ctx, immediate(newRequest("block")))
	recv(t, started)
	// A blocking SendMessage waiting on a second running task.
	blocked := sendAsync(h, ctx, newRequest("block"))
	waiting := recv(t, started)
	// An open stream on the first task.
	st := openStream(t, ctx, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: running.ID}))
	if got := asTask(t, st.Next()).Status.State; got != a2a.TaskStateWorking {
		t.Fatalf("snapshot state %v, want working", got)
	}
	// An interrupted task with no agent running.
	interrupted := sendTask(t, h, ctx, newRequest("input"))

	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}

	for range 2 {
		if err := recv(t, canceled); !errors.Is(err, context.Canceled) {
			t.Errorf("agent context ended with %v, want context.Canceled", err)
		}
	}
	for _, id := range []string{running.ID, waiting} {
		task := getTask(t, h, ctx, id)
		if task.Status.State != a2a.TaskStateFailed {
			t.Errorf("task %s is %v after Close, want failed", id, task.Status.State)
			continue
		}
		if msg := task.Status.Message.Text(); !strings.Contains(msg, "shut down") {
			t.Errorf("failed status message %q does not say the server shut down", msg)
		}
	}
	// The blocked caller learns of the shutdown: an error, or the task as
	// Close failed it.
	if r := recv(t, blocked); r.err == nil {
		if task, ok := r.res.Result.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateFailed {
			t.Errorf("blocking SendMessage returned %+v across Close, want an error or the failed task", r.res.Result)
		}
	}
	// The open stream ends, possibly after the failure it saw, with
	// Unavailable unless the failure ended it first.
	for {
		ev, err, ok := st.next()
		if !ok {
			break
		}
		if err != nil {
			if !errors.Is(err, a2a.ErrUnavailable) {
				t.Errorf("stream error after Close: %v, want Unavailable", err)
			}
			continue
		}
		if s := asStatus(t, ev).Status.State; s != a2a.TaskStateFailed {
			t.Errorf("stream frame after Close is %v, want only the failure", s)
		}
	}
	// The interrupted task had no running agent: it stays as it was.
	if got := getTask(t, h, ctx, interrupted.ID).Status.State; got != a2a.TaskStateInputRequired {
		t.Errorf("interrupted task is %v after Close, want input-required", got)
	}

	t.Run("SendMessage", func(t *testing.T) {
		_, err := h.SendMessage(ctx, newRequest("complete"))
		wantErr(t, err, a2a.ErrUnavailable)
	})
	t.Run("SendStreamingMessage", func(t *testing.T) {
		wantErr(t, firstErr(h.SendStreamingMessage(ctx, newRequest("complete"))), a2a.ErrUnavailable)
	})
	t.Run("SendMessage continuing", func(t *testing.T) {
		_, err := h.SendMessage(ctx, continueRequest(interrupted.ID, "complete"))
		wantErr(t, err, a2a.ErrUnavailable)
		// No agent will ever answer: the task must not be left working.
		task := getTask(t, h, ctx, interrupted.ID)
		if task.Status.State != a2a.TaskStateInputRequired || len(task.History) != 1 {
			t.Errorf("task is %v with %d history messages after a refused message, want input-required with 1", task.Status.State, len(task.History))
		}
	})
	t.Run("Close again", func(t *testing.T) {
		if err := h.Close(ctx); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}

func TestCloseWaitsForAgents(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	started, release := make(chan struct{}), make(chan struct{})
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.Submit(ctx); err != nil {
			return err
		}
		close(started)
		<-release // ignores cancellation
		return w.Complete(ctx, "done")
	})
	task := sendTask(t, h, ctx, immediate(newRequest("stubborn")))
	recv(t, started)
	expired, cancel := context.WithCancel(ctx)
	cancel()
	if err := h.Close(expired); err == nil {
		t.Error("Close returned nil while an agent is still running")
	}
	close(release)
	if err := h.Close(ctx); err != nil {
		t.Fatalf("Close after the agent returned: %v", err)
	}
	if got := getTask(t, h, ctx, task.ID).Status.State; got != a2a.TaskStateCompleted {
		t.Errorf("task is %v, want completed (the agent finished it)", got)
	}
}

func TestHandlerSharesStore(t *testing.T) {
	t.Parallel()
	// A restart: a second Handler on the same store serves the tasks of
	// the first, and continues an interrupted one.
	ctx := testCtx(t)
	st := memory.New()
	h1 := newHandler(t, nil, scripted, server.WithStore(st))
	task := sendTask(t, h1, ctx, newRequest("input"))
	done := sendTask(t, h1, ctx, newRequest("complete"))
	if err := h1.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if h1.Store() != st {
		t.Error("Store() is not the store given with WithStore")
	}

	calls := make(chan *server.Request, 1)
	h2 := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		calls <- req
		return w.Complete(ctx, "finished after the restart")
	}, server.WithStore(st))
	if got := getTask(t, h2, ctx, done.ID).Status.State; got != a2a.TaskStateCompleted {
		t.Errorf("completed task is %v on the new Handler", got)
	}
	got := sendTask(t, h2, ctx, continueRequest(task.ID, "go on"))
	req := recv(t, calls)
	if req.Task == nil || req.Task.ID != task.ID || req.ContextID != task.ContextID {
		t.Errorf("agent request Task=%v ContextID=%q, want the continued task", req.Task, req.ContextID)
	}
	if got.Status.State != a2a.TaskStateCompleted {
		t.Errorf("continued task is %v, want completed", got.Status.State)
	}
	if want := []string{"input", "Which one?", "go on"}; !slices.Equal(texts(got.History), want) {
		t.Errorf("history %q, want %q", texts(got.History), want)
	}
	_, err := h2.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
	wantErr(t, err, a2a.ErrTaskNotCancelable)
}
