package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/internal/pushcode"
)

// errSnapshotDue is what the writer answers an Append that must write the
// task's snapshot (store.SnapshotDue) but came without it; Append then
// encodes the snapshot and asks again. Nothing was written.
var errSnapshotDue = errors.New("sqlite: the snapshot is due")

// Append implements [store.Store]. The events are encoded first (unless
// they come with their Data); then the writer runs the Append, with others
// that are waiting, in one transaction. When Append returns nil, that
// transaction has committed. An empty events is an error.
//
// The snapshot is written only when [store.SnapshotDue] says so: for a
// task that reaches a terminal or interrupted state, Append knows that
// before the writer runs, and encodes the snapshot first; otherwise it
// depends on the sizes the task's row keeps, which the writer reads, and
// the rare Append that finds the snapshot due encodes it and runs again.
// Either way the encoding happens on the caller's goroutine, never on the
// writer's, which all Appends share.
func (s *Store) Append(ctx context.Context, scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task) error {
	a, err := encodeAppend(scope, taskID, after, events, task)
	if err != nil {
		return err
	}
	snapDue := store.SnapshotDue(task.Status.State, 0, 0)
	if after == 0 {
		// A new task folds from its first event, the task itself, and
		// needs a snapshot of its own only when its log outweighs that
		// event (or when the first event is not the task, which no
		// server does), whatever its state: a task that ends in the
		// Append that creates it (a blocking SendMessage, whose whole
		// log the server stores at once) has a short log, which a read
		// folds for about what decoding a snapshot would cost, and
		// encoding and writing the snapshot was a tenth of the store's
		// time per such task. Its next Append, if any, writes the
		// snapshot as SnapshotDue says.
		_, isTask := events[0].Payload.(*a2a.Task)
		var tail int
		for _, p := range a.payloads[1:] {
			tail += len(p)
		}
		snapDue = !isTask || store.SnapshotDue(a2a.TaskStateWorking, len(a.payloads[0]), tail) // the size rule alone
	}
	for {
		if snapDue && a.snap == nil {
			b, err := json.Marshal(task)
			if err != nil {
				return fmt.Errorf("sqlite: encoding task %q: %w", taskID, err)
			}
			a.snap = b
		}
		err := s.write(ctx, true, func(w *wtx) error { return s.appendTx(w, a) })
		if err == nil && s.feed.Active() {
			s.feed.Send(store.Change{TaskID: taskID, Seq: after + int64(len(events))})
		}
		if !errors.Is(err, errSnapshotDue) || a.snap != nil {
			return err
		}
		snapDue = true
	}
}

// encodeAppend checks the events of an Append after seq after and
// encodes them.
func encodeAppend(scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task) (*appendReq, error) {
	if task == nil {
		return nil, fmt.Errorf("sqlite: Append to task %q with no snapshot", taskID)
	}
	if err := store.CheckAppend(after, events); err != nil {
		return nil, fmt.Errorf("sqlite: task %q: %w", taskID, err)
	}
	a := &appendReq{scope: scope, taskID: taskID, after: after, task: task, payloads: make([][]byte, len(events))}
	for i, ev := range events {
		b, err := ev.Encode()
		if err != nil {
			return nil, fmt.Errorf("sqlite: encoding event %d of task %q: %w", ev.Seq, taskID, err)
		}
		a.payloads[i] = b
	}
	msgs, err := messageRegs(events)
	if err != nil {
		return nil, fmt.Errorf("sqlite: Append to task %q: %w", taskID, err)
	}
	a.msgs = msgs
	return a, nil
}

// appendReq is an Append, encoded.
type appendReq struct {
	scope    store.Scope
	taskID   string
	after    int64
	task     *a2a.Task
	payloads [][]byte
	snap     []byte       // the encoded task, when the snapshot is to be written
	msgs     []messageReg // the message ids to record (messages.go)
}

