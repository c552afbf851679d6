// Package memory is an in-memory [store.Store]: fast, safe for concurrent
// use, and gone when the process ends. It suits tests, demos and agents
// whose tasks need not outlive the process.
//
// A finished task is kept encoded, as bytes the garbage collector need not
// scan: a server that has run millions of tasks pays for their memory, not
// for walking their pointers on every collection.
package memory

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// Store is an in-memory task store. The zero value is not usable; call New.
type Store struct {
	mu    sync.RWMutex
	tasks map[string]*record

	secretsMu sync.Mutex
	secrets   map[string][]byte

	// withPush holds the tasks that have push configs, so that ClaimPush
	// does not scan every task. Guarded by mu.
	withPush map[string]*record
	// dueSeq counts the times a config became due at once (registered,
	// woken, released), its pushEntry.since. Guarded by mu.
	dueSeq uint64

	msgs messages // client message ids (messages.go), guarded by mu

	feed store.Followers
}

// pushEntry is a push config and its delivery state.
type pushEntry struct {
	cfg   *a2a.TaskPushNotificationConfig
	state store.PushState
	// since orders the configs due at once: the Store's dueSeq when this
	// one last became so. ClaimPush hands out the longest waiting first.
	since uint64
}

// due records that e is due at once from now on. Callers hold s.mu.
func (s *Store) due(e *pushEntry) {
	s.dueSeq++
	e.since = s.dueSeq
}

type record struct {
	scope store.Scope
	seq   int64
	// A task that can still change is kept as values, each event with its
	// JSON (store.Event.Data), ready to freeze.
	task   *a2a.Task
	events []store.Event
	broken bool // an event would not encode: keep the values
	// A terminal task is kept encoded (task and events as JSON), with the
	// fields List filters on.
	frozen    *frozen
	push      map[string]*pushEntry
	contextID string
	state     a2a.TaskState
	ts        time.Time
}

type frozen struct {
	task []byte // a2a.Task
	// log holds the Data of every event, one after the other; ends[i] is
	// where the event of seq i+1 ends.
	log  []byte
	ends []int
}

// encoded is what an Append brings, made before the store's lock is
// taken so that encoding never holds up other tasks: the events with their
// Data set, and the snapshot's JSON when the task is terminal.
type encoded struct {
	events []store.Event
	task   []byte
	ok     bool // encoding succeeded; otherwise the values stay as values
}

func encode(events []store.Event, task *a2a.Task) encoded {
	e := encoded{events: events}
	for i, ev := range events {
		if ev.Data != nil {
			continue
		}
		if i == 0 || &e.events[0] == &events[0] {
			e.events = slices.Clone(events) // never modify the caller's
		}
		b, err := ev.Encode()
		if err != nil {
			return encoded{events: events}
		}
		e.events[i].Data = b
	}
	if task.Status.State.Terminal() {
		b, err := json.Marshal(task)
		if err != nil {
			return encoded{events: events}
		}
		e.task = b
	}
	e.ok = true
	return e
}

// add appends events and records the new snapshot, freezing the record
// once the task is terminal: nothing can be appended after that.
func (r *record) add(t *a2a.Task, enc encoded) {
	r.events = append(r.events, enc.events...)
	r.seq += int64(len(enc.events))
	r.task, r.contextID, r.state, r.ts = t, t.ContextID, t.Status.State, t.Status.Timestamp.Time
	if !enc.ok {
		r.broken = true // keep values; never freeze a partial log
	}
	if r.broken || enc.task == nil {
		return
	}
	n := 0
	for _, ev := range r.events {
		n += len(ev.Data)
	}
	fz := &frozen{task: enc.task, log: make([]byte, 0, n), ends: make([]int, len(r.events))}
	for i, ev := range r.events {
		fz.log = append(fz.log, ev.Data...)
		fz.ends[i] = len(fz.log)
	}
	r.frozen, r.task, r.events = fz, nil, nil
}

