package postgres

import (
	"bytes"
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
	"github.com/goa2a/a2a/store/internal/pushcode"
)

// Append implements [store.Store]. The caller's goroutine encodes the
// events (keeping ev.Data when it is set) and, when [store.SnapshotDue]
// says so, the snapshot; then a writer runs the append with the others
// waiting at that moment, in one transaction (see writer.go): the task
// row, the events, the count, the wake of the task's idle push configs
// and the notification on [Store.Channel] commit together, and Append
// returns once they have. If ctx ends while the append waits for a writer,
// Append returns ctx.Err() and the append never runs; once a writer has
// taken it, Append waits for its outcome. An empty events is an error.
func (s *Store) Append(ctx context.Context, scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task) error {
	r, err := s.prepareAppend(scope, taskID, after, events, task, false)
	if err != nil {
		return err
	}
	r.ctx = ctx
	if err := s.enqueue(ctx, r); err != nil {
		return s.withUsedRecord(ctx, scope, err)
	}
	s.sizes.put(taskID, r.last, r.snapBytes, r.tailBytes, task.Status.State.Terminal())
	return nil
}

// prepareAppend checks and encodes an Append, with the task's snapshot
// when [store.SnapshotDue] says so, or always with withSnap.
func (s *Store) prepareAppend(scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task, withSnap bool) (*appendReq, error) {
	if err := store.CheckAppend(after, events); err != nil {
		return nil, fmt.Errorf("postgres: task %q: %w", taskID, err)
	}
	if task == nil {
		return nil, fmt.Errorf("postgres: Append to task %q with no snapshot", taskID)
	}
	seqs := make([]int64, len(events))
	payloads := make([][]byte, len(events))
	tail := 0
	for i, ev := range events {
		b, err := ev.Encode()
		if err != nil {
			return nil, fmt.Errorf("postgres: encoding event %d of task %q: %w", ev.Seq, taskID, err)
		}
		seqs[i], payloads[i] = ev.Seq, b
		tail += len(b)
	}
	last := after + int64(len(events))
	st := task.Status
	msgIDs, digests, err := messageArgs(events)
	if err != nil {
		return nil, fmt.Errorf("postgres: Append to task %q: %w", taskID, err)
	}
	r := &appendReq{taskID: taskID, after: after, last: last, msgIDs: msgIDs, done: make(chan error, 1)}
	if after == 0 {
		snap, err := createSnapshot(task, events, payloads)
		if err != nil {
			return nil, fmt.Errorf("postgres: encoding task %q: %w", taskID, err)
		}
		r.sql = s.q.create
		r.args = []any{taskID, scope.Tenant, scope.Owner, task.ContextID, int32(st.State), st.Timestamp.UnixMilli(), last, s.self.ID, snap,
			seqs, payloads, msgIDs, digests, time.Now().UnixMilli()}
		return r, nil
	}
	// Nil keeps the stored snapshot, and the events join its tail.
	var snap []byte
	if snapBytes, tailBytes := s.sizes.get(taskID, after); withSnap || store.SnapshotDue(st.State, snapBytes, tailBytes+tail) {
		var err error
		if snap, err = json.Marshal(task); err != nil {
			return nil, fmt.Errorf("postgres: encoding task %q: %w", taskID, err)
		}
	}
	r.sql = s.q.append
	r.args = []any{taskID, scope.Tenant, scope.Owner, after, task.ContextID, int32(st.State), st.Timestamp.UnixMilli(), last, s.self.ID, snap,
		seqs, payloads, tail, pushcode.IdleMS, msgIDs, digests, time.Now().UnixMilli(), pushcode.DueSince(time.Now())}
	return r, nil
}

