package server

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// liveTask is a task this process appends to or follows. All appends to a
// task go through its lock, so the fold, the store and the subscribers see
// the same order.
type liveTask struct {
	id    string
	scope store.Scope

	mu     sync.Mutex
	task   *a2a.Task // the fold of the log up to seq; never modified
	seq    int64
	subs   map[*subscriber]struct{}
	execs  map[*execution]struct{} // agent executions running for the task
	broken bool                    // creation failed; the task does not exist
	pushed bool                    // the task has push configs: tell the Pusher of appends
}

// update is one appended event and the task as it stood after it.
type update struct {
	ev   store.Event
	task *a2a.Task
}

// Buffers of subscribers. A stream that falls further behind than
// streamBuffer is cut off and catches up from the store. A blocking
// SendMessage only needs to notice when the task settles, so its small
// buffer overflowing just makes it look at the task again.
const (
	streamBuffer = 32
	waiterBuffer = 4
)

type subscriber struct {
	ch   chan update
	lost bool // guarded by liveTask.mu: ch was closed because it was full
}

func newSubscriber(buffer int) *subscriber { return &subscriber{ch: make(chan update, buffer)} }

// publish hands u to every subscriber without blocking. Callers hold lt.mu.
func (lt *liveTask) publish(u update) {
	for s := range lt.subs {
		select {
		case s.ch <- u:
		default:
			s.lost = true
			close(s.ch)
			delete(lt.subs, s)
		}
	}
}

func (lt *liveTask) subscribe(s *subscriber) {
	if lt.subs == nil {
		lt.subs = make(map[*subscriber]struct{})
	}
	lt.subs[s] = struct{}{}
}

func (lt *liveTask) unsubscribe(s *subscriber) {
	lt.mu.Lock()
	delete(lt.subs, s)
	lt.mu.Unlock()
}

