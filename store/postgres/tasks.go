package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// Append implements [store.Store]. It is one statement: the task row, the
// events, the wake of the task's idle push configs and the notification
// on [Store.Channel] commit together. Only a
// failed Append costs a second query, to tell ErrNotFound from
// ErrConflict. An empty events is an error.
func (s *Store) Append(ctx context.Context, scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task) error {
	if len(events) == 0 {
		return fmt.Errorf("postgres: Append to task %q with no events", taskID)
	}
	if task == nil {
		return fmt.Errorf("postgres: Append to task %q with no snapshot", taskID)
	}
	seqs := make([]int64, len(events))
	payloads := make([][]byte, len(events))
	for i, ev := range events {
		if want := after + int64(i) + 1; ev.Seq != want {
			return fmt.Errorf("postgres: event %d of task %q has seq %d, want %d", i, taskID, ev.Seq, want)
		}
		b, err := a2a.StreamResponse{Event: ev.Payload}.AppendJSON(nil)
		if err != nil {
			return fmt.Errorf("postgres: encoding event %d of task %q: %w", ev.Seq, taskID, err)
		}
		seqs[i], payloads[i] = ev.Seq, b
	}
	snap, err := json.Marshal(task)
	if err != nil {
		return fmt.Errorf("postgres: encoding task %q: %w", taskID, err)
	}
	last := after + int64(len(events))
	note := taskID + ":" + strconv.FormatInt(last, 10)
	st := task.Status
	var tag pgconn.CommandTag
	if after == 0 {
		tag, err = s.pool.Exec(ctx, s.q.create,
			taskID, scope.Tenant, scope.Owner, task.ContextID, int32(st.State), st.Timestamp.UnixMilli(), last, s.self.ID, snap,
			seqs, payloads, s.channel, note)
	} else {
		tag, err = s.pool.Exec(ctx, s.q.append,
			taskID, scope.Tenant, scope.Owner, after, task.ContextID, int32(st.State), st.Timestamp.UnixMilli(), last, s.self.ID, snap,
			seqs, payloads, s.channel, note, pushIdleMS)
	}
	if err != nil {
		if isUniqueViolation(err) {
			// The events' primary key caught a second writer of these
			// seqs.
			return fmt.Errorf("postgres: task %q already has events after %d: %w", taskID, after, store.ErrConflict)
		}
		return fmt.Errorf("postgres: appending to task %q: %w", taskID, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	if after == 0 {
		return fmt.Errorf("postgres: task %q exists: %w", taskID, store.ErrConflict)
	}
	var seq int64
	err = s.pool.QueryRow(ctx, s.q.seqOf, taskID, scope.Tenant, scope.Owner).Scan(&seq)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("postgres: task %q: %w", taskID, store.ErrNotFound)
	case err != nil:
		return fmt.Errorf("postgres: appending to task %q: %w", taskID, err)
	}
	return fmt.Errorf("postgres: task %q is at seq %d, not %d: %w", taskID, seq, after, store.ErrConflict)
}

// pushIdleMS is [store.PushIdle] as the push_configs table keeps it.
var pushIdleMS = store.PushIdle.UnixMilli()

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// Get implements [store.Store].
func (s *Store) Get(ctx context.Context, scope store.Scope, taskID string) (*a2a.Task, int64, error) {
	var (
		snap []byte
		seq  int64
	)
	err := s.pool.QueryRow(ctx, s.q.get, taskID, scope.Tenant, scope.Owner).Scan(&snap, &seq)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, 0, fmt.Errorf("postgres: task %q: %w", taskID, store.ErrNotFound)
	case err != nil:
		return nil, 0, fmt.Errorf("postgres: reading task %q: %w", taskID, err)
	}
	t, err := decodeTask(snap)
	if err != nil {
		return nil, 0, fmt.Errorf("postgres: task %q: %w", taskID, err)
	}
	return t, seq, nil
}

func decodeTask(b []byte) (*a2a.Task, error) {
	var t a2a.Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("decoding stored snapshot: %w", err)
	}
	return &t, nil
}

// Events implements [store.Store]. The task check and the events come from
// one statement, and so from one snapshot of the database.
func (s *Store) Events(ctx context.Context, scope store.Scope, taskID string, after int64) ([]store.Event, error) {
	rows, err := s.pool.Query(ctx, s.q.events, taskID, scope.Tenant, scope.Owner, after)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading events of task %q: %w", taskID, err)
	}
	defer rows.Close()
	found := false
	var evs []store.Event
	for rows.Next() {
		found = true
		var (
			seq     *int64
			payload []byte
		)
		if err := rows.Scan(&seq, &payload); err != nil {
			return nil, fmt.Errorf("postgres: reading events of task %q: %w", taskID, err)
		}
		if seq == nil {
			continue // the task exists, with no events after after
		}
		var r a2a.StreamResponse
		if err := json.Unmarshal(payload, &r); err != nil {
			return nil, fmt.Errorf("postgres: decoding event %d of task %q: %w", *seq, taskID, err)
		}
		evs = append(evs, store.Event{Seq: *seq, Payload: r.Event})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: reading events of task %q: %w", taskID, err)
	}
	if !found {
		return nil, fmt.Errorf("postgres: task %q: %w", taskID, store.ErrNotFound)
	}
	return evs, nil
}

