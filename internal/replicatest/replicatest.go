// Package replicatest checks that server Handlers sharing one store follow
// each other: what a task's agent writes through one reaches the streams
// and waits of the others, a cancel on any of them stops the agent where
// it runs, and a stream resumes on another Handler. Each store's tests run
// it with two Handlers on two Store values of one database (or one value
// of an in-process store), as two replicas would.
package replicatest

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
)

// timeout bounds every wait: generous, for a loaded machine.
const timeout = 60 * time.Second

// Run runs the checks on Handlers made over the two stores that newStores
// returns, which must share their tasks.
func Run(t *testing.T, newStores func(t *testing.T) (store.Store, store.Store)) {
	t.Run("FollowElsewhere", func(t *testing.T) { testFollow(t, newStores) })
	t.Run("ResumeElsewhere", func(t *testing.T) { testResume(t, newStores) })
	t.Run("CancelElsewhere", func(t *testing.T) { testCancel(t, newStores) })
	t.Run("CancelWhileStreaming", func(t *testing.T) { testCancelFlood(t, newStores) })
}

// agent is a test agent. Its message says what it does: "chunks N" emits
// N artifact chunks, after waiting for a go-ahead on its task's gate, then
// completes; "hang" sets working and waits for its context to end,
// reporting on canceled when it does; "flood" writes artifact chunks as
// fast as it can until its context ends, reporting on canceled too.
type agent struct {
	mu       sync.Mutex
	gates    map[string]chan struct{}
	started  chan string // task ids, as each execution starts
	canceled chan string
}

func newAgent() *agent {
	return &agent{gates: make(map[string]chan struct{}), started: make(chan string, 16), canceled: make(chan string, 16)}
}

func (a *agent) gate(id string) chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	g, ok := a.gates[id]
	if !ok {
		g = make(chan struct{})
		a.gates[id] = g
	}
	return g
}

func (a *agent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	text := req.Message.Text()
	if err := w.Working(ctx, "on it"); err != nil {
		return err
	}
	if err := w.Flush(ctx); err != nil {
		return err
	}
	a.started <- req.TaskID
	if text == "hang" {
		<-ctx.Done()
		a.canceled <- req.TaskID
		return ctx.Err()
	}
	if text == "flood" {
		for i := 0; ctx.Err() == nil; i++ {
			art := a2a.Artifact{ArtifactID: "out", Parts: []a2a.Part{a2a.TextPart(strconv.Itoa(i) + " ")}}
			if err := w.ArtifactChunk(ctx, art, i > 0, false); err != nil {
				break
			}
		}
		a.canceled <- req.TaskID
		return ctx.Err()
	}
	n, _ := strconv.Atoi(text[len("chunks "):])
	select {
	case <-a.gate(req.TaskID):
	case <-ctx.Done():
		return ctx.Err()
	}
	for i := range n {
		art := a2a.Artifact{ArtifactID: "out", Parts: []a2a.Part{a2a.TextPart(strconv.Itoa(i) + " ")}}
		if err := w.ArtifactChunk(ctx, art, i > 0, i == n-1); err != nil {
			return err
		}
	}
	return w.Complete(ctx, "done")
}

