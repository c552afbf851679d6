package sqlite

import (
	"context"
	"database/sql"

	"github.com/goa2a/a2a/store"
)

// Crash simulates the death of the store's process: the heartbeat stops
// and the connections close, but the runner row stays behind, as after
// kill -9. Close does nothing afterwards.
func (s *Store) Crash() {
	s.closeOnce.Do(func() {
		s.stopHeartbeat()
		<-s.heartbeatDone
		close(s.closing)
		<-s.writerDone
		s.closeDBs()
	})
}

// RunnerID returns the id the store registered as a runner.
func (s *Store) RunnerID() string { return s.self.ID }

// ListSQL returns the statements List runs for q, and their arguments.
func ListSQL(scope store.Scope, q store.ListQuery) (page string, pageArgs []any, count string, countArgs []any) {
	return listSQL(scope, q)
}

// CountRows counts the tasks that match q's filters row by row, with
// the count(*) that List used before the kept counts: what List's Total
// must equal.
func (s *Store) CountRows(ctx context.Context, scope store.Scope, q store.ListQuery) (int, error) {
	_, _, count, args := scanListSQL(scope, q)
	var n int
	err := s.rdb.QueryRowContext(ctx, count, args...).Scan(&n)
	return n, err
}

// MigrateTo creates the database file path, or migrates it, up to schema
// version v only, without opening a store on it.
func MigrateTo(ctx context.Context, path string, v int) error {
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		return err
	}
	defer db.Close()
	return migrateTo(ctx, db, path, v)
}

// QueryPlan returns the details of SQLite's EXPLAIN QUERY PLAN for query.
func (s *Store) QueryPlan(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := s.rdb.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var (
			id, parent, unused int
			detail             string
		)
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		plan = append(plan, detail)
	}
	return plan, rows.Err()
}

// Count runs alone the count that List makes for q's Total, with the
// same prepared statement, on the reader pool.
func (s *Store) Count(ctx context.Context, scope store.Scope, q store.ListQuery) (int, error) {
	_, _, count, args := listSQL(scope, q)
	st, err := s.readStmt(ctx, count)
	if err != nil {
		return 0, err
	}
	var n int
	err = st.QueryRowContext(ctx, args...).Scan(&n)
	return n, err
}

// ClaimPushSQL is the statement ClaimPush reads the configs to claim with.
var ClaimPushSQL = claimPushSQL

// ClaimPushQuery is the statement ClaimPush reads with when it skips n
// scopes.
func ClaimPushQuery(n int) string { return claimPushQuery(n) }

// OrphansSQL and ExpireSQL are the queries of Orphans and Expire for n
// states; GetSQL is the one of Get.
var (
	OrphansSQL = orphansSQL
	ExpireSQL  = expireSQL
)

const GetSQL = getSQL

// TailsSQL is the statement List reads the events after the snapshots of
// a page's tasks with.
const TailsSQL = tailsSQL
