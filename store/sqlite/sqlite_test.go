package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
	"github.com/goa2a/a2a/store/storetest"
)

var scope = store.Scope{Tenant: "t1", Owner: "alice"}

var baseTime = time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)

// openStore opens a store on path and closes it when the test ends.
func openStore(t testing.TB, path string, opts sqlite.Options) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// newPath returns the path of a database file that does not exist yet.
func newPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "tasks.db")
}

// rawDB opens the file directly, for what the store's API cannot do.
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newTask(id string, state a2a.TaskState, i int) *a2a.Task {
	return &a2a.Task{
		ID:        id,
		ContextID: "ctx-1",
		Status:    a2a.TaskStatus{State: state, Timestamp: a2a.TimestampOf(baseTime.Add(time.Duration(i) * time.Second))},
	}
}

// create creates task with the single event that carries it.
func create(t testing.TB, s store.Store, sc store.Scope, task *a2a.Task) {
	t.Helper()
	if err := s.Append(t.Context(), sc, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
		t.Fatalf("create %q: %v", task.ID, err)
	}
}

// step appends a status event moving task to state, after seq after, and
// returns the new snapshot.
func step(ctx context.Context, s store.Store, sc store.Scope, task *a2a.Task, after int64, state a2a.TaskState, msgID string) (*a2a.Task, error) {
	next := *task
	next.Status = a2a.TaskStatus{
		State:     state,
		Timestamp: a2a.TimestampOf(task.Status.Timestamp.Add(time.Millisecond)),
		Message:   a2a.NewTextMessage(a2a.RoleAgent, msgID, "status "+msgID),
	}
	ev := &a2a.TaskStatusUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Status: next.Status}
	return &next, s.Append(ctx, sc, task.ID, after, []store.Event{{Seq: after + 1, Payload: ev}}, &next)
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openStore(t, newPath(t), sqlite.Options{})
	})
}

func TestConformanceNoBatching(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openStore(t, newPath(t), sqlite.Options{MaxBatch: 1, Durability: sqlite.PowerLoss})
	})
}

