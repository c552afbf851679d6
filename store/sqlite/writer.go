package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/goa2a/a2a/store"
)

// ErrClosed is returned by the operations of a closed Store.
var ErrClosed = errors.New("sqlite: store is closed")

// A writeFunc is one write request: it runs inside the writer's
// transaction, and its error undoes what it did and nothing else (see
// runRequests). It may run more than once, in transactions that are rolled
// back but the last: it must begin each run afresh.
type writeFunc func(w *wtx) error

// Request states. The caller and the writer race to move a queued request
// on: the writer takes it (and then always answers), or the caller,
// whose context ended, abandons it (and the writer skips it).
const (
	queued int32 = iota
	taken
	abandoned
)

// request is a write waiting for the writer goroutine.
type request struct {
	ctx    context.Context
	fn     writeFunc
	append bool // counts in Stats.Appends when it commits
	state  atomic.Int32
	done   chan error // buffered: the writer never waits for the caller
}

// write runs fn in the writer goroutine and returns its outcome once the
// transaction that ran it has committed (or failed).
//
// If ctx ends while the request waits in the queue, write returns
// ctx.Err() and fn never runs. Once the writer has taken the request, it
// runs to its end and write reports that outcome, even if ctx ends
// meanwhile: a write that returns ctx.Err() was not applied, and any other
// result is the truth.
func (s *Store) write(ctx context.Context, isAppend bool, fn writeFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &request{ctx: ctx, fn: fn, append: isAppend, done: make(chan error, 1)}
	select {
	case s.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closing:
		return ErrClosed
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		if r.state.CompareAndSwap(queued, abandoned) {
			return ctx.Err()
		}
		return <-r.done // the writer has it: wait for the commit
	}
}

// writer is the only user of the writer pool. It takes the first request
// that comes, then every request already waiting (up to maxBatch), runs
// them in one transaction and commits once: under load, many writes share
// one commit (group commit). It returns when the store closes, once the
// checkpointer it runs beside it has returned too.
func (s *Store) writer() {
	defer close(s.writerDone)
	checkpointerDone := make(chan struct{})
	go s.checkpointer(checkpointerDone)
	defer func() { <-checkpointerDone }()
	batch := make([]*request, 0, s.maxBatch)
	results := make([]error, 0, s.maxBatch)
	for {
		batch = batch[:0]
		select {
		case r := <-s.reqs:
			batch = append(batch, r)
		case <-s.closing:
			return
		}
		// Then every request already waiting, and those of the
		// goroutines that are about to send one: the writer yields its
		// CPU once before it closes the batch, so that callers woken by
		// the last commit, which on a busy machine wait for a CPU to
		// send their next write, make this commit rather than each
		// another. Without it, under load, commits took two or three
		// Appends each; with it, fifteen or more, for a third more
		// Appends a second. With nothing else to run, it costs nothing.
		for yielded := false; ; yielded = true {
		gather:
			for len(batch) < s.maxBatch {
				select {
				case r := <-s.reqs:
					batch = append(batch, r)
				default:
					break gather
				}
			}
			if yielded || len(batch) >= s.maxBatch {
				break
			}
			runtime.Gosched()
		}
		s.batchMu.Lock() // the checkpointer may hold it a moment (checkpoint.go)
		results = s.runBatch(batch, results[:0])
		s.batchMu.Unlock()
		for i, r := range batch {
			if r.state.Load() == taken {
				r.done <- classify(results[i])
			}
		}
		clear(batch) // let the requests go
	}
}

// runBatch runs the requests of batch in one transaction and returns the
// outcome of each, in order. Requests whose caller has gone are skipped.
func (s *Store) runBatch(batch []*request, results []error) []error {
	ran := 0
	for _, r := range batch {
		if r.ctx.Err() != nil && r.state.CompareAndSwap(queued, abandoned) {
			r.done <- r.ctx.Err() // the caller may not have noticed yet
		}
		if r.state.CompareAndSwap(queued, taken) {
			ran++
		}
		results = append(results, nil)
	}
	if ran == 0 {
		return results
	}
	s.writes.Add(int64(ran))
	// The writer's statements do not use the callers' contexts: a caller
	// that gives up must not interrupt a transaction shared with others.
	ctx := context.Background()
	fail := func(err error) []error {
		for i := range results {
			results[i] = err
		}
		return results
	}
	// First without savepoints (runRequests); if a request failed after
	// it had changed something, all again, each request in a savepoint.
	var tx *sql.Tx
	for savepoints := false; ; savepoints = true {
		var err error
		if tx, err = s.wdb.BeginTx(ctx, nil); err != nil {
			return fail(fmt.Errorf("sqlite: beginning a write transaction on %s: %w", s.path, err))
		}
		w := &wtx{ctx: ctx, tx: tx, bound: make(map[*sql.Stmt]*sql.Stmt),
			pending: make(map[countKey]int64), counts: make(map[countKey]int64)}
		again, err := s.runRequests(w, batch, results, ran, savepoints)
		switch {
		case err != nil:
			tx.Rollback()
			return fail(fmt.Errorf("sqlite: write on %s: %w", s.path, err))
		case again:
			tx.Rollback()
			s.reruns.Add(1)
			continue
		}
		if ran == 1 && slices.ContainsFunc(results, func(err error) bool { return err != nil }) {
			// Alone in the transaction: its failure rolls all of it back.
			tx.Rollback()
			return results
		}
		break
	}
	if err := tx.Commit(); err != nil {
		return fail(fmt.Errorf("sqlite: committing writes to %s: %w", s.path, err))
	}
	s.commits.Add(1)
	s.kickCheckpoint()
	for i, r := range batch {
		if r.append && r.state.Load() == taken && results[i] == nil {
			s.appends.Add(1)
		}
	}
	return results
}

