package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/internal/lease"
)

// heartbeat registers the store's runner, or renews its heartbeat. It
// re-inserts a row that another store removed after judging this one dead
// (after a long pause), so that the store's later tasks are not orphans.
func (s *Store) heartbeat(ctx context.Context) error {
	err := s.write(ctx, false, func(w *wtx) error {
		_, err := w.exec(s.ws.upsertRunner, s.self.ID, s.self.Host, int64(s.self.PID), time.Now().UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: registering runner %s in %s: %w", s.self.ID, s.path, err)
	}
	return nil
}

// renew renews the heartbeat every TTL/3 until ctx is done.
func (s *Store) renew(ctx context.Context) {
	defer close(s.heartbeatDone)
	lease.Renew(ctx, s.ttl, func(_ int, err error) {
		s.log.Warn("heartbeat failed; other processes may take this store's tasks for orphans", "runner", s.self.ID, "err", err)
	}, s.heartbeat)
}

// Orphans implements [store.Maintainer]. It first removes the runners that
// [lease.Dead] says are gone, then returns the tasks in states whose last
// writer is not a registered runner, oldest status first. Heartbeats are
// unix times of the clocks of the hosts that share the file.
func (s *Store) Orphans(ctx context.Context, states []a2a.TaskState, limit int) ([]store.TaskRef, error) {
	if limit < 1 || len(states) == 0 {
		return nil, ctx.Err()
	}
	type seen struct {
		id        string
		heartbeat int64
	}
	var dead []seen
	rows, err := s.rs.runners.QueryContext(ctx)
	if err != nil {
		return nil, s.readErr(fmt.Errorf("sqlite: reading runners: %w", err))
	}
	now := time.Now()
	for rows.Next() {
		var (
			r  lease.Runner
			hb int64
		)
		if err := rows.Scan(&r.ID, &r.Host, &r.PID, &hb); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: reading runners: %w", err)
		}
		if lease.Dead(r, time.UnixMilli(hb), s.self, s.ttl, now) {
			dead = append(dead, seen{r.ID, hb})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, s.readErr(fmt.Errorf("sqlite: reading runners: %w", err))
	}
	if len(dead) > 0 {
		err := s.write(ctx, false, func(w *wtx) error {
			for _, d := range dead {
				if _, err := w.exec(s.ws.reapRunner, d.id, d.heartbeat); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("sqlite: removing dead runners: %w", err)
		}
	}

	states = distinct(states)
	st, err := s.readStmt(ctx, orphansSQL(len(states)))
	if err != nil {
		return nil, s.readErr(fmt.Errorf("sqlite: finding orphans: %w", err))
	}
	args := append(stateArgs(states), s.self.ID, limit)
	rows, err = st.QueryContext(ctx, args...)
	if err != nil {
		return nil, s.readErr(fmt.Errorf("sqlite: finding orphans: %w", err))
	}
	defer rows.Close()
	var refs []store.TaskRef
	for rows.Next() {
		var (
			ref    store.TaskRef
			ts     int64
			runner string
		)
		if err := rows.Scan(&ref.Scope.Tenant, &ref.Scope.Owner, &ref.ID, &ref.Seq, &ts, &runner); err != nil {
			return nil, fmt.Errorf("sqlite: finding orphans: %w", err)
		}
		ref.Runner = lease.Name(runner)
		refs = append(refs, ref)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(fmt.Errorf("sqlite: finding orphans: %w", err))
	}
	return refs, nil
}

// Expire implements [store.Maintainer]. It picks and deletes the tasks,
// and takes them off the kept counts, in one write transaction.
func (s *Store) Expire(ctx context.Context, states []a2a.TaskState, cutoff time.Time, limit int) (int, error) {
	if limit < 1 || len(states) == 0 {
		return 0, ctx.Err()
	}
	states = distinct(states)
	query := expireSQL(len(states))
	// status_ts < cutoff, with status_ts in whole milliseconds.
	args := append(stateArgs(states), ceilMilli(cutoff), limit)
	var n int
	err := s.write(ctx, false, func(w *wtx) error {
		n = 0
		rows, err := w.query(query, args...)
		if err != nil {
			return err
		}
		type counted struct {
			tenant, owner string
			state         int64
		}
		type victim struct {
			rid int64
			id  string
		}
		var (
			victims []victim
			deleted = make(map[counted]int64)
		)
		for rows.Next() {
			var (
				v  victim
				c  counted
				ts int64
			)
			if err := rows.Scan(&v.rid, &v.id, &c.tenant, &c.owner, &c.state, &ts); err != nil {
				rows.Close()
				return err
			}
			victims = append(victims, v)
			deleted[c]++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		// The task goes with its snapshot and events, so that a rid
		// SQLite hands out again never meets old ones.
		for _, v := range victims {
			for _, d := range []struct {
				st  *sql.Stmt
				arg any
			}{{s.ws.deleteTask, v.rid}, {s.ws.deleteSnapshot, v.rid}, {s.ws.deleteEvents, v.rid}, {s.ws.deletePushes, v.id}} {
				if _, err := w.exec(d.st, d.arg); err != nil {
					return err
				}
			}
		}
		// The kept counts lose the deleted tasks, in this transaction.
		for c, k := range deleted {
			w.addTasks(store.Scope{Tenant: c.tenant, Owner: c.owner}, c.state, -k)
		}
		n = len(victims)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: expiring tasks: %w", err)
	}
	return n, nil
}

// orphansSQL returns the query of Orphans for n distinct states: ?1 ...
// ?n are the states, ?n+1 the store's runner id, ?n+2 the limit. See
// byState.
func orphansSQL(n int) string {
	return byState(n, func(i int) string {
		return fmt.Sprintf(`SELECT tenant, owner, id, seq, status_ts, runner FROM tasks
	WHERE state = ?%d AND runner <> ?%d AND runner NOT IN (SELECT id FROM runners)`, i, n+1)
	}, fmt.Sprintf("ORDER BY status_ts, id LIMIT ?%d", n+2))
}

// expireSQL returns the query of Expire for n distinct states: ?1 ... ?n
// are the states, ?n+1 the cutoff, ?n+2 the limit. See byState.
func expireSQL(n int) string {
	return byState(n, func(i int) string {
		return fmt.Sprintf(`SELECT rid, id, tenant, owner, state, status_ts FROM tasks
	WHERE state = ?%d AND status_ts < ?%d`, i, n+1)
	}, fmt.Sprintf("ORDER BY status_ts, id LIMIT ?%d", n+2))
}

// byState returns the UNION ALL of arm(1) ... arm(n), one SELECT per
// state, followed by order. Each arm reads one range of the index
// tasks_state (state, status_ts, id) in order, and SQLite merges the
// ranges in the order of the whole (oldest first) and stops at the
// limit: "state IN (...)" would read every range to the end and sort
// what it found, all the finished tasks of a large store for one pass
// of Expire.
func byState(n int, arm func(i int) string, order string) string {
	arms := make([]string, n)
	for i := range arms {
		arms[i] = arm(i + 1)
	}
	return strings.Join(arms, "\nUNION ALL\n") + "\n" + order
}

// distinct returns states without repeats, so that no task is found twice.
func distinct(states []a2a.TaskState) []a2a.TaskState {
	return slices.Compact(slices.Sorted(slices.Values(states)))
}

// placeholders returns n comma-separated question marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func stateArgs(states []a2a.TaskState) []any {
	args := make([]any, len(states), len(states)+2)
	for i, st := range states {
		args[i] = int64(st)
	}
	return args
}

// Secret implements [store.Secrets]. The first caller anywhere inserts 32
// random bytes; everyone then reads the row that won. A secret never
// changes, so the store keeps it once read.
func (s *Store) Secret(ctx context.Context, name string) ([]byte, error) {
	s.secretsMu.Lock()
	defer s.secretsMu.Unlock()
	if b, ok := s.secrets[name]; ok {
		return b, nil
	}
	var b []byte
	err := s.rs.getSecret.QueryRowContext(ctx, name).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		fresh := make([]byte, 32)
		rand.Read(fresh)
		err = s.write(ctx, false, func(w *wtx) error {
			_, err := w.exec(s.ws.insertSecret, name, fresh)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("sqlite: creating secret %q: %w", name, err)
		}
		// The insert has committed: a new read sees it, or the row of
		// another process that inserted first.
		err = s.rs.getSecret.QueryRowContext(ctx, name).Scan(&b)
	}
	if err != nil {
		return nil, s.readErr(fmt.Errorf("sqlite: reading secret %q: %w", name, err))
	}
	if s.secrets == nil {
		s.secrets = make(map[string][]byte)
	}
	s.secrets[name] = b
	return b, nil
}
