package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// liveTask is a task this process appends to or follows.
//
// Writes go through a queue. A write is folded at once into head, the task
// as it will be once everything queued is stored, so that the rules (no
// event after a terminal state, ...) are checked against it, and queued;
// one flush at a time stores everything queued in one Append, outside the
// lock, while more writes queue behind it. An agent does not wait for the
// store (unless the queue is full: a slow store slows the agent, it never
// grows memory); a client's write (a message continuing the task, a
// cancel) waits for its own event to be stored. Subscribers see an event
// only once the store has it, so task and seq are the stored fold and its
// last seq, and the store, the fold and the subscribers see one order.
type liveTask struct {
	id    string
	scope store.Scope

	mu     sync.Mutex
	task   *a2a.Task // the fold of the stored log up to seq; never modified
	seq    int64
	head   *a2a.Task // the fold of the log and of queue
	queue  []queued  // writes not yet stored, in order
	qbytes int       // Data bytes in queue
	// flushing is set while a flush goroutine owns the queue; drained is
	// closed (and replaced) each time a flush takes the queue, and each
	// time it has stored or given up on what it took.
	flushing bool
	inflight int // events of the Append in progress
	drained  chan struct{}
	// lost is why queued writes that nobody waited for were dropped (the
	// store failed); the agent's next write returns it.
	lost error
	// created is the exchange to resolve once the task's first event is
	// stored.
	created *exchange
	// unsettled is the status message of a failure that settle could
	// not store (the store was down long): the maintenance pass tries
	// again while the task is still abandoned.
	unsettled *a2a.Message

	// recent holds the last stored events from recent[first] on, ending
	// at seq, with rbytes of Data: see remember.
	recent []store.Event
	first  int
	rbytes int
	// streams is how many streams follow the task, subscribed or
	// catching up (see subscriber.counted): what the recent events are
	// kept for.
	streams int

	// What the store's change feed says of the task (follow.go):
	// notified is the highest seq it reported, recheck asks to read the
	// log whatever the seq, catching is set while a goroutine catches up
	// with the store, and stored is seq, readable without the lock.
	notified atomic.Int64
	recheck  atomic.Bool
	catching atomic.Bool
	stored   atomic.Int64

	subs   map[*subscriber]struct{}
	execs  map[*execution]struct{} // agent executions running for the task
	broken bool                    // creation failed; the task does not exist
	pushed bool                    // the task has push configs: tell the Pusher of appends
}

// queued is a write waiting in a liveTask's queue.
type queued struct {
	ev   store.Event // Seq is set when it is stored
	task *a2a.Task   // head after it
	done chan error  // for writers that wait; buffered
	// waits marks every event of a write whose writer waits (the last
	// one has done): during an outage such writes are taken out of the
	// queue and their writers told, while the agent's stay.
	waits bool
}

// Bounds of a task's queue: an agent that writes faster than the store
// commits waits when either is reached.
const (
	maxQueued      = 512
	maxQueuedBytes = 1 << 20
)