// snapshot returns the task, decoding a frozen one.
func (r *record) snapshot() (*a2a.Task, error) {
	if r.frozen == nil {
		return clipped(r.task), nil
	}
	var t a2a.Task
	if err := json.Unmarshal(r.frozen.task, &t); err != nil {
		return nil, fmt.Errorf("memory: decoding stored task: %w", err)
	}
	return &t, nil
}

// clipped returns a shallow copy of t whose slices have no room past their
// length: callers that fold it forward (a2a.Task.Apply extends slices in
// place) then never write into the arrays of the stored snapshot, which
// another caller may be folding from too (two Handlers sharing a store).
func clipped(t *a2a.Task) *a2a.Task {
	c := *t
	c.History = slices.Clip(c.History)
	if len(c.Artifacts) > 0 {
		c.Artifacts = slices.Clone(c.Artifacts)
		for i := range c.Artifacts {
			c.Artifacts[i].Parts = slices.Clip(c.Artifacts[i].Parts)
		}
		c.Artifacts = slices.Clip(c.Artifacts)
	}
	return &c
}

// log returns the events after seq after, decoding a frozen log.
func (r *record) log(after int64) ([]store.Event, error) {
	after = max(after, 0)
	if after >= r.seq {
		return nil, nil
	}
	fz := r.frozen
	if fz == nil {
		evs := slices.Clone(r.events[after:])
		for i := range evs {
			if evs[i].Data == nil { // a broken record: an event that would not encode
				evs[i].Data, _ = evs[i].Encode()
			}
		}
		return evs, nil
	}
	out := make([]store.Event, 0, r.seq-after)
	for i := after; i < r.seq; i++ {
		start := 0
		if i > 0 {
			start = fz.ends[i-1]
		}
		data := fz.log[start:fz.ends[i]:fz.ends[i]]
		var sr a2a.StreamResponse
		if err := json.Unmarshal(data, &sr); err != nil {
			return nil, fmt.Errorf("memory: decoding stored event %d: %w", i+1, err)
		}
		out = append(out, store.Event{Seq: i + 1, Payload: sr.Event, Data: data})
	}
	return out, nil
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{tasks: make(map[string]*record)}
}

// lookup returns the record of a task visible in scope. Callers hold mu.
func (s *Store) lookup(scope store.Scope, taskID string) (*record, error) {
	r, ok := s.tasks[taskID]
	if !ok || r.scope != scope {
		return nil, fmt.Errorf("task %q: %w", taskID, store.ErrNotFound)
	}
	return r, nil
}

// Append implements [store.Store]. Once the events are in, it tells the
// store's followers (see Follow).
func (s *Store) Append(ctx context.Context, scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task) error {
	err := s.append(ctx, scope, taskID, after, events, task)
	if err == nil && s.feed.Active() {
		s.feed.Send(store.Change{TaskID: taskID, Seq: after + int64(len(events))})
	}
	return err
}

// Follow implements [store.Feed]: fn hears of the Appends made through s,
// from the goroutine that made each, after the store's lock is let go.
func (s *Store) Follow(fn func(store.Change)) (stop func()) { return s.feed.Follow(fn) }

func (s *Store) append(ctx context.Context, scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.CheckAppend(after, events); err != nil {
		return fmt.Errorf("memory: task %q: %w", taskID, err)
	}
	enc := encode(events, task)
	s.mu.Lock()
	defer s.mu.Unlock()
	r, exists := s.tasks[taskID]
	if after == 0 {
		if exists {
			return fmt.Errorf("task %q exists: %w", taskID, store.ErrConflict)
		}
		if err := s.register(scope, taskID, events); err != nil {
			return err
		}
		r = &record{scope: scope, events: make([]store.Event, 0, max(len(events), 4))}
		r.add(task, enc)
		s.tasks[taskID] = r
		return nil
	}
	if !exists || r.scope != scope {
		return fmt.Errorf("task %q: %w", taskID, store.ErrNotFound)
	}
	if r.seq != after || r.frozen != nil {
		return fmt.Errorf("task %q is at seq %d, not %d: %w", taskID, r.seq, after, store.ErrConflict)
	}
	return s.extendLocked(r, scope, taskID, events, task, enc)
}

