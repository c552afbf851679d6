package sqlite_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

var (
	countScopes = []store.Scope{
		{Tenant: "t1", Owner: "alice"},
		{Tenant: "t1", Owner: "bob"},
		{Tenant: "t2", Owner: "alice"},
		{Tenant: "", Owner: ""},
	}
	countStates = []a2a.TaskState{
		a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted,
		a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateInputRequired,
		a2a.TaskStateRejected, a2a.TaskStateAuthRequired,
	}
	countUnfinished = []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired}
	countFinished   = []a2a.TaskState{a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected}
)

// checkCounts compares, in every scope of countScopes, unfiltered and for
// each state, the Total of List and the count List makes for it (from the
// kept counts) with a count of the rows of tasks. Any drift fails.
func checkCounts(t *testing.T, s *sqlite.Store, what string) (total int) {
	t.Helper()
	ctx := t.Context()
	for _, sc := range countScopes {
		for _, st := range append([]a2a.TaskState{a2a.TaskStateUnspecified}, countStates...) {
			q := store.ListQuery{Status: st, Limit: 1}
			rows, err := s.CountRows(ctx, sc, q)
			if err != nil {
				t.Fatalf("%s: CountRows(%+v, %v): %v", what, sc, st, err)
			}
			kept, err := s.Count(ctx, sc, q)
			if err != nil {
				t.Fatalf("%s: Count(%+v, %v): %v", what, sc, st, err)
			}
			res, err := s.List(ctx, sc, q)
			if err != nil {
				t.Fatalf("%s: List(%+v, %v): %v", what, sc, st, err)
			}
			if kept != rows || res.Total != rows {
				t.Errorf("%s: scope %+v, state %v: kept count %d, List Total %d; %d rows", what, sc, st, kept, res.Total, rows)
			}
			if st == a2a.TaskStateUnspecified {
				total += rows
			}
		}
	}
	return total
}

// TestCountsUnderLoad runs a concurrent workload of every write that
// changes the kept counts (creations, appends that change the state or
// keep it, conflicts, failed appends, imports, failed imports, expiry) in
// several scopes, with and without group commit, then checks that the
// kept counts agree with the rows.
func TestCountsUnderLoad(t *testing.T) {
	for _, maxBatch := range []int{0, 1} {
		t.Run(fmt.Sprintf("MaxBatch=%d", maxBatch), func(t *testing.T) {
			t.Parallel()
			s := openStore(t, newPath(t), sqlite.Options{MaxBatch: maxBatch})
			var stats countStats
			runCountWorkload(t, s, &stats)
			n := checkCounts(t, s, "after the workload")
			t.Logf("%d tasks left; %+v", n, stats.snapshot())
			if stats.conflicts.Load() == 0 || stats.expired.Load() == 0 || stats.moves.Load() == 0 || stats.imported.Load() == 0 {
				t.Errorf("the workload missed a kind of write: %+v", stats.snapshot())
			}
		})
	}
}

type countStats struct {
	created, moves, races, conflicts, failed, imported, expired atomic.Int64
}

func (c *countStats) snapshot() map[string]int64 {
	return map[string]int64{
		"created": c.created.Load(), "moves": c.moves.Load(), "races": c.races.Load(), "conflicts": c.conflicts.Load(),
		"failed": c.failed.Load(), "imported": c.imported.Load(), "expired": c.expired.Load(),
	}
}

