package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/goa2a/a2a/store"
)

// Crash simulates the death of the store's process: the heartbeat stops
// and the connections close, but the runner row stays behind, as after
// kill -9. Close does nothing afterwards.
func (s *Store) Crash() {
	s.closeOnce.Do(func() {
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

// Count runs alone the count that List makes, within its statement, for
// q's Total.
func (s *Store) Count(ctx context.Context, scope store.Scope, q store.ListQuery) (int, error) {
	filter, args := listFilter(scope, q)
	var n int
	err := s.pool.QueryRow(ctx, "SELECT count(*) AS total FROM "+s.q.tasks+" WHERE "+filter, args...).Scan(&n)
	return n, err
}

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
