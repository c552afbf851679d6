package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/internal/lease"
	"github.com/goa2a/a2a/store/postgres"
)

var (
	scopeA = store.Scope{Tenant: "t1", Owner: "alice"}
	scopeB = store.Scope{Tenant: "t2", Owner: "bob"}
	t0     = time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
)

// newTask returns a task snapshot whose status is i seconds after t0.
func newTask(id string, state a2a.TaskState, i int) *a2a.Task {
	return &a2a.Task{
		ID:        id,
		ContextID: "ctx-" + id,
		Status:    a2a.TaskStatus{State: state, Timestamp: a2a.TimestampOf(t0.Add(time.Duration(i) * time.Second))},
	}
}

// withStatus returns a copy of task in state, marked by msgID.
func withStatus(task *a2a.Task, state a2a.TaskState, msgID string) *a2a.Task {
	c := *task
	c.Status = a2a.TaskStatus{State: state, Timestamp: task.Status.Timestamp, Message: a2a.NewTextMessage(a2a.RoleAgent, msgID, msgID)}
	return &c
}

func statusEvent(seq int64, snap *a2a.Task) store.Event {
	return store.Event{Seq: seq, Payload: &a2a.TaskStatusUpdateEvent{TaskID: snap.ID, ContextID: snap.ContextID, Status: snap.Status}}
}