// TestReopen: what one store wrote, the next one on the file reads.
func TestReopen(t *testing.T) {
	path := newPath(t)
	s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	task := newTask("task-1", a2a.TaskStateSubmitted, 0)
	create(t, s, scope, task)
	snap, err := step(t.Context(), s, scope, task, 1, a2a.TaskStateWorking, "m2")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &a2a.TaskPushNotificationConfig{ID: "cfg", TaskID: "task-1", URL: "https://example.com/hook", Token: "tok"}
	if err := s.PutPushConfig(t.Context(), scope, cfg); err != nil {
		t.Fatal(err)
	}
	secret, err := s.Secret(t.Context(), "page-token")
	if err != nil {
		t.Fatal(err)
	}
	wantEvents, err := s.Events(t.Context(), scope, "task-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s = openStore(t, path, sqlite.Options{})
	got, seq, err := s.Get(t.Context(), scope, "task-1")
	if err != nil {
		t.Fatalf("Get after reopen: %v", err)
	}
	if seq != 2 || mustJSON(t, got) != mustJSON(t, snap) {
		t.Errorf("Get after reopen = %s at seq %d, want %s at seq 2", mustJSON(t, got), seq, mustJSON(t, snap))
	}
	evs, err := s.Events(t.Context(), scope, "task-1", 0)
	if err != nil {
		t.Fatalf("Events after reopen: %v", err)
	}
	if g, w := eventsJSON(t, evs), eventsJSON(t, wantEvents); g != w || len(evs) != 2 {
		t.Errorf("Events after reopen:\n got %s\nwant %s", g, w)
	}
	gotCfg, err := s.GetPushConfig(t.Context(), scope, "task-1", "cfg")
	if err != nil || mustJSON(t, gotCfg) != mustJSON(t, cfg) {
		t.Errorf("GetPushConfig after reopen = %s, %v; want %s", mustJSON(t, gotCfg), err, mustJSON(t, cfg))
	}
	res, err := s.List(t.Context(), scope, store.ListQuery{Limit: 10})
	if err != nil || len(res.Tasks) != 1 || res.Total != 1 {
		t.Errorf("List after reopen = %d tasks, total %d, %v; want 1", len(res.Tasks), res.Total, err)
	}
	again, err := s.Secret(t.Context(), "page-token")
	if err != nil || string(again) != string(secret) {
		t.Errorf("Secret after reopen = %x, %v; want %x", again, err, secret)
	}
	// And the log goes on where it stopped.
	if _, err := step(t.Context(), s, scope, snap, 2, a2a.TaskStateCompleted, "m3"); err != nil {
		t.Errorf("Append after reopen: %v", err)
	}
	if err := s.Check(t.Context()); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestMigrationRace opens a new file from several stores at once: all
// succeed, and each migration is applied once.
func TestMigrationRace(t *testing.T) {
	path := newPath(t)
	const n = 4
	stores := make([]*sqlite.Store, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = sqlite.Open(t.Context(), path, sqlite.Options{})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
			continue
		}
		defer stores[i].Close()
	}
	checkMigrations(t, path)
	// They all work on the one database.
	for i, s := range stores {
		if s != nil {
			create(t, s, scope, newTask(fmt.Sprintf("task-%d", i), a2a.TaskStateWorking, i))
		}
	}
}

// checkMigrations checks that the file at path records each migration,
// and once.
func checkMigrations(t *testing.T, path string) {
	t.Helper()
	rows, err := rawDB(t, path).QueryContext(t.Context(), "SELECT version, count(*) FROM schema_migrations GROUP BY version ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var versions []int
	for rows.Next() {
		var v, count int
		if err := rows.Scan(&v, &count); err != nil {
			t.Fatal(err)
		}
		if count != 1 {
			t.Errorf("version %d recorded %d times", v, count)
		}
		versions = append(versions, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var want []int
	for v := 1; v <= sqlite.SchemaVersion; v++ {
		want = append(want, v)
	}
	if !slices.Equal(versions, want) {
		t.Errorf("schema_migrations has versions %v, want %v", versions, want)
	}
}

// TestNewerSchema: a file migrated by a newer release is refused.
func TestNewerSchema(t *testing.T) {
	path := newPath(t)
	if err := openStore(t, path, sqlite.Options{}).Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := rawDB(t, path).ExecContext(t.Context(), "INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)"); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err == nil {
		s.Close()
		t.Fatal("Open of a database at schema version 99 succeeded")
	}
	for _, want := range []string{path, "version 99", fmt.Sprintf("version %d", sqlite.SchemaVersion)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open error %q does not mention %q", err, want)
		}
	}
}

// TestGroupCommit: concurrent Appends share commits.
func TestGroupCommit(t *testing.T) {
	s := openStore(t, newPath(t), sqlite.Options{})
	const (
		writers = 200
		steps   = 3 // appends after the create
	)
	before := s.Stats()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			<-start
			task := newTask(fmt.Sprintf("task-%03d", i), a2a.TaskStateSubmitted, i)
			if err := s.Append(t.Context(), scope, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
				t.Errorf("create %s: %v", task.ID, err)
				return
			}
			for k := range steps {
				var err error
				if task, err = step(t.Context(), s, scope, task, int64(k+1), a2a.TaskStateWorking, fmt.Sprint(k)); err != nil {
					t.Errorf("append to %s: %v", task.ID, err)
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	st := s.Stats()
	appends, commits := st.Appends-before.Appends, st.Commits-before.Commits
	t.Logf("%d appends in %d commits", appends, commits)
	if appends != writers*(1+steps) {
		t.Errorf("Stats counted %d appends, want %d", appends, writers*(1+steps))
	}
	if commits >= appends {
		t.Errorf("%d appends took %d commits; group commit should need fewer", appends, commits)
	}
	res, err := s.List(t.Context(), scope, store.ListQuery{Limit: 1})
	if err != nil || res.Total != writers {
		t.Errorf("List total = %d, %v; want %d", res.Total, err, writers)
	}
}

// TestCanceledWrites: a write whose context ends either returns the
// context's error and was not applied, or returns nil and was.
func TestCanceledWrites(t *testing.T) {
	s := openStore(t, newPath(t), sqlite.Options{})
	const n = 200
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), time.Duration(i%20)*50*time.Microsecond)
			defer cancel()
			task := newTask(fmt.Sprintf("task-%03d", i), a2a.TaskStateSubmitted, i)
			errs[i] = s.Append(ctx, scope, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task)
		})
	}
	wg.Wait()
	var applied, canceled int
	for i, err := range errs {
		id := fmt.Sprintf("task-%03d", i)
		_, _, gerr := s.Get(t.Context(), scope, id)
		switch {
		case err == nil:
			applied++
			if gerr != nil {
				t.Errorf("create %s succeeded, but Get: %v", id, gerr)
			}
		case errors.Is(err, context.DeadlineExceeded):
			canceled++
			if !errors.Is(gerr, store.ErrNotFound) {
				t.Errorf("create %s returned %v, but Get: %v; want ErrNotFound", id, err, gerr)
			}
		default:
			t.Errorf("create %s: %v", id, err)
		}
	}
	t.Logf("%d applied, %d canceled", applied, canceled)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	task := newTask("late", a2a.TaskStateSubmitted, 0)
	if err := s.Append(ctx, scope, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task); !errors.Is(err, context.Canceled) {
		t.Errorf("Append with a canceled context: %v, want %v", err, context.Canceled)
	}
}