// runCountWorkload runs the writers of TestCountsUnderLoad. Each worker
// owns its tasks, and all of them also fight over a few shared ones.
func runCountWorkload(t *testing.T, s *sqlite.Store, stats *countStats) {
	ctx := t.Context()
	const (
		workers = 6
		rounds  = 60
		shared  = 4
	)
	ts := func(r *rand.Rand) a2a.Timestamp {
		return a2a.TimestampOf(baseTime.Add(time.Duration(r.IntN(1000)) * time.Second))
	}
	// The shared tasks, in the first scope.
	for i := range shared {
		create(t, s, countScopes[0], newTask(fmt.Sprintf("shared-%d", i), a2a.TaskStateSubmitted, i))
	}
	appendState := func(sc store.Scope, task *a2a.Task, after int64, st a2a.TaskState, r *rand.Rand) (*a2a.Task, error) {
		next := *task
		next.Status = a2a.TaskStatus{State: st, Timestamp: ts(r)}
		ev := store.Event{Seq: after + 1, Payload: &a2a.TaskStatusUpdateEvent{TaskID: next.ID, ContextID: next.ContextID, Status: next.Status}}
		return &next, s.Append(ctx, sc, next.ID, after, []store.Event{ev}, &next)
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			type owned struct {
				sc   store.Scope
				task *a2a.Task
				seq  int64
			}
			var mine []*owned
			for i := range rounds {
				switch op := r.IntN(10); {
				case op < 3 || len(mine) == 0: // create
					sc := countScopes[r.IntN(len(countScopes))]
					task := &a2a.Task{ID: fmt.Sprintf("w%d-%d", w, i), ContextID: "ctx", Status: a2a.TaskStatus{State: countStates[r.IntN(len(countStates))], Timestamp: ts(r)}}
					if err := s.Append(ctx, sc, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
						t.Errorf("create %s: %v", task.ID, err)
						return
					}
					stats.created.Add(1)
					mine = append(mine, &owned{sc, task, 1})
				case op < 6: // append to an own task, changing its state or not
					o := mine[r.IntN(len(mine))]
					next, err := appendState(o.sc, o.task, o.seq, countStates[r.IntN(len(countStates))], r)
					switch {
					case errors.Is(err, store.ErrNotFound): // expired meanwhile
					case err != nil:
						t.Errorf("append to %s: %v", o.task.ID, err)
						return
					default:
						o.task, o.seq = next, o.seq+1
						stats.moves.Add(1)
					}
				case op < 7: // a shared task: read, then append; others race
					id := fmt.Sprintf("shared-%d", r.IntN(shared))
					task, seq, err := s.Get(ctx, countScopes[0], id)
					if err != nil {
						t.Errorf("get %s: %v", id, err)
						return
					}
					_, err = appendState(countScopes[0], task, seq, countUnfinished[r.IntN(len(countUnfinished))], r) // never expired
					switch {
					case errors.Is(err, store.ErrConflict):
						stats.races.Add(1)
					case err != nil:
						t.Errorf("append to %s: %v", id, err)
						return
					default:
						stats.moves.Add(1)
					}
				case op < 8: // appends that fail
					o := mine[r.IntN(len(mine))]
					wrong := countScopes[(indexOf(countScopes, o.sc)+1)%len(countScopes)]
					for _, f := range []struct {
						sc     store.Scope
						id     string
						after  int64
						target error
					}{
						{o.sc, o.task.ID, o.seq - 1, nil}, // stale: conflict, or not found once expired
						{wrong, o.task.ID, o.seq, store.ErrNotFound},
						{o.sc, "missing", 1, store.ErrNotFound},
						{o.sc, o.task.ID, 0, nil}, // exists: conflict, unless expired
					} {
						task := *o.task
						task.ID = f.id
						next, err := appendState(f.sc, &task, f.after, a2a.TaskStateRejected, r)
						switch {
						case err == nil && f.after == 0:
							// Expired, then created again.
							o.task, o.seq = next, 1
						case err == nil || (f.target != nil && !errors.Is(err, f.target)):
							t.Errorf("failing append %+v: %v, want %v", f, err, f.target)
						case errors.Is(err, store.ErrConflict):
							stats.conflicts.Add(1)
						default:
							stats.failed.Add(1)
						}
					}
				case op < 9: // import, and an import that fails
					sc := countScopes[r.IntN(len(countScopes))]
					batch := make([]*a2a.Task, 20)
					for k := range batch {
						batch[k] = &a2a.Task{ID: fmt.Sprintf("w%d-%d-imp%d", w, i, k), ContextID: "ctx", Status: a2a.TaskStatus{State: countStates[r.IntN(len(countStates))], Timestamp: ts(r)}}
					}
					bad := append(batch[1:len(batch):len(batch)], &a2a.Task{ID: "shared-0", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: ts(r)}})
					if err := s.Import(ctx, sc, bad); !errors.Is(err, store.ErrConflict) {
						t.Errorf("import with an existing id: %v, want ErrConflict", err)
					}
					if err := s.Import(ctx, sc, batch); err != nil {
						t.Errorf("import: %v", err)
						return
					}
					stats.imported.Add(int64(len(batch)))
					for _, task := range batch {
						mine = append(mine, &owned{sc, task, 1})
					}
				default: // expire finished tasks of the first half of the time range
					n, err := s.Expire(ctx, countFinished, baseTime.Add(500*time.Second), 1+r.IntN(8))
					if err != nil {
						t.Errorf("expire: %v", err)
						return
					}
					stats.expired.Add(int64(n))
				}
			}
		})
	}
	wg.Wait()
}