func create(t *testing.T, s store.Store, scope store.Scope, task *a2a.Task) {
	t.Helper()
	if err := s.Append(t.Context(), scope, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
		t.Fatalf("create %q: %v", task.ID, err)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func eventsJSON(t *testing.T, evs []store.Event) string {
	t.Helper()
	var parts []string
	for _, ev := range evs {
		parts = append(parts, fmt.Sprintf("%d %s", ev.Seq, jsonOf(t, a2a.StreamResponse{Event: ev.Payload})))
	}
	return strings.Join(parts, "\n")
}

// TestReopen closes a store and opens its schema again: tasks, logs, push
// configs and secrets are all there.
func TestReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s1 := openStore(t, schema, postgres.Options{})
	task := newTask("task-1", a2a.TaskStateSubmitted, 0)
	create(t, s1, scopeA, task)
	evs := []store.Event{{Seq: 1, Payload: task}, statusEvent(2, withStatus(task, a2a.TaskStateWorking, "m2")),
		statusEvent(3, withStatus(task, a2a.TaskStateWorking, "m3"))}
	snap := store.Fold(task, evs[1:])
	if err := s1.Append(ctx, scopeA, task.ID, 1, evs[1:], snap); err != nil {
		t.Fatal(err)
	}
	cfg := &a2a.TaskPushNotificationConfig{ID: "cfg", TaskID: task.ID, URL: "https://example.com/hook", Token: "tok"}
	if err := s1.PutPushConfig(ctx, scopeA, cfg); err != nil {
		t.Fatal(err)
	}
	secret, err := s1.Secret(ctx, "key")
	if err != nil {
		t.Fatal(err)
	}
	if err := s1.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s2 := openStore(t, schema, postgres.Options{})
	got, seq, err := s2.Get(ctx, scopeA, task.ID)
	if err != nil {
		t.Fatalf("Get after reopen: %v", err)
	}
	if seq != 3 || jsonOf(t, got) != jsonOf(t, snap) {
		t.Errorf("Get after reopen = %s at seq %d, want %s at seq 3", jsonOf(t, got), seq, jsonOf(t, snap))
	}
	gotEvs, err := s2.Events(ctx, scopeA, task.ID, 0)
	if err != nil {
		t.Fatalf("Events after reopen: %v", err)
	}
	if g, w := eventsJSON(t, gotEvs), eventsJSON(t, evs); g != w {
		t.Errorf("Events after reopen:\n%s\nwant\n%s", g, w)
	}
	gotCfg, err := s2.GetPushConfig(ctx, scopeA, task.ID, "cfg")
	if err != nil || jsonOf(t, gotCfg) != jsonOf(t, cfg) {
		t.Errorf("GetPushConfig after reopen = %v, %v; want %s", gotCfg, err, jsonOf(t, cfg))
	}
	res, err := s2.List(ctx, scopeA, store.ListQuery{Limit: 10})
	if err != nil || len(res.Tasks) != 1 || res.Total != 1 {
		t.Errorf("List after reopen = %+v, %v; want the task", res, err)
	}
	again, err := s2.Secret(ctx, "key")
	if err != nil || string(again) != string(secret) {
		t.Errorf("Secret after reopen = %x, %v; want %x", again, err, secret)
	}
}

// TestMigrationRace opens a brand-new schema from several stores at once:
// all succeed and each migration is recorded once.
func TestMigrationRace(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	const n = 4
	stores := make([]*postgres.Store, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = postgres.Open(t.Context(), testDSN(), postgres.Options{Schema: schema})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open %d: %v", i, err)
			continue
		}
		if err := stores[i].Close(); err != nil {
			t.Errorf("Close %d: %v", i, err)
		}
	}
	rows, err := adminPool(t).Query(t.Context(),
		"SELECT version, count(*) FROM "+pgx.Identifier{schema, "schema_migrations"}.Sanitize()+" GROUP BY version ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var version, count int
	if _, err := pgx.ForEachRow(rows, []any{&version, &count}, func() error {
		got = append(got, fmt.Sprintf("%d×%d", version, count))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for v := 1; v <= postgres.SchemaVersion; v++ {
		want = append(want, fmt.Sprintf("%d×1", v))
	}
	if !slices.Equal(got, want) {
		t.Errorf("schema_migrations (version×count) = %v, want %v", got, want)
	}
}

// TestNewerSchema refuses a schema migrated by a newer release.
func TestNewerSchema(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s := openStore(t, schema, postgres.Options{})
	newer := postgres.SchemaVersion + 1
	if _, err := adminPool(t).Exec(t.Context(),
		"INSERT INTO "+pgx.Identifier{schema, "schema_migrations"}.Sanitize()+" (version) VALUES ($1)", newer); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(t.Context()); err == nil {
		t.Errorf("Check on a schema at version %d succeeded, want an error", newer)
	}
	s2, err := postgres.Open(t.Context(), testDSN(), postgres.Options{Schema: schema})
	if err == nil {
		s2.Close()
		t.Fatalf("Open of a schema at version %d succeeded, want an error", newer)
	}
	for _, want := range []string{fmt.Sprintf("version %d", newer), fmt.Sprintf("version %d", postgres.SchemaVersion), schema} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open: error %q does not mention %q", err, want)
		}
	}
}

// TestNotify follows a task from another connection: LISTEN, then read
// the events each notification announces.
func TestNotify(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openStore(t, newSchema(t), postgres.Options{})
	other := openStore(t, newSchema(t), postgres.Options{})
	if s.Channel() == other.Channel() || !strings.HasPrefix(s.Channel(), postgres.NotifyChannel+".") {
		t.Fatalf("channels %q and %q: want distinct, %q followed by the schema", s.Channel(), other.Channel(), postgres.NotifyChannel)
	}

	conn, err := pgx.Connect(ctx, testDSN())
	if err != nil {
		t.Fatalf("connecting the listener: %v\n%s", err, startHint)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.Channel()}.Sanitize()); err != nil {
		t.Fatal(err)
	}

	// follow waits for the next notification and reads the events it
	// announces, after the last seq seen.
	seen := int64(0)
	follow := func(wantSeq int64) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		n, err := conn.WaitForNotification(wctx)
		if err != nil {
			t.Fatalf("waiting for the notification of seq %d: %v", wantSeq, err)
		}
		i := strings.LastIndexByte(n.Payload, ':')
		seq, err := strconv.ParseInt(n.Payload[i+1:], 10, 64)
		if i < 0 || err != nil || n.Channel != s.Channel() {
			t.Fatalf("notification %q on %q: want <task>:<seq> on %q", n.Payload, n.Channel, s.Channel())
		}
		if id := n.Payload[:i]; id != "task:1" || seq != wantSeq {
			t.Fatalf("notification for task %q seq %d, want task %q seq %d", id, seq, "task:1", wantSeq)
		}
		evs, err := s.Events(ctx, scopeA, "task:1", seen)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != int(seq-seen) || evs[len(evs)-1].Seq != seq {
			t.Fatalf("Events(%d) after notification of seq %d: %d events", seen, seq, len(evs))
		}
		seen = seq
	}

	// A task id with a colon: the payload is split at the last one.
	task := newTask("task:1", a2a.TaskStateSubmitted, 0)
	create(t, s, scopeA, task)
	follow(1)
	snap := withStatus(task, a2a.TaskStateWorking, "m")
	if err := s.Append(ctx, scopeA, task.ID, 1, []store.Event{statusEvent(2, snap), statusEvent(3, snap)}, snap); err != nil {
		t.Fatal(err)
	}
	follow(3)

	// Neither a failed Append nor an Append in another schema notifies;
	// the next notification is the next successful Append's.
	if err := s.Append(ctx, scopeA, task.ID, 1, []store.Event{statusEvent(2, snap)}, snap); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale Append: %v, want ErrConflict", err)
	}
	create(t, other, scopeA, newTask("task:1", a2a.TaskStateSubmitted, 0))
	if err := s.Append(ctx, scopeA, task.ID, 3, []store.Event{statusEvent(4, snap)}, snap); err != nil {
		t.Fatal(err)
	}
	follow(4)
}

