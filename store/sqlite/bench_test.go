package sqlite_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

// BenchmarkAppendParallel: each operation creates a task and appends three
// status events to it, from parallel goroutines (GOMAXPROCS of them, or 16
// per GOMAXPROCS, as a server with many tasks running), so one op is four
// Appends. It reports commits per append, which group commit keeps below 1.
func BenchmarkAppendParallel(b *testing.B) {
	for _, d := range []sqlite.Durability{sqlite.ProcessCrash, sqlite.PowerLoss} {
		for _, p := range []int{1, 16} {
			b.Run(fmt.Sprintf("%v/p%d", d, p), func(b *testing.B) {
				benchmarkAppend(b, d, p)
			})
		}
	}
}

func benchmarkAppend(b *testing.B, d sqlite.Durability, parallelism int) {
	s := openStore(b, newPath(b), sqlite.Options{Durability: d})
	var n atomic.Int64
	before := s.Stats()
	b.ReportAllocs()
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			task := newTask(fmt.Sprintf("task-%d", n.Add(1)), a2a.TaskStateSubmitted, 0)
			if err := s.Append(b.Context(), scope, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
				b.Error(err)
				return
			}
			for k := range 3 {
				var err error
				if task, err = step(b.Context(), s, scope, task, int64(k+1), a2a.TaskStateWorking, "m"); err != nil {
					b.Error(err)
					return
				}
			}
		}
	})
	b.StopTimer()
	st := s.Stats()
	if appends := st.Appends - before.Appends; appends > 0 {
		b.ReportMetric(float64(st.Commits-before.Commits)/float64(appends), "commits/append")
	}
}