func newLiveTask(id string, scope store.Scope, task *a2a.Task, seq int64) *liveTask {
	lt := &liveTask{id: id, scope: scope, task: task, seq: seq, head: task, drained: make(chan struct{})}
	lt.stored.Store(seq)
	return lt
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

// catchUpBatch is how many recent events a stream that fell behind takes
// from memory at a time.
const catchUpBatch = 128

type subscriber struct {
	ch   chan *update // shared by every subscriber of the event
	lost bool         // guarded by liveTask.mu: ch was closed because it was full
	// counted is set, under liveTask.mu, while a stream's subscriber is
	// counted in liveTask.streams: from its first subscription to its
	// unsubscribe, through the times it is cut off and catches up.
	counted bool
}

func newSubscriber(buffer int) *subscriber { return &subscriber{ch: make(chan *update, buffer)} }

// publish hands u to every subscriber without blocking. Callers hold lt.mu.
func (lt *liveTask) publish(u *update) {
	lt.remember(u.ev)
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

// A live task keeps its last stored events in memory for subscribers that
// fell behind (a fast agent, many readers), so that they catch up without
// reading and decoding the store: at least recentEvents of them, and more
// while their Data adds up to at most recentBytes, plus
// recentBytesPerStream for each stream following the task (subscribed or
// catching up), up to maxRecentBytes in all. A stream of small chunks (an
// LLM's tokens) thus keeps a few thousand; a task that many follow keeps
// more, since each one that falls behind would otherwise read the store on
// its own.
const (
	recentEvents         = 256
	recentBytes          = 256 << 10
	recentBytesPerStream = 16 << 10
	maxRecentBytes       = 4 << 20
)

// remember keeps ev, the next stored event, among the recent ones, and
// forgets the oldest beyond the bounds. Callers hold lt.mu.
func (lt *liveTask) remember(ev store.Event) {
	lt.recent = append(lt.recent, ev)
	lt.rbytes += len(ev.Data)
	limit := min(recentBytes+lt.streams*recentBytesPerStream, maxRecentBytes)
	for len(lt.recent)-lt.first > recentEvents && lt.rbytes > limit {
		lt.rbytes -= len(lt.recent[lt.first].Data)
		lt.recent[lt.first] = store.Event{}
		lt.first++
	}
	if lt.first >= recentEvents && lt.first >= len(lt.recent)/2 {
		// Move the kept ones to the front rather than let the slice grow.
		n := copy(lt.recent, lt.recent[lt.first:])
		clear(lt.recent[n:])
		lt.recent, lt.first = lt.recent[:n], 0
	}
}

// recentAfter returns the first stored events after seq, at most limit of
// them, if the recent ones reach back to seq, and false if some are older.
// Callers hold lt.mu.
func (lt *liveTask) recentAfter(seq int64, limit int) ([]store.Event, bool) {
	if seq >= lt.seq {
		return nil, true
	}
	kept := lt.recent[lt.first:]
	if int64(len(kept)) < lt.seq-seq {
		return nil, false
	}
	from := len(kept) - int(lt.seq-seq)
	return slices.Clone(kept[from:min(from+limit, len(kept))]), true
}

// subscribe adds s to the task's subscribers; a stream's is counted among
// the streams that follow the task. Callers hold lt.mu.
func (lt *liveTask) subscribe(s *subscriber) {
	if lt.subs == nil {
		lt.subs = make(map[*subscriber]struct{})
	}
	lt.subs[s] = struct{}{}
	lt.countStream(s)
}

// countStream counts s, a stream's subscriber, among the streams that
// follow the task, once. Callers hold lt.mu.
func (lt *liveTask) countStream(s *subscriber) {
	if cap(s.ch) == streamBuffer && !s.counted {
		s.counted = true
		lt.streams++
	}
}

// unsubscribe removes s from the task's subscribers for good.
func (lt *liveTask) unsubscribe(s *subscriber) {
	lt.mu.Lock()
	delete(lt.subs, s)
	if s.counted {
		s.counted = false
		lt.streams--
	}
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
		broken := lt.broken || lt.seq == 0 // not stored yet: nobody knows its id
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
	if lt, ok := h.live[id]; ok { // loaded concurrently
		h.mu.Unlock()
		return lt, nil
	}
	lt = newLiveTask(id, scope, task, seq)
	lt.pushed = pushed
	live := !task.Status.State.Terminal()
	if live {
		h.live[id] = lt
	}
	h.mu.Unlock()
	if live {
		// The feed may have reported an append between the read and
		// now, to nobody: read the log once more.
		h.wake(lt, 0)
	}
	return lt, nil
}

// enqueueLocked folds payloads into the head of the task and queues them
// for the store, starting a flush unless one runs. Callers hold lt.mu. It
// refuses any event after a terminal state (ErrTaskClosed), and a write to
// a task whose creation failed.
//
// With wait, the returned channel receives the outcome of storing the last
// of payloads. Without, an agent's write, it waits only while the queue is
// full (returning ctx.Err() if ctx ends first), and returns the reason of
// an earlier write that was lost instead, once.
func (h *Handler) enqueueLocked(ctx context.Context, lt *liveTask, wait bool, payloads ...a2a.Event) (<-chan error, error) {
	for {
		if lt.broken {
			return nil, cmp.Or(lt.lost, storeErr(store.ErrNotFound, lt.id))
		}
		if lt.head.Status.State.Terminal() {
			return nil, ErrTaskClosed
		}
		if !wait && lt.lost != nil {
			err := lt.lost
			lt.lost = nil
			return nil, err
		}
		if wait || (len(lt.queue) < maxQueued && lt.qbytes < maxQueuedBytes) {
			break
		}
		drained := lt.drained
		lt.mu.Unlock()
		select {
		case <-drained:
		case <-ctx.Done():
			lt.mu.Lock()
			return nil, ctx.Err()
		}
		lt.mu.Lock()
	}
	start := len(lt.queue)
	for _, p := range payloads {
		ev := store.Event{Payload: p}
		h.markMessage(&ev) // idempotent.go
		data, err := ev.Encode()
		if err != nil {
			lt.queue = lt.queue[:start]
			return nil, fmt.Errorf("server: encoding an event of task %s: %w", lt.id, err)
		}
		ev.Data = data
		lt.queue = append(lt.queue, queued{ev: ev, waits: wait})
	}
	for i := start; i < len(lt.queue); i++ {
		lt.head = lt.head.Apply(lt.queue[i].ev.Payload)
		lt.queue[i].task = lt.head
		lt.qbytes += len(lt.queue[i].ev.Data)
	}
	var done chan error
	if wait {
		done = make(chan error, 1)
		lt.queue[len(lt.queue)-1].done = done
	}
	if !lt.flushing {
		lt.flushing = true
		h.flushes.Add(1)
		go h.flush(lt)
	}
	return done, nil
}

// flushWrites waits until every write queued for lt so far is stored, or
// given up on, and returns why a write was lost, if one was.
func (h *Handler) flushWrites(ctx context.Context, lt *liveTask) error {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	target := lt.seq + int64(lt.inflight+len(lt.queue))
	for lt.flushing && lt.seq < target {
		drained := lt.drained
		lt.mu.Unlock()
		select {
		case <-drained:
		case <-ctx.Done():
			lt.mu.Lock()
			return ctx.Err()
		}
		lt.mu.Lock()
	}
	err := lt.lost
	if !lt.broken {
		lt.lost = nil
	}
	return err
}

// appendLocked queues payloads and waits until they are stored. Callers
// hold lt.mu, which is released while waiting: other writes and the
// publishing of the events happen meanwhile.
func (h *Handler) appendLocked(ctx context.Context, lt *liveTask, payloads ...a2a.Event) error {
	done, err := h.enqueueLocked(ctx, lt, true, payloads...)
	if err != nil {
		return err
	}
	lt.mu.Unlock()
	err = <-done
	lt.mu.Lock()
	return err
}

// flush stores what is queued for lt, one Append at a time, each taking
// everything queued when it starts, until the queue is empty.
//
// While the store is unavailable ([store.ErrUnavailable]), the writes of
// a stored task are kept and tried again, waiting 50 ms, doubling up to
// 5 s, until the store takes them or the Handler closes: an
// agent's events are not lost to an outage, and the agent, once the queue
// is full, waits for the store. Writers that wait for their write (a
// client's cancel or message) are answered Unavailable at the first
// failure instead, and their writes taken out of the queue, so that a
// call does not hang through an outage. A task's first write fails at
// once: its SendMessage answers Unavailable.
//
// Another process sharing the store (a replica, or a Handler recovering
// orphans) may have appended first; the store then reports a conflict.
// flush then stores the queue with the store's Update (updateLocked),
// which reads what was appended and appends after it in one lock of the
// task, so no update is lost and the write gets in however fast the other
// writer goes: events are applied to whatever the task has become, and
// once it is terminal the rest are refused with ErrTaskClosed. (Retrying
// Append instead lost a replica's cancel to an agent streaming flat out on
// another, again and again: the agent's next append always landed between
// the read of its last and the cancel's next try.)
func (h *Handler) flush(lt *liveTask) {
	defer h.flushes.Done()
	lt.mu.Lock()
	defer lt.mu.Unlock()
	retry := h.retryBase
	for len(lt.queue) > 0 {
		n := len(lt.queue)
		if lt.seq == 0 && lt.created != nil && lt.created.pushConfig != nil {
			// The webhook of a new task is registered once the task
			// exists, and starts after its first event: store that alone.
			n = 1
		}
		batch := lt.queue[:n:n]
		after := lt.seq
		events := make([]store.Event, n)
		for i, q := range batch {
			events[i] = q.ev
			events[i].Seq = after + int64(i) + 1
		}
		lt.queue = slices.Clone(lt.queue[n:])
		for _, q := range batch {
			lt.qbytes -= len(q.ev.Data)
		}
		lt.inflight = n
		lt.wakeLocked() // the queue has room again
		lt.mu.Unlock()
		// Durability first: an event reaches no client before the store has it.
		err := h.store.Append(context.Background(), lt.scope, lt.id, after, events, batch[n-1].task)
		lt.mu.Lock()
		lt.inflight = 0
		switch {
		case err == nil:
			retry = h.retryBase
			h.storedLocked(lt, batch, events)
		case errors.Is(err, store.ErrConflict) && after > 0:
			lt.queue = append(batch, lt.queue...)
			for _, q := range batch {
				lt.qbytes += len(q.ev.Data)
			}
			if err = h.updateLocked(lt); err == nil {
				retry = h.retryBase
				break
			}
			if !errors.Is(err, store.ErrUnavailable) || h.isClosed() {
				h.dropLocked(lt, fmt.Errorf("server: storing task %s: %w", lt.id, err))
				break
			}
			h.unavailableLocked(lt, err, &retry)
		case errors.Is(err, store.ErrUnavailable) && after > 0 && !h.isClosed():
			lt.queue = append(batch, lt.queue...)
			h.unavailableLocked(lt, err, &retry)
		default:
			lt.queue = append(batch, lt.queue...)
			h.dropLocked(lt, fmt.Errorf("server: storing task %s: %w", lt.id, err))
		}
		lt.wakeLocked()
	}
	lt.flushing = false
}

// unavailableLocked handles a write of flush that the store refused as
// unavailable: the writers that wait are answered err, and the rest of
// the queue is kept, to be tried again after retry, which doubles up to
// h.retryMax, unless the Handler closes meanwhile.
func (h *Handler) unavailableLocked(lt *liveTask, err error, retry *time.Duration) {
	h.refuseWaitersLocked(lt, fmt.Errorf("server: storing task %s: %w", lt.id, err))
	lt.wakeLocked()
	if len(lt.queue) == 0 {
		return
	}
	h.log.Warn("storing task updates: the store is unavailable; trying again", "task", lt.id, "queued", len(lt.queue), "in", *retry, "err", err)
	lt.mu.Unlock()
	select {
	case <-time.After(*retry):
	case <-h.done:
	}
	lt.mu.Lock()
	*retry = min(2**retry, h.retryMax)
	if h.isClosed() {
		h.dropLocked(lt, fmt.Errorf("server: storing task %s: the server closed while the store was unavailable: %w", lt.id, err))
	}
}

// updateLocked stores the whole queue after whatever the task's log now
// holds, with [store.Store.Update]: flush's answer to a conflict, another
// process having appended first. In the store's lock, the events appended
// meanwhile are folded, then the queue on top of them, up to a terminal
// state, as refoldLocked does; once that is stored, the events appended
// meanwhile reach this process's subscribers, then the queue's, and the
// writes a terminal state forbids are refused with ErrTaskClosed. lt.mu is
// held throughout, so nothing joins the queue meanwhile and the fold made
// in the lock is still the task's once the Update returns.
func (h *Handler) updateLocked(lt *liveTask) error {
	var since, events []store.Event
	err := h.store.Update(context.Background(), lt.scope, lt.id, lt.seq, func(s []store.Event) ([]store.Event, *a2a.Task, error) {
		since, events = s, make([]store.Event, 0, len(lt.queue))
		newer, tasks, err := lt.foldLocked(s)
		if err != nil {
			return nil, nil, err
		}
		task, seq := lt.task, lt.seq+int64(len(newer))
		if len(tasks) > 0 {
			task = tasks[len(tasks)-1]
		}
		for _, q := range lt.queue {
			if task.Status.State.Terminal() {
				break
			}
			task = task.Apply(q.ev.Payload)
			ev := q.ev
			ev.Seq = seq + int64(len(events)) + 1
			events = append(events, ev)
		}
		return events, task, nil
	})
	if err != nil {
		return err
	}
	if err := h.applyLocked(lt, since); err != nil {
		return err // checked in the lock already
	}
	h.refoldLocked(lt) // keeps the writes stored, refuses the rest
	if len(lt.queue) != len(events) {
		return fmt.Errorf("server: storing task %s: %d writes queued after the update stored %d", lt.id, len(lt.queue), len(events))
	}
	batch := lt.queue
	lt.queue, lt.qbytes = nil, 0
	if len(batch) > 0 {
		h.storedLocked(lt, batch, events)
	}
	return nil
}

// refuseWaitersLocked takes the writes whose writers wait out of the queue
// and answers them err; the rest is folded again without them.
func (h *Handler) refuseWaitersLocked(lt *liveTask, err error) {
	kept := lt.queue[:0]
	for _, q := range lt.queue {
		if q.waits {
			if q.done != nil {
				q.done <- err
			}
			continue
		}
		kept = append(kept, q)
	}
	clear(lt.queue[len(kept):])
	lt.queue = kept
	h.refoldLocked(lt)
}

// wakeLocked wakes the writers waiting for room in the queue and the
// Flush calls waiting for a store: each looks again.
func (lt *liveTask) wakeLocked() {
	close(lt.drained)
	lt.drained = make(chan struct{})
}

// storedLocked makes a stored batch the task's latest state: the exchange
// of a new task resolves, subscribers get the events, waiting writers
// their answer.
func (h *Handler) storedLocked(lt *liveTask, batch []queued, events []store.Event) {
	for i, q := range batch {
		lt.task, lt.seq = q.task, events[i].Seq
		lt.stored.Store(lt.seq)
		if lt.seq == 1 {
			h.createdLocked(lt)
		}
		lt.publish(&update{ev: events[i], task: q.task})
		if h.onState != nil {
			switch e := events[i].Payload.(type) {
			case *a2a.TaskStatusUpdateEvent:
				h.onState(lt.id, e.Status.State)
			case *a2a.Task:
				h.onState(lt.id, e.Status.State)
			}
		}
		if q.done != nil {
			q.done <- nil
		}
	}
	h.afterAppendLocked(lt)
}

// refoldLocked applies the queue again on top of the task as stored, after
// a catch-up: writes that a terminal state now forbids are refused.
func (h *Handler) refoldLocked(lt *liveTask) {
	head := lt.task
	kept := lt.queue[:0]
	lt.qbytes = 0
	for _, q := range lt.queue {
		if head.Status.State.Terminal() {
			if q.done != nil {
				q.done <- ErrTaskClosed
			}
			continue
		}
		head = head.Apply(q.ev.Payload)
		q.task = head
		kept = append(kept, q)
		lt.qbytes += len(q.ev.Data)
	}
	clear(lt.queue[len(kept):])
	lt.queue, lt.head = kept, head
}

// dropLocked gives up on everything queued: the store failed. Writers that
// wait get err; the agent gets it at its next write. A task whose creation
// failed does not exist.
func (h *Handler) dropLocked(lt *liveTask, err error) {
	waited := false
	for _, q := range lt.queue {
		if q.done != nil {
			q.done <- err
			waited = true
		}
	}
	if !waited {
		lt.lost = err
	}
	lt.queue, lt.qbytes = nil, 0
	if lt.task != nil {
		lt.head = lt.task
	}
	if lt.seq == 0 {
		lt.broken, lt.lost = true, err
		h.mu.Lock()
		if h.live[lt.id] == lt {
			delete(h.live, lt.id)
		}
		h.mu.Unlock()
		if ex := lt.created; ex != nil {
			lt.created = nil
			ex.resolve(exchangeResult{err: fmt.Errorf("server: storing new task: %w", err)})
		}
	}
	h.log.Error("storing task updates", "task", lt.id, "err", err)
}

// tryAppendLocked stores payloads at once, while the caller holds lt.mu,
// once: a conflict is returned, not retried. It is for recovery, which
// must append after exactly the seq it found, on a task nothing else in
// this process writes to (the queue is empty).
func (h *Handler) tryAppendLocked(ctx context.Context, lt *liveTask, payloads []a2a.Event) error {
	if lt.task.Status.State.Terminal() {
		return ErrTaskClosed
	}
	if lt.flushing || len(lt.queue) > 0 {
		return fmt.Errorf("server: task %s has writes queued: %w", lt.id, store.ErrConflict)
	}
	task := lt.task
	events := make([]store.Event, len(payloads))
	tasks := make([]*a2a.Task, len(payloads))
	for i, p := range payloads {
		task = task.Apply(p)
		events[i] = store.Event{Seq: lt.seq + int64(i) + 1, Payload: p}
		data, err := events[i].Encode()
		if err != nil {
			return fmt.Errorf("server: encoding an event of task %s: %w", lt.id, err)
		}
		events[i].Data = data
		tasks[i] = task
	}
	if err := h.store.Append(context.WithoutCancel(ctx), lt.scope, lt.id, lt.seq, events, task); err != nil {
		return fmt.Errorf("server: storing task %s: %w", lt.id, err)
	}
	h.advanceLocked(lt, events, tasks)
	return nil
}

// advanceLocked makes appended events the task's latest state and hands
// them to subscribers. A task that became terminal stops being live.
// Callers make sure nothing is queued, or apply the queue again on top
// (refoldLocked).
func (h *Handler) advanceLocked(lt *liveTask, events []store.Event, tasks []*a2a.Task) {
	lt.task, lt.seq = tasks[len(tasks)-1], events[len(events)-1].Seq
	lt.stored.Store(lt.seq)
	lt.head = lt.task
	for i := range events {
		lt.publish(&update{ev: events[i], task: tasks[i]})
		if su, ok := events[i].Payload.(*a2a.TaskStatusUpdateEvent); ok && h.onState != nil {
			h.onState(lt.id, su.Status.State)
		}
	}
	h.afterAppendLocked(lt)
}

// afterAppendLocked tells the Pusher that the task's log grew; a task that
// became terminal stops being live.
func (h *Handler) afterAppendLocked(lt *liveTask) {
	if lt.pushed {
		h.pusher.Appended(lt.scope, lt.id, lt.seq)
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
// since this process last saw it (applyLocked).
func (h *Handler) catchUpLocked(ctx context.Context, lt *liveTask) error {
	evs, err := h.store.Events(context.WithoutCancel(ctx), lt.scope, lt.id, lt.seq)
	if err != nil {
		return fmt.Errorf("server: catching up with task %s: %w", lt.id, err)
	}
	return h.applyLocked(lt, evs)
}

// applyLocked makes events another writer appended, the ones after
// lt.seq, the task's latest state, as advanceLocked does. When they end
// the task, the agent executions running here for it are cancelled, as a
// cancel would. Callers apply the queue again on top (refoldLocked) and
// make sure no Append of this process is in flight.
func (h *Handler) applyLocked(lt *liveTask, evs []store.Event) error {
	evs, tasks, err := lt.foldLocked(evs)
	if err != nil || len(evs) == 0 {
		return err
	}
	h.advanceLocked(lt, evs, tasks)
	if tasks[len(tasks)-1].Status.State.Terminal() {
		for e := range lt.execs {
			e.cancel()
		}
		lt.execs = nil
	}
	return nil
}

// foldLocked returns the events of evs that come after lt.seq (those
// before were read before this process stored them), which must follow it
// without a gap, and the task after each, folded onto lt.task. It changes
// nothing.
func (lt *liveTask) foldLocked(evs []store.Event) ([]store.Event, []*a2a.Task, error) {
	for len(evs) > 0 && evs[0].Seq <= lt.seq {
		evs = evs[1:]
	}
	tasks := make([]*a2a.Task, len(evs))
	task := lt.task
	for i, ev := range evs {
		if ev.Seq != lt.seq+int64(i)+1 {
			return nil, nil, fmt.Errorf("server: catching up with task %s: event %d where %d was due", lt.id, ev.Seq, lt.seq+int64(i)+1)
		}
		task = task.Apply(ev.Payload)
		tasks[i] = task
	}
	return evs, tasks, nil
}

// createTask starts the task of a new exchange in the submitted state, with
// the client's message as the first history entry. The task is queued like
// any write, so that the agent's first events may be stored with it in one
// Append; the exchange resolves once it is stored (createdLocked).
func (h *Handler) createTask(ctx context.Context, ex *exchange, req *Request) (*liveTask, error) {
	task := &a2a.Task{
		ID:        req.TaskID,
		ContextID: req.ContextID,
		Status:    a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: h.stamp()},
		History:   []a2a.Message{*req.Message},
	}
	ev := store.Event{Payload: task, MessageID: ex.msgID, MessageDigest: ex.digest} // idempotent.go
	data, err := ev.Encode()
	if err != nil {
		err = fmt.Errorf("server: encoding new task: %w", err)
		ex.resolve(exchangeResult{err: err})
		return nil, err
	}
	ev.Data = data
	lt := newLiveTask(req.TaskID, ex.scope, nil, 0)
	lt.head, lt.created = task, ex
	lt.queue = []queued{{ev: ev, task: task}}
	lt.qbytes = len(data)
	lt.execs = map[*execution]struct{}{ex.exec: {}}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	h.mu.Lock()
	h.live[lt.id] = lt
	h.mu.Unlock()
	lt.flushing = true
	h.flushes.Add(1)
	go h.flush(lt)
	return lt, nil
}

// createdLocked finishes the creation of a task once its first event is
// stored: its webhook from the SendMessage is registered, and the caller of
// SendMessage gets the task and a subscription from seq 1 on.
func (h *Handler) createdLocked(lt *liveTask) {
	ex := lt.created
	if ex == nil {
		return
	}
	lt.created = nil
	if cfg := ex.pushConfig; cfg != nil {
		c := *cfg
		c.TaskID, c.Tenant = lt.id, ex.scope.Tenant
		if c.ID == "" {
			c.ID = h.newID()
		}
		if err := h.store.PutPushConfig(context.Background(), ex.scope, &c); err != nil {
			h.log.Error("storing push config of new task", "task", lt.id, "err", err)
		} else {
			lt.pushed = h.pusher != nil
		}
	}
	sub := newSubscriber(ex.buffer)
	if ex.resolve(exchangeResult{lt: lt, task: lt.task, seq: 1, sub: sub}) {
		lt.subscribe(sub) // under lt.mu: no event can come before it
	}
}

// setStatus queues a status update stamped now. With wait, it returns once
// the update is stored.
func (h *Handler) setStatus(ctx context.Context, lt *liveTask, state a2a.TaskState, msg *a2a.Message, wait bool) error {
	if !state.Valid() {
		return fmt.Errorf("server: invalid task state %v", state)
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.broken {
		return lt.lost
	}
	if cur := lt.head.Status.State; state == a2a.TaskStateSubmitted && cur != a2a.TaskStateSubmitted {
		// Submitted is where a task starts, never where it returns
		// (REQUIREMENTS R034).
		return fmt.Errorf("server: a task in %v cannot go back to %v", cur, state)
	}
	ev := &a2a.TaskStatusUpdateEvent{
		TaskID: lt.id, ContextID: lt.head.ContextID,
		Status: a2a.TaskStatus{State: state, Message: msg, Timestamp: h.stamp()},
	}
	if wait {
		return h.appendLocked(ctx, lt, ev)
	}
	_, err := h.enqueueLocked(ctx, lt, false, ev)
	return err
}

// addArtifact queues an artifact update.
func (h *Handler) addArtifact(ctx context.Context, lt *liveTask, art a2a.Artifact, appendParts, lastChunk bool) error {
	if art.ArtifactID == "" {
		art.ArtifactID = h.newID()
	}
	if len(art.Parts) == 0 {
		return errors.New("server: an artifact needs at least one part")
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.broken {
		return lt.lost
	}
	ev := &a2a.TaskArtifactUpdateEvent{
		TaskID: lt.id, ContextID: lt.head.ContextID,
		Artifact: art, Append: appendParts, LastChunk: lastChunk,
	}
	_, err := h.enqueueLocked(ctx, lt, false, ev)
	return err
}

// execution is one running call of the agent.
type execution struct {
	ctx    context.Context
	cancel context.CancelFunc
	from   context.Context // the request's context, for the ExecutionHook; nil once it ran
}

// newExecution makes the execution of a message that arrived with the
// context from (the Handler's own for a task resumed by maintenance).
func (h *Handler) newExecution(from context.Context) *execution {
	ctx, cancel := context.WithCancel(h.baseCtx)
	return &execution{ctx: ctx, cancel: cancel, from: from}
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
		ctx := w.exec.ctx
		dones := make([]func(error), 0, len(h.execHooks))
		for _, hook := range h.execHooks {
			var done func(error)
			ctx, done = hook(w.exec.from, ctx, req)
			dones = append(dones, done)
		}
		w.exec.from = nil // the request's context is not kept beyond this
		err := h.callAgent(ctx, req, w, fn)
		for i := len(dones) - 1; i >= 0; i-- {
			dones[i](err)
		}
		h.settle(req, w, err)
	}()
	return nil
}

var errClosed = a2a.NewError(a2a.CodeUnavailable, "the server is shutting down")

// shutdownText is the status message of a task failed by Close.
const shutdownText = "The server shut down before the task finished."

// stoppedText is the status message of a task failed because the agent
// returned without finishing it.
const stoppedText = "The agent stopped before the task finished."

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
// task fails; a task left unfinished (abandonedLocked) fails with a reason.
func (h *Handler) settle(req *Request, w *Writer, err error) {
	w.mu.Lock()
	lt, replied := w.lt, w.replied
	w.mu.Unlock()
	if lt != nil {
		lt.mu.Lock()
		delete(lt.execs, w.exec)
		state := lt.head.Status.State // what the agent left, stored or queued
		broken, abandoned := lt.broken, lt.abandonedLocked()
		lt.mu.Unlock()
		if broken {
			return // the task was never stored; its caller was told
		}
		if !abandoned {
			if err != nil && !errors.Is(err, context.Canceled) {
				h.log.Warn("agent returned an error after its task ended or moved on", "task", lt.id, "state", state, "err", err)
			}
			return
		}
		reason := stoppedText
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

// abandonedLocked reports whether the task is left for settle to fail: it
// is stored, neither terminal nor interrupted (as the agent left it, stored
// or queued), and no execution of the agent runs for it. A task that a
// client's answer handed to another execution is that one's to finish,
// whatever the execution that returned left. Callers hold lt.mu.
func (lt *liveTask) abandonedLocked() bool {
	return !lt.broken && len(lt.execs) == 0 && !settled(lt.head.Status.State)
}

// failSettled fails a task its agent left unfinished. The store may be
// unavailable (a busy SQLite file, a database down): nothing else would
// ever finish the task while this process lives, so the failure is tried
// again, 50 ms doubling up to 5 s, for as long as the store is
// unavailable and the Handler open, and a few times on other errors; if
// it gives up, the maintenance pass tries again (retryUnsettled). Each
// attempt looks again, under the task's lock, whether the task is still
// abandoned: a client's answer may have started another execution since.
func (h *Handler) failSettled(lt *liveTask, msg *a2a.Message) {
	delay := h.retryBase
	for attempt := 1; ; attempt++ {
		_, err := h.failSettledOnce(lt, msg)
		if err == nil {
			return
		}
		if (attempt >= settleAttempts && !errors.Is(err, store.ErrUnavailable)) || h.isClosed() {
			h.log.Error("failing task: giving up for now", "task", lt.id, "attempts", attempt, "err", err)
			lt.mu.Lock()
			if lt.abandonedLocked() {
				lt.unsettled = msg
			}
			lt.mu.Unlock()
			return
		}
		h.log.Warn("failing task: retrying", "task", lt.id, "in", delay, "err", err)
		select {
		case <-time.After(delay):
		case <-h.done:
		}
		delay = min(2*delay, h.retryMax)
	}
}

// failSettledOnce is one attempt of failSettled: it reports whether it
// failed the task, and an error if the task still needs failing.
func (h *Handler) failSettledOnce(lt *liveTask, msg *a2a.Message) (failed bool, err error) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if !lt.abandonedLocked() {
		lt.unsettled = nil
		return false, nil
	}
	err = h.appendLocked(context.Background(), lt, &a2a.TaskStatusUpdateEvent{
		TaskID: lt.id, ContextID: lt.head.ContextID,
		Status: a2a.TaskStatus{State: a2a.TaskStateFailed, Message: msg, Timestamp: h.stamp()},
	})
	switch {
	case err == nil:
		lt.unsettled = nil
		return true, nil
	case errors.Is(err, ErrTaskClosed):
		lt.unsettled = nil
		return false, nil
	}
	return false, err
}

// retryUnsettled tries once more to fail each task whose failSettled gave
// up, and reports how many it failed. The maintenance pass runs it.
func (h *Handler) retryUnsettled() (int, error) {
	h.mu.Lock()
	var lts []*liveTask
	for _, lt := range h.live {
		lts = append(lts, lt)
	}
	h.mu.Unlock()
	n := 0
	var errs []error
	for _, lt := range lts {
		lt.mu.Lock()
		msg := lt.unsettled
		lt.mu.Unlock()
		if msg == nil {
			continue
		}
		failed, err := h.failSettledOnce(lt, msg)
		if err != nil {
			errs = append(errs, fmt.Errorf("server: failing task %s: %w", lt.id, err))
		}
		if failed {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// settleAttempts bounds failSettled on errors other than an unavailable
// store: 50 ms doubling, about 3 s in all.
const settleAttempts = 7

func (h *Handler) isClosed() bool {
	select {
	case <-h.done:
		return true
	default:
		return false
	}
}
