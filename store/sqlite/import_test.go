package sqlite_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
	"github.com/goa2a/a2a/store/storetest"
)

// TestImportLarge imports 100,000 tasks in one call, far more than one
// statement can bind, then fails an import as large whose last task
// exists: it must leave nothing behind. Under the race detector, which
// slows SQLite down tenfold, it imports 3,000: still many statements.
func TestImportLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 100,000 tasks")
	}
	n := 100_000
	if raceEnabled {
		n = 3_000
	}
	s := openStore(t, newPath(t), sqlite.Options{})
	f := storetest.FillForList(t, s, scope, n, 0)
	t.Logf("imported %d tasks in one call in %v", n, f.Elapsed)
	res, err := s.List(t.Context(), scope, store.ListQuery{Limit: 1})
	if err != nil || res.Total != n {
		t.Fatalf("List after import: total %d, %v; want %d", res.Total, err, n)
	}

	other := store.Scope{Tenant: "t2", Owner: "bob"}
	tasks := make([]*a2a.Task, n)
	for i := range tasks {
		tasks[i] = newTask(fmt.Sprintf("other-%06d", i), a2a.TaskStateCompleted, i)
	}
	tasks[n-1] = newTask(f.ID(0), a2a.TaskStateCompleted, 0)
	if err := s.Import(t.Context(), other, tasks); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Import with an existing id last: %v, want ErrConflict", err)
	} else {
		t.Logf("conflict: %v", err)
	}
	res, err = s.List(t.Context(), other, store.ListQuery{Limit: 1})
	if err != nil || res.Total != 0 {
		t.Errorf("List after a failed import: total %d, %v; want 0", res.Total, err)
	}
	if _, _, err := s.Get(t.Context(), other, "other-000000"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get of a task of the failed import: %v, want ErrNotFound", err)
	}
}

// TestImportInBatch: an import that conflicts while the writer runs other
// writes in the same transaction undoes itself alone, and one that
// succeeds commits with them.
func TestImportInBatch(t *testing.T) {
	s := openStore(t, newPath(t), sqlite.Options{})
	create(t, s, scope, newTask("taken", a2a.TaskStateWorking, 0))
	const writers = 50
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			<-start
			task := newTask(fmt.Sprintf("task-%02d", i), a2a.TaskStateSubmitted, i)
			if err := s.Append(t.Context(), scope, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
				t.Errorf("create %s: %v", task.ID, err)
			}
		})
	}
	for i := range 10 {
		wg.Go(func() {
			<-start
			tasks := []*a2a.Task{
				newTask(fmt.Sprintf("imp-%d-a", i), a2a.TaskStateCompleted, i),
				newTask(fmt.Sprintf("imp-%d-b", i), a2a.TaskStateCompleted, i),
			}
			want := error(nil)
			if i%2 == 0 {
				tasks = append(tasks, newTask("taken", a2a.TaskStateCompleted, i))
				want = store.ErrConflict
			}
			if err := s.Import(t.Context(), scope, tasks); !errors.Is(err, want) {
				t.Errorf("import %d: %v, want %v", i, err, want)
			}
		})
	}
	close(start)
	wg.Wait()
	res, err := s.List(t.Context(), scope, store.ListQuery{Limit: 1})
	if want := 1 + writers + 5*2; err != nil || res.Total != want {
		t.Errorf("List total = %d, %v; want %d", res.Total, err, want)
	}
	for i := range 10 {
		_, _, err := s.Get(t.Context(), scope, fmt.Sprintf("imp-%d-a", i))
		if (err == nil) != (i%2 == 1) {
			t.Errorf("Get(imp-%d-a) = %v after an import that should have %s", i, err, map[bool]string{true: "failed", false: "succeeded"}[i%2 == 0])
		}
	}
	st := s.Stats()
	t.Logf("%d writes in %d commits", st.Writes, st.Commits)
}