// appendTx runs an Append in the writer's transaction. It writes nothing
// before it knows that the Append will succeed, but for a failure of
// SQLite itself.
func (s *Store) appendTx(w *wtx, a *appendReq) error {
	st := a.task.Status
	state, ts := int64(st.State), st.Timestamp.UnixMilli()
	last := a.after + int64(len(a.payloads))
	var added int
	for _, p := range a.payloads {
		added += len(p)
	}
	var rid int64
	if a.after == 0 {
		// The task folds from its first event, or from its snapshot.
		snapBytes, tail := len(a.payloads[0]), added-len(a.payloads[0])
		if a.snap != nil {
			snapBytes, tail = len(a.snap), 0
		}
		if err := s.registerTx(w, a); err != nil {
			return err // nothing written if the id is in use
		}
		res, err := w.exec(s.ws.createTask,
			a.taskID, a.scope.Tenant, a.scope.Owner, a.task.ContextID, state, ts, last, s.self.ID, snapBytes, tail)
		n, err := affected(res, err)
		if err != nil {
			return fmt.Errorf("sqlite: creating task %q: %w", a.taskID, err)
		}
		if n == 0 {
			return fmt.Errorf("sqlite: task %q exists: %w", a.taskID, store.ErrConflict)
		}
		if rid, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("sqlite: creating task %q: %w", a.taskID, err)
		}
		w.addTasks(a.scope, state, 1)
	} else {
		var (
			seq, oldState, oldTS, snapBytes, tail int64
			oldContext                            string
		)
		err := w.queryRow(s.ws.readTask, a.taskID, a.scope.Tenant, a.scope.Owner).
			Scan(&rid, &seq, &oldState, &oldTS, &oldContext, &snapBytes, &tail)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("sqlite: task %q: %w", a.taskID, store.ErrNotFound)
		case err != nil:
			return fmt.Errorf("sqlite: appending to task %q: %w", a.taskID, err)
		case seq != a.after:
			return fmt.Errorf("sqlite: task %q is at seq %d, not %d: %w", a.taskID, seq, a.after, store.ErrConflict)
		}
		tail += int64(added)
		if a.snap == nil && store.SnapshotDue(st.State, int(snapBytes), int(tail)) {
			return errSnapshotDue
		}
		if a.snap != nil {
			snapBytes, tail = int64(len(a.snap)), 0
		}
		if err := s.registerTx(w, a); err != nil {
			return err
		}
		n, err := affected(w.exec(s.ws.moveTask, last, s.self.ID, snapBytes, tail, rid, a.after))
		switch {
		case err != nil:
			return fmt.Errorf("sqlite: appending to task %q: %w", a.taskID, err)
		case n != 1:
			return fmt.Errorf("sqlite: appending to task %q: %d rows updated, want 1", a.taskID, n)
		}
		// The indexed columns change only with the status.
		if oldState != state || oldTS != ts || oldContext != a.task.ContextID {
			if _, err := w.exec(s.ws.setStatus, a.task.ContextID, state, ts, rid); err != nil {
				return fmt.Errorf("sqlite: appending to task %q: %w", a.taskID, err)
			}
		}
		if oldState != state {
			w.addTasks(a.scope, oldState, -1)
			w.addTasks(a.scope, state, 1)
		}
	}
	if a.snap != nil {
		if _, err := w.exec(s.ws.putSnapshot, rid, last, a.snap); err != nil {
			return fmt.Errorf("sqlite: storing the snapshot of task %q: %w", a.taskID, err)
		}
	}
	// The events, up to maxEventRows a statement.
	args := make([]any, 0, 3*min(len(a.payloads), maxEventRows))
	for lo := 0; lo < len(a.payloads); lo += maxEventRows {
		hi := min(lo+maxEventRows, len(a.payloads))
		args = args[:0]
		for i := lo; i < hi; i++ {
			args = append(args, rid, a.after+int64(i)+1, a.payloads[i])
		}
		if _, err := w.exec(s.ws.insertEvents[hi-lo-1], args...); err != nil {
			return fmt.Errorf("sqlite: appending events %d to %d to task %q: %w", a.after+int64(lo)+1, a.after+int64(hi), a.taskID, err)
		}
	}
	if a.after > 0 {
		// The log grew: wake the task's idle push configs, in the
		// same transaction (and savepoint) as the events. A new
		// task has no configs.
		if _, err := w.exec(s.ws.wakePush, a.taskID, pushcode.IdleMS, pushcode.DueSince(time.Now())); err != nil {
			return fmt.Errorf("sqlite: waking the push configs of task %q: %w", a.taskID, err)
		}
	}
	return nil
}

// getSQL reads a task for Get (see readStmts).
const getSQL = `SELECT 0, t.seq, s.seq, s.snapshot FROM tasks t
	LEFT JOIN snapshots s ON s.rid = t.rid
	WHERE t.id = ?1 AND t.tenant = ?2 AND t.owner = ?3
UNION ALL
SELECT 1, e.seq, NULL, e.payload FROM tasks t
	LEFT JOIN snapshots s ON s.rid = t.rid
	JOIN events e ON e.rid = t.rid AND e.seq > coalesce(s.seq, 0) AND e.seq <= t.seq
	WHERE t.id = ?1 AND t.tenant = ?2 AND t.owner = ?3`