func indexOf(scopes []store.Scope, sc store.Scope) int {
	for i, x := range scopes {
		if x == sc {
			return i
		}
	}
	return -1
}

// TestMigrationCounts: a database made at schema version 1, with tasks in
// several scopes and states, gets its kept counts when Open migrates it to
// version 2, and they stay exact through later writes.
func TestMigrationCounts(t *testing.T) {
	path := newPath(t)
	if err := sqlite.MigrateTo(t.Context(), path, 1); err != nil {
		t.Fatalf("MigrateTo(1): %v", err)
	}
	db := rawDB(t, path)
	var v int
	if err := db.QueryRowContext(t.Context(), "SELECT max(version) FROM schema_migrations").Scan(&v); err != nil || v != 1 {
		t.Fatalf("schema version %d, %v; want 1", v, err)
	}
	want := make(map[store.Scope]map[a2a.TaskState]int)
	for i := range 500 {
		sc := countScopes[i%len(countScopes)]
		st := countStates[(i/len(countScopes))%len(countStates)]
		if i%7 == 0 {
			st = a2a.TaskStateWorking // uneven counts
		}
		task := newTask(fmt.Sprintf("old-%d", i), st, i)
		snap, err := json.Marshal(task)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(t.Context(), `INSERT INTO tasks (id, tenant, owner, context_id, state, status_ts, seq, runner, snapshot)
			VALUES (?, ?, ?, ?, ?, ?, 1, 'gone', ?)`,
			task.ID, sc.Tenant, sc.Owner, task.ContextID, int64(st), task.Status.Timestamp.UnixMilli(), snap); err != nil {
			t.Fatal(err)
		}
		if want[sc] == nil {
			want[sc] = make(map[a2a.TaskState]int)
		}
		want[sc][st]++
	}
	if _, err := db.ExecContext(t.Context(), "SELECT * FROM task_counts"); err == nil {
		t.Fatal("task_counts exists at schema version 1")
	}

	s := openStore(t, path, sqlite.Options{})
	if err := db.QueryRowContext(t.Context(), "SELECT max(version) FROM schema_migrations").Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Fatalf("schema version after Open %d, %v; want %d", v, err, sqlite.SchemaVersion)
	}
	for _, sc := range countScopes {
		for _, st := range countStates {
			n, err := s.Count(t.Context(), sc, store.ListQuery{Status: st})
			if err != nil || n != want[sc][st] {
				t.Errorf("after migrating: scope %+v, state %v: kept count %d, %v; want %d", sc, st, n, err, want[sc][st])
			}
		}
	}
	if n := checkCounts(t, s, "after migrating"); n != 500 {
		t.Errorf("after migrating: %d tasks, want 500", n)
	}

	// Later writes keep the migrated counts exact.
	task := newTask("old-0", a2a.TaskStateCompleted, 0)
	task.Status.Timestamp = a2a.TimestampOf(baseTime.Add(time.Hour))
	if _, err := step(t.Context(), s, countScopes[0], task, 1, a2a.TaskStateCanceled, "m"); err != nil {
		t.Fatal(err)
	}
	create(t, s, countScopes[1], newTask("new-0", a2a.TaskStateSubmitted, 1000))
	if _, err := s.Expire(t.Context(), countFinished, baseTime.Add(100*time.Second), 1000); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, s, "after writes")
}