// extendLocked adds events to the log of r, which ends where they start.
// Callers hold s.mu.
func (s *Store) extendLocked(r *record, scope store.Scope, taskID string, events []store.Event, task *a2a.Task, enc encoded) error {
	if err := s.register(scope, taskID, events); err != nil {
		return err
	}
	r.add(task, enc)
	for _, e := range r.push {
		if e.state.Phase == store.PushIdle {
			e.state.Phase = store.PushDue // the log grew: wake it
			s.due(e)
		}
	}
	return nil
}

// Update implements [store.Store]: fn runs under the store's lock.
func (s *Store) Update(ctx context.Context, scope store.Scope, taskID string, after int64, fn func(since []store.Event) ([]store.Event, *a2a.Task, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	last, err := s.update(scope, taskID, after, fn)
	if err == nil && last > 0 && s.feed.Active() {
		s.feed.Send(store.Change{TaskID: taskID, Seq: last})
	}
	return err
}

// update runs an Update and returns the seq the log reached, or 0 if
// nothing was appended.
func (s *Store) update(scope store.Scope, taskID string, after int64, fn func(since []store.Event) ([]store.Event, *a2a.Task, error)) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(scope, taskID)
	if err != nil {
		return 0, err
	}
	if after < 0 || after > r.seq {
		return 0, fmt.Errorf("memory: Update of task %q after seq %d, which its log (at %d) has not reached", taskID, after, r.seq)
	}
	since, err := r.log(after)
	if err != nil {
		return 0, err
	}
	events, task, err := fn(since)
	if err != nil || len(events) == 0 {
		return 0, err
	}
	if task == nil {
		return 0, fmt.Errorf("memory: Update of task %q with no snapshot", taskID)
	}
	if err := store.CheckAppend(r.seq, events); err != nil {
		return 0, fmt.Errorf("memory: task %q: %w", taskID, err)
	}
	if r.frozen != nil {
		return 0, fmt.Errorf("memory: task %q is finished: %w", taskID, store.ErrConflict)
	}
	if err := s.extendLocked(r, scope, taskID, events, task, encode(events, task)); err != nil {
		return 0, err
	}
	return r.seq, nil
}

// Get implements [store.Store].
func (s *Store) Get(ctx context.Context, scope store.Scope, taskID string) (*a2a.Task, int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.lookup(scope, taskID)
	if err != nil {
		return nil, 0, err
	}
	t, err := r.snapshot()
	if err != nil {
		return nil, 0, err
	}
	return t, r.seq, nil
}

// Events implements [store.Store].
func (s *Store) Events(ctx context.Context, scope store.Scope, taskID string, after int64) ([]store.Event, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.lookup(scope, taskID)
	if err != nil {
		return nil, err
	}
	return r.log(after)
}

// List implements [store.Store]. It scans every task of the store, which is
// fine for the sizes an in-memory store holds.
func (s *Store) List(ctx context.Context, scope store.Scope, q store.ListQuery) (store.ListResult, error) {
	if q.Limit < 1 {
		return store.ListResult{}, fmt.Errorf("memory: list limit %d < 1", q.Limit)
	}
	type hit struct {
		id   string
		ts   time.Time
		task *a2a.Task // live tasks
		fz   *frozen   // terminal tasks
	}
	s.mu.RLock()
	var matched []hit
	for id, r := range s.tasks {
		if r.scope != scope ||
			(q.ContextID != "" && r.contextID != q.ContextID) ||
			(q.Status != a2a.TaskStateUnspecified && r.state != q.Status) ||
			(!q.StatusAfter.IsZero() && r.ts.Before(q.StatusAfter)) {
			continue
		}
		matched = append(matched, hit{id: id, ts: r.ts, task: r.task, fz: r.frozen})
	}
	s.mu.RUnlock()
	slices.SortFunc(matched, func(a, b hit) int {
		if c := b.ts.Compare(a.ts); c != 0 {
			return c
		}
		return cmp.Compare(b.id, a.id)
	})
	res := store.ListResult{Total: len(matched)}
	start := 0
	if c := q.After; c != nil {
		// The first task that sorts after the cursor.
		start, _ = slices.BinarySearchFunc(matched, c, func(h hit, c *store.Cursor) int {
			if c.Before(h.ts, h.id) || (h.id == c.ID && h.ts.Equal(c.Timestamp)) {
				return -1
			}
			return 1
		})
	}
	end := min(start+q.Limit, len(matched))
	res.More = end < len(matched)
	res.Tasks = make([]*a2a.Task, 0, end-start)
	for _, h := range matched[start:end] {
		t, err := (&record{task: h.task, frozen: h.fz}).snapshot()
		if err != nil {
			return store.ListResult{}, err
		}
		res.Tasks = append(res.Tasks, t)
	}
	return res, nil
}