// Get implements [store.Store]: the task's snapshot, with the events after
// it folded in ([store.Fold]), read in one statement.
func (s *Store) Get(ctx context.Context, scope store.Scope, taskID string) (*a2a.Task, int64, error) {
	rows, err := s.rs.get.QueryContext(ctx, taskID, scope.Tenant, scope.Owner)
	if err != nil {
		return nil, 0, s.readErr(fmt.Errorf("sqlite: reading task %q: %w", taskID, err))
	}
	defer rows.Close()
	var (
		found bool
		seq   int64
		from  sql.NullInt64
		snap  []byte
		tail  []rawEvent
	)
	for rows.Next() {
		var (
			kind    int
			n       int64
			snapSeq sql.NullInt64
			b       []byte
		)
		if err := rows.Scan(&kind, &n, &snapSeq, &b); err != nil {
			return nil, 0, fmt.Errorf("sqlite: reading task %q: %w", taskID, err)
		}
		if kind == 0 {
			found, seq, from, snap = true, n, snapSeq, b
		} else {
			tail = append(tail, rawEvent{n, b})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, s.readErr(fmt.Errorf("sqlite: reading task %q: %w", taskID, err))
	}
	if !found {
		return nil, 0, fmt.Errorf("sqlite: task %q: %w", taskID, store.ErrNotFound)
	}
	t, err := foldTask(snap, from.Int64, seq, tail)
	if err != nil {
		return nil, 0, fmt.Errorf("sqlite: task %q: %w", taskID, err)
	}
	return t, seq, nil
}

// rawEvent is an event as the events table keeps it.
type rawEvent struct {
	seq     int64
	payload []byte
}

// foldTask returns the task at seq: snap, the snapshot at seq from (nil
// when the task has no snapshot row: it then folds from its first event,
// the task itself, and from is 0), with the events of tail, those after
// from, folded in. Their seqs must run from+1 ... seq.
func foldTask(snap []byte, from, seq int64, tail []rawEvent) (*a2a.Task, error) {
	if snap != nil && len(tail) == 0 && from == seq {
		return decodeTask(snap) // nothing to fold: a finished task
	}
	slices.SortFunc(tail, func(a, b rawEvent) int { return cmp.Compare(a.seq, b.seq) })
	if int64(len(tail)) != seq-from {
		return nil, fmt.Errorf("%d events after seq %d, want %d", len(tail), from, seq-from)
	}
	evs := make([]store.Event, len(tail))
	for i, r := range tail {
		if r.seq != from+int64(i)+1 {
			return nil, fmt.Errorf("event %d where %d should be", r.seq, from+int64(i)+1)
		}
		ev, err := decodeEvent(r.seq, r.payload)
		if err != nil {
			return nil, err
		}
		evs[i] = ev
	}
	if snap != nil {
		base, err := decodeTask(snap)
		if err != nil {
			return nil, err
		}
		return store.Fold(base, evs), nil
	}
	var base *a2a.Task
	if len(evs) > 0 && evs[0].Seq == 1 {
		base, _ = evs[0].Payload.(*a2a.Task)
	}
	if base == nil {
		return nil, errors.New("the task has no snapshot, and its first event is not the task")
	}
	return store.Fold(base, evs[1:]), nil
}

// decodeEvent decodes a payload of the events table. The event keeps the
// stored bytes as its Data.
func decodeEvent(seq int64, payload []byte) (store.Event, error) {
	var sr a2a.StreamResponse
	if err := json.Unmarshal(payload, &sr); err != nil {
		return store.Event{}, fmt.Errorf("decoding event %d: %w", seq, err)
	}
	return store.Event{Seq: seq, Payload: sr.Event, Data: payload}, nil
}

// Events implements [store.Store]. Each event's Data is its stored
// payload.
func (s *Store) Events(ctx context.Context, scope store.Scope, taskID string, after int64) ([]store.Event, error) {
	rows, err := s.rs.events.QueryContext(ctx, after, taskID, scope.Tenant, scope.Owner)
	if err != nil {
		return nil, s.readErr(fmt.Errorf("sqlite: reading events of task %q: %w", taskID, err))
	}
	evs, err := scanEvents(rows, taskID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, s.readErr(err)
	}
	return evs, err
}

// eventsSQL reads the events of a task after a seq: one row with a NULL
// seq when the task exists but has none, no row when it does not exist.
const eventsSQL = `SELECT e.seq, e.payload FROM tasks t
	LEFT JOIN events e ON e.rid = t.rid AND e.seq > ?
	WHERE t.id = ? AND t.tenant = ? AND t.owner = ?
	ORDER BY e.seq`

// scanEvents reads the rows of eventsSQL and closes them.
func scanEvents(rows *sql.Rows, taskID string) ([]store.Event, error) {
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
		ev, err := decodeEvent(seq.Int64, payload)
		if err != nil {
			return nil, fmt.Errorf("sqlite: task %q: %w", taskID, err)
		}
		evs = append(evs, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: reading events of task %q: %w", taskID, err)
	}
	if !found {
		return nil, fmt.Errorf("sqlite: task %q: %w", taskID, store.ErrNotFound)
	}
	return evs, nil
}

// Update implements [store.Store]. It is one write request: the writer
// reads the events after after and calls fn in its transaction, which
// holds SQLite's write lock, so that no other process either appends in
// between. fn runs on the writer's goroutine, and the writes of every task
// wait for it. The task's snapshot is written with the events, whatever
// their size: Update is rare, and reads of the task then fold nothing.
func (s *Store) Update(ctx context.Context, scope store.Scope, taskID string, after int64, fn func(since []store.Event) ([]store.Event, *a2a.Task, error)) error {
	if after < 0 {
		return fmt.Errorf("sqlite: Update of task %q after negative seq %d", taskID, after)
	}
	var last int64
	err := s.write(ctx, true, func(w *wtx) error {
		last = 0
		var (
			rid, seq, state, ts, snapBytes, tail int64
			contextID                            string
		)
		err := w.queryRow(s.ws.readTask, taskID, scope.Tenant, scope.Owner).Scan(&rid, &seq, &state, &ts, &contextID, &snapBytes, &tail)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("sqlite: task %q: %w", taskID, store.ErrNotFound)
		case err != nil:
			return fmt.Errorf("sqlite: updating task %q: %w", taskID, err)
		case after > seq:
			return fmt.Errorf("sqlite: Update of task %q after seq %d, which its log (at %d) has not reached", taskID, after, seq)
		}
		rows, err := w.query(eventsSQL, after, taskID, scope.Tenant, scope.Owner)
		if err != nil {
			return fmt.Errorf("sqlite: reading events of task %q: %w", taskID, err)
		}
		since, err := scanEvents(rows, taskID)
		if err != nil {
			return err
		}
		events, task, err := fn(since)
		if err != nil || len(events) == 0 {
			return err
		}
		end := seq
		a, err := encodeAppend(scope, taskID, end, events, task)
		if err != nil {
			return err
		}
		if a.snap, err = json.Marshal(task); err != nil {
			return fmt.Errorf("sqlite: encoding task %q: %w", taskID, err)
		}
		if err := s.appendTx(w, a); err != nil {
			return err
		}
		last = end + int64(len(events))
		return nil
	})
	if err == nil && last > 0 && s.feed.Active() {
		s.feed.Send(store.Change{TaskID: taskID, Seq: last})
	}
	return err
}