// Update implements [store.Store], in a transaction of its own, apart
// from the group commit of Appends: it locks the task's row (FOR UPDATE),
// which holds off the Appends to the task from every process until it
// commits, reads the events after after, calls fn, and runs the append
// statement of Append, which then cannot conflict, with the task's
// snapshot, and the notification. fn runs once, on the caller's
// goroutine, while the row is locked.
func (s *Store) Update(ctx context.Context, scope store.Scope, taskID string, after int64, fn func(since []store.Event) ([]store.Event, *a2a.Task, error)) (err error) {
	defer classifyErr(&err)
	if after < 0 {
		return fmt.Errorf("postgres: Update of task %q after negative seq %d", taskID, after)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: updating task %q: %w", taskID, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // after Commit, a no-op
	var seq int64
	switch err := tx.QueryRow(ctx, s.q.lockTask, taskID, scope.Tenant, scope.Owner).Scan(&seq); {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("postgres: task %q: %w", taskID, store.ErrNotFound)
	case err != nil:
		return fmt.Errorf("postgres: updating task %q: %w", taskID, err)
	case after > seq:
		return fmt.Errorf("postgres: Update of task %q after seq %d, which its log (at %d) has not reached", taskID, after, seq)
	}
	since, err := readEvents(ctx, tx, s.q.events, scope, taskID, after)
	if err != nil {
		return err
	}
	events, task, err := fn(since)
	if err != nil || len(events) == 0 {
		return err
	}
	r, err := s.prepareAppend(scope, taskID, seq, events, task, true)
	if err != nil {
		return err
	}
	var snapBytes, tailBytes, cur *int64
	if err := tx.QueryRow(ctx, r.sql, r.args...).Scan(&snapBytes, &tailBytes, &cur); err != nil {
		if used := messageUsed(err, r.msgIDs); used != nil {
			tx.Rollback(context.WithoutCancel(ctx))
			return s.withUsedRecord(ctx, scope, used)
		}
		return fmt.Errorf("postgres: updating task %q: %w", taskID, err)
	}
	if snapBytes == nil || tailBytes == nil {
		// The row is locked: nothing else can have moved it.
		return fmt.Errorf("postgres: updating task %q: the append found the locked task changed", taskID)
	}
	for _, note := range notifications([]*appendReq{r}, []error{nil}) {
		if _, err := tx.Exec(ctx, "SELECT pg_notify($1, $2)", s.channel, note); err != nil {
			return fmt.Errorf("postgres: updating task %q: %w", taskID, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: committing the update of task %q: %w", taskID, err)
	}
	s.sizes.put(taskID, r.last, int(*snapBytes), int(*tailBytes), task.Status.State.Terminal())
	s.commits.Add(1)
	s.appended.Add(1)
	return nil
}

// taskMember is how the JSON of a StreamResponse that holds a task starts.
var taskMember = []byte(`{"task":`)

// createSnapshot returns the snapshot that creates a task. When the task
// is created by the one event that carries it, the snapshot is in that
// event's JSON, {"task":...}, and need not be encoded again.
func createSnapshot(task *a2a.Task, events []store.Event, payloads [][]byte) ([]byte, error) {
	if len(events) == 1 {
		if t, ok := events[0].Payload.(*a2a.Task); ok && t == task {
			p := payloads[0]
			if bytes.HasPrefix(p, taskMember) && p[len(p)-1] == '}' {
				return p[len(taskMember) : len(p)-1], nil
			}
		}
	}
	return json.Marshal(task)
}

func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

// Get implements [store.Store]: the stored snapshot, with the events
// after it folded in ([store.Fold]), all read by one statement.
func (s *Store) Get(ctx context.Context, scope store.Scope, taskID string) (_ *a2a.Task, _ int64, err error) {
	defer classifyErr(&err)
	var (
		snap         []byte
		seq, snapSeq int64
		tail         [][]byte
	)
	err = s.pool.QueryRow(ctx, s.q.get, taskID, scope.Tenant, scope.Owner).Scan(&snap, &seq, &snapSeq, &tail)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, 0, fmt.Errorf("postgres: task %q: %w", taskID, store.ErrNotFound)
	case err != nil:
		return nil, 0, fmt.Errorf("postgres: reading task %q: %w", taskID, err)
	}
	t, err := foldTask(snap, seq, snapSeq, tail)
	if err != nil {
		return nil, 0, fmt.Errorf("postgres: task %q: %w", taskID, err)
	}
	return t, seq, nil
}

// foldTask decodes a stored snapshot, at seq snapSeq, and the payloads of
// the events after it, up to seq, and returns their fold.
func foldTask(snap []byte, seq, snapSeq int64, tail [][]byte) (*a2a.Task, error) {
	if int64(len(tail)) != seq-snapSeq {
		return nil, fmt.Errorf("the log holds %d events after the snapshot at seq %d, want %d", len(tail), snapSeq, seq-snapSeq)
	}
	t, err := decodeTask(snap)
	if err != nil {
		return nil, err
	}
	if len(tail) == 0 {
		return t, nil
	}
	evs := make([]store.Event, len(tail))
	for i, p := range tail {
		if evs[i].Payload, err = decodeEvent(p); err != nil {
			return nil, fmt.Errorf("event %d: %w", snapSeq+int64(i)+1, err)
		}
	}
	return store.Fold(t, evs), nil
}

func decodeTask(b []byte) (*a2a.Task, error) {
	var t a2a.Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("decoding stored snapshot: %w", err)
	}
	return &t, nil
}

func decodeEvent(b []byte) (a2a.Event, error) {
	var r a2a.StreamResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decoding stored event: %w", err)
	}
	return r.Event, nil
}

