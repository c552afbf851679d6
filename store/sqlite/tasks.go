package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// Append implements [store.Store]. The events and the snapshot are encoded
// first; then the writer runs the Append, with others that are waiting, in
// one transaction. When Append returns nil, that transaction has
// committed. An empty events is an error.
func (s *Store) Append(ctx context.Context, scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task) error {
	if len(events) == 0 {
		return fmt.Errorf("sqlite: Append to task %q with no events", taskID)
	}
	if task == nil {
		return fmt.Errorf("sqlite: Append to task %q with no snapshot", taskID)
	}
	if after < 0 {
		return fmt.Errorf("sqlite: Append to task %q after negative seq %d", taskID, after)
	}
	payloads := make([][]byte, len(events))
	for i, ev := range events {
		if want := after + int64(i) + 1; ev.Seq != want {
			return fmt.Errorf("sqlite: event %d of task %q has seq %d, want %d", i, taskID, ev.Seq, want)
		}
		b, err := a2a.StreamResponse{Event: ev.Payload}.AppendJSON(nil)
		if err != nil {
			return fmt.Errorf("sqlite: encoding event %d of task %q: %w", ev.Seq, taskID, err)
		}
		payloads[i] = b
	}
	snap, err := json.Marshal(task)
	if err != nil {
		return fmt.Errorf("sqlite: encoding task %q: %w", taskID, err)
	}
	last := after + int64(len(events))
	st := task.Status
	return s.write(ctx, true, func(w *wtx) error {
		if after == 0 {
			n, err := affected(w.exec(s.ws.createTask,
				taskID, scope.Tenant, scope.Owner, task.ContextID, int64(st.State), st.Timestamp.UnixMilli(), last, s.self.ID, snap))
			if err != nil {
				return fmt.Errorf("sqlite: creating task %q: %w", taskID, err)
			}
			if n == 0 {
				return fmt.Errorf("sqlite: task %q exists: %w", taskID, store.ErrConflict)
			}
			if _, err := w.exec(s.ws.addCount, scope.Tenant, scope.Owner, int64(st.State), 1); err != nil {
				return fmt.Errorf("sqlite: counting task %q: %w", taskID, err)
			}
		} else {
			// The state the task leaves, for the kept counts, is read in
			// the writer's transaction: no other write comes between the
			// read and the update.
			var seq, old int64
			err := w.queryRow(s.ws.seqState, taskID, scope.Tenant, scope.Owner).Scan(&seq, &old)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("sqlite: task %q: %w", taskID, store.ErrNotFound)
			case err != nil:
				return fmt.Errorf("sqlite: appending to task %q: %w", taskID, err)
			case seq != after:
				return fmt.Errorf("sqlite: task %q is at seq %d, not %d: %w", taskID, seq, after, store.ErrConflict)
			}
			n, err := affected(w.exec(s.ws.updateTask,
				task.ContextID, int64(st.State), st.Timestamp.UnixMilli(), last, s.self.ID, snap,
				taskID, scope.Tenant, scope.Owner, after))
			switch {
			case err != nil:
				return fmt.Errorf("sqlite: appending to task %q: %w", taskID, err)
			case n != 1:
				return fmt.Errorf("sqlite: appending to task %q: %d rows updated, want 1", taskID, n)
			}
			if old != int64(st.State) {
				if _, err := w.exec(s.ws.moveCount, scope.Tenant, scope.Owner, old, int64(st.State)); err != nil {
					return fmt.Errorf("sqlite: counting task %q: %w", taskID, err)
				}
			}
		}
		for i, p := range payloads {
			if _, err := w.exec(s.ws.insertEvent, taskID, after+int64(i)+1, p); err != nil {
				return fmt.Errorf("sqlite: appending event %d to task %q: %w", after+int64(i)+1, taskID, err)
			}
		}
		if after > 0 {
			// The log grew: wake the task's idle push configs, in the
			// same transaction (and savepoint) as the events. A new
			// task has no configs.
			if _, err := w.exec(s.ws.wakePush, taskID, pushIdleMS); err != nil {
				return fmt.Errorf("sqlite: waking the push configs of task %q: %w", taskID, err)
			}
		}
		return nil
	})
}

