// Package memory is an in-memory [store.Store]: fast, safe for concurrent
// use, and gone when the process ends. It suits tests, demos and agents
// whose tasks need not outlive the process.
package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// Store is an in-memory task store. The zero value is not usable; call New.
type Store struct {
	mu    sync.RWMutex
	tasks map[string]*record
}

type record struct {
	scope  store.Scope
	task   *a2a.Task
	events []store.Event
	push   map[string]*a2a.TaskPushNotificationConfig
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

// Append implements [store.Store].
func (s *Store) Append(ctx context.Context, scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, ev := range events {
		if ev.Seq != after+int64(i)+1 {
			return fmt.Errorf("memory: event %d has seq %d, want %d", i, ev.Seq, after+int64(i)+1)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, exists := s.tasks[taskID]
	if after == 0 {
		if exists {
			return fmt.Errorf("task %q exists: %w", taskID, store.ErrConflict)
		}
		s.tasks[taskID] = &record{scope: scope, task: task, events: slices.Clone(events)}
		return nil
	}
	if !exists || r.scope != scope {
		return fmt.Errorf("task %q: %w", taskID, store.ErrNotFound)
	}
	if int64(len(r.events)) != after {
		return fmt.Errorf("task %q is at seq %d, not %d: %w", taskID, len(r.events), after, store.ErrConflict)
	}
	r.events = append(r.events, events...)
	r.task = task
	return nil
}

// Get implements [store.Store].
func (s *Store) Get(ctx context.Context, scope store.Scope, taskID string) (*a2a.Task, int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.lookup(scope, taskID)
	if err != nil {
		return nil, 0, err
	}
	return r.task, int64(len(r.events)), nil
}

// Events implements [store.Store].
func (s *Store) Events(ctx context.Context, scope store.Scope, taskID string, after int64) ([]store.Event, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.lookup(scope, taskID)
	if err != nil {
		return nil, err
	}
	if after < 0 {
		after = 0
	}
	if after >= int64(len(r.events)) {
		return nil, nil
	}
	return slices.Clone(r.events[after:]), nil
}

// List implements [store.Store]. It scans every task of the store, which is
// fine for the sizes an in-memory store holds.
func (s *Store) List(ctx context.Context, scope store.Scope, q store.ListQuery) (store.ListResult, error) {
	if q.Limit < 1 {
		return store.ListResult{}, fmt.Errorf("memory: list limit %d < 1", q.Limit)
	}
	s.mu.RLock()
	var matched []*a2a.Task
	for _, r := range s.tasks {
		t := r.task
		if r.scope != scope ||
			(q.ContextID != "" && t.ContextID != q.ContextID) ||
			(q.Status != a2a.TaskStateUnspecified && t.Status.State != q.Status) ||
			(!q.StatusAfter.IsZero() && t.Status.Timestamp.Before(q.StatusAfter)) {
			continue
		}
		matched = append(matched, t)
	}
	s.mu.RUnlock()
	slices.SortFunc(matched, func(a, b *a2a.Task) int {
		if c := b.Status.Timestamp.Compare(a.Status.Timestamp.Time); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	res := store.ListResult{Total: len(matched)}
	start := 0
	if q.After != nil {
		start, _ = slices.BinarySearchFunc(matched, q.After, func(t *a2a.Task, c *store.Cursor) int {
			if c.Before(t.Status.Timestamp.Time, t.ID) {
				return -1
			}
			if t.ID == c.ID && t.Status.Timestamp.Equal(c.Timestamp) {
				return 0
			}
			return 1
		})
		if start < len(matched) && matched[start].ID == q.After.ID && matched[start].Status.Timestamp.Equal(q.After.Timestamp) {
			start++
		}
	}
	end := min(start+q.Limit, len(matched))
	res.Tasks = matched[start:end]
	res.More = end < len(matched)
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
		r.push = make(map[string]*a2a.TaskPushNotificationConfig)
	}
	r.push[cfg.ID] = cfg
	return nil
}

// GetPushConfig implements [store.Store].
func (s *Store) GetPushConfig(ctx context.Context, scope store.Scope, taskID, id string) (*a2a.TaskPushNotificationConfig, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, err := s.lookup(scope, taskID)
	if err != nil {
		return nil, err
	}
	cfg, ok := r.push[id]
	if !ok {
		return nil, fmt.Errorf("push config %q of task %q: %w", id, taskID, store.ErrNotFound)
	}
	return cfg, nil
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
	for id, cfg := range r.push {
		if id > afterID {
			out = append(out, cfg)
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
	return nil
}