// List implements [store.Store]. The page, the events folded into its
// tasks and the total are read in one read transaction, so they agree.
// Each combination of filters is a range scan of one of the tasks table's
// list indexes, in order: no page costs more than the first (a state
// filter passes over the index entries of other states). Each task of the
// page comes with its snapshot, and the events after it, if any, are one
// range of the events table, read for the whole page in one statement
// (tailsSQL). The total comes from the kept counts when the
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
	type listed struct {
		rid     int64
		id      string
		seq     int64
		snapSeq sql.NullInt64
		snap    []byte
	}
	var found []listed
	for rows.Next() {
		if len(found) == q.Limit {
			res.More = true
			break
		}
		var l listed
		if err := rows.Scan(&l.rid, &l.id, &l.seq, &l.snapSeq, &l.snap); err != nil {
			return store.ListResult{}, fmt.Errorf("sqlite: listing tasks: %w", err)
		}
		found = append(found, l)
	}
	if err := rows.Err(); err != nil {
		return store.ListResult{}, s.readErr(fmt.Errorf("sqlite: listing tasks: %w", err))
	}
	rows.Close()
	res.Tasks = make([]*a2a.Task, 0, len(found))
	// The events after the snapshot of each task of the page that has
	// some, in one statement.
	var ranges []byte
	for _, l := range found {
		if l.snapSeq.Int64 < l.seq {
			ranges = fmt.Appendf(append(ranges, ','), "[%d,%d,%d]", l.rid, l.snapSeq.Int64, l.seq)
		}
	}
	var tails map[int64][]rawEvent
	if ranges != nil {
		ranges[0] = '['
		if tails, err = readTails(ctx, tx.StmtContext(ctx, s.rs.tails), append(ranges, ']')); err != nil {
			return store.ListResult{}, s.readErr(fmt.Errorf("sqlite: listing tasks: %w", err))
		}
	}
	for _, l := range found {
		t, err := foldTask(l.snap, l.snapSeq.Int64, l.seq, tails[l.rid])
		if err != nil {
			return store.ListResult{}, fmt.Errorf("sqlite: listing tasks: task %q: %w", l.id, err)
		}
		res.Tasks = append(res.Tasks, t)
	}
	if err := tx.StmtContext(ctx, countStmt).QueryRowContext(ctx, countArgs...).Scan(&res.Total); err != nil {
		return store.ListResult{}, s.readErr(fmt.Errorf("sqlite: counting tasks: %w", err))
	}
	return res, nil
}