// PutPushConfig implements [store.Store].
func (s *Store) PutPushConfig(ctx context.Context, scope store.Scope, cfg *a2a.TaskPushNotificationConfig) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(scope, cfg.TaskID)
	if err != nil {
		return err
	}
	if r.push == nil {
		r.push = make(map[string]*pushEntry)
	}
	e := r.push[cfg.ID]
	if e == nil {
		e = &pushEntry{state: store.PushState{Delivered: r.seq}}
		r.push[cfg.ID] = e
	} else {
		e.state = store.PushState{Delivered: e.state.Delivered}
	}
	e.cfg = cfg
	s.due(e)
	if s.withPush == nil {
		s.withPush = make(map[string]*record)
	}
	s.withPush[cfg.TaskID] = r
	return nil
}

// GetPushConfig implements [store.Store].
func (s *Store) GetPushConfig(ctx context.Context, scope store.Scope, taskID, id string) (*a2a.TaskPushNotificationConfig, error) {
	e, err := s.pushEntry(scope, taskID, id)
	if err != nil {
		return nil, err
	}
	return e.cfg, nil
}

// pushEntry returns a push config and its state, under the read lock.
func (s *Store) pushEntry(scope store.Scope, taskID, id string) (pushEntry, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.lookup(scope, taskID)
	if err != nil {
		return pushEntry{}, err
	}
	e, ok := r.push[id]
	if !ok {
		return pushEntry{}, fmt.Errorf("push config %q of task %q: %w", id, taskID, store.ErrNotFound)
	}
	return *e, nil
}

