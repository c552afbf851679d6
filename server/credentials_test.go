package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
	"github.com/goa2a/a2a/store/sqlite"
)

// Secrets a client sends to answer auth-required: in a text part, in a
// data part and in the message metadata.
const (
	textSecret = "tok-text-5f2a9c0d"
	dataSecret = "tok-data-81b7e4aa"
	metaSecret = "tok-meta-33c1f9be"
)

var secrets = []string{textSecret, dataSecret, metaSecret}

// lockedBuffer is a log destination safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// noSecret fails the test if what (encoded as JSON unless a string) holds
// any of the secrets.
func noSecret(t *testing.T, where string, what any) {
	t.Helper()
	s, ok := what.(string)
	if !ok {
		b, err := json.Marshal(what)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		s = string(b)
	}
	for _, secret := range secrets {
		if strings.Contains(s, secret) {
			t.Errorf("%s holds the secret %q: %s", where, secret, s)
		}
	}
}

// credentialAnswer is the client's answer to auth-required on task.
func credentialAnswer(t *testing.T, task *a2a.Task) *a2a.Message {
	t.Helper()
	data, err := a2a.DataPart(map[string]string{"user": "deploy-bot", "password": dataSecret})
	if err != nil {
		t.Fatal(err)
	}
	return &a2a.Message{
		MessageID: "answer-1", TaskID: task.ID, ContextID: task.ContextID, Role: a2a.RoleUser,
		Parts:    []a2a.Part{a2a.TextPart("token: " + textSecret), data},
		Metadata: map[string]any{"apiKey": metaSecret},
	}
}

func TestAuthRequiredCredentialsWithheld(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) store.Store{
		"memory": func(*testing.T) store.Store { return memory.New() },
		"sqlite": func(t *testing.T) store.Store {
			st, err := sqlite.Open(testCtx(t), filepath.Join(t.TempDir(), "tasks.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = st.Close() })
			return st
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testCredentialsWithheld(t, open(t))
		})
	}
}