// getLive returns the live task for id in scope, loading it from the store
// when this process does not follow it yet.
func (h *Handler) getLive(ctx context.Context, scope store.Scope, id string) (*liveTask, error) {
	h.mu.Lock()
	lt, ok := h.live[id]
	h.mu.Unlock()
	if ok {
		if lt.scope != scope {
			return nil, storeErr(store.ErrNotFound, id)
		}
		lt.mu.Lock()
		broken := lt.broken
		lt.mu.Unlock()
		if !broken {
			return lt, nil
		}
		return nil, storeErr(store.ErrNotFound, id)
	}
	task, seq, err := h.store.Get(ctx, scope, id)
	if err != nil {
		return nil, storeErr(err, id)
	}
	pushed := false
	if h.pusher != nil && !task.Status.State.Terminal() {
		// Configs may have been registered before a restart, or through
		// another process sharing the store.
		cs, err := h.store.ListPushConfigs(ctx, scope, id, "", 1)
		pushed = err != nil || len(cs) > 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if lt, ok := h.live[id]; ok { // loaded concurrently
		return lt, nil
	}
	lt = &liveTask{id: id, scope: scope, task: task, seq: seq, pushed: pushed}
	if !task.Status.State.Terminal() {
		h.live[id] = lt
	}
	return lt, nil
}

// appendLocked folds events into the task, stores them, and publishes them.
// Callers hold lt.mu. It refuses any event after a terminal state.
//
// Another process sharing the store (a replica, or a Handler recovering
// orphans) may have appended first; the store then reports a conflict.
// appendLocked catches up with what was appended (publishing it to this
// process's subscribers) and tries again on top of it, a few times, so no
// update is lost; events are applied to whatever the task has become, and
// once it is terminal they are refused with ErrTaskClosed.
func (h *Handler) appendLocked(ctx context.Context, lt *liveTask, payloads ...a2a.Event) error {
	const attempts = 4
	for i := 1; ; i++ {
		err := h.tryAppendLocked(ctx, lt, payloads)
		if !errors.Is(err, store.ErrConflict) || i == attempts {
			return err
		}
		if rerr := h.catchUpLocked(ctx, lt); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
}

func (h *Handler) tryAppendLocked(ctx context.Context, lt *liveTask, payloads []a2a.Event) error {
	if lt.task.Status.State.Terminal() {
		return ErrTaskClosed
	}
	task := lt.task
	events := make([]store.Event, len(payloads))
	tasks := make([]*a2a.Task, len(payloads))
	for i, p := range payloads {
		task = fold(task, p)
		events[i] = store.Event{Seq: lt.seq + int64(i) + 1, Payload: p}
		tasks[i] = task
	}
	// Durability first: an event reaches no client before the store has it.
	if err := h.store.Append(context.WithoutCancel(ctx), lt.scope, lt.id, lt.seq, events, task); err != nil {
		return fmt.Errorf("server: storing task %s: %w", lt.id, err)
	}
	h.advanceLocked(lt, events, tasks)
	return nil
}

// advanceLocked makes appended events the task's latest state and hands
// them to subscribers. A task that became terminal stops being live.
func (h *Handler) advanceLocked(lt *liveTask, events []store.Event, tasks []*a2a.Task) {
	lt.task, lt.seq = tasks[len(tasks)-1], events[len(events)-1].Seq
	if lt.pushed {
		h.pusher.Appended(lt.scope, lt.id, lt.seq)
	}
	for i := range events {
		lt.publish(update{ev: events[i], task: tasks[i]})
		if su, ok := events[i].Payload.(*a2a.TaskStatusUpdateEvent); ok && h.onState != nil {
			h.onState(lt.id, su.Status.State)
		}
	}
	if lt.task.Status.State.Terminal() {
		h.mu.Lock()
		if h.live[lt.id] == lt {
			delete(h.live, lt.id)
		}
		h.mu.Unlock()
	}
}

// catchUpLocked applies the events another writer appended to the task
// since this process last saw it. When they end the task, the agent
// executions running here for it are cancelled, as a cancel would.
func (h *Handler) catchUpLocked(ctx context.Context, lt *liveTask) error {
	evs, err := h.store.Events(context.WithoutCancel(ctx), lt.scope, lt.id, lt.seq)
	if err != nil {
		return fmt.Errorf("server: catching up with task %s: %w", lt.id, err)
	}
	if len(evs) == 0 {
		return nil
	}
	tasks := make([]*a2a.Task, len(evs))
	task := lt.task
	for i, ev := range evs {
		if ev.Seq != lt.seq+int64(i)+1 {
			return fmt.Errorf("server: catching up with task %s: event %d where %d was due", lt.id, ev.Seq, lt.seq+int64(i)+1)
		}
		task = fold(task, ev.Payload)
		tasks[i] = task
	}
	h.advanceLocked(lt, evs, tasks)
	if task.Status.State.Terminal() {
		for e := range lt.execs {
			e.cancel()
		}
		lt.execs = nil
	}
	return nil
}

// fold applies one event to t and returns the new snapshot; t is not
// modified. The status message moves into history only when a newer status
// replaces it (A2A §3.7; the A2A 101 kit's bookkeeping).
//
// Snapshots share backing arrays: appending to a slice of the latest
// snapshot never disturbs older ones, which only see their own length. This
// keeps a long stream of chunks linear instead of quadratic.
func fold(t *a2a.Task, ev a2a.Event) *a2a.Task {
	n := *t
	switch e := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		if t.Status.Message != nil {
			n.History = append(t.History, *t.Status.Message)
		}
		n.Status = e.Status
	case *a2a.TaskArtifactUpdateEvent:
		i := slices.IndexFunc(t.Artifacts, func(a a2a.Artifact) bool { return a.ArtifactID == e.Artifact.ArtifactID })
		switch {
		case i < 0:
			// A new artifact; an append for an unknown id starts one too.
			n.Artifacts = append(t.Artifacts, e.Artifact)
		case e.Append:
			n.Artifacts = slices.Clone(t.Artifacts)
			a := &n.Artifacts[i]
			a.Parts = append(a.Parts, e.Artifact.Parts...)
			if e.Artifact.Name != "" {
				a.Name = e.Artifact.Name
			}
			if e.Artifact.Description != "" {
				a.Description = e.Artifact.Description
			}
		default:
			n.Artifacts = slices.Clone(t.Artifacts)
			n.Artifacts[i] = e.Artifact
		}
	case *a2a.Message:
		n.History = append(t.History, *e)
	}
	return &n
}

// createTask starts the task of a new exchange in the submitted state, with
// the client's message as the first history entry.
func (h *Handler) createTask(ctx context.Context, ex *exchange, req *Request) (*liveTask, error) {
	task := &a2a.Task{
		ID:        req.TaskID,
		ContextID: req.ContextID,
		Status:    a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: h.stamp()},
		History:   []a2a.Message{*req.Message},
	}
	lt := &liveTask{id: req.TaskID, scope: ex.scope, task: task, seq: 1}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	h.mu.Lock()
	h.live[lt.id] = lt
	h.mu.Unlock()
	events := []store.Event{{Seq: 1, Payload: task}}
	if err := h.store.Append(context.WithoutCancel(ctx), ex.scope, lt.id, 0, events, task); err != nil {
		lt.broken = true
		h.mu.Lock()
		delete(h.live, lt.id)
		h.mu.Unlock()
		err = fmt.Errorf("server: storing new task: %w", err)
		ex.resolve(exchangeResult{err: err})
		return nil, err
	}
	if cfg := ex.pushConfig; cfg != nil {
		c := *cfg
		c.TaskID, c.Tenant = lt.id, ex.scope.Tenant
		if c.ID == "" {
			c.ID = h.newID()
		}
		if err := h.store.PutPushConfig(context.WithoutCancel(ctx), ex.scope, &c); err != nil {
			h.log.Error("storing push config of new task", "task", lt.id, "err", err)
		} else {
			lt.pushed = h.pusher != nil
		}
	}
	if h.onState != nil {
		h.onState(lt.id, task.Status.State)
	}
	lt.execs = map[*execution]struct{}{ex.exec: {}}
	sub := newSubscriber(ex.buffer)
	if ex.resolve(exchangeResult{lt: lt, task: task, seq: 1, sub: sub}) {
		lt.subscribe(sub) // under lt.mu: no event can come before it
	}
	return lt, nil
}