var card = &a2a.AgentCard{
	Name: "replica", Description: "test", Version: "1",
	SupportedInterfaces: []a2a.AgentInterface{{URL: "http://127.0.0.1/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}},
	Capabilities:        a2a.AgentCapabilities{Streaming: a2a.Ptr(true)},
}

// pair returns two Handlers, one on each store, with one agent.
func pair(t *testing.T, newStores func(t *testing.T) (store.Store, store.Store)) (*server.Handler, *server.Handler, *agent) {
	s1, s2 := newStores(t)
	a := newAgent()
	var hs [2]*server.Handler
	for i, st := range []store.Store{s1, s2} {
		h, err := server.NewHandler(card, a, server.WithStore(st), server.WithMaintenanceInterval(-1),
			// The change feed alone: no safety net.
			server.WithFollowPoll(-1))
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
		hs[i] = h
	}
	return hs[0], hs[1], a
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	return ctx
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

// start sends text to h with returnImmediately and returns the task.
func start(t *testing.T, ctx context.Context, h *server.Handler, a *agent, text string) *a2a.Task {
	t.Helper()
	msg := a2a.NewTextMessage(a2a.RoleUser, "m-"+strconv.FormatInt(time.Now().UnixNano(), 36), text)
	res, err := h.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := res.Result.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage returned %T", res.Result)
	}
	if id := recv(t, a.started, "agent start"); id != task.ID {
		t.Fatalf("agent started %s, want %s", id, task.ID)
	}
	return task
}

// frames is what a stream carried: the seq of each frame and the task's
// state at its end.
type frames struct {
	seqs  []int64
	last  a2a.TaskState
	chunk int // artifact chunks
}

// collect reads a stream to its end; stop, when set, ends it early after
// that many frames.
func collect(t *testing.T, stream iter.Seq2[server.StreamEvent, error], taskID string, stop int) frames {
	t.Helper()
	f, err := read(stream, taskID, stop, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// read is collect for another goroutine than the test's. It closes first,
// if set, after the first frame: the stream is subscribed.
func read(stream iter.Seq2[server.StreamEvent, error], taskID string, stop int, first chan struct{}) (frames, error) {
	var f frames
	for ev, err := range stream {
		if first != nil {
			close(first)
			first = nil
		}
		if err != nil {
			return f, fmt.Errorf("stream: %w", err)
		}
		id, seqText, ok := cut(ev.ID)
		if !ok || id != taskID {
			return f, fmt.Errorf("frame id %q, want %s:seq", ev.ID, taskID)
		}
		seq, _ := strconv.ParseInt(seqText, 10, 64)
		f.seqs = append(f.seqs, seq)
		switch e := ev.Event.(type) {
		case *a2a.Task:
			f.last = e.Status.State
		case *a2a.TaskStatusUpdateEvent:
			f.last = e.Status.State
		case *a2a.TaskArtifactUpdateEvent:
			f.chunk++
		}
		if stop > 0 && len(f.seqs) == stop {
			break
		}
	}
	return f, nil
}

// result is what read returned.
type result struct {
	frames
	err error
}

// readAll reads stream in a goroutine of its own and sends the result. It
// returns once the stream is subscribed (or over).
func readAll(t *testing.T, stream iter.Seq2[server.StreamEvent, error], taskID string, out chan<- result) {
	t.Helper()
	first := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		f, err := read(stream, taskID, 0, first)
		out <- result{f, err}
	}()
	select {
	case <-first:
	case <-ended:
	case <-time.After(timeout):
		t.Fatalf("no first frame within %v", timeout)
	}
}

func (r result) check(t *testing.T) frames {
	t.Helper()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.frames
}

func cut(id string) (string, string, bool) {
	for i := len(id) - 1; i >= 0; i-- {
		if id[i] == ':' {
			return id[:i], id[i+1:], true
		}
	}
	return "", "", false
}

// inOrder fails unless seqs run from first without a gap or a repeat.
func inOrder(t *testing.T, seqs []int64, first int64) {
	t.Helper()
	for i, s := range seqs {
		if s != first+int64(i) {
			t.Fatalf("frame %d has seq %d, want %d (seqs %v)", i, s, first+int64(i), seqs)
		}
	}
}

func subscribe(ctx context.Context, h *server.Handler, id, lastEventID string) iter.Seq2[server.StreamEvent, error] {
	ctx = server.WithServiceParams(ctx, server.ServiceParams{Version: a2a.ProtocolVersion, LastEventID: lastEventID})
	return h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id})
}

// Streams on the Handler that does not run the task see every event the
// agent writes through the other, in order, to the completed state.
func testFollow(t *testing.T, newStores func(t *testing.T) (store.Store, store.Store)) {
	h1, h2, a := pair(t, newStores)
	ctx := ctxOf(t)
	const n = 300
	task := start(t, ctx, h1, a, "chunks "+strconv.Itoa(n))
	got := make(chan result, 2)
	for range 2 {
		readAll(t, subscribe(ctx, h2, task.ID, ""), task.ID, got)
	}
	close(a.gate(task.ID))
	for range 2 {
		f := recv(t, got, "the stream's end").check(t)
		if f.last != a2a.TaskStateCompleted {
			t.Errorf("stream ended in %v, want completed", f.last)
		}
		if f.chunk != n {
			t.Errorf("stream carried %d chunks, want %d", f.chunk, n)
		}
		inOrder(t, f.seqs, f.seqs[0])
	}
	final, err := h2.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || final.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("GetTask on the other handler: %v, %v", final, err)
	}
}

