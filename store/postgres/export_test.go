package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/goa2a/a2a/store"
)

// Crash simulates the death of the store's process: the heartbeat stops
// and the connections close, but the runner row stays behind, as after
// kill -9. Close does nothing afterwards.
func (s *Store) Crash() {
	s.closeOnce.Do(func() {
		s.stopWriters()
		s.stop()
		<-s.done
		if s.ownsPool {
			s.pool.Close()
		}
	})
}

// RunnerID returns the id the store registered as a runner.
func (s *Store) RunnerID() string { return s.self.ID }

// ListSQL returns the statement List runs for q, and its arguments.
func (s *Store) ListSQL(scope store.Scope, q store.ListQuery) (string, []any) {
	return s.listSQL(scope, q)
}

// Count runs alone the query that List makes, within its statement, for
// q's Total: the counters, or a count of the tasks.
func (s *Store) Count(ctx context.Context, scope store.Scope, q store.ListQuery) (int, error) {
	filter, args := listFilter(scope, q)
	var n int
	err := s.pool.QueryRow(ctx, s.totalSQL(q, filter), args...).Scan(&n)
	return n, err
}

// CountTasks counts the tasks that match q's filters in the tasks table,
// never from the counters.
func (s *Store) CountTasks(ctx context.Context, scope store.Scope, q store.ListQuery) (int, error) {
	filter, args := listFilter(scope, q)
	var n int
	err := s.pool.QueryRow(ctx, "SELECT count(*) FROM "+s.q.tasks+" WHERE "+filter, args...).Scan(&n)
	return n, err
}

// Compact folds the task count deltas into task_counts now, as the
// heartbeat does.
func (s *Store) Compact(ctx context.Context) error { return s.compact(ctx) }

// MigrateTo creates or migrates schema up to version only, as an older
// build would have left it.
func MigrateTo(ctx context.Context, pool *pgxpool.Pool, schema string, version int) error {
	return migrateTo(ctx, pool, schema, version)
}

// MaxConns returns the size of the store's connection pool.
func (s *Store) MaxConns() int32 { return s.pool.Config().MaxConns }

// ExplainList runs List's statement for q under EXPLAIN ANALYZE and
// returns the plan, with the time each node took.
func (s *Store) ExplainList(ctx context.Context, scope store.Scope, q store.ListQuery) (string, error) {
	sql, args := s.listSQL(scope, q)
	rows, err := s.pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) "+sql, args...)
	if err != nil {
		return "", err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return strings.Join(lines, "\n"), err
}

// ClaimPushSQL returns the statement ClaimPush runs; its arguments are
// now and the end of the lease (unix ms) and the limit.
func (s *Store) ClaimPushSQL() string { return s.q.claimPush }

// GroupStats returns the number of transactions the writers committed, of
// appends they committed, and of batches whose appends were tried again
// one by one.
func (s *Store) GroupStats() (commits, appends, retries int64) {
	return s.commits.Load(), s.appended.Load(), s.retries.Load()
}

// NotifyPayloads returns the payloads of the notifications that a commit
// sends for appends to the tasks ids (in id order) that reached lasts,
// those with failed[i] having failed.
func NotifyPayloads(ids []string, lasts []int64, failed []bool) []string {
	run := make([]*appendReq, len(ids))
	errs := make([]error, len(ids))
	for i, id := range ids {
		run[i] = &appendReq{taskID: id, last: lasts[i]}
		if failed[i] {
			errs[i] = store.ErrConflict
		}
	}
	return notifications(run, errs)
}

// MaxNotifyPayload is the longest payload of a notification.
const MaxNotifyPayload = maxPayload
