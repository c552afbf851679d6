package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/internal/taskjson"
)

var _ store.Importer = (*Store)(nil)

// Rows per multi-row INSERT of Import. They keep each statement's
// parameters (3 + 6 per task, 2 per event or snapshot) far below SQLite's
// limit of 32766 while amortizing the cost of a statement over many rows.
const (
	importTaskRows  = 200
	importEventRows = 500
)

// Import implements [store.Importer]. The tasks are encoded first, on
// every CPU; then the writer runs the whole import as one write request,
// in one transaction, inserting the tasks, their first events and, for
// those whose snapshot is due as Append would find it (a terminal or
// interrupted task: [store.SnapshotDue]), their snapshots, with prepared
// multi-row statements, and adding them to the kept counts. The other
// tasks fold from their first event. Other writes wait while it runs (two to
// three seconds per 100,000 small tasks on two CPUs), so a busy store had
// better import in smaller calls. An id that exists makes the insert fail,
// and the transaction (or the request's savepoint) undoes everything
// Import did.
func (s *Store) Import(ctx context.Context, scope store.Scope, tasks []*a2a.Task) error {
	if err := store.CheckImport(tasks); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if len(tasks) == 0 {
		return ctx.Err()
	}
	enc, err := taskjson.EncodeAll(tasks)
	if err != nil {
		return fmt.Errorf("sqlite: importing %d tasks: %w", len(tasks), err)
	}
	err = s.write(ctx, false, func(w *wtx) error {
		return s.importTasks(w, scope, tasks, enc)
	})
	if err != nil {
		return fmt.Errorf("sqlite: importing %d tasks: %w", len(tasks), err)
	}
	return nil
}

// importTasks inserts the tasks and their events in the writer's
// transaction.
func (s *Store) importTasks(w *wtx, scope store.Scope, tasks []*a2a.Task, enc []taskjson.Encoded) error {
	// The tasks get the rids after the largest: the writer's
	// transaction holds the write lock, so nobody else takes them.
	var maxRID int64
	if err := w.queryRow(s.ws.maxRID).Scan(&maxRID); err != nil {
		return fmt.Errorf("creating tasks: %w", err)
	}
	rid := func(i int) int64 { return maxRID + 1 + int64(i) }
	// The tasks that get a snapshot row, and the size of the snapshot
	// each one folds from: that row, or its first event.
	var snapped []int
	snapBytes := make([]int, len(tasks))
	for i, t := range tasks {
		snapBytes[i] = len(enc[i].Payload)
		if store.SnapshotDue(t.Status.State, len(enc[i].Payload), 0) {
			snapped = append(snapped, i)
			snapBytes[i] = len(enc[i].Snapshot)
		}
	}
	// Tasks: ?1, ?2 and ?3 are the tenant, the owner and the runner,
	// shared by every row; then six parameters per task.
	fixed := []any{scope.Tenant, scope.Owner, s.self.ID}
	err := inChunks(w, len(tasks), importTaskRows, taskValues, func(args []any, lo, hi int) []any {
		args = append(args, fixed...)
		for i := lo; i < hi; i++ {
			st := tasks[i].Status
			args = append(args, rid(i), tasks[i].ID, tasks[i].ContextID, int64(st.State), st.Timestamp.UnixMilli(), snapBytes[i])
		}
		return args
	}, func(lo, hi int, err error) error {
		if id, ok := existing(w, tasks[lo:hi]); ok {
			return fmt.Errorf("task %q exists: %w", id, store.ErrConflict)
		}
		return fmt.Errorf("creating tasks: %w", err)
	})
	if err != nil {
		return err
	}
	err = inChunks(w, len(tasks), importEventRows, eventValues, func(args []any, lo, hi int) []any {
		for i := lo; i < hi; i++ {
			args = append(args, rid(i), enc[i].Payload)
		}
		return args
	}, func(_, _ int, err error) error {
		return fmt.Errorf("adding events: %w", err)
	})
	if err != nil {
		return err
	}
	err = inChunks(w, len(snapped), importEventRows, snapshotValues, func(args []any, lo, hi int) []any {
		for _, i := range snapped[lo:hi] {
			args = append(args, rid(i), enc[i].Snapshot)
		}
		return args
	}, func(_, _ int, err error) error {
		return fmt.Errorf("adding snapshots: %w", err)
	})
	if err != nil {
		return err
	}
	// The kept counts: one update per state.
	perState := make(map[a2a.TaskState]int64)
	for _, t := range tasks {
		perState[t.Status.State]++
	}
	for _, st := range slices.Sorted(maps.Keys(perState)) {
		w.addTasks(scope, int64(st), perState[st])
	}
	return nil
}

