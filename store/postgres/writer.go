package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/goa2a/a2a/store"
)

// Group commit. Appends do not each run their own transaction: they wait
// in a queue, and a few writer goroutines each take every append waiting
// (up to maxBatch), run them in one transaction, notify once and commit
// once. A commit waits on the disk, and PostgreSQL serializes the commits
// of transactions that notify (database-wide): under load, one commit
// then carries hundreds of appends instead of one.
//
// Each append of a batch is one statement that cannot fail for another's
// sake: a conditional UPDATE (or an INSERT ... ON CONFLICT DO NOTHING for
// a creation) with its events, counts and push wake in CTEs of the same
// statement, which reports whether it applied and, if not, why. The
// statements of a batch go in task id order, so that two writers, in this
// process or another, that lock the same task rows lock them in the same
// order and never deadlock. The transaction takes two round trips: BEGIN
// and the appends, pipelined; then the notifications and COMMIT, once the
// appends' outcomes are known.
//
// If the batch's transaction fails as a whole before COMMIT (an error of
// one statement aborts it, or the connection breaks), none of it has
// committed, and each of its appends runs again alone, so that one bad
// append fails no other. If the commit itself fails without a word from
// the server (the connection broke), the appends may or may not have
// committed: each caller gets the error, as it would from any database.

// maxBatch bounds the appends of one transaction.
const maxBatch = 256

// numWriters is the number of writer goroutines: while one waits on its
// commit, another can run the next batch.
const numWriters = 2

// maxPayload is the longest NOTIFY payload, in bytes: PostgreSQL refuses
// one of 8000 bytes or more.
const maxPayload = 7999

// ErrClosed is returned by Append on a closed Store.
var ErrClosed = errors.New("postgres: store is closed")

// States of an appendReq. The caller and a writer race to move a queued
// request on: the writer takes it (and then always answers), or the
// caller, whose context ended, abandons it (and the writer skips it).
const (
	queued int32 = iota
	taken
	abandoned
)

// appendReq is an Append waiting for a writer.
type appendReq struct {
	ctx         context.Context
	taskID      string
	after, last int64
	sql         string // s.q.create or s.q.append
	args        []any
	msgIDs      []string // the message ids the append records (messages.go)
	state       atomic.Int32
	done        chan error // buffered: the writer never waits for the caller

	// The task's snapshot and tail sizes after the append, set by the
	// writer before it sends nil on done.
	snapBytes, tailBytes int
}

// appendQueue holds the appends that no writer has taken yet.
type appendQueue struct {
	mu     sync.Mutex
	ready  sync.Cond // signaled when reqs grows or the queue closes
	reqs   []*appendReq
	closed bool
}

func newAppendQueue() *appendQueue {
	q := &appendQueue{}
	q.ready.L = &q.mu
	return q
}

// push queues r, or reports false if the queue is closed.
func (q *appendQueue) push(r *appendReq) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.reqs = append(q.reqs, r)
	q.ready.Signal()
	return true
}

// take waits for appends and moves up to max of them, oldest first, into
// buf. It returns an empty batch only once the queue is closed and empty:
// the appends queued before Close all run.
func (q *appendQueue) take(buf []*appendReq, max int) []*appendReq {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.reqs) == 0 && !q.closed {
		q.ready.Wait()
	}
	n := min(len(q.reqs), max)
	buf = append(buf, q.reqs[:n]...)
	rest := copy(q.reqs, q.reqs[n:])
	clear(q.reqs[rest:])
	q.reqs = q.reqs[:rest]
	if rest > 0 {
		q.ready.Signal() // for another writer
	}
	return buf
}

// close refuses further appends and wakes the writers, which finish the
// queued ones and return.
func (q *appendQueue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	q.ready.Broadcast()
}

// startWriters starts the writer goroutines.
func (s *Store) startWriters() {
	s.queue = newAppendQueue()
	for range numWriters {
		s.writers.Go(s.writer)
	}
}

// stopWriters lets the queued appends finish and stops the writers.
func (s *Store) stopWriters() {
	s.queue.close()
	s.writers.Wait()
}

// enqueue hands r to the writers and returns its outcome. If ctx ends
// while r waits in the queue, enqueue returns ctx.Err() and r never runs;
// once a writer has taken r, its outcome is the truth, even if ctx ends
// meanwhile.
func (s *Store) enqueue(ctx context.Context, r *appendReq) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !s.queue.push(r) {
		return fmt.Errorf("postgres: appending to task %q: %w", r.taskID, ErrClosed)
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		if r.state.CompareAndSwap(queued, abandoned) {
			return ctx.Err()
		}
		return <-r.done // a writer has it: wait for the commit
	}
}