// setStatus appends a status update stamped now.
func (h *Handler) setStatus(ctx context.Context, lt *liveTask, state a2a.TaskState, msg *a2a.Message) error {
	if !state.Valid() {
		return fmt.Errorf("server: invalid task state %v", state)
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if state == a2a.TaskStateSubmitted && lt.task.Status.State != a2a.TaskStateSubmitted {
		// Submitted is where a task starts, never where it returns
		// (REQUIREMENTS R034).
		return fmt.Errorf("server: a task in %v cannot go back to %v", lt.task.Status.State, state)
	}
	ev := &a2a.TaskStatusUpdateEvent{
		TaskID: lt.id, ContextID: lt.task.ContextID,
		Status: a2a.TaskStatus{State: state, Message: msg, Timestamp: h.stamp()},
	}
	return h.appendLocked(ctx, lt, ev)
}

// addArtifact appends an artifact update.
func (h *Handler) addArtifact(ctx context.Context, lt *liveTask, art a2a.Artifact, appendParts, lastChunk bool) error {
	if art.ArtifactID == "" {
		art.ArtifactID = h.newID()
	}
	if len(art.Parts) == 0 {
		return errors.New("server: an artifact needs at least one part")
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	ev := &a2a.TaskArtifactUpdateEvent{
		TaskID: lt.id, ContextID: lt.task.ContextID,
		Artifact: art, Append: appendParts, LastChunk: lastChunk,
	}
	return h.appendLocked(ctx, lt, ev)
}

// execution is one running call of the agent.
type execution struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func (h *Handler) newExecution() *execution {
	ctx, cancel := context.WithCancel(h.baseCtx)
	return &execution{ctx: ctx, cancel: cancel}
}

// execute runs the agent for one message in its own goroutine and settles
// the task when the agent returns. It fails once the Handler is closed.
func (h *Handler) execute(req *Request, w *Writer) error {
	return h.run(req, w, h.agent.Execute)
}

// run is execute with the agent method to call.
func (h *Handler) run(req *Request, w *Writer, fn func(context.Context, *Request, *Writer) error) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		w.exec.cancel()
		return errClosed
	}
	h.agents.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.agents.Done()
		defer w.exec.cancel()
		err := h.callAgent(w.exec.ctx, req, w, fn)
		h.settle(req, w, err)
	}()
	return nil
}