// List implements [store.Store]. The page and the total come from one
// statement, and so one snapshot: a keyset range scan of the index that
// matches the filters, beside the total. Without a context or time filter
// the total is read from the counters (task_counts plus the deltas not yet
// compacted), whatever the number of tasks; with one, it is a count over
// the filters, a range scan of the same index.
func (s *Store) List(ctx context.Context, scope store.Scope, q store.ListQuery) (store.ListResult, error) {
	if q.Limit < 1 {
		return store.ListResult{}, fmt.Errorf("postgres: list limit %d < 1", q.Limit)
	}
	sql, args := s.listSQL(scope, q)
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return store.ListResult{}, fmt.Errorf("postgres: listing tasks: %w", err)
	}
	defer rows.Close()
	var res store.ListResult
	for rows.Next() {
		var snap []byte
		if err := rows.Scan(&res.Total, &snap); err != nil {
			return store.ListResult{}, fmt.Errorf("postgres: listing tasks: %w", err)
		}
		if snap == nil {
			continue // no task on this page
		}
		if len(res.Tasks) == q.Limit {
			res.More = true
			continue
		}
		t, err := decodeTask(snap)
		if err != nil {
			return store.ListResult{}, fmt.Errorf("postgres: listing tasks: %w", err)
		}
		res.Tasks = append(res.Tasks, t)
	}
	if err := rows.Err(); err != nil {
		return store.ListResult{}, fmt.Errorf("postgres: listing tasks: %w", err)
	}
	return res, nil
}

// listSQL returns the statement of List and its arguments. Its first
// column is the total; its second the snapshots of the page, in order,
// plus one more if more follow, or a single NULL if the page is empty.
func (s *Store) listSQL(scope store.Scope, q store.ListQuery) (string, []any) {
	filter, args := listFilter(scope, q)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	page := filter
	if c := q.After; c != nil {
		// Stored timestamps are whole milliseconds: a cursor between two
		// of them is the same as one at the next, before every id.
		ts, id := c.Timestamp.UnixMilli(), c.ID
		if ceil := ceilMilli(c.Timestamp); ceil != ts {
			ts, id = ceil, ""
		}
		page += " AND (status_ts, id) < (" + arg(ts) + ", " + arg(id) + ")"
	}
	limit := arg(q.Limit + 1) // one more tells whether more follow
	t := s.q.tasks
	sql := "SELECT c.total, p.snapshot FROM (" + s.totalSQL(q, filter) + ") c" +
		" LEFT JOIN LATERAL (SELECT snapshot, status_ts, id FROM " + t + " WHERE " + page +
		" ORDER BY status_ts DESC, id DESC LIMIT " + limit + ") p ON true" +
		" ORDER BY p.status_ts DESC, p.id DESC"
	return sql, args
}

// totalSQL returns a query of one row and one column, total: the number of
// tasks that match q's filters, given as filter by listFilter (whose
// arguments it uses). A filter on scope and state only is answered from
// the counters: the filter's columns are theirs.
func (s *Store) totalSQL(q store.ListQuery, filter string) string {
	if q.ContextID != "" || !q.StatusAfter.IsZero() {
		return "SELECT count(*) AS total FROM " + s.q.tasks + " WHERE " + filter
	}
	return "SELECT (SELECT coalesce(sum(n), 0) FROM " + s.q.counts + " WHERE " + filter + ")::bigint + " +
		"(SELECT coalesce(sum(delta), 0) FROM " + s.q.deltas + " WHERE " + filter + ")::bigint AS total"
}

// listFilter returns the condition on the tasks table that selects the
// tasks in scope that match the filters of q (not its cursor), and its
// arguments, numbered from $1.
func listFilter(scope store.Scope, q store.ListQuery) (string, []any) {
	args := []any{scope.Tenant, scope.Owner}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	filter := "tenant = $1 AND owner = $2"
	if q.ContextID != "" {
		filter += " AND context_id = " + arg(q.ContextID)
	}
	if q.Status != a2a.TaskStateUnspecified {
		filter += " AND state = " + arg(int32(q.Status))
	}
	if !q.StatusAfter.IsZero() {
		filter += " AND status_ts >= " + arg(ceilMilli(q.StatusAfter))
	}
	return filter, args
}

// ceilMilli returns t in unix milliseconds, rounded up.
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.Nanosecond()%int(time.Millisecond) != 0 {
		ms++
	}
	return ms
}
