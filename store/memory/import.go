package memory

import (
	"context"
	"fmt"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

var _ store.Importer = (*Store)(nil)

// Import implements [store.Importer]. The tasks are encoded first; then one
// hold of the store's lock checks every id and adds every task.
func (s *Store) Import(ctx context.Context, scope store.Scope, tasks []*a2a.Task) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkImport(tasks); err != nil {
		return err
	}
	recs := make([]*record, len(tasks))
	for i, task := range tasks {
		events := []store.Event{{Seq: 1, Payload: task}}
		r := &record{scope: scope, events: make([]store.Event, 0, 4)}
		r.add(events, task, encode(events, task))
		recs[i] = r
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, task := range tasks {
		if _, ok := s.tasks[task.ID]; ok {
			return fmt.Errorf("memory: importing %d tasks: task %q exists: %w", len(tasks), task.ID, store.ErrConflict)
		}
	}
	for i, task := range tasks {
		s.tasks[task.ID] = recs[i]
	}
	return nil
}

// checkImport rejects a nil task, an empty id and an id given twice.
func checkImport(tasks []*a2a.Task) error {
	seen := make(map[string]struct{}, len(tasks))
	for i, task := range tasks {
		switch {
		case task == nil:
			return fmt.Errorf("memory: importing %d tasks: task %d is nil", len(tasks), i)
		case task.ID == "":
			return fmt.Errorf("memory: importing %d tasks: task %d has no id", len(tasks), i)
		}
		if _, dup := seen[task.ID]; dup {
			return fmt.Errorf("memory: importing %d tasks: task %q appears twice: %w", len(tasks), task.ID, store.ErrConflict)
		}
		seen[task.ID] = struct{}{}
	}
	return nil
}