// ListPushConfigs implements [store.Store].
func (s *Store) ListPushConfigs(ctx context.Context, scope store.Scope, taskID, afterID string, limit int) ([]*a2a.TaskPushNotificationConfig, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.lookup(scope, taskID)
	if err != nil {
		return nil, err
	}
	out := make([]*a2a.TaskPushNotificationConfig, 0, len(r.push))
	for id, e := range r.push {
		if id > afterID {
			out = append(out, e.cfg)
		}
	}
	slices.SortFunc(out, func(a, b *a2a.TaskPushNotificationConfig) int { return cmp.Compare(a.ID, b.ID) })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// DeletePushConfig implements [store.Store].
func (s *Store) DeletePushConfig(ctx context.Context, scope store.Scope, taskID, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(scope, taskID)
	if err != nil {
		return err
	}
	delete(r.push, id)
	if len(r.push) == 0 {
		delete(s.withPush, taskID)
	}
	return nil
}

var (
	_ store.PushQueue = (*Store)(nil)
	_ store.Feed      = (*Store)(nil)
)

// ClaimPush implements [store.PushQueue].
func (s *Store) ClaimPush(ctx context.Context, now time.Time, lease time.Duration, limit int, skip ...store.Scope) ([]store.PushJob, error) {
	if err := ctx.Err(); err != nil || limit < 1 {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	type due struct {
		r *record
		e *pushEntry
	}
	var ds []due
	for id, r := range s.withPush {
		pending := false
		for _, e := range r.push {
			if !e.state.Failing && e.state.Delivered < r.seq {
				pending = true
				if e.state.Phase == store.PushDue && !e.state.NextAttempt.After(now) && !slices.Contains(skip, r.scope) {
					ds = append(ds, due{r, e})
				}
			}
		}
		if !pending && r.frozen != nil {
			// Ended and fully delivered (or given up): no config of it has
			// work again until one is registered again (PutPushConfig
			// puts the task back).
			delete(s.withPush, id)
		}
	}
	slices.SortFunc(ds, func(a, b due) int {
		if c := a.e.state.NextAttempt.Compare(b.e.state.NextAttempt); c != 0 {
			return c
		}
		if a.e.state.NextAttempt.IsZero() { // both due at once: FIFO
			if c := cmp.Compare(a.e.since, b.e.since); c != 0 {
				return c
			}
		}
		return cmp.Or(cmp.Compare(a.e.cfg.TaskID, b.e.cfg.TaskID), cmp.Compare(a.e.cfg.ID, b.e.cfg.ID))
	})
	ds = ds[:min(limit, len(ds))]
	jobs := make([]store.PushJob, len(ds))
	for i, d := range ds {
		d.e.state.NextAttempt = now.Add(lease)
		jobs[i] = store.PushJob{Scope: d.r.scope, Config: d.e.cfg, State: d.e.state, Seq: d.r.seq}
	}
	return jobs, nil
}

// PushState implements [store.PushQueue].
func (s *Store) PushState(ctx context.Context, scope store.Scope, taskID, id string) (store.PushState, error) {
	e, err := s.pushEntry(scope, taskID, id)
	return e.state, err
}

// SetPushState implements [store.PushQueue].
func (s *Store) SetPushState(ctx context.Context, scope store.Scope, taskID, id string, prev int64, st store.PushState) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(scope, taskID)
	if err != nil {
		return err
	}
	e, ok := r.push[id]
	if !ok {
		return fmt.Errorf("push config %q of task %q: %w", id, taskID, store.ErrNotFound)
	}
	if e.state.Delivered != prev {
		return fmt.Errorf("push config %q of task %q is at seq %d, not %d: %w", id, taskID, e.state.Delivered, prev, store.ErrConflict)
	}
	e.state = st
	if st.Phase == store.PushDue && st.NextAttempt.IsZero() {
		s.due(e)
	}
	return nil
}

var (
	_ store.Maintainer = (*Store)(nil)
	_ store.Secrets    = (*Store)(nil)
)

// Orphans implements [store.Maintainer]. Tasks in memory end with the
// process that ran them, so there are never any.
func (s *Store) Orphans(ctx context.Context, states []a2a.TaskState, limit int) ([]store.TaskRef, error) {
	return nil, ctx.Err()
}

// Expire implements [store.Maintainer].
func (s *Store) Expire(ctx context.Context, states []a2a.TaskState, cutoff time.Time, limit int) (int, error) {
	if err := ctx.Err(); err != nil || limit < 1 {
		return 0, err
	}
	type victim struct {
		id string
		ts time.Time
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var vs []victim
	for id, r := range s.tasks {
		if r.ts.Before(cutoff) && slices.Contains(states, r.state) {
			vs = append(vs, victim{id, r.ts})
		}
	}
	slices.SortFunc(vs, func(a, b victim) int {
		if c := a.ts.Compare(b.ts); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	vs = vs[:min(limit, len(vs))]
	for _, v := range vs {
		delete(s.tasks, v.id)
		delete(s.withPush, v.id)
	}
	return len(vs), nil
}

// Secret implements [store.Secrets]: random bytes made on first use, kept
// for the life of the store.
func (s *Store) Secret(ctx context.Context, name string) ([]byte, error) {
	s.secretsMu.Lock()
	defer s.secretsMu.Unlock()
	if b, ok := s.secrets[name]; ok {
		return b, nil
	}
	b := make([]byte, 32)
	rand.Read(b)
	if s.secrets == nil {
		s.secrets = make(map[string][]byte)
	}
	s.secrets[name] = b
	return b, nil
}
