package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
)

// countStates are the states the counter tests give tasks.
var countStates = []a2a.TaskState{
	a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired,
	a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled,
}

// checkCounts compares, for every scope and for no state filter and each
// state, the Total that List reads from the counters with a count of the
// tasks table. It returns the number of tasks in scopes.
func checkCounts(t *testing.T, s *postgres.Store, scopes []store.Scope, when string) int {
	t.Helper()
	ctx := t.Context()
	all := 0
	for _, scope := range scopes {
		for _, st := range append([]a2a.TaskState{a2a.TaskStateUnspecified}, countStates...) {
			q := store.ListQuery{Status: st, Limit: 1}
			res, err := s.List(ctx, scope, q)
			if err != nil {
				t.Fatalf("%s: List(%v, state %v): %v", when, scope, st, err)
			}
			n, err := s.CountTasks(ctx, scope, q)
			if err != nil {
				t.Fatalf("%s: counting tasks of %v in state %v: %v", when, scope, st, err)
			}
			if res.Total != n {
				t.Errorf("%s: scope %v, state %v: List total %d, but %d tasks", when, scope, st, res.Total, n)
			}
			if st == a2a.TaskStateUnspecified {
				all += n
			}
		}
	}
	return all
}

// TestCountsConcurrent runs creations, appends that change the state or
// not, appends that conflict or fail, imports (some conflicting), expiry
// and compactions at once from two stores on one schema, in several
// scopes; then every counter-derived Total must equal a count of the
// tasks, before and after a last compaction.
func TestCountsConcurrent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	stores := []*postgres.Store{
		openStore(t, schema, postgres.Options{}),
		openStore(t, schema, postgres.Options{}),
	}
	scopes := []store.Scope{scopeA, scopeB, {Tenant: "t1", Owner: "bob"}}
	const workers = 8
	ops := 150
	if raceEnabled {
		ops = 60
	}

	var (
		mu    sync.Mutex
		known []store.TaskRef // tasks created or imported, some since expired
	)
	remember := func(scope store.Scope, ids ...string) {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			known = append(known, store.TaskRef{Scope: scope, ID: id})
		}
	}
	pick := func(r *rand.Rand) (store.TaskRef, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(known) == 0 {
			return store.TaskRef{}, false
		}
		return known[r.IntN(len(known))], true
	}
	// changeState appends a status event in state st to ref, from the
	// seq it reads (or from a stale one), and says what happened.
	changeState := func(ctx context.Context, s *postgres.Store, ref store.TaskRef, st a2a.TaskState, stale bool) error {
		task, seq, err := s.Get(ctx, ref.Scope, ref.ID)
		if err != nil {
			return err
		}
		if stale {
			seq--
		}
		snap := withStatus(task, st, fmt.Sprintf("m%d", seq+1))
		return s.Append(ctx, ref.Scope, ref.ID, seq, []store.Event{statusEvent(seq+1, snap)}, snap)
	}

	var (
		wg        sync.WaitGroup
		statsMu   sync.Mutex
		outcomes  = make(map[string]int)
		unexpects []error
	)
	tally := func(what string, err error, want ...error) {
		statsMu.Lock()
		defer statsMu.Unlock()
		if err == nil {
			outcomes[what+" ok"]++
			return
		}
		for _, w := range want {
			if errors.Is(err, w) {
				outcomes[what+" "+w.Error()]++
				return
			}
		}
		unexpects = append(unexpects, fmt.Errorf("%s: %w", what, err))
	}
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 42))
			s := stores[w%len(stores)]
			for i := range ops {
				scope := scopes[r.IntN(len(scopes))]
				st := countStates[r.IntN(len(countStates))]
				switch op := r.IntN(100); {
				case op < 25: // create
					id := fmt.Sprintf("w%d-%d", w, i)
					task := newTask(id, st, r.IntN(1000))
					err := s.Append(ctx, scope, id, 0, []store.Event{{Seq: 1, Payload: task}}, task)
					tally("create", err)
					if err == nil {
						remember(scope, id)
					}
				case op < 30: // create an existing id: a conflict
					if ref, ok := pick(r); ok {
						task := newTask(ref.ID, st, 0)
						err := s.Append(ctx, scopes[r.IntN(len(scopes))], ref.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task)
						tally("create existing", err, store.ErrConflict)
					}
				case op < 60: // append, changing the state or not
					if ref, ok := pick(r); ok {
						tally("append", changeState(ctx, s, ref, st, false), store.ErrConflict, store.ErrNotFound)
					}
				case op < 65: // append from a stale seq
					if ref, ok := pick(r); ok {
						tally("stale append", changeState(ctx, s, ref, st, true), store.ErrConflict, store.ErrNotFound)
					}
				case op < 70: // append in another scope: not found
					if ref, ok := pick(r); ok {
						other := scopes[(slices.Index(scopes, ref.Scope)+1)%len(scopes)]
						task := newTask(ref.ID, st, 0)
						err := s.Append(ctx, other, ref.ID, 1, []store.Event{statusEvent(2, task)}, task)
						tally("append elsewhere", err, store.ErrNotFound, store.ErrConflict)
					}
				case op < 73: // append with a context that has ended: nothing happens
					if ref, ok := pick(r); ok {
						task, seq, err := s.Get(ctx, ref.Scope, ref.ID)
						if err == nil {
							cctx, cancel := context.WithCancel(ctx)
							cancel()
							snap := withStatus(task, st, "canceled")
							err = s.Append(cctx, ref.Scope, ref.ID, seq, []store.Event{statusEvent(seq+1, snap)}, snap)
						}
						tally("canceled append", err, context.Canceled, store.ErrNotFound)
					}
				case op < 83: // import, sometimes with an existing id
					tasks := make([]*a2a.Task, 1+r.IntN(20))
					ids := make([]string, len(tasks))
					for k := range tasks {
						ids[k] = fmt.Sprintf("w%d-%d-imp%d", w, i, k)
						tasks[k] = newTask(ids[k], countStates[r.IntN(len(countStates))], r.IntN(1000))
					}
					if r.IntN(3) == 0 {
						if ref, ok := pick(r); ok {
							tasks[len(tasks)-1] = newTask(ref.ID, st, 0)
						}
					}
					err := s.Import(ctx, scope, tasks)
					tally("import", err, store.ErrConflict)
					if err == nil {
						remember(scope, ids...)
					}
				case op < 93: // expire some finished tasks
					states := []a2a.TaskState{a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled}
					_, err := s.Expire(ctx, states, t0.Add(time.Duration(r.IntN(1000))*time.Second), 1+r.IntN(5))
					tally("expire", err)
				default:
					tally("compact", s.Compact(ctx))
				}
			}
		})
	}
	wg.Wait()
	for _, err := range unexpects {
		t.Error(err)
	}
	t.Logf("outcomes: %v", outcomes)
	for _, what := range []string{"create ok", "create existing " + store.ErrConflict.Error(), "append ok",
		"stale append " + store.ErrConflict.Error(), "import ok", "import " + store.ErrConflict.Error(), "expire ok"} {
		if outcomes[what] == 0 {
			t.Errorf("the workload had no %q: it tests less than it should", what)
		}
	}

	var deltas int
	admin := adminPool(t)
	count := "SELECT count(*) FROM " + pgx.Identifier{schema, "task_count_deltas"}.Sanitize()
	if err := admin.QueryRow(ctx, count).Scan(&deltas); err != nil {
		t.Fatal(err)
	}
	n := checkCounts(t, stores[0], scopes, fmt.Sprintf("with %d deltas", deltas))
	if err := stores[1].Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := admin.QueryRow(ctx, count).Scan(&deltas); err != nil || deltas != 0 {
		t.Errorf("after a compaction: %d deltas, %v; want 0", deltas, err)
	}
	checkCounts(t, stores[0], scopes, "after compaction")
	t.Logf("%d tasks in the end", n)
}