// TestOrphansAfterCrash: a store that dies leaves its unfinished tasks to
// the stores that outlive it, once its lease runs out.
func TestOrphansAfterCrash(t *testing.T) {
	path := newPath(t)
	const ttl = time.Second
	start := time.Now() // the crashed store's heartbeat is no older
	crashed, err := sqlite.Open(t.Context(), path, sqlite.Options{Replica: "web-1"})
	if err != nil {
		t.Fatal(err)
	}
	other := store.Scope{Tenant: "t2", Owner: "bob"}
	create(t, crashed, scope, newTask("working", a2a.TaskStateWorking, 1))
	create(t, crashed, other, newTask("submitted", a2a.TaskStateSubmitted, 0))
	create(t, crashed, scope, newTask("done", a2a.TaskStateCompleted, 2))
	create(t, crashed, scope, newTask("taken-over", a2a.TaskStateWorking, 3))
	crashed.Crash()

	s := openStore(t, path, sqlite.Options{LeaseTTL: ttl})
	unfinished := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking}
	// taken-over was last written by the survivor: not an orphan.
	task, seq, err := s.Get(t.Context(), scope, "taken-over")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := step(t.Context(), s, scope, task, seq, a2a.TaskStateWorking, "mine"); err != nil {
		t.Fatal(err)
	}
	create(t, s, scope, newTask("own", a2a.TaskStateWorking, 4))

	// The crashed store ran in this process, so only its lease tells it
	// is gone: until it runs out, nothing is an orphan. On a loaded
	// machine it may have run out already (the store's clock is in
	// milliseconds, hence the margin).
	refs, err := s.Orphans(t.Context(), unfinished, 10)
	switch {
	case err != nil:
		t.Fatal(err)
	case len(refs) != 0 && time.Since(start) < ttl-10*time.Millisecond:
		t.Fatalf("Orphans before the lease ran out = %v; want none", refs)
	case len(refs) != 0:
		t.Logf("the lease ran out before Orphans (%v after the crashed store opened): not checked", time.Since(start))
	}
	time.Sleep(ttl + 100*time.Millisecond)
	refs, err = s.Orphans(t.Context(), unfinished, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []store.TaskRef{{Scope: other, ID: "submitted", Seq: 1, Runner: "web-1"}, {Scope: scope, ID: "working", Seq: 1, Runner: "web-1"}} // oldest first
	if !slices.Equal(refs, want) {
		t.Errorf("Orphans = %v, want %v", refs, want)
	}
	refs, err = s.Orphans(t.Context(), unfinished, 1)
	if err != nil || !slices.Equal(refs, want[:1]) {
		t.Errorf("Orphans(limit 1) = %v, %v; want %v", refs, err, want[:1])
	}
	// The crashed store's runner row is gone.
	var n int
	if err := rawDB(t, path).QueryRowContext(t.Context(), "SELECT count(*) FROM runners WHERE id = ?", crashed.RunnerID()).Scan(&n); err != nil || n != 0 {
		t.Errorf("runner rows of the crashed store: %d, %v; want 0", n, err)
	}
}