// inChunks runs a multi-row INSERT on rows [0, n), size rows at a time:
// insertSQL(k) is the statement for k rows, args appends the arguments of
// rows [lo, hi), and fail makes the error of a chunk that failed. The
// statement for full chunks is prepared once.
func inChunks(w *wtx, n, size int, insertSQL func(rows int) string,
	args func(dst []any, lo, hi int) []any, fail func(lo, hi int, err error) error) error {
	var full *sql.Stmt
	if n >= size {
		var err error
		if full, err = w.tx.PrepareContext(w.ctx, insertSQL(size)); err != nil {
			return err
		}
		defer full.Close()
	}
	buf := make([]any, 0, 3+6*size)
	for lo := 0; lo < n; lo += size {
		hi := min(lo+size, n)
		buf = args(buf[:0], lo, hi)
		var err error
		if hi-lo == size {
			_, err = w.execTx(full, "", buf...)
		} else {
			_, err = w.execTx(nil, insertSQL(hi-lo), buf...)
		}
		if err != nil {
			return fail(lo, hi, err)
		}
	}
	clear(buf) // let the snapshots go
	return nil
}

// taskValues returns the INSERT of rows tasks: see importTasks for its
// parameters. Seq is 1, and no events follow the snapshot. The shared
// parameters come first in each row, so that the others, anonymous,
// number from 4 in order: SQLite keeps a list of numbered parameters that
// a driver searches for each one it binds, so numbering them all would
// make binding quadratic in their number.
func taskValues(rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO tasks (tenant, owner, runner, seq, tail_bytes, rid, id, context_id, state, status_ts, snap_bytes) VALUES ")
	b.WriteString(strings.TrimSuffix(strings.Repeat("(?1, ?2, ?3, 1, 0, ?, ?, ?, ?, ?, ?),", rows), ","))
	return b.String()
}

// snapshotValues returns the INSERT of rows snapshots at seq 1: a rid and
// a snapshot each.
func snapshotValues(rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO snapshots (seq, rid, snapshot) VALUES ")
	b.WriteString(strings.TrimSuffix(strings.Repeat("(1, ?, ?),", rows), ","))
	return b.String()
}

// eventValues returns the INSERT of rows first events: a rid and a
// payload each.
func eventValues(rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO events (rid, seq, payload) VALUES ")
	b.WriteString(strings.TrimSuffix(strings.Repeat("(?, 1, ?),", rows), ","))
	return b.String()
}

// existing returns the id of one of tasks that is in the tasks table, as
// the writer's transaction sees it. An INSERT that failed on a duplicate
// id has undone its own rows (SQLite's default ABORT), so a hit is a task
// that existed before the import.
func existing(w *wtx, tasks []*a2a.Task) (string, bool) {
	args := make([]any, len(tasks))
	for i, t := range tasks {
		args[i] = t.ID
	}
	var id string
	err := w.tx.QueryRowContext(w.ctx, "SELECT id FROM tasks WHERE id IN ("+placeholders(len(tasks))+") LIMIT 1", args...).Scan(&id)
	return id, err == nil
}