var errClosed = a2a.NewError(a2a.CodeUnavailable, "the server is shutting down")

// shutdownText is the status message of a task failed by Close.
const shutdownText = "The server shut down before the task finished."

// errAgentPanicked reports a panic in an agent.
var errAgentPanicked = errors.New("the agent failed unexpectedly; see the server log")

func (h *Handler) callAgent(ctx context.Context, req *Request, w *Writer, fn func(context.Context, *Request, *Writer) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			h.log.Error("agent panicked", "task", req.TaskID, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = errAgentPanicked
		}
	}()
	return fn(ctx, req, w)
}

// settle finishes what the agent left open: an exchange with no reply and no
// task fails; a task that is neither terminal nor interrupted fails with a
// reason.
func (h *Handler) settle(req *Request, w *Writer, err error) {
	w.mu.Lock()
	lt, replied := w.lt, w.replied
	w.mu.Unlock()
	if lt != nil {
		lt.mu.Lock()
		delete(lt.execs, w.exec)
		state := lt.task.Status.State
		lt.mu.Unlock()
		if state.Terminal() || state.Interrupted() {
			if err != nil && !errors.Is(err, context.Canceled) {
				h.log.Warn("agent returned an error after its task ended", "task", lt.id, "state", state, "err", err)
			}
			return
		}
		reason := "The agent stopped before the task finished."
		switch {
		case h.isClosed():
			reason = shutdownText
		case err != nil:
			reason = err.Error()
			h.log.Warn("agent failed", "task", lt.id, "err", err)
		}
		msg := &a2a.Message{MessageID: h.newID(), ContextID: req.ContextID, TaskID: req.TaskID, Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart(reason)}}
		h.failSettled(lt, msg)
		return
	}
	if replied {
		return
	}
	if err == nil {
		err = a2a.NewError(a2a.CodeInvalidAgentResponse, "the agent returned without replying or starting a task")
	} else if errors.Is(err, errAgentPanicked) {
		err = a2a.NewError(a2a.CodeInternal, errAgentPanicked.Error())
	}
	w.ex.resolve(exchangeResult{err: err})
}

// failSettled fails a task its agent left unfinished. The store may be
// briefly unavailable (a busy SQLite file, a dropped database connection):
// the failure is retried for a few seconds, since nothing else would ever
// finish the task while this process lives.
func (h *Handler) failSettled(lt *liveTask, msg *a2a.Message) {
	delay := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := h.setStatus(context.Background(), lt, a2a.TaskStateFailed, msg)
		if err == nil || errors.Is(err, ErrTaskClosed) {
			return
		}
		if attempt == settleAttempts {
			h.log.Error("failing task: giving up", "task", lt.id, "attempts", attempt, "err", err)
			return
		}
		h.log.Warn("failing task: retrying", "task", lt.id, "err", err)
		time.Sleep(delay)
		delay *= 2
	}
}

// settleAttempts bounds failSettled: 50 ms doubling, about 3 s in all.
const settleAttempts = 7

func (h *Handler) isClosed() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}
