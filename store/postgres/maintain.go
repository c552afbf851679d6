package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/internal/lease"
)

// heartbeat registers the store's runner, or renews its heartbeat. It
// re-inserts a row that another process removed after judging this one
// dead (a long pause), so that the store's later tasks are not orphans.
func (s *Store) heartbeat(ctx context.Context) (err error) {
	defer classifyErr(&err)
	if _, err := s.pool.Exec(ctx, s.q.upsertRunner, s.self.ID, s.self.Host, s.self.PID); err != nil {
		return fmt.Errorf("postgres: registering runner %s: %w", s.self.ID, err)
	}
	return nil
}

// compactLockKey is the first half of the advisory lock key that lets one
// store at a time compact a schema's counters; the second is the hash of
// the schema's name.
const compactLockKey int32 = 0x61326163 // "a2ac"

// compact folds the task count deltas into task_counts (see
// migrations/0002_task_counts.sql). It does nothing if another store of
// the schema is compacting at the same moment.
func (s *Store) compact(ctx context.Context) error {
	if _, err := s.pool.Exec(ctx, s.q.compact, compactLockKey, s.schema); err != nil {
		return fmt.Errorf("postgres: compacting the task counts: %w", err)
	}
	return nil
}

// renew renews the heartbeat, and compacts the task counts, every TTL/3
// until ctx is done.
func (s *Store) renew(ctx context.Context) {
	defer close(s.done)
	lease.Renew(ctx, s.ttl, func(step int, err error) {
		if step == 0 {
			s.log.Warn("heartbeat failed; other processes may take this store's tasks for orphans", "runner", s.self.ID, "err", err)
		} else {
			s.log.Warn("compaction of the task counts failed; ListTasks totals stay exact but get slower", "err", err)
		}
	}, s.heartbeat, s.compact)
}

// Orphans implements [store.Maintainer]. It first removes the runners that
// [lease.Dead] says are gone (by the database's clock), then returns the
// tasks in states whose last writer is not a registered runner, oldest
// status first.
func (s *Store) Orphans(ctx context.Context, states []a2a.TaskState, limit int) (_ []store.TaskRef, err error) {
	defer classifyErr(&err)
	if limit < 1 || len(states) == 0 {
		return nil, ctx.Err()
	}
	rows, err := s.pool.Query(ctx, s.q.runnersNow)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading runners: %w", err)
	}
	var (
		deadIDs []string
		deadHBs []int64
		r       lease.Runner
		hb, now int64
	)
	_, err = pgx.ForEachRow(rows, []any{&r.ID, &r.Host, &r.PID, &hb, &now}, func() error {
		if lease.Dead(r, time.UnixMilli(hb), s.self, s.ttl, time.UnixMilli(now)) {
			deadIDs, deadHBs = append(deadIDs, r.ID), append(deadHBs, hb)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: reading runners: %w", err)
	}
	if len(deadIDs) > 0 {
		if _, err := s.pool.Exec(ctx, s.q.reapDead, deadIDs, deadHBs); err != nil {
			return nil, fmt.Errorf("postgres: removing dead runners: %w", err)
		}
	}

	rows, err = s.pool.Query(ctx, s.q.orphans, stateInts(states), s.self.ID, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: finding orphans: %w", err)
	}
	var (
		refs   []store.TaskRef
		ref    store.TaskRef
		runner string
	)
	_, err = pgx.ForEachRow(rows, []any{&ref.Scope.Tenant, &ref.Scope.Owner, &ref.ID, &ref.Seq, &runner}, func() error {
		ref.Runner = lease.Name(runner)
		refs = append(refs, ref)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: finding orphans: %w", err)
	}
	return refs, nil
}

func stateInts(states []a2a.TaskState) []int32 {
	out := make([]int32, len(states))
	for i, st := range states {
		out[i] = int32(st)
	}
	return out
}

// Expire implements [store.Maintainer]. One statement deletes the tasks,
// their events and their push configs. Tasks that an Append holds at that
// moment are left for the next call.
func (s *Store) Expire(ctx context.Context, states []a2a.TaskState, cutoff time.Time, limit int) (_ int, err error) {
	defer classifyErr(&err)
	if limit < 1 || len(states) == 0 {
		return 0, ctx.Err()
	}
	// status_ts < cutoff, with status_ts in whole milliseconds.
	var n int
	if err := s.pool.QueryRow(ctx, s.q.expire, stateInts(states), ceilMilli(cutoff), limit).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: expiring tasks: %w", err)
	}
	return n, nil
}

// Secret implements [store.Secrets]. The first caller anywhere inserts 32
// random bytes; everyone then reads the row that won. A secret never
// changes, so the store keeps it once read.
func (s *Store) Secret(ctx context.Context, name string) (_ []byte, err error) {
	defer classifyErr(&err)
	s.secretsMu.Lock()
	defer s.secretsMu.Unlock()
	if b, ok := s.secrets[name]; ok {
		return b, nil
	}
	var b []byte
	err = s.pool.QueryRow(ctx, s.q.getSecret, name).Scan(&b)
	if errors.Is(err, pgx.ErrNoRows) {
		fresh := make([]byte, 32)
		rand.Read(fresh)
		if _, err := s.pool.Exec(ctx, s.q.insertSecret, name, fresh); err != nil {
			return nil, fmt.Errorf("postgres: creating secret %q: %w", name, err)
		}
		// A fresh statement sees the row of a concurrent winner.
		err = s.pool.QueryRow(ctx, s.q.getSecret, name).Scan(&b)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: reading secret %q: %w", name, err)
	}
	if s.secrets == nil {
		s.secrets = make(map[string][]byte)
	}
	s.secrets[name] = b
	return b, nil
}
