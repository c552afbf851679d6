package storetest

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/goa2a/a2a/store"
)

// ListBenchTasks is the number of tasks a ListTasks benchmark fills its
// store with: $A2A_BENCH_LIST_TASKS, or 1,000,000.
func ListBenchTasks(tb testing.TB) int {
	tb.Helper()
	v := os.Getenv("A2A_BENCH_LIST_TASKS")
	if v == "" {
		return 1_000_000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1000 {
		tb.Fatalf("A2A_BENCH_LIST_TASKS=%q: want a number of tasks, at least 1000", v)
	}
	return n
}

// ListBench is a ListTasks benchmark on a store that [FillForList] filled.
type ListBench struct {
	Store store.Store
	Fill  Fill
	// PageSize is the Limit of every List; zero means 100.
	PageSize int
	// Count, if not nil, runs alone the count of the tasks that match q
	// that List makes for its Total, so that its share of a List shows.
	Count func(ctx context.Context, scope store.Scope, q store.ListQuery) (int, error)
	// Explain, if not nil, is called once for each query before it is
	// timed, to log how the store runs it.
	Explain func(b *testing.B, q store.ListQuery)
}

// Run runs, for no filter, a state filter and a context filter, three
// sub-benchmarks: first-page (a List without cursor), deep-page (a List
// from the cursor PageSize tasks before the end, the last page of a walk)
// and, if Count is set, count (the count alone). Each checks its result
// once before it is timed.
func (lb ListBench) Run(b *testing.B) {
	f, size := lb.Fill, lb.PageSize
	if size == 0 {
		size = 100
	}
	for _, c := range []struct {
		name string
		q    store.ListQuery
	}{
		{"all", store.ListQuery{}},
		{"state", store.ListQuery{Status: f.States[0]}},
		{"context", store.ListQuery{ContextID: f.Contexts[0]}},
	} {
		total := f.Count(c.q)
		for _, p := range []struct {
			name  string
			after *store.Cursor
		}{
			{"first-page", nil},
			{"deep-page", f.CursorFromEnd(c.q, size)},
		} {
			q := c.q
			q.Limit, q.After = size, p.after
			b.Run(c.name+"/"+p.name, func(b *testing.B) {
				ctx := b.Context()
				res, err := lb.Store.List(ctx, f.Scope, q)
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Tasks) != size || res.Total != total || res.More != (p.after == nil && total > size) {
					b.Fatalf("List(%+v) = %d tasks, total %d, more %v; want %d, %d, %v",
						q, len(res.Tasks), res.Total, res.More, size, total, p.after == nil && total > size)
				}
				if lb.Explain != nil {
					lb.Explain(b, q)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := lb.Store.List(ctx, f.Scope, q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		if lb.Count == nil {
			continue
		}
		b.Run(c.name+"/count", func(b *testing.B) {
			ctx := b.Context()
			n, err := lb.Count(ctx, f.Scope, c.q)
			if err != nil || n != total {
				b.Fatalf("Count(%+v) = %d, %v; want %d", c.q, n, err, total)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := lb.Count(ctx, f.Scope, c.q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
