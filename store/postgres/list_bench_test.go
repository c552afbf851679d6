package postgres_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
	"github.com/goa2a/a2a/store/storetest"
)

// BenchmarkList1M measures ListTasks, 100 tasks a page, on a store of a
// million finished tasks ($A2A_BENCH_LIST_TASKS to change it) in seven
// contexts and four states: the first page and the last one (from a cursor
// 100 tasks before the end), unfiltered, by state and by context, and the
// count that each List makes for its Total, alone. The fill imports
// 100,000 tasks a call; then VACUUM ANALYZE does at once what autovacuum
// would do soon after, so that the timings do not depend on when it runs.
// Each query's EXPLAIN ANALYZE is logged. Give the run time, and -v to see
// the logs of the fill:
//
//	go test -run '^$' -bench BenchmarkList1M -benchtime 2s -timeout 0 -v ./store/postgres
func BenchmarkList1M(b *testing.B) {
	n := storetest.ListBenchTasks(b)
	schema := newSchema(b)
	s := openStore(b, schema, postgres.Options{})
	f := storetest.FillForList(b, s, scopeA, n, 100_000)
	b.Logf("imported %d tasks in %v: %.0f tasks/s", n, f.Elapsed.Round(time.Millisecond), float64(n)/f.Elapsed.Seconds())
	start := time.Now()
	if _, err := adminPool(b).Exec(b.Context(), "VACUUM (ANALYZE) "+pgx.Identifier{schema, "tasks"}.Sanitize()); err != nil {
		b.Fatal(err)
	}
	b.Logf("VACUUM ANALYZE of the tasks took %v", time.Since(start).Round(time.Millisecond))
	storetest.ListBench{
		Store: s,
		Fill:  f,
		Count: s.Count,
		Explain: func(b *testing.B, q store.ListQuery) {
			plan, err := s.ExplainList(b.Context(), scopeA, q)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("EXPLAIN ANALYZE:\n%s", plan)
		},
	}.Run(b)
}
