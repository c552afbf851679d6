package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// forgetStore is a diagnostic store for the "goa2a-forget" target: it keeps
// a task only while it is not terminal and forgets it at its terminal
// append, so the heap does not grow with the run. It is not a conforming
// store (a finished task cannot be read back); comparing goa2a with
// goa2a-forget measures what the default memory store's retention of every
// task costs in garbage collection.
type forgetStore struct {
	mu    sync.Mutex
	tasks map[string]*forgetRecord
}

type forgetRecord struct {
	scope  store.Scope
	task   *a2a.Task
	events []store.Event
}

var _ store.Store = (*forgetStore)(nil)

func newForgetStore() *forgetStore { return &forgetStore{tasks: make(map[string]*forgetRecord)} }

func (s *forgetStore) Append(ctx context.Context, scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(scope, taskID, after, events, task)
}

func (s *forgetStore) appendLocked(scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task) error {
	r, ok := s.tasks[taskID]
	switch {
	case after == 0 && ok:
		return fmt.Errorf("task %q exists: %w", taskID, store.ErrConflict)
	case after == 0:
		r = &forgetRecord{scope: scope}
		s.tasks[taskID] = r
	case !ok || r.scope != scope:
		return fmt.Errorf("task %q: %w", taskID, store.ErrNotFound)
	case int64(len(r.events)) != after:
		return fmt.Errorf("task %q: %w", taskID, store.ErrConflict)
	}
	if task.Status.State.Terminal() {
		delete(s.tasks, taskID)
		return nil
	}
	r.events = append(r.events, events...)
	r.task = task
	return nil
}

// Update implements [store.Store] under the store's lock.
func (s *forgetStore) Update(ctx context.Context, scope store.Scope, taskID string, after int64, fn func(since []store.Event) ([]store.Event, *a2a.Task, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(scope, taskID)
	if err != nil {
		return err
	}
	end := int64(len(r.events))
	if after < 0 || after > end {
		return fmt.Errorf("task %q: Update after seq %d, past its log", taskID, after)
	}
	events, task, err := fn(r.events[after:end:end])
	if err != nil || len(events) == 0 {
		return err
	}
	return s.appendLocked(scope, taskID, end, events, task)
}

func (s *forgetStore) lookup(scope store.Scope, taskID string) (*forgetRecord, error) {
	r, ok := s.tasks[taskID]
	if !ok || r.scope != scope {
		return nil, fmt.Errorf("task %q: %w", taskID, store.ErrNotFound)
	}
	return r, nil
}

func (s *forgetStore) Get(ctx context.Context, scope store.Scope, taskID string) (*a2a.Task, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(scope, taskID)
	if err != nil {
		return nil, 0, err
	}
	return r.task, int64(len(r.events)), nil
}

func (s *forgetStore) Events(ctx context.Context, scope store.Scope, taskID string, after int64) ([]store.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.lookup(scope, taskID)
	if err != nil {
		return nil, err
	}
	if after >= int64(len(r.events)) {
		return nil, nil
	}
	return append([]store.Event(nil), r.events[max(after, 0):]...), nil
}

func (s *forgetStore) List(ctx context.Context, scope store.Scope, q store.ListQuery) (store.ListResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return store.ListResult{Total: len(s.tasks)}, nil
}

func (s *forgetStore) PutPushConfig(ctx context.Context, scope store.Scope, cfg *a2a.TaskPushNotificationConfig) error {
	return fmt.Errorf("forget store keeps no push configs: %w", store.ErrNotFound)
}

func (s *forgetStore) GetPushConfig(ctx context.Context, scope store.Scope, taskID, id string) (*a2a.TaskPushNotificationConfig, error) {
	return nil, fmt.Errorf("forget store keeps no push configs: %w", store.ErrNotFound)
}

func (s *forgetStore) ListPushConfigs(ctx context.Context, scope store.Scope, taskID, afterID string, limit int) ([]*a2a.TaskPushNotificationConfig, error) {
	return nil, nil
}

func (s *forgetStore) DeletePushConfig(ctx context.Context, scope store.Scope, taskID, id string) error {
	return nil
}