func testCredentialsWithheld(t *testing.T, st store.Store) {
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	seen := make(chan *a2a.Message, 1) // what the agent received with the credentials
	finish := make(chan struct{})
	agent := func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Task == nil {
			return w.RequireAuth(ctx, "Send the token for the build system.")
		}
		if req.Task.Status.State != a2a.TaskStateAuthRequired {
			return w.Fail(ctx, "unexpected state "+req.Task.Status.State.String())
		}
		seen <- req.Message
		if err := w.Working(ctx, "deploying with the token"); err != nil {
			return err
		}
		select {
		case <-finish:
		case <-ctx.Done():
			return ctx.Err()
		}
		return w.Complete(ctx, "deployed")
	}
	h := newHandler(t, testCard(func(c *a2a.AgentCard) { c.Capabilities.Streaming = a2a.Ptr(true) }), agent,
		server.WithStore(st), server.WithLogger(logger))
	ctx := server.WithPrincipal(v1(testCtx(t)), "alice")

	// The stream that starts the task stays open through auth-required.
	var (
		streamFrames []server.StreamEvent
		streamErr    error
		streamDone   = make(chan struct{})
		authAsked    = make(chan *a2a.Task, 1)
	)
	go func() {
		defer close(streamDone)
		first := true
		for ev, err := range h.SendStreamingMessage(ctx, newRequest("deploy build 42")) {
			if err != nil {
				streamErr = err
				return
			}
			streamFrames = append(streamFrames, ev)
			var task *a2a.Task
			switch e := ev.Event.(type) {
			case *a2a.Task:
				task = e
			case *a2a.TaskStatusUpdateEvent:
				if e.Status.State == a2a.TaskStateAuthRequired && first {
					task = &a2a.Task{ID: e.TaskID, ContextID: e.ContextID, Status: e.Status}
				}
			}
			if task != nil && task.Status.State == a2a.TaskStateAuthRequired && first {
				first = false
				authAsked <- task
			}
		}
	}()
	var task *a2a.Task
	select {
	case task = <-authAsked:
	case <-streamDone:
		t.Fatalf("the stream ended before auth-required: %v", streamErr)
	}

	// The client answers on the same task with credentials.
	answer := credentialAnswer(t, task)
	resp, err := h.SendMessage(ctx, &a2a.SendMessageRequest{
		Message:       answer,
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true, HistoryLength: a2a.Ptr[int32](100)},
	})
	if err != nil {
		t.Fatal(err)
	}
	noSecret(t, "the SendMessage answer", resp)

	// The agent got the credentials in full.
	got := recv(t, seen)
	if !strings.Contains(got.Text(), textSecret) {
		t.Errorf("the agent's text %q lacks the secret", got.Text())
	}
	if len(got.Parts) != 2 || !strings.Contains(string(got.Parts[1].Content.(a2a.Data)), dataSecret) {
		t.Errorf("the agent's parts %+v lack the data secret", got.Parts)
	}
	if got.Metadata["apiKey"] != metaSecret {
		t.Errorf("the agent's metadata %v lacks the secret", got.Metadata)
	}

	// A subscriber that joins now sees the task with the answer withheld.
	var subFrames []server.StreamEvent
	subDone := make(chan error, 1)
	subscribed := make(chan struct{})
	go func() {
		var serr error
		for ev, err := range h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
			if err != nil {
				serr = err
				break
			}
			subFrames = append(subFrames, ev)
			if len(subFrames) == 1 {
				close(subscribed)
			}
		}
		subDone <- serr
	}()
	select {
	case <-subscribed:
	case err := <-subDone:
		t.Fatalf("SubscribeToTask ended before its first frame: %v", err)
	}
	close(finish)
	<-streamDone
	if err := <-subDone; err != nil {
		t.Fatalf("SubscribeToTask: %v", err)
	}
	if streamErr != nil {
		t.Fatalf("SendStreamingMessage: %v", streamErr)
	}
	noSecret(t, "the SendStreamingMessage stream", streamFrames)
	noSecret(t, "the SubscribeToTask stream", subFrames)
	if snap, ok := subFrames[0].Event.(*a2a.Task); !ok || !hasWithheld(snap, answer) {
		t.Errorf("the SubscribeToTask snapshot %+v lacks the withheld answer", subFrames[0].Event)
	}

	// GetTask and ListTasks show that the client answered, not what.
	final, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: a2a.Ptr[int32](100)})
	if err != nil {
		t.Fatal(err)
	}
	if final.Status.State != a2a.TaskStateCompleted {
		t.Errorf("final state %s, want completed", final.Status.State)
	}
	noSecret(t, "GetTask", final)
	if !hasWithheld(final, answer) {
		t.Errorf("GetTask history %+v lacks the withheld answer", final.History)
	}
	list, err := h.ListTasks(ctx, &a2a.ListTasksRequest{HistoryLength: a2a.Ptr[int32](100), IncludeArtifacts: a2a.Ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tasks) != 1 || !hasWithheld(&list.Tasks[0], answer) {
		t.Errorf("ListTasks %+v lacks the withheld answer", list.Tasks)
	}
	noSecret(t, "ListTasks", list)

	// The log itself, which push deliveries and every later reader use.
	evs, err := st.Events(ctx, store.Scope{Owner: "alice"}, task.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) < 4 {
		t.Fatalf("%d stored events, want the whole exchange", len(evs))
	}
	var payloads []a2a.Event
	for _, ev := range evs {
		payloads = append(payloads, ev.Payload)
	}
	noSecret(t, "the stored events", payloads)

	// And no log line, at debug level, mentions them.
	noSecret(t, "the server log", logs.String())
}

// hasWithheld reports whether task's history holds answer with its
// content withheld: same id, role, task and context, the marker as the
// only part, and the withheld metadata.
func hasWithheld(task *a2a.Task, answer *a2a.Message) bool {
	for _, m := range task.History {
		if m.MessageID != answer.MessageID {
			continue
		}
		_, marked := m.Metadata[server.WithheldMetadataKey]
		return m.Role == a2a.RoleUser && m.TaskID == task.ID && m.ContextID == task.ContextID &&
			len(m.Parts) == 1 && m.Text() == server.WithheldText && marked && len(m.Metadata) == 1
	}
	return false
}

// An answer to input-required is conversation, not credentials: it is
// kept as sent.
func TestInputRequiredAnswerKept(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Task == nil {
			return w.RequireInput(ctx, "Which build?")
		}
		return w.Complete(ctx, "ok")
	})
	ctx := v1(testCtx(t))
	task := sendTask(t, h, ctx, newRequest("deploy"))
	answer := &a2a.Message{MessageID: "answer-2", TaskID: task.ID, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("build 42")}}
	if _, err := h.SendMessage(ctx, &a2a.SendMessageRequest{Message: answer}); err != nil {
		t.Fatal(err)
	}
	final, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: a2a.Ptr[int32](100)})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range final.History {
		if m.MessageID == answer.MessageID {
			if m.Text() != "build 42" {
				t.Errorf("the answer was kept as %q, want it as sent", m.Text())
			}
			return
		}
	}
	t.Errorf("history %+v lacks the answer", final.History)
}
