package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/internal/taskjson"
)

var _ store.Importer = (*Store)(nil)

// Columns that Import copies.
var (
	importTaskColumns  = []string{"id", "tenant", "owner", "context_id", "state", "status_ts", "seq", "runner", "snapshot", "snap_seq", "snap_bytes"}
	importEventColumns = []string{"task_id", "seq", "payload"}
)

// Import implements [store.Importer]. The tasks are encoded first, on
// every CPU; then one transaction copies them (COPY, in binary, in id
// order) into the tasks table, their first events into the events
// table, and the number of tasks of each state into the counts. An id
// that exists in any scope breaks the tasks' primary key: the
// transaction rolls back and Import returns ErrConflict. Of concurrent
// imports that share ids, one wins and the others conflict. Import sends
// no notifications on [Store.Channel]: no one can be following a task
// that did not exist.
func (s *Store) Import(ctx context.Context, scope store.Scope, tasks []*a2a.Task) error {
	if err := store.CheckImport(tasks); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if len(tasks) == 0 {
		return ctx.Err()
	}
	enc, err := taskjson.EncodeAll(tasks)
	if err != nil {
		return fmt.Errorf("postgres: importing %d tasks: %w", len(tasks), err)
	}
	if err := s.importTasks(ctx, scope, tasks, enc); err != nil {
		return fmt.Errorf("postgres: importing %d tasks: %w", len(tasks), err)
	}
	return nil
}

func (s *Store) importTasks(ctx context.Context, scope store.Scope, tasks []*a2a.Task, enc []taskjson.Encoded) error {
	// Rows go in in id order. An insert waits for a concurrent
	// transaction that inserted the same id to end: two imports that
	// shared ids in opposite orders would wait for each other (a
	// deadlock, which PostgreSQL breaks after a second with an error).
	// In one order, one of them goes first and the other conflicts.
	order := make([]int, len(tasks))
	for i := range order {
		order[i] = i
	}
	byID := func(a, b int) int { return strings.Compare(tasks[a].ID, tasks[b].ID) }
	if !slices.IsSortedFunc(order, byID) {
		slices.SortFunc(order, byID)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("beginning a transaction: %w", err)
	}
	// Rolling back after a commit does nothing; after a failure, it must
	// run even if ctx has ended.
	defer tx.Rollback(context.WithoutCancel(ctx))
	_, err = tx.CopyFrom(ctx, pgx.Identifier{s.schema, "tasks"}, importTaskColumns,
		pgx.CopyFromSlice(len(tasks), func(k int) ([]any, error) {
			i := order[k]
			st := tasks[i].Status
			return []any{tasks[i].ID, scope.Tenant, scope.Owner, tasks[i].ContextID,
				int32(st.State), st.Timestamp.UnixMilli(), int64(1), s.self.ID, enc[i].Snapshot, int64(1), int64(len(enc[i].Snapshot))}, nil
		}))
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "23505" {
			// The detail names the id: Key (id)=(...) already exists.
			return fmt.Errorf("%s: %w", strings.TrimSuffix(pgErr.Detail, "."), store.ErrConflict)
		}
		return fmt.Errorf("copying tasks: %w", err)
	}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{s.schema, "events"}, importEventColumns,
		pgx.CopyFromSlice(len(tasks), func(k int) ([]any, error) {
			i := order[k]
			return []any{tasks[i].ID, int64(1), enc[i].Payload}, nil
		}))
	if err != nil {
		return fmt.Errorf("copying events: %w", err)
	}
	states, counts := countStates(tasks)
	if _, err := tx.Exec(ctx, s.q.insertDeltas, scope.Tenant, scope.Owner, states, counts); err != nil {
		return fmt.Errorf("counting tasks: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("committing: %w", err)
	}
	return nil
}

// countStates returns the states of tasks and how many tasks have each.
func countStates(tasks []*a2a.Task) ([]int32, []int64) {
	byState := make(map[int32]int64)
	for _, task := range tasks {
		byState[int32(task.Status.State)]++
	}
	states, counts := make([]int32, 0, len(byState)), make([]int64, 0, len(byState))
	for st, n := range byState {
		states, counts = append(states, st), append(counts, n)
	}
	return states, counts
}