// TestOrphansAfterCrash finds the unfinished tasks of a store whose
// process died: first by its expired lease, then by its process id.
func TestOrphansAfterCrash(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	const ttl = time.Second
	a := openStore(t, schema, postgres.Options{LeaseTTL: ttl, Replica: "web-1"})
	b := openStore(t, schema, postgres.Options{LeaseTTL: ttl})
	unfinished := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking}

	create(t, a, scopeA, newTask("w", a2a.TaskStateWorking, 0))
	create(t, a, scopeB, newTask("s", a2a.TaskStateSubmitted, 1))
	create(t, a, scopeA, newTask("done", a2a.TaskStateCompleted, 2))
	create(t, a, scopeA, newTask("input", a2a.TaskStateInputRequired, 3))
	create(t, b, scopeA, newTask("mine", a2a.TaskStateWorking, -1))

	// Past the lease, heartbeats keep a running store alive.
	time.Sleep(ttl * 3 / 2)
	if refs, err := b.Orphans(ctx, unfinished, 10); err != nil || len(refs) != 0 {
		t.Fatalf("Orphans while every store runs = %v, %v; want none", refs, err)
	}

	a.Crash()
	want := []store.TaskRef{{Scope: scopeA, ID: "w", Seq: 1, Runner: "web-1"}, {Scope: scopeB, ID: "s", Seq: 1, Runner: "web-1"}}
	var refs []store.TaskRef
	for deadline := time.Now().Add(15 * time.Second); ; {
		var err error
		if refs, err = b.Orphans(ctx, unfinished, 10); err != nil {
			t.Fatal(err)
		}
		if len(refs) > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(ttl / 10)
	}
	if !slices.Equal(refs, want) {
		t.Fatalf("Orphans after the crash = %v, want %v", refs, want)
	}
	var n int
	if err := adminPool(t).QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema, "runners"}.Sanitize()+" WHERE id = $1", a.RunnerID()).Scan(&n); err != nil || n != 0 {
		t.Errorf("runner rows of the crashed store after Orphans: %d, %v; want 0", n, err)
	}
	if refs, err := b.Orphans(ctx, unfinished, 1); err != nil || !slices.Equal(refs, want[:1]) {
		t.Errorf("Orphans(limit 1) = %v, %v; want %v", refs, err, want[:1])
	}
	// Recovering a task makes it b's.
	w := newTask("w", a2a.TaskStateWorking, 0)
	if err := b.Append(ctx, scopeA, "w", 1, []store.Event{statusEvent(2, withStatus(w, a2a.TaskStateFailed, "recovered"))}, withStatus(w, a2a.TaskStateFailed, "recovered")); err != nil {
		t.Fatal(err)
	}
	if refs, err := b.Orphans(ctx, unfinished, 10); err != nil || !slices.Equal(refs, want[1:]) {
		t.Errorf("Orphans after recovering w = %v, %v; want %v", refs, err, want[1:])
	}

	// A runner of this host whose process is gone is dead at once, with
	// the default lease.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	host := lease.Self("").Host
	admin := adminPool(t)
	if _, err := admin.Exec(ctx, "INSERT INTO "+pgx.Identifier{schema, "runners"}.Sanitize()+
		" (id, host, pid, heartbeat) VALUES ('ghost', $1, $2, (extract(epoch FROM now()) * 1000)::bigint)", host, cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "UPDATE "+pgx.Identifier{schema, "tasks"}.Sanitize()+" SET runner = 'ghost' WHERE id = 'mine'"); err != nil {
		t.Fatal(err)
	}
	c := openStore(t, schema, postgres.Options{})
	// ghost, an id of an older release, names no replica.
	want = []store.TaskRef{{Scope: scopeA, ID: "mine", Seq: 1}, {Scope: scopeB, ID: "s", Seq: 1, Runner: "web-1"}}
	if refs, err := c.Orphans(ctx, unfinished, 10); err != nil || !slices.Equal(refs, want) {
		t.Errorf("Orphans with a runner whose process is gone = %v, %v; want %v", refs, err, want)
	}
}

// TestOpenErrors: a bad DSN or a server that is not there is a clear
// error, at once.
func TestOpenErrors(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	for _, c := range []struct {
		name, dsn, want string
	}{
		{"malformed", "host=127.0.0.1 port=notaport", "parsing the DSN"},
		{"bad URL", "postgres://[::1", "parsing the DSN"},
		{"closed port", fmt.Sprintf("host=127.0.0.1 port=%d dbname=test sslmode=disable", port), fmt.Sprintf("127.0.0.1:%d", port)},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			start := time.Now()
			s, err := postgres.Open(ctx, c.dsn, postgres.Options{})
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded", c.dsn)
			}
			t.Logf("Open(%q) after %v: %v", c.dsn, time.Since(start), err)
			if !strings.HasPrefix(err.Error(), "postgres: ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Open(%q) = %q, want an error mentioning %q", c.dsn, err, c.want)
			}
		})
	}
}