// writer runs batches until the queue is closed and empty.
func (s *Store) writer() {
	buf := make([]*appendReq, 0, maxBatch)
	errs := make([]error, 0, maxBatch)
	for {
		batch := s.queue.take(buf[:0], maxBatch)
		if len(batch) == 0 {
			return
		}
		s.runBatch(batch, errs[:0])
		clear(batch) // let the requests go
	}
}

// runBatch takes the appends of batch whose callers still wait, commits
// them together and answers each.
func (s *Store) runBatch(batch []*appendReq, errs []error) {
	run := batch[:0]
	for _, r := range batch {
		if r.ctx.Err() != nil && r.state.CompareAndSwap(queued, abandoned) {
			r.done <- r.ctx.Err() // the caller may not have noticed yet
			continue
		}
		if r.state.CompareAndSwap(queued, taken) {
			run = append(run, r)
		}
	}
	if len(run) == 0 {
		return
	}
	// In task id order (see above); appends to one task keep the order
	// they came in.
	slices.SortStableFunc(run, func(a, b *appendReq) int { return strings.Compare(a.taskID, b.taskID) })
	for range run {
		errs = append(errs, nil)
	}
	err, again := s.commitBatch(run, errs)
	switch {
	case err == nil:
	case again && len(run) > 1:
		s.retries.Add(1)
		for i := range run {
			if err, _ := s.commitBatch(run[i:i+1], errs[i:i+1]); err != nil {
				errs[i] = err
			}
		}
	default:
		for i := range errs {
			errs[i] = err
		}
	}
	for i, r := range run {
		r.done <- classify(errs[i])
	}
}

// batchResult is what one append's statement reported.
type batchResult struct {
	snapBytes, tailBytes int
}

// commitBatch runs the appends of run, in one transaction, and sets errs[i]
// to the outcome of run[i] once it has committed. If the transaction as a
// whole fails, it returns the error instead, and whether nothing of it can
// have committed (again): each append may then be tried alone.
func (s *Store) commitBatch(run []*appendReq, errs []error) (err error, again bool) {
	// A caller that gives up must not interrupt a transaction shared with
	// others: the statements do not use the callers' contexts.
	ctx := context.Background()
	clear(errs)
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: appending to task %q: %w", run[0].taskID, err), true
	}
	defer conn.Release()

	results := make([]batchResult, len(run))
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	for _, r := range run {
		b.Queue(r.sql, r.args...)
	}
	br := conn.SendBatch(ctx, b)
	err = readAppends(br, run, errs, results)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// Nothing committed: COMMIT was never sent.
		rollback(conn)
		if len(run) == 1 {
			if used := messageUsed(err, run[0].msgIDs); used != nil {
				errs[0] = used
				return nil, false
			}
			if isUniqueViolation(err) {
				// The events' primary key caught a second writer of
				// these seqs.
				errs[0] = fmt.Errorf("postgres: task %q already has events after %d: %w", run[0].taskID, run[0].after, store.ErrConflict)
				return nil, false
			}
			return fmt.Errorf("postgres: appending to task %q: %w", run[0].taskID, err), true
		}
		return fmt.Errorf("postgres: appending to %d tasks: %w", len(run), err), true
	}

	b = &pgx.Batch{}
	notes := notifications(run, errs)
	for _, note := range notes {
		b.Queue("SELECT pg_notify($1, $2)", s.channel, note)
	}
	b.Queue("COMMIT")
	br = conn.SendBatch(ctx, b)
	for range notes {
		if _, err = br.Exec(); err != nil {
			break
		}
	}
	var tag pgconn.CommandTag
	if err == nil {
		tag, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err == nil && tag.String() != "COMMIT" {
		err = fmt.Errorf("the transaction ended with %q", tag.String())
	}
	if err != nil {
		if !rolledBack(err) {
			return fmt.Errorf("postgres: committing appends to %d tasks: %w; they may have been committed", len(run), err), false
		}
		rollback(conn)
		return fmt.Errorf("postgres: committing appends to %d tasks: %w", len(run), err), true
	}
	ok := 0
	for i, r := range run {
		if errs[i] == nil {
			r.snapBytes, r.tailBytes = results[i].snapBytes, results[i].tailBytes
			ok++
		}
	}
	s.commits.Add(1)
	s.appended.Add(int64(ok))
	return nil, false
}