// TestOrphansDeadProcess: a runner whose process is gone from this host is
// dead at once, whatever its lease.
func TestOrphansDeadProcess(t *testing.T) {
	path := newPath(t)
	crashed, err := sqlite.Open(t.Context(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	create(t, crashed, scope, newTask("working", a2a.TaskStateWorking, 0))
	crashed.Crash()
	host, _ := os.Hostname()
	runner := host + ":" + strconv.Itoa(os.Getpid()) // the default name
	// Make the crashed store's runner look like a process that exited.
	cmd := exec.Command("true")
	if _, err := exec.LookPath("true"); err != nil {
		cmd = exec.Command(os.Args[0], "-test.run=^$")
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("running a child process: %v", err)
	}
	if _, err := rawDB(t, path).ExecContext(t.Context(), "UPDATE runners SET pid = ? WHERE id = ?", cmd.Process.Pid, crashed.RunnerID()); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, path, sqlite.Options{})
	refs, err := s.Orphans(t.Context(), []a2a.TaskState{a2a.TaskStateWorking}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := []store.TaskRef{{Scope: scope, ID: "working", Seq: 1, Runner: runner}}; !slices.Equal(refs, want) {
		t.Errorf("Orphans = %v, want %v", refs, want)
	}
}

// TestCloseRemovesRunner: a store that closes cleanly hands its unfinished
// tasks over at once.
func TestCloseRemovesRunner(t *testing.T) {
	path := newPath(t)
	first, err := sqlite.Open(t.Context(), path, sqlite.Options{Replica: "web-2"})
	if err != nil {
		t.Fatal(err)
	}
	create(t, first, scope, newTask("working", a2a.TaskStateWorking, 0))
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, _, err := first.Get(t.Context(), scope, "working"); err == nil {
		t.Error("Get after Close succeeded")
	}
	task := newTask("late", a2a.TaskStateWorking, 0)
	if err := first.Append(t.Context(), scope, "late", 0, []store.Event{{Seq: 1, Payload: task}}, task); !errors.Is(err, sqlite.ErrClosed) {
		t.Errorf("Append after Close: %v, want %v", err, sqlite.ErrClosed)
	}
	s := openStore(t, path, sqlite.Options{})
	refs, err := s.Orphans(t.Context(), []a2a.TaskState{a2a.TaskStateWorking}, 10)
	if want := []store.TaskRef{{Scope: scope, ID: "working", Seq: 1, Runner: "web-2"}}; err != nil || !slices.Equal(refs, want) {
		t.Errorf("Orphans = %v, %v; want %v", refs, err, want)
	}
}

func TestPowerLoss(t *testing.T) {
	path := newPath(t)
	s := openStore(t, path, sqlite.Options{Durability: sqlite.PowerLoss})
	task := newTask("task-1", a2a.TaskStateSubmitted, 0)
	create(t, s, scope, task)
	if _, err := step(t.Context(), s, scope, task, 1, a2a.TaskStateCompleted, "done"); err != nil {
		t.Fatal(err)
	}
	if _, seq, err := s.Get(t.Context(), scope, "task-1"); err != nil || seq != 2 {
		t.Errorf("Get = seq %d, %v; want 2", seq, err)
	}
	var mode string
	if err := rawDB(t, path).QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if _, err := sqlite.Open(t.Context(), newPath(t), sqlite.Options{Durability: 7}); err == nil {
		t.Error("Open with an unknown durability succeeded")
	}
}

func TestCheck(t *testing.T) {
	s := openStore(t, newPath(t), sqlite.Options{})
	create(t, s, scope, newTask("task-1", a2a.TaskStateSubmitted, 0))
	if err := s.Check(t.Context()); err != nil {
		t.Errorf("Check: %v", err)
	}
}

func TestOpenBadPath(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		dir,                                    // a directory
		filepath.Join(dir, "missing", "a.db"),  // in a missing directory
		filepath.Join(notDir, "a.db"),          // in a file
		"",                                     // nothing
		":memory:",                             // not shared by the pools
		"file:" + filepath.Join(dir, "uri.db"), // URIs are not paths
	} {
		s, err := sqlite.Open(t.Context(), path, sqlite.Options{})
		if err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", path)
			continue
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("Open(%q) error %q does not name the path", path, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); err == nil {
		t.Error("Open created the missing directory")
	}
}

// TestListUsesIndex: every combination of List filters is a range scan of
// an index in the result order (tasks_list, or tasks_list_context with a
// context filter; a state filter is checked in the index), with no sort
// and no full scan, each task joined to its snapshot by key, and so is its
// count (a covering scan); without a context or time filter, the count is
// a lookup of the kept counts instead. The statements name their index, so
// the plan of an empty database is the plan of a full one.
func TestListUsesIndex(t *testing.T) {
	s := openStore(t, newPath(t), sqlite.Options{})
	for mask := range 16 {
		q := store.ListQuery{Limit: 10}
		if mask&1 != 0 {
			q.ContextID = "ctx"
		}
		if mask&2 != 0 {
			q.Status = a2a.TaskStateWorking
		}
		if mask&4 != 0 {
			q.StatusAfter = baseTime
		}
		if mask&8 != 0 {
			q.After = &store.Cursor{Timestamp: baseTime.Add(time.Hour), ID: "task-9"}
		}
		index := "tasks_list "
		if q.ContextID != "" {
			index = "tasks_list_context "
		}
		page, pageArgs, count, countArgs := sqlite.ListSQL(scope, q)
		kept := q.ContextID == "" && q.StatusAfter.IsZero()
		for _, c := range []struct {
			query string
			args  []any
			want  []string // how the plan's steps start
		}{
			{page, pageArgs, []string{"SEARCH t USING INDEX " + index, "SEARCH s USING INTEGER PRIMARY KEY (rowid=?)"}},
			{count, countArgs, []string{map[bool]string{false: "SEARCH t USING COVERING INDEX " + index, true: "SEARCH task_counts USING PRIMARY KEY (tenant=? AND owner=?"}[kept]}},
		} {
			plan, err := s.QueryPlan(t.Context(), c.query, c.args...)
			if err != nil {
				t.Fatalf("EXPLAIN QUERY PLAN %s: %v", c.query, err)
			}
			ok := len(plan) == len(c.want)
			for i := 0; ok && i < len(plan); i++ {
				ok = strings.HasPrefix(plan[i], c.want[i])
			}
			if !ok {
				t.Errorf("%s\n plan: %s\n want steps starting %q", c.query, strings.Join(plan, "; "), c.want)
			}
		}
	}
}

// TestMaintainUsesIndex: Orphans and Expire read one range of tasks_state
// per state, in order, and merge them (no sort, which would read every
// finished task of the store at each pass of Expire); Get is lookups by
// key and one range of a task's events.
func TestMaintainUsesIndex(t *testing.T) {
	s := openStore(t, newPath(t), sqlite.Options{})
	check := func(query string, searches int, want ...string) {
		t.Helper()
		args := []any{1, 2, 3, 4, 5, 6}
		plan, err := s.QueryPlan(t.Context(), query, args...)
		if err != nil {
			t.Fatalf("EXPLAIN QUERY PLAN %s: %v", query, err)
		}
		text := strings.Join(plan, "; ")
		n := 0
		for _, step := range plan {
			if strings.HasPrefix(step, "SEARCH ") {
				n++
			}
		}
		bad := n != searches || strings.Contains(text, "SCAN ") || strings.Contains(text, "TEMP B-TREE")
		for _, w := range want {
			bad = bad || !strings.Contains(text, w)
		}
		if bad {
			t.Errorf("%s\n plan: %s\n want %d searches, %q, no scan and no sort", query, text, searches, want)
		}
	}
	for n := 1; n <= 4; n++ {
		check(sqlite.OrphansSQL(n), n, "SEARCH tasks USING INDEX tasks_state (state=?)")
		check(sqlite.ExpireSQL(n), n, "SEARCH tasks USING INDEX tasks_state (state=? AND status_ts<?)")
		if n > 1 {
			check(sqlite.OrphansSQL(n), n, "MERGE (UNION ALL)")
			check(sqlite.ExpireSQL(n), n, "MERGE (UNION ALL)")
		}
	}
	check(sqlite.GetSQL, 5, "SEARCH t USING INDEX sqlite_autoindex_tasks_1 (id=?)",
		"SEARCH s USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH e USING PRIMARY KEY (rid=? AND seq>? AND seq<?)")
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func eventsJSON(t testing.TB, evs []store.Event) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "#%d %s\n", ev.Seq, mustJSON(t, a2a.StreamResponse{Event: ev.Payload}))
	}
	return b.String()
}

