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
	if err := store.CheckImport(tasks); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	recs := make([]*record, len(tasks))
	for i, task := range tasks {
		events := []store.Event{{Seq: 1, Payload: task}}
		r := &record{scope: scope, events: make([]store.Event, 0, 4)}
		r.add(task, encode(events, task))
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