// TestCountsMigration fills a schema at version 1, with no counters, then
// opens it: the migration to version 2 counts the tasks it finds.
func TestCountsMigration(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	admin := adminPool(t)
	if err := postgres.MigrateTo(ctx, admin, schema, 1); err != nil {
		t.Fatal(err)
	}
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", schema+".task_counts").Scan(&exists); err != nil || exists {
		t.Fatalf("task_counts at version 1: exists %v, %v; want no table", exists, err)
	}
	// Scopes t0..t2 × o0..o1, states 1..6 unevenly.
	if _, err := admin.Exec(ctx, "INSERT INTO "+pgx.Identifier{schema, "tasks"}.Sanitize()+
		` (id, tenant, owner, context_id, state, status_ts, seq, runner, snapshot)
		SELECT 'task-' || i, 't' || (i % 3), 'o' || (i % 2), 'ctx-' || (i % 10), 1 + (i * i) % 6, 1000000 + i, 1, 'r', '\x7b7d'
		FROM generate_series(1, 5000) AS i`); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, schema, postgres.Options{})
	var v int
	if err := admin.QueryRow(ctx, "SELECT max(version) FROM "+pgx.Identifier{schema, "schema_migrations"}.Sanitize()).Scan(&v); err != nil || v != postgres.SchemaVersion {
		t.Fatalf("schema version after Open: %d, %v; want %d", v, err, postgres.SchemaVersion)
	}
	var scopes []store.Scope
	for i := range 3 {
		for j := range 2 {
			scopes = append(scopes, store.Scope{Tenant: fmt.Sprintf("t%d", i), Owner: fmt.Sprintf("o%d", j)})
		}
	}
	if n := checkCounts(t, s, scopes, "after migration"); n != 5000 {
		t.Errorf("%d tasks counted in all scopes, want 5000", n)
	}
	// And the counters follow the next writes.
	create(t, s, scopes[0], newTask("new-1", a2a.TaskStateWorking, 0))
	checkCounts(t, s, scopes, "after a creation")
}

// TestPoolSize checks the default pool size of Open, and that a DSN's
// pool_max_conns wins.
func TestPoolSize(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s := openStore(t, schema, postgres.Options{})
	if got, want := s.MaxConns(), int32(max(4, runtime.NumCPU())); got != want {
		t.Errorf("MaxConns without pool_max_conns = %d, want pgxpool's default %d", got, want)
	}
	dsn := testDSN()
	switch {
	case !strings.Contains(dsn, "://"):
		dsn += " pool_max_conns=7"
	case strings.Contains(dsn, "?"):
		dsn += "&pool_max_conns=7"
	default:
		dsn += "?pool_max_conns=7"
	}
	s2, err := postgres.Open(t.Context(), dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := s2.MaxConns(); got != 7 {
		t.Errorf("MaxConns with pool_max_conns=7 = %d, want 7", got)
	}
}