// TestSubMillisecondBounds: times are stored in whole milliseconds; bounds
// that fall between two milliseconds still split the tasks where the
// store.Store contract says.
func TestSubMillisecondBounds(t *testing.T) {
	s := openStore(t, newPath(t), sqlite.Options{})
	early := newTask("early", a2a.TaskStateCompleted, 0)
	late := newTask("late", a2a.TaskStateCompleted, 0)
	late.Status.Timestamp = a2a.TimestampOf(early.Status.Timestamp.Add(time.Millisecond))
	create(t, s, scope, early)
	create(t, s, scope, late)
	between := early.Status.Timestamp.Add(500 * time.Microsecond)

	ids := func(q store.ListQuery) []string {
		t.Helper()
		q.Limit = 10
		res, err := s.List(t.Context(), scope, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, task := range res.Tasks {
			out = append(out, task.ID)
		}
		return out
	}
	if got := ids(store.ListQuery{StatusAfter: between}); !slices.Equal(got, []string{"late"}) {
		t.Errorf("List(StatusAfter between) = %v, want [late]", got)
	}
	if got := ids(store.ListQuery{After: &store.Cursor{Timestamp: between, ID: "zzz"}}); !slices.Equal(got, []string{"early"}) {
		t.Errorf("List(After between) = %v, want [early]", got)
	}
	if got := ids(store.ListQuery{After: &store.Cursor{Timestamp: late.Status.Timestamp.Time, ID: "late"}}); !slices.Equal(got, []string{"early"}) {
		t.Errorf("List(After late) = %v, want [early]", got)
	}
	n, err := s.Expire(t.Context(), []a2a.TaskState{a2a.TaskStateCompleted}, between, 10)
	if err != nil || n != 1 {
		t.Fatalf("Expire(between) = %d, %v; want 1", n, err)
	}
	if got := ids(store.ListQuery{}); !slices.Equal(got, []string{"late"}) {
		t.Errorf("List after Expire = %v, want [late]", got)
	}
}
