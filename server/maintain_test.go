package server_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// crashedStore is a memory store holding tasks left behind by a process
// that died: Orphans names them (in whatever state they are now), as a
// durable store does for tasks whose runner is dead.
type crashedStore struct {
	*memory.Store
	mu      sync.Mutex
	orphans []store.TaskRef
	// answer, when set, is what every Orphans call returns, as seen once:
	// two replicas that asked at the same moment.
	answer []store.TaskRef
}

func (s *crashedStore) Orphans(ctx context.Context, states []a2a.TaskState, limit int) ([]store.TaskRef, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.answer != nil {
		return s.answer, nil
	}
	var out []store.TaskRef
	for _, ref := range s.orphans {
		t, seq, err := s.Get(ctx, ref.Scope, ref.ID)
		if err == nil && slices.Contains(states, t.Status.State) && len(out) < limit {
			ref.Seq = seq
			out = append(out, ref)
		}
	}
	return out, nil
}

// leave stores a task as a dead process left it: the client's message, and
// then the given states.
func (s *crashedStore) leave(t *testing.T, scope store.Scope, id string, states ...a2a.TaskState) {
	t.Helper()
	ctx := t.Context()
	msg := a2a.NewTextMessage(a2a.RoleUser, "m-"+id, "do it")
	msg.TaskID, msg.ContextID = id, "ctx-"+id
	task := &a2a.Task{ID: id, ContextID: "ctx-" + id, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: a2a.TimestampOf(time.Now())}, History: []a2a.Message{*msg}}
	if err := s.Append(ctx, scope, id, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
		t.Fatal(err)
	}
	for i, st := range states {
		ev := &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: task.ContextID, Status: a2a.TaskStatus{State: st, Timestamp: a2a.TimestampOf(time.Now())}}
		next := *task
		next.Status = ev.Status
		if err := s.Append(ctx, scope, id, int64(i+1), []store.Event{{Seq: int64(i + 2), Payload: ev}}, &next); err != nil {
			t.Fatal(err)
		}
		task = &next
	}
	s.mu.Lock()
	s.orphans = append(s.orphans, store.TaskRef{Scope: scope, ID: id, Runner: "web-2:4242"})
	s.mu.Unlock()
}

func TestRecoveryFailsOrphans(t *testing.T) {
	t.Parallel()
	st := &crashedStore{Store: memory.New()}
	alice := store.Scope{Owner: "alice"}
	st.leave(t, alice, "submitted")
	st.leave(t, alice, "working", a2a.TaskStateWorking)
	st.leave(t, store.Scope{Tenant: "t2", Owner: "bob"}, "bobs", a2a.TaskStateWorking)
	st.leave(t, alice, "input", a2a.TaskStateWorking, a2a.TaskStateInputRequired)
	st.leave(t, alice, "done", a2a.TaskStateWorking, a2a.TaskStateCompleted)

	// The maintenance pass at start finds them without being asked.
	h := newHandler(t, nil, scripted, server.WithStore(st))
	ctx := server.WithPrincipal(testCtx(t), "alice")
	for _, id := range []string{"submitted", "working"} {
		task := waitState(t, h, ctx, id, a2a.TaskStateFailed)
		want := `The replica that ran the task, "web-2:4242", stopped before the task finished; the task was not resumed.`
		if msg := task.Status.Message; msg == nil || msg.Text() != want {
			t.Errorf("task %s failed with status message %v, want %q", id, msg, want)
		}
	}
	// The pass goes on to bob's task after alice's: wait for it too.
	bob := server.WithPrincipal(testCtx(t), "bob")
	waitFor(t, "bob's orphan in tenant t2 failed", func() bool {
		task, err := h.GetTask(bob, &a2a.GetTaskRequest{Tenant: "t2", ID: "bobs"})
		if err != nil {
			t.Fatalf("bob's orphan in tenant t2: %v", err)
		}
		return task.Status.State == a2a.TaskStateFailed
	})
	// Interrupted and finished tasks are left alone, and the interrupted
	// one can be continued.
	if got := getTask(t, h, ctx, "input").Status.State; got != a2a.TaskStateInputRequired {
		t.Errorf("input-required task is %v after recovery", got)
	}
	if got := getTask(t, h, ctx, "done").Status.State; got != a2a.TaskStateCompleted {
		t.Errorf("completed task is %v after recovery", got)
	}
	if got := sendTask(t, h, ctx, continueRequest("input", "complete")); got.Status.State != a2a.TaskStateCompleted {
		t.Errorf("continuing the interrupted task: %v", got.Status.State)
	}
	// A second pass finds nothing left to do.
	rep, err := h.Maintain(ctx)
	if err != nil || rep != (server.MaintenanceReport{}) {
		t.Errorf("second pass = %+v, %v; want nothing done", rep, err)
	}
	// The failure is an event of the log, after what the dead process
	// wrote, so a stream resuming from its last event sees it.
	evs, err := st.Events(ctx, alice, "working", 2)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events after the dead process's = %v, %v; want one", evs, err)
	}
	if su, ok := evs[0].Payload.(*a2a.TaskStatusUpdateEvent); !ok || su.Status.State != a2a.TaskStateFailed || evs[0].Seq != 3 {
		t.Errorf("event #%d = %#v, want the failed status as #3", evs[0].Seq, evs[0].Payload)
	}
}