// pushIdleMS is [store.PushIdle] as the push_configs table keeps it.
var pushIdleMS = store.PushIdle.UnixMilli()

// Get implements [store.Store].
func (s *Store) Get(ctx context.Context, scope store.Scope, taskID string) (*a2a.Task, int64, error) {
	var (
		snap []byte
		seq  int64
	)
	err := s.rs.get.QueryRowContext(ctx, taskID, scope.Tenant, scope.Owner).Scan(&snap, &seq)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, 0, fmt.Errorf("sqlite: task %q: %w", taskID, store.ErrNotFound)
	case err != nil:
		return nil, 0, s.readErr(fmt.Errorf("sqlite: reading task %q: %w", taskID, err))
	}
	t, err := decodeTask(snap)
	if err != nil {
		return nil, 0, fmt.Errorf("sqlite: task %q: %w", taskID, err)
	}
	return t, seq, nil
}

// Events implements [store.Store].
func (s *Store) Events(ctx context.Context, scope store.Scope, taskID string, after int64) ([]store.Event, error) {
	rows, err := s.rs.events.QueryContext(ctx, after, taskID, scope.Tenant, scope.Owner)
	if err != nil {
		return nil, s.readErr(fmt.Errorf("sqlite: reading events of task %q: %w", taskID, err))
	}
	defer rows.Close()
	var (
		evs   []store.Event
		found bool
	)
	for rows.Next() {
		found = true
		var (
			seq     sql.NullInt64
			payload []byte
		)
		if err := rows.Scan(&seq, &payload); err != nil {
			return nil, fmt.Errorf("sqlite: reading events of task %q: %w", taskID, err)
		}
		if !seq.Valid {
			continue // the task exists, with no events after after
		}
		var sr a2a.StreamResponse
		if err := json.Unmarshal(payload, &sr); err != nil {
			return nil, fmt.Errorf("sqlite: decoding event %d of task %q: %w", seq.Int64, taskID, err)
		}
		evs = append(evs, store.Event{Seq: seq.Int64, Payload: sr.Event})
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(fmt.Errorf("sqlite: reading events of task %q: %w", taskID, err))
	}
	if !found {
		return nil, fmt.Errorf("sqlite: task %q: %w", taskID, store.ErrNotFound)
	}
	return evs, nil
}

// List implements [store.Store]. The page and the total are read in one
// read transaction, so they agree. Each combination of filters is a range
// scan of one of the tasks table's list indexes, in order: no page costs
// more than the first. The total comes from the kept counts when the
// query filters on nothing but the state, and from a count of the rows in
// the range otherwise (see listSQL).
func (s *Store) List(ctx context.Context, scope store.Scope, q store.ListQuery) (store.ListResult, error) {
	if q.Limit < 1 {
		return store.ListResult{}, fmt.Errorf("sqlite: list limit %d < 1", q.Limit)
	}
	page, pageArgs, count, countArgs := listSQL(scope, q)
	pageStmt, err := s.readStmt(ctx, page)
	if err != nil {
		return store.ListResult{}, s.readErr(fmt.Errorf("sqlite: listing tasks: %w", err))
	}
	countStmt, err := s.readStmt(ctx, count)
	if err != nil {
		return store.ListResult{}, s.readErr(fmt.Errorf("sqlite: counting tasks: %w", err))
	}
	tx, err := s.rdb.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return store.ListResult{}, s.readErr(fmt.Errorf("sqlite: listing tasks: %w", err))
	}
	defer tx.Rollback()

	var res store.ListResult
	rows, err := tx.StmtContext(ctx, pageStmt).QueryContext(ctx, pageArgs...)
	if err != nil {
		return store.ListResult{}, s.readErr(fmt.Errorf("sqlite: listing tasks: %w", err))
	}
	defer rows.Close()
	for rows.Next() {
		if len(res.Tasks) == q.Limit {
			res.More = true
			break
		}
		var snap []byte
		if err := rows.Scan(&snap); err != nil {
			return store.ListResult{}, fmt.Errorf("sqlite: listing tasks: %w", err)
		}
		t, err := decodeTask(snap)
		if err != nil {
			return store.ListResult{}, fmt.Errorf("sqlite: listing tasks: %w", err)
		}
		res.Tasks = append(res.Tasks, t)
	}
	if err := rows.Err(); err != nil {
		return store.ListResult{}, s.readErr(fmt.Errorf("sqlite: listing tasks: %w", err))
	}
	rows.Close()
	if err := tx.StmtContext(ctx, countStmt).QueryRowContext(ctx, countArgs...).Scan(&res.Total); err != nil {
		return store.ListResult{}, s.readErr(fmt.Errorf("sqlite: counting tasks: %w", err))
	}
	if res.Tasks == nil {
		res.Tasks = []*a2a.Task{}
	}
	return res, nil
}