// runRequests runs the requests of batch that the writer took (ran of
// them), in w, setting their results.
//
// A request alone needs no savepoint: if it fails, runBatch rolls the
// whole transaction back. Several need one each (savepoints), so that one
// that fails undoes itself alone; but a savepoint costs two statements and
// a copy of every page the request changes (SQLite keeps the page as it
// was, to go back to): 5 to 10 % of the writer's time under load. So
// without savepoints, the requests run as they are: one that fails without
// having changed any row (w.changes), with an error of the store's own (a
// conflict, a missing task, a snapshot due) rather than one of SQLite,
// left the transaction as it found it, and the others go on. If one fails otherwise, runRequests
// returns again, and runBatch runs the whole batch once more, in a new
// transaction, with savepoints: write requests may run more than once, and
// only the effects of their last run count. An error of a savepoint
// statement is the batch's, returned as err.
//
// Then it adds the changes of the kept counts that the requests that
// succeeded made (wtx.addTasks), one statement per scope and state.
func (s *Store) runRequests(w *wtx, batch []*request, results []error, ran int, savepoints bool) (again bool, err error) {
	for i, r := range batch {
		if r.state.Load() != taken {
			continue
		}
		clear(w.pending)
		if ran == 1 || !savepoints {
			w.changes = 0
			results[i] = r.fn(w)
			if ran > 1 && results[i] != nil && (w.changes > 0 || !ownError(results[i])) {
				return true, nil
			}
		} else {
			if _, err := w.exec(s.ws.savepoint); err != nil {
				return false, err
			}
			results[i] = r.fn(w)
			if results[i] != nil {
				if _, err := w.exec(s.ws.rollbackTo); err != nil {
					// The failure ended the whole transaction (SQLite
					// does that on a full disk or an I/O error): every
					// request of the batch fails with it.
					return false, fmt.Errorf("%w (after %w)", err, results[i])
				}
			}
			if _, err := w.exec(s.ws.release); err != nil {
				return false, err
			}
		}
		if results[i] == nil {
			for k, n := range w.pending {
				w.counts[k] += n
			}
		}
	}
	for k, n := range w.counts {
		if n == 0 {
			continue
		}
		if _, err := w.exec(s.ws.addCount, k.tenant, k.owner, k.state, n); err != nil {
			return false, fmt.Errorf("counting tasks: %w", err)
		}
	}
	return false, nil
}

// ownError reports whether err is a failure that a write request finds
// itself, with SQLite's transaction as it was, rather than one of SQLite.
func ownError(err error) bool {
	return errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) || errors.Is(err, errSnapshotDue) ||
		errors.Is(err, store.ErrMessageUsed)
}

// wtx is the writer's transaction, as a request sees it. Its statements
// are the writer pool's prepared statements, bound to the transaction on
// first use.
type wtx struct {
	ctx   context.Context
	tx    *sql.Tx
	bound map[*sql.Stmt]*sql.Stmt
	// changes counts the rows the current request's statements changed
	// (see runRequests). Every statement that writes goes through exec
	// or execTx, which count.
	changes int64
	// pending are the changes of the kept counts (task_counts) that the
	// current request makes, counts those of the requests that succeeded;
	// runRequests writes them once the requests have run.
	pending, counts map[countKey]int64
}

// countKey is a row of task_counts.
type countKey struct {
	tenant, owner string
	state         int64
}

// addTasks adds n tasks (n < 0 removes) to the kept count of a state in a
// scope: at the end of the batch, if the request succeeds.
func (w *wtx) addTasks(scope store.Scope, state, n int64) {
	w.pending[countKey{scope.Tenant, scope.Owner, state}] += n
}

func (w *wtx) stmt(st *sql.Stmt) *sql.Stmt {
	b, ok := w.bound[st]
	if !ok {
		b = w.tx.StmtContext(w.ctx, st)
		w.bound[st] = b
	}
	return b
}

// exec runs a prepared statement.
func (w *wtx) exec(st *sql.Stmt, args ...any) (sql.Result, error) {
	return w.count(w.stmt(st).ExecContext(w.ctx, args...))
}

// execTx runs a statement that is not prepared in advance, or one
// prepared on the transaction.
func (w *wtx) execTx(st *sql.Stmt, query string, args ...any) (sql.Result, error) {
	if st != nil {
		return w.count(st.ExecContext(w.ctx, args...))
	}
	return w.count(w.tx.ExecContext(w.ctx, query, args...))
}

// count adds the rows a statement changed to w.changes.
func (w *wtx) count(res sql.Result, err error) (sql.Result, error) {
	if err == nil {
		if n, nerr := res.RowsAffected(); nerr != nil || n > 0 {
			w.changes += max(n, 1)
		}
	}
	return res, err
}

// queryRow runs a prepared query that returns at most one row.
func (w *wtx) queryRow(st *sql.Stmt, args ...any) *sql.Row {
	return w.stmt(st).QueryRowContext(w.ctx, args...)
}

// query runs a statement that is not prepared in advance.
func (w *wtx) query(query string, args ...any) (*sql.Rows, error) {
	return w.tx.QueryContext(w.ctx, query, args...)
}

// affected returns the number of rows a statement changed.
func affected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