// readAppends reads the outcome of each append of run from br, after the
// BEGIN's, into errs and results. It returns an error if the transaction
// failed.
func readAppends(br pgx.BatchResults, run []*appendReq, errs []error, results []batchResult) error {
	if _, err := br.Exec(); err != nil {
		return err
	}
	for i, r := range run {
		var snapBytes, tailBytes, cur *int64
		if r.after == 0 {
			err := br.QueryRow().Scan(&snapBytes)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				errs[i] = fmt.Errorf("postgres: task %q exists: %w", r.taskID, store.ErrConflict)
				continue
			case err != nil:
				return err
			}
			zero := int64(0)
			tailBytes = &zero
		} else if err := br.QueryRow().Scan(&snapBytes, &tailBytes, &cur); err != nil {
			return err
		}
		switch {
		case snapBytes != nil && tailBytes != nil:
			results[i] = batchResult{snapBytes: int(*snapBytes), tailBytes: int(*tailBytes)}
		case cur == nil:
			errs[i] = fmt.Errorf("postgres: task %q: %w", r.taskID, store.ErrNotFound)
		default:
			errs[i] = fmt.Errorf("postgres: task %q is at seq %d, not %d: %w", r.taskID, *cur, r.after, store.ErrConflict)
		}
	}
	return nil
}

// notifications returns the payloads of the notifications of a batch:
// "<task id>:<last seq>" for each task appended to (the last seq it
// reached, if several appends to it succeeded), one a line, as few
// payloads as fit within maxPayload bytes each. run is in task id order.
func notifications(run []*appendReq, errs []error) []string {
	var (
		notes []string
		sb    strings.Builder
	)
	for i, r := range run {
		if errs[i] != nil {
			continue
		}
		if i+1 < len(run) && run[i+1].taskID == r.taskID && errs[i+1] == nil {
			continue // a later append to the task reached further
		}
		entry := r.taskID + ":" + strconv.FormatInt(r.last, 10)
		if sb.Len() > 0 && sb.Len()+1+len(entry) > maxPayload {
			notes = append(notes, sb.String())
			sb.Reset()
		}
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(entry)
	}
	if sb.Len() > 0 {
		notes = append(notes, sb.String())
	}
	return notes
}

// rolledBack reports whether err, a failure of the round trip that
// commits, leaves the transaction not committed: the server reported an
// error (an ERROR, which ends the transaction, not a FATAL, which may come
// after the commit), or nothing was sent.
func rolledBack(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Severity == "ERROR"
	}
	return pgconn.SafeToRetry(err)
}

// rollback ends the failed transaction of conn, if it is still open, so
// that the pool can keep the connection; if that fails, the pool closes
// it on release, which ends the transaction too.
func rollback(conn *pgxpool.Conn) {
	if conn.Conn().PgConn().TxStatus() == 'I' || conn.Conn().IsClosed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn.Exec(ctx, "ROLLBACK")
}

// sizeCache remembers, for the tasks this store appended to, the sizes
// of their snapshot and its tail after the last append, so that Append
// can ask [store.SnapshotDue] without reading the task row first. A task
// this store has not appended to since it opened (or last appended to
// before another process did) reads as an empty snapshot and tail: the
// snapshot is then written only for its state or when the append alone
// brings enough events, and the sizes the statement returns are known
// from then on. The sizes decide only when a snapshot is written, never
// what a read returns.
type sizeCache struct {
	mu sync.Mutex
	m  map[string]taskSizes
}

type taskSizes struct {
	seq        int64
	snap, tail int
}

// maxCachedSizes bounds the tasks a sizeCache remembers.
const maxCachedSizes = 1 << 16

// get returns the sizes of task id if the cache knows them at seq.
func (c *sizeCache) get(id string, seq int64) (snap, tail int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[id]; ok && e.seq == seq {
		return e.snap, e.tail
	}
	return 0, 0
}

// put records the sizes of task id at seq, or forgets the task when it
// is done (it is finished: nobody appends to it any more).
func (c *sizeCache) put(id string, seq int64, snap, tail int, done bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if done {
		delete(c.m, id)
		return
	}
	if c.m == nil {
		c.m = make(map[string]taskSizes)
	}
	if _, ok := c.m[id]; !ok && len(c.m) >= maxCachedSizes {
		// Forget an eighth of the tasks, whichever the map yields:
		// forgotten sizes cost at most an early snapshot.
		n := maxCachedSizes / 8
		for k := range c.m {
			delete(c.m, k)
			if n--; n == 0 {
				break
			}
		}
	}
	c.m[id] = taskSizes{seq: seq, snap: snap, tail: tail}
}
