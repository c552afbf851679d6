package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
)

// ErrClosed is returned by the operations of a closed Store.
var ErrClosed = errors.New("sqlite: store is closed")

// A writeFunc is one write request: it runs inside the writer's
// transaction, within a savepoint of its own, so that its error undoes
// what it did and nothing else.
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
// one commit (group commit). It returns when the store closes.
func (s *Store) writer() {
	defer close(s.writerDone)
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
	gather:
		for len(batch) < s.maxBatch {
			select {
			case r := <-s.reqs:
				batch = append(batch, r)
			default:
				break gather
			}
		}
		results = s.runBatch(batch, results[:0])
		for i, r := range batch {
			if r.state.Load() == taken {
				r.done <- results[i]
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
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return fail(fmt.Errorf("sqlite: beginning a write transaction on %s: %w", s.path, err))
	}
	w := &wtx{ctx: ctx, tx: tx, bound: make(map[*sql.Stmt]*sql.Stmt)}
	for i, r := range batch {
		if r.state.Load() != taken {
			continue
		}
		if ran == 1 {
			// Alone in the transaction: a failure rolls all of it back,
			// and no savepoint is needed.
			if results[i] = r.fn(w); results[i] != nil {
				tx.Rollback()
				return results
			}
			break
		}
		if _, err := w.exec(s.ws.savepoint); err != nil {
			tx.Rollback()
			return fail(fmt.Errorf("sqlite: write on %s: %w", s.path, err))
		}
		results[i] = r.fn(w)
		if results[i] != nil {
			if _, err := w.exec(s.ws.rollbackTo); err != nil {
				// The failure ended the whole transaction (SQLite does
				// that on a full disk or an I/O error): every request of
				// the batch fails with it.
				tx.Rollback()
				return fail(fmt.Errorf("sqlite: write on %s: %w (after %w)", s.path, err, results[i]))
			}
		}
		if _, err := w.exec(s.ws.release); err != nil {
			tx.Rollback()
			return fail(fmt.Errorf("sqlite: write on %s: %w", s.path, err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(fmt.Errorf("sqlite: committing writes to %s: %w", s.path, err))
	}
	s.commits.Add(1)
	for i, r := range batch {
		if r.append && r.state.Load() == taken && results[i] == nil {
			s.appends.Add(1)
		}
	}
	return results
}

// wtx is the writer's transaction, as a request sees it. Its statements
// are the writer pool's prepared statements, bound to the transaction on
// first use.
type wtx struct {
	ctx   context.Context
	tx    *sql.Tx
	bound map[*sql.Stmt]*sql.Stmt
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
	return w.stmt(st).ExecContext(w.ctx, args...)
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