// listSQL returns the statement that reads a page of q (limit+1 rows: the
// last one only says that more follow) and the one that counts every
// match, with their arguments. The statements depend only on which filters
// q sets, so there are few of them and they are prepared once.
//
// Without a context or time filter, the count reads the kept counts of
// the scope (task_counts), one row per state: a lookup, where counting
// the rows of tasks takes time in proportion to their number (100 ms for
// a million). With one, it counts the rows in the filter's index range.
func listSQL(scope store.Scope, q store.ListQuery) (page string, pageArgs []any, count string, countArgs []any) {
	page, pageArgs, count, countArgs = scanListSQL(scope, q)
	if q.ContextID == "" && q.StatusAfter.IsZero() {
		count = "SELECT coalesce(sum(n), 0) FROM task_counts WHERE tenant = ? AND owner = ?"
		countArgs = []any{scope.Tenant, scope.Owner}
		if q.Status != a2a.TaskStateUnspecified {
			count += " AND state = ?"
			countArgs = append(countArgs, int64(q.Status))
		}
	}
	return page, pageArgs, count, countArgs
}

// scanListSQL is listSQL with a count of the rows of tasks whatever the
// filters: the count that the kept counts must agree with.
func scanListSQL(scope store.Scope, q store.ListQuery) (page string, pageArgs []any, count string, countArgs []any) {
	var b strings.Builder
	b.WriteString("FROM tasks WHERE tenant = ? AND owner = ?")
	args := []any{scope.Tenant, scope.Owner}
	if q.ContextID != "" {
		b.WriteString(" AND context_id = ?")
		args = append(args, q.ContextID)
	}
	if q.Status != a2a.TaskStateUnspecified {
		b.WriteString(" AND state = ?")
		args = append(args, int64(q.Status))
	}
	if !q.StatusAfter.IsZero() {
		// status_ts >= StatusAfter, with status_ts in whole milliseconds.
		b.WriteString(" AND status_ts >= ?")
		args = append(args, ceilMilli(q.StatusAfter))
	}
	count = "SELECT count(*) " + b.String()
	countArgs = args
	pageArgs = append([]any(nil), args...)
	if c := q.After; c != nil {
		// Tasks after the cursor: older, or as old with a smaller id. A
		// cursor between two milliseconds is after every task of the
		// millisecond before it (and id > "" for every id).
		ms, id := c.Timestamp.UnixMilli(), c.ID
		if time.UnixMilli(ms).Before(c.Timestamp) {
			ms, id = ms+1, ""
		}
		b.WriteString(" AND (status_ts, id) < (?, ?)")
		pageArgs = append(pageArgs, ms, id)
	}
	b.WriteString(" ORDER BY status_ts DESC, id DESC LIMIT ?")
	pageArgs = append(pageArgs, q.Limit+1)
	return "SELECT snapshot " + b.String(), pageArgs, count, countArgs
}

// ceilMilli returns the first whole unix millisecond at or after t.
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}

func decodeTask(b []byte) (*a2a.Task, error) {
	var t a2a.Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("decoding stored task: %w", err)
	}
	return &t, nil
}

// readErr turns the error of a read that failed because the store is
// closed into one that says so, and leaves the others alone.
func (s *Store) readErr(err error) error {
	select {
	case <-s.closing:
		return fmt.Errorf("%w: %w", ErrClosed, err)
	default:
		return err
	}
}
