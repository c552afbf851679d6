package postgres_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
	"github.com/goa2a/a2a/store/storetest"
)

// TestImportLarge imports 100,000 tasks in one call, then fails an import
// as large whose last task exists: it must leave nothing behind. Under the
// race detector, which slows the encoding down, it imports 3,000.
func TestImportLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 100,000 tasks")
	}
	t.Parallel()
	n := 100_000
	if raceEnabled {
		n = 3_000
	}
	s := openStore(t, newSchema(t), postgres.Options{})
	f := storetest.FillForList(t, s, scopeA, n, 0)
	t.Logf("imported %d tasks in one call in %v", n, f.Elapsed)
	res, err := s.List(t.Context(), scopeA, store.ListQuery{Limit: 1})
	if err != nil || res.Total != n {
		t.Fatalf("List after import: total %d, %v; want %d", res.Total, err, n)
	}

	tasks := make([]*a2a.Task, n)
	for i := range tasks {
		tasks[i] = newTask(fmt.Sprintf("other-%06d", i), a2a.TaskStateCompleted, i)
	}
	tasks[n-1] = newTask(f.ID(0), a2a.TaskStateCompleted, 0)
	if err := s.Import(t.Context(), scopeB, tasks); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Import with an existing id last: %v, want ErrConflict", err)
	} else {
		t.Logf("conflict: %v", err)
	}
	res, err = s.List(t.Context(), scopeB, store.ListQuery{Limit: 1})
	if err != nil || res.Total != 0 {
		t.Errorf("List after a failed import: total %d, %v; want 0", res.Total, err)
	}
	if _, _, err := s.Get(t.Context(), scopeB, "other-000000"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get of a task of the failed import: %v, want ErrNotFound", err)
	}
}

// TestImportOverlapping runs imports of the same ids, in opposite orders,
// at once: one wins, the other conflicts, and neither deadlocks.
func TestImportOverlapping(t *testing.T) {
	t.Parallel()
	s := openStore(t, newSchema(t), postgres.Options{})
	const n = 2000
	for round := range 3 {
		up := make([]*a2a.Task, n)
		for i := range up {
			up[i] = newTask(fmt.Sprintf("r%d-%04d", round, i), a2a.TaskStateCompleted, i)
		}
		down := slices.Clone(up)
		slices.Reverse(down)
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for k, tasks := range [][]*a2a.Task{up, down} {
			wg.Go(func() { errs[k] = s.Import(t.Context(), scopeA, tasks) })
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("round %d: Import: %v, want nil or ErrConflict", round, err)
			}
		}
		if won != 1 {
			t.Errorf("round %d: %d imports succeeded (%v), want 1", round, won, errs)
		}
	}
}