// tailsSQL reads the events of several tasks: ?1 is a JSON array of
// [rid, from, to], and the rows are the events of task rid with from <
// seq <= to. The ranges drive the join (CROSS JOIN keeps them outside),
// each one range of the events' primary key.
const tailsSQL = `SELECT e.rid, e.seq, e.payload FROM json_each(?1) r
	CROSS JOIN events e ON e.rid = r.value ->> 0 AND e.seq > r.value ->> 1 AND e.seq <= r.value ->> 2`

// readTails runs tailsSQL with ranges, and returns the events of each
// task by rid.
func readTails(ctx context.Context, st *sql.Stmt, ranges []byte) (map[int64][]rawEvent, error) {
	rows, err := st.QueryContext(ctx, ranges)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	tails := make(map[int64][]rawEvent)
	for rows.Next() {
		var (
			rid int64
			r   rawEvent
		)
		if err := rows.Scan(&rid, &r.seq, &r.payload); err != nil {
			return nil, err
		}
		tails[rid] = append(tails[rid], r)
	}
	return tails, rows.Err()
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
	// The index is named: with a state filter, SQLite could pick
	// tasks_state, in the right order too but holding every scope.
	from := "FROM tasks t INDEXED BY tasks_list"
	if q.ContextID != "" {
		from = "FROM tasks t INDEXED BY tasks_list_context"
	}
	var b strings.Builder
	b.WriteString(" WHERE t.tenant = ? AND t.owner = ?")
	args := []any{scope.Tenant, scope.Owner}
	if q.ContextID != "" {
		b.WriteString(" AND t.context_id = ?")
		args = append(args, q.ContextID)
	}
	if q.Status != a2a.TaskStateUnspecified {
		// Checked on the state that ends each index entry.
		b.WriteString(" AND t.state = ?")
		args = append(args, int64(q.Status))
	}
	if !q.StatusAfter.IsZero() {
		// status_ts >= StatusAfter, with status_ts in whole milliseconds.
		b.WriteString(" AND t.status_ts >= ?")
		args = append(args, ceilMilli(q.StatusAfter))
	}
	count = "SELECT count(*) " + from + b.String()
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
		b.WriteString(" AND (t.status_ts, t.id) < (?, ?)")
		pageArgs = append(pageArgs, ms, id)
	}
	b.WriteString(" ORDER BY t.status_ts DESC, t.id DESC LIMIT ?")
	pageArgs = append(pageArgs, q.Limit+1)
	// Each task with its snapshot, if it has one, and the seq of that.
	page = "SELECT t.rid, t.id, t.seq, s.seq, s.snapshot " + from + " LEFT JOIN snapshots s ON s.rid = t.rid" + b.String()
	return page, pageArgs, count, countArgs
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
// closed into one that says so, and marks an outage (classify).
func (s *Store) readErr(err error) error {
	select {
	case <-s.closing:
		return fmt.Errorf("%w: %w", ErrClosed, err)
	default:
		return classify(err)
	}
}