// resumer is an agent that can take over a task after a restart.
type resumer struct{ resumed chan *server.Request }

func (r resumer) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	return scripted(ctx, req, w)
}

func (r resumer) Resume(ctx context.Context, req *server.Request, w *server.Writer) error {
	r.resumed <- req
	return w.Complete(ctx, "finished after the restart")
}

func TestRecoveryResumes(t *testing.T) {
	t.Parallel()
	st := &crashedStore{Store: memory.New()}
	st.leave(t, store.Scope{}, "working", a2a.TaskStateWorking)
	ag := resumer{resumed: make(chan *server.Request, 1)}
	h, err := server.NewHandler(testCard(), ag, server.WithStore(st), server.WithMaintenanceInterval(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	ctx := testCtx(t)
	if got := getTask(t, h, ctx, "working").Status.State; got != a2a.TaskStateWorking {
		t.Fatalf("without a maintenance loop the task is %v before Maintain", got)
	}
	rep, err := h.Maintain(ctx)
	if err != nil || rep.Resumed != 1 || rep.Failed != 0 {
		t.Fatalf("Maintain = %+v, %v; want one resumed", rep, err)
	}
	req := recv(t, ag.resumed)
	if req.TaskID != "working" || req.Task == nil || req.Message == nil || req.Message.Text() != "do it" {
		t.Errorf("Resume got task %q, snapshot %v, message %v", req.TaskID, req.Task != nil, req.Message)
	}
	task := waitState(t, h, ctx, "working", a2a.TaskStateCompleted)
	var texts []string
	for _, m := range task.History {
		texts = append(texts, m.Text())
	}
	if !slices.Contains(texts, `The replica that ran the task, "web-2:4242", stopped before the task finished; the agent resumed the task.`) {
		t.Errorf("history %q does not say the task was resumed", texts)
	}
}

func TestRetention(t *testing.T) {
	t.Parallel()
	clock := newClock(time.Second)
	h := newHandler(t, nil, scripted, server.WithClock(clock.Now), server.WithRetention(time.Hour), server.WithMaintenanceInterval(-1))
	ctx := testCtx(t)
	done := sendTask(t, h, ctx, newRequest("complete"))
	failed := sendTask(t, h, ctx, newRequest("fail"))
	waiting := sendTask(t, h, ctx, newRequest("input"))

	rep, err := h.Maintain(ctx)
	if err != nil || rep.Expired != 0 {
		t.Fatalf("Maintain before the hour = %+v, %v; want nothing expired", rep, err)
	}
	clock.mu.Lock()
	clock.now = clock.now.Add(2 * time.Hour)
	clock.mu.Unlock()
	fresh := sendTask(t, h, ctx, newRequest("complete"))
	rep, err = h.Maintain(ctx)
	if err != nil || rep.Expired != 2 {
		t.Fatalf("Maintain after the hour = %+v, %v; want 2 expired", rep, err)
	}
	for _, id := range []string{done.ID, failed.ID} {
		_, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		wantErr(t, err, a2a.ErrTaskNotFound)
	}
	getTask(t, h, ctx, waiting.ID) // interrupted: kept however old
	getTask(t, h, ctx, fresh.ID)
}

func TestMaintenanceOptions(t *testing.T) {
	t.Parallel()
	if _, err := server.NewHandler(testCard(), server.AgentFunc(scripted), server.WithRetention(-time.Second)); err == nil {
		t.Error("negative retention accepted")
	}
	if _, err := server.NewHandler(testCard(), server.AgentFunc(scripted), server.WithMaintenanceInterval(0)); err == nil {
		t.Error("zero maintenance interval accepted")
	}
	if _, err := server.NewHandler(testCard(), server.AgentFunc(scripted), server.WithStore(plainStore{memory.New()}), server.WithRetention(time.Hour)); err == nil {
		t.Error("retention accepted on a store that cannot expire tasks")
	}
}

// plainStore hides everything but store.Store.
type plainStore struct{ store.Store }

// A Handler that followed a task earlier holds an old copy of it; another
// process moved it on and died. Recovery must judge the task by the
// store, not by the copy.
func TestRecoveryOfAStaleCopy(t *testing.T) {
	t.Parallel()
	st := &crashedStore{Store: memory.New()}
	h := newHandler(t, nil, scripted, server.WithStore(st), server.WithMaintenanceInterval(-1))
	ctx := testCtx(t)
	task := sendTask(t, h, ctx, newRequest("input")) // h now holds it, input-required
	// Another process continued it, then died while working.
	_, seq, err := st.Get(ctx, store.Scope{}, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	working := &a2a.TaskStatusUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: a2a.TimestampOf(time.Now())}}
	snap := *task
	snap.Status = working.Status
	if err := st.Append(ctx, store.Scope{}, task.ID, seq, []store.Event{{Seq: seq + 1, Payload: working}}, &snap); err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	st.orphans = append(st.orphans, store.TaskRef{ID: task.ID})
	st.mu.Unlock()

	rep, err := h.Maintain(ctx)
	if err != nil || rep.Failed != 1 {
		t.Fatalf("Maintain = %+v, %v; want the orphan failed", rep, err)
	}
	if got := getTask(t, h, ctx, task.ID).Status.State; got != a2a.TaskStateFailed {
		t.Errorf("task is %v after recovery, want failed", got)
	}
	if rep, err := h.Maintain(ctx); err != nil || rep != (server.MaintenanceReport{}) {
		t.Errorf("second pass = %+v, %v; want nothing done", rep, err)
	}
}

// Two replicas that find the same orphan at the same moment: exactly one
// of them resumes it.
func TestRecoveryByTwoReplicas(t *testing.T) {
	t.Parallel()
	st := &crashedStore{Store: memory.New()}
	st.leave(t, store.Scope{}, "working", a2a.TaskStateWorking)
	refs, err := st.Orphans(t.Context(), []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking}, 10)
	if err != nil || len(refs) != 1 {
		t.Fatalf("orphans = %v, %v", refs, err)
	}
	st.answer = refs
	ag := resumer{resumed: make(chan *server.Request, 2)}
	var hs []*server.Handler
	for range 2 {
		h, err := server.NewHandler(testCard(), ag, server.WithStore(st), server.WithMaintenanceInterval(-1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close(context.Background()) })
		hs = append(hs, h)
	}
	ctx := testCtx(t)
	var wg sync.WaitGroup
	reps := make([]server.MaintenanceReport, len(hs))
	for i, h := range hs {
		wg.Go(func() {
			var err error
			if reps[i], err = h.Maintain(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := reps[0].Resumed + reps[1].Resumed; n != 1 || reps[0].Failed+reps[1].Failed != 0 {
		t.Errorf("reports %+v and %+v; want exactly one resume", reps[0], reps[1])
	}
	waitState(t, hs[0], ctx, "working", a2a.TaskStateCompleted)
	if n := len(ag.resumed); n != 1 {
		t.Errorf("Resume called %d times, want once", n)
	}
}