// A stream of SendStreamingMessage cut after a few frames resumes with its
// Last-Event-ID on the other Handler with exactly the frames after it.
func testResume(t *testing.T, newStores func(t *testing.T) (store.Store, store.Store)) {
	h1, h2, a := pair(t, newStores)
	ctx := ctxOf(t)
	const n = 200
	msg := a2a.NewTextMessage(a2a.RoleUser, "m-"+strconv.FormatInt(time.Now().UnixNano(), 36), "chunks "+strconv.Itoa(n))
	var (
		taskID string
		seqs   []int64
		chunks int
	)
	for ev, err := range h1.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		id, seqText, _ := cut(ev.ID)
		seq, _ := strconv.ParseInt(seqText, 10, 64)
		seqs = append(seqs, seq)
		if taskID == "" {
			taskID = id
			recv(t, a.started, "agent start")
			close(a.gate(taskID))
		}
		if _, ok := ev.Event.(*a2a.TaskArtifactUpdateEvent); ok {
			chunks++
		}
		if len(seqs) == 10 {
			break // the connection drops
		}
	}
	inOrder(t, seqs, seqs[0])
	last := seqs[len(seqs)-1]
	rest := collect(t, subscribe(ctx, h2, taskID, taskID+":"+strconv.FormatInt(last, 10)), taskID, 0)
	if rest.last != a2a.TaskStateCompleted {
		t.Errorf("resumed stream ended in %v, want completed", rest.last)
	}
	inOrder(t, rest.seqs, last+1)
	if total := chunks + rest.chunk; total != n {
		t.Errorf("the two parts carried %d chunks, want %d", total, n)
	}
}

// A cancel on the Handler that does not run the task cancels the agent's
// context on the one that does, though the agent writes nothing, and ends
// the streams and blocking waits on both in the canceled state.
func testCancel(t *testing.T, newStores func(t *testing.T) (store.Store, store.Store)) {
	h1, h2, a := pair(t, newStores)
	ctx := ctxOf(t)
	task := start(t, ctx, h1, a, "hang")
	got := make(chan result, 2)
	for _, h := range []*server.Handler{h1, h2} {
		readAll(t, subscribe(ctx, h, task.ID, ""), task.ID, got)
	}
	if _, err := h2.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
		t.Fatalf("CancelTask on the other handler: %v", err)
	}
	if id := recv(t, a.canceled, "the agent's cancellation"); id != task.ID {
		t.Fatalf("agent of %s canceled, want %s", id, task.ID)
	}
	for range 2 {
		if f := recv(t, got, "the stream's end").check(t); f.last != a2a.TaskStateCanceled {
			t.Errorf("stream ended in %v, want canceled", f.last)
		}
	}
	final, err := h1.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || final.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("GetTask on the running handler: %v, %v", final, err)
	}
}

// A cancel sent to the other replica while the agent writes as fast as it
// can: the other replica's append of the canceled status loses the race
// to the running one's appends again and again, and must still get in.
func testCancelFlood(t *testing.T, newStores func(t *testing.T) (store.Store, store.Store)) {
	h1, h2, a := pair(t, newStores)
	ctx := ctxOf(t)
	for round := range 3 {
		task := start(t, ctx, h1, a, "flood")
		got := make(chan result, 1)
		readAll(t, subscribe(ctx, h2, task.ID, ""), task.ID, got)
		// Let the flood run on both sides a while.
		waitFor(t, "chunks stored", func() bool {
			tk, err := h2.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			return err == nil && len(tk.Artifacts) == 1 && len(tk.Artifacts[0].Parts) >= 200
		})
		if _, err := h2.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
			t.Fatalf("round %d: CancelTask on the other handler while the agent streams: %v", round, err)
		}
		recv(t, a.canceled, "the agent's cancellation")
		if f := recv(t, got, "the stream's end").check(t); f.last != a2a.TaskStateCanceled {
			t.Errorf("round %d: stream ended in %v, want canceled", round, f.last)
		}
	}
}

// waitFor polls cond until it holds, for up to timeout.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