// Events implements [store.Store]. The task check and the events come from
// one statement, and so from one snapshot of the database. Each event's
// Data is the payload as stored.
func (s *Store) Events(ctx context.Context, scope store.Scope, taskID string, after int64) (_ []store.Event, err error) {
	defer classifyErr(&err)
	return readEvents(ctx, s.pool, s.q.events, scope, taskID, after)
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// readEvents runs query, the events statement, on q.
func readEvents(ctx context.Context, q querier, query string, scope store.Scope, taskID string, after int64) ([]store.Event, error) {
	rows, err := q.Query(ctx, query, taskID, scope.Tenant, scope.Owner, after)
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
		ev, err := decodeEvent(payload)
		if err != nil {
			return nil, fmt.Errorf("postgres: event %d of task %q: %w", *seq, taskID, err)
		}
		evs = append(evs, store.Event{Seq: *seq, Payload: ev, Data: payload})
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
// matches the filters, beside the total, and for each task of the page
// the events after its snapshot, which List folds in. Without a context or
// time filter the total is read from the counters (task_counts plus the
// deltas not yet compacted), whatever the number of tasks; with one, it is
// a count over the filters, a range scan of the same index.
func (s *Store) List(ctx context.Context, scope store.Scope, q store.ListQuery) (_ store.ListResult, err error) {
	defer classifyErr(&err)
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
		var (
			snap         []byte
			seq, snapSeq *int64
			tail         [][]byte
		)
		if err := rows.Scan(&res.Total, &snap, &seq, &snapSeq, &tail); err != nil {
			return store.ListResult{}, fmt.Errorf("postgres: listing tasks: %w", err)
		}
		if snap == nil {
			continue // no task on this page
		}
		if len(res.Tasks) == q.Limit {
			res.More = true
			continue
		}
		t, err := foldTask(snap, *seq, *snapSeq, tail)
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
// column is the total; then come, for each task of the page in order (plus
// one more if more follow), its snapshot, its seq, the seq of its snapshot
// and the payloads of the events after that, in order; or a single row of
// NULLs if the page is empty. The events are looked up for the rows of the
// page only.
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
	sql := "SELECT c.total, p.snapshot, p.seq, p.snap_seq, ARRAY(SELECT e.payload FROM " + s.q.log + " e" +
		" WHERE e.task_id = p.id AND e.seq > p.snap_seq AND e.seq <= p.seq ORDER BY e.seq)" +
		" FROM (" + s.totalSQL(q, filter) + ") c" +
		" LEFT JOIN LATERAL (SELECT snapshot, status_ts, id, seq, coalesce(snap_seq, seq) AS snap_seq FROM " + s.q.tasks +
		" WHERE " + page + " ORDER BY status_ts DESC, id DESC LIMIT " + limit + ") p ON true" +
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
