package sqlite_test

import (
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
	"github.com/goa2a/a2a/store/storetest"
)

// BenchmarkList1M measures ListTasks, 100 tasks a page, on a store of a
// million finished tasks ($A2A_BENCH_LIST_TASKS to change it) in seven
// contexts and four states: the first page and the last one (from a cursor
// 100 tasks before the end), unfiltered, by state and by context, and the
// count that each List makes for its Total, alone. The fill imports
// 100,000 tasks a call and takes half a minute or more; give the run
// time, and -v to see the logs of the fill:
//
//	go test -run '^$' -bench BenchmarkList1M -benchtime 2s -timeout 0 -v ./store/sqlite
func BenchmarkList1M(b *testing.B) {
	n := storetest.ListBenchTasks(b)
	s := openStore(b, newPath(b), sqlite.Options{})
	f := storetest.FillForList(b, s, scope, n, 100_000)
	b.Logf("imported %d tasks in %v: %.0f tasks/s", n, f.Elapsed.Round(time.Millisecond), float64(n)/f.Elapsed.Seconds())
	storetest.ListBench{
		Store: s,
		Fill:  f,
		Count: s.Count,
		Explain: func(b *testing.B, q store.ListQuery) {
			page, pageArgs, count, countArgs := sqlite.ListSQL(scope, q)
			for _, c := range []struct {
				name  string
				query string
				args  []any
			}{{"page", page, pageArgs}, {"count", count, countArgs}} {
				plan, err := s.QueryPlan(b.Context(), c.query, c.args...)
				if err != nil {
					b.Fatal(err)
				}
				b.Logf("%s: %s", c.name, strings.Join(plan, "; "))
			}
		},
	}.Run(b)
}
