package postgres_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
)

// BenchmarkAppendParallel creates a task and appends three events to it,
// one Append each, from 16×GOMAXPROCS goroutines: Appends wait on commits
// (fsync), not on the CPU, so a server takes many more at once than it has
// cores, and the store's writers commit those waiting together (group
// commit; appends/commit reports how many shared a commit on average).
// One op is one task: four Appends, one of which changes the task's state.
func BenchmarkAppendParallel(b *testing.B) {
	s := openStore(b, newSchema(b), postgres.Options{})
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := "task-" + strconv.FormatInt(next.Add(1), 10)
			task := newTask(id, a2a.TaskStateSubmitted, 0)
			if err := s.Append(ctx, scopeA, id, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
				b.Error(err)
				return
			}
			for seq := int64(1); seq <= 3; seq++ {
				snap := withStatus(task, a2a.TaskStateWorking, "m"+strconv.FormatInt(seq, 10))
				if err := s.Append(ctx, scopeA, id, seq, []store.Event{statusEvent(seq+1, snap)}, snap); err != nil {
					b.Error(err)
					return
				}
			}
		}
	})
	if commits, appends, _ := s.GroupStats(); commits > 0 {
		b.ReportMetric(float64(appends)/float64(commits), "appends/commit")
	}
}