// TestNew uses a pool the caller keeps: Close leaves it open.
func TestNew(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	pool := adminPool(t)
	s, err := postgres.New(ctx, pool, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	create(t, s, scopeA, newTask("task-1", a2a.TaskStateWorking, 0))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := pool.Ping(ctx); err != nil {
		t.Fatalf("pool after Close: %v", err)
	}
	s, err = postgres.New(ctx, pool, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, _, err := s.Get(ctx, scopeA, "task-1"); err != nil {
		t.Errorf("Get through a second store on the pool: %v", err)
	}
}

// TestCurrentSchema: without Options.Schema, the store uses the
// connections' current schema and the plain channel name.
func TestCurrentSchema(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	if _, err := adminPool(t).Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	cfg, err := pgxpool.ParseConfig(testDSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	s, err := postgres.New(ctx, pool, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if want := postgres.NotifyChannel + "." + schema; s.Schema() != schema || s.Channel() != want {
		t.Errorf("Schema, Channel = %q, %q; want %q, %q", s.Schema(), s.Channel(), schema, want)
	}
	create(t, s, scopeA, newTask("task-1", a2a.TaskStateWorking, 0))
	var n int
	if err := adminPool(t).QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema, "tasks"}.Sanitize()).Scan(&n); err != nil || n != 1 {
		t.Errorf("tasks in schema %s: %d, %v; want 1", schema, n, err)
	}
}

// TestListPlans checks that every combination of List filters, with and
// without a cursor, is an index range scan, for the page and the total,
// and that the events folded into the page's tasks are looked up by the
// events' primary key.
func TestListPlans(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openStore(t, schema, postgres.Options{})
	admin := adminPool(t)
	tasks := pgx.Identifier{schema, "tasks"}.Sanitize()
	if _, err := admin.Exec(ctx, "INSERT INTO "+tasks+` (id, tenant, owner, context_id, state, status_ts, seq, runner, snapshot)
		SELECT 'task-' || i, 't' || (i % 4), 'o' || (i % 7), 'ctx-' || (i % 50), i % 8, 1000000 + i, 1, 'r', '\x7b7d'
		FROM generate_series(1, 20000) AS i`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "ANALYZE "+tasks); err != nil {
		t.Fatal(err)
	}
	scope := store.Scope{Tenant: "t1", Owner: "o2"}
	for mask := range 16 {
		var q store.ListQuery
		q.Limit = 10
		if mask&1 != 0 {
			q.ContextID = "ctx-9"
		}
		if mask&2 != 0 {
			q.Status = a2a.TaskState(3)
		}
		if mask&4 != 0 {
			q.StatusAfter = time.UnixMilli(1005000)
		}
		if mask&8 != 0 {
			q.After = &store.Cursor{Timestamp: time.UnixMilli(1015000), ID: "task-15000"}
		}
		sql, args := s.ListSQL(scope, q)
		rows, err := admin.Query(ctx, "EXPLAIN "+sql, args...)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		var line string
		if _, err := pgx.ForEachRow(rows, []any{&line}, func() error { lines = append(lines, line); return nil }); err != nil {
			t.Fatal(err)
		}
		// Every condition but the state is an index condition: no table
		// scan, no filtering of rows an index returned other than by
		// state (no index has it since schema version 4: the range of
		// the scope, or of its context, is read in order and the tasks
		// in other states are passed over), and the cursor bounds the
		// range. (The planner may still sort a range it expects to be
		// small instead of reading it backward.)
		plan := strings.Join(lines, "\n")
		checked := plan
		if q.Status != a2a.TaskStateUnspecified {
			checked = strings.ReplaceAll(checked, fmt.Sprintf("Filter: (state = %d)", q.Status), "")
		}
		if strings.Contains(checked, "Seq Scan") || strings.Contains(checked, "Filter:") ||
			(q.After != nil && !strings.Contains(checked, "AND (ROW(status_ts, id) < ROW(")) {
			t.Errorf("query %+v: want every condition but the state answered by an index:\n%s", q, plan)
		}
		if !strings.Contains(plan, "Index Scan using events_pkey on events") {
			t.Errorf("query %+v: want the events after each snapshot read by the events' primary key:\n%s", q, plan)
		}
	}
}
