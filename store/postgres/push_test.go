package postgres_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/internal/pushcode"
	"github.com/goa2a/a2a/store/postgres"
)

// TestClaimPushPlan: on a schema with many configs, mostly idle, ClaimPush
// walks the partial index push_configs_due and looks each task up by its
// key: no scan of either table.
func TestClaimPushPlan(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openStore(t, schema, postgres.Options{})
	admin := adminPool(t)
	tasks, push := pgx.Identifier{schema, "tasks"}.Sanitize(), pgx.Identifier{schema, "push_configs"}.Sanitize()
	if _, err := admin.Exec(ctx, "INSERT INTO "+tasks+` (id, tenant, owner, context_id, state, status_ts, seq, runner, snapshot)
		SELECT 'task-' || i, 't', 'o', 'ctx', 2, 1000000 + i, 1 + i % 5, 'r', '\x7b7d'
		FROM generate_series(1, 20000) AS i`); err != nil {
		t.Fatal(err)
	}
	// Three configs a task: idle (delivered at the task's seq), one in
	// fifty failing, one in a hundred with work.
	if _, err := admin.Exec(ctx, "INSERT INTO "+push+` (task_id, id, tenant, owner, config, delivered, failing, next_attempt)
		SELECT t.id, 'cfg-' || j, 't', 'o', '\x7b7d',
			CASE WHEN (t.status_ts + j) % 100 = 0 THEN t.seq - 1 ELSE t.seq END,
			(t.status_ts + j) % 50 = 7, (t.status_ts % 1000) * 1000
		FROM `+tasks+` t CROSS JOIN generate_series(1, 3) AS j`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "ANALYZE "+tasks+", "+push); err != nil {
		t.Fatal(err)
	}
	now := int64(500 * 1000)
	// With no scope skipped, and with some (the delivery worker skips the
	// principals that hold their share of its workers).
	for _, skip := range [][2][]string{{{}, {}}, {{"t", "u"}, {"p", "o"}}} {
		rows, err := admin.Query(ctx, "EXPLAIN "+s.ClaimPushSQL(), now, now+30000, 10, skip[0], skip[1])
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		plan := strings.Join(lines, "\n")
		if strings.Contains(plan, "Seq Scan") || !strings.Contains(plan, "push_configs_due") || !strings.Contains(plan, "tasks_pkey") {
			t.Errorf("ClaimPush plan skipping %q: want a walk of push_configs_due and a lookup of each task by key:\n%s", skip, plan)
		}
	}
	// And the statement does what the plan says: it claims every config
	// with work.
	var want int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM "+push+" p JOIN "+tasks+` t ON t.id = p.task_id
		WHERE NOT p.failing AND p.delivered < t.seq AND p.next_attempt <= $1`, now).Scan(&want); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.ClaimPush(ctx, time.UnixMilli(now), 30*time.Second, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != want || want == 0 {
		t.Errorf("ClaimPush claimed %d configs, want the %d with work (more than none)", len(jobs), want)
	}
	for i := 1; i < len(jobs); i++ {
		if jobs[i].Seq <= jobs[i].State.Delivered {
			t.Errorf("job %d has no work: %+v", i, jobs[i])
		}
	}
}

// TestClaimPushStores: stores on one schema, each with its own pool as
// separate processes would have, claim at the same time: every config with
// work goes to exactly one claimer.
func TestClaimPushStores(t *testing.T) {
	t.Parallel()
	const (
		stores   = 3
		claimers = 4 // per store
		tasks    = 40
		perTask  = 5
	)
	schema := newSchema(t)
	ss := make([]*postgres.Store, stores)
	for i := range ss {
		ss[i] = openStore(t, schema, postgres.Options{})
	}
	var want []string
	for i := range tasks {
		task := newTask(fmt.Sprintf("task-%03d", i), a2a.TaskStateSubmitted, i)
		create(t, ss[0], scopeA, task)
		for j := range perTask {
			cfg := &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: fmt.Sprintf("cfg-%d", j), URL: "https://example.com/hook"}
			if err := ss[0].PutPushConfig(t.Context(), scopeA, cfg); err != nil {
				t.Fatal(err)
			}
			want = append(want, task.ID+"/"+cfg.ID)
		}
		next := withStatus(task, a2a.TaskStateWorking, "m")
		if err := ss[0].Append(t.Context(), scopeA, task.ID, 1, []store.Event{statusEvent(2, next)}, next); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	var (
		mu    sync.Mutex
		got   []string
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for i := range stores * claimers {
		wg.Go(func() {
			<-start
			for range tasks*perTask + 1 {
				jobs, err := ss[i%stores].ClaimPush(t.Context(), now, time.Minute, 2)
				if err != nil {
					t.Errorf("claimer %d: %v", i, err)
					return
				}
				if len(jobs) == 0 {
					return
				}
				mu.Lock()
				for _, j := range jobs {
					got = append(got, j.Config.TaskID+"/"+j.Config.ID)
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("claimed %d configs (%d distinct), want each of %d once", len(got), len(slices.Compact(slices.Clone(got))), len(want))
	}
}

// TestMigrationPushState: a schema at version 2 with push configs
// upgrades to version 3 with each config at its task's last seq, so that
// no old event is delivered after the upgrade.
func TestMigrationPushState(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	admin := adminPool(t)
	if err := postgres.MigrateTo(ctx, admin, schema, 2); err != nil {
		t.Fatal(err)
	}
	tasks, push := pgx.Identifier{schema, "tasks"}.Sanitize(), pgx.Identifier{schema, "push_configs"}.Sanitize()
	if _, err := admin.Exec(ctx, "INSERT INTO "+tasks+` (id, tenant, owner, context_id, state, status_ts, seq, runner, snapshot)
		SELECT 'task-' || i, $1, $2, 'ctx', 2, 1000000 + i, i, 'r', '\x7b7d'
		FROM generate_series(1, 5) AS i`, scopeA.Tenant, scopeA.Owner); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "INSERT INTO "+push+` (task_id, id, tenant, owner, config)
		SELECT t.id, 'cfg-' || j, t.tenant, t.owner, convert_to(json_build_object('taskId', t.id, 'id', 'cfg-' || j, 'url', 'https://example.com/')::text, 'UTF8')
		FROM `+tasks+` t CROSS JOIN generate_series(1, 2) AS j`); err != nil {
		t.Fatal(err)
	}
	var exists bool
	if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'push_configs' AND column_name = 'delivered')", schema).Scan(&exists); err != nil || exists {
		t.Fatalf("push_configs.delivered at version 2: exists %v, %v; want no column", exists, err)
	}

	s := openStore(t, schema, postgres.Options{})
	if err := s.Check(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		for j := 1; j <= 2; j++ {
			taskID, id := fmt.Sprintf("task-%d", i), fmt.Sprintf("cfg-%d", j)
			st, err := s.PushState(ctx, scopeA, taskID, id)
			if err != nil || st != (store.PushState{Delivered: int64(i)}) {
				t.Errorf("after migrating: PushState(%s, %s) = %+v, %v; want Delivered %d and nothing else", taskID, id, st, err, i)
			}
		}
	}
	now := time.Now()
	if jobs, err := s.ClaimPush(ctx, now, time.Minute, 10); err != nil || len(jobs) != 0 {
		t.Fatalf("ClaimPush after migrating = %d jobs, %v; want none", len(jobs), err)
	}
	// The next event is delivered.
	task := newTask("task-3", a2a.TaskStateWorking, 3)
	next := withStatus(task, a2a.TaskStateCompleted, "m")
	if err := s.Append(ctx, scopeA, task.ID, 3, []store.Event{statusEvent(4, next)}, next); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.ClaimPush(ctx, now, time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, fmt.Sprintf("%s/%s@%d>%d", j.Config.TaskID, j.Config.ID, j.State.Delivered, j.Seq))
	}
	if want := "task-3/cfg-1@3>4 task-3/cfg-2@3>4"; strings.Join(got, " ") != want {
		t.Errorf("ClaimPush after an append = %q, want %q", strings.Join(got, " "), want)
	}
}

// TestAppendWakesConfigGoingIdle: a worker that makes a config idle in a
// transaction that commits while an Append to its task runs (here: holds
// the config's row when the Append reaches it) must find the config
// woken, as the worker, which read the task before the Append committed,
// does not wake it itself. Append's statement reads push_configs as of
// its start, when the config was not idle yet.
func TestAppendWakesConfigGoingIdle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openStore(t, schema, postgres.Options{})
	admin := adminPool(t)
	scope := store.Scope{Tenant: "t", Owner: "o"}
	task := &a2a.Task{ID: "task-1", ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: a2a.TimestampOf(time.UnixMilli(1000))}}
	if err := s.Append(ctx, scope, "task-1", 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPushConfig(ctx, scope, &a2a.TaskPushNotificationConfig{ID: "cfg-1", TaskID: "task-1", URL: "https://example.com/hook"}); err != nil {
		t.Fatal(err)
	}
	// The worker's transaction: the config goes idle, uncommitted.
	tx, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	push := pgx.Identifier{schema, "push_configs"}.Sanitize()
	if _, err := tx.Exec(ctx, "UPDATE "+push+" SET next_attempt = $1 WHERE task_id = 'task-1' AND id = 'cfg-1'", pushcode.IdleMS); err != nil {
		t.Fatal(err)
	}
	appended := make(chan error, 1)
	go func() {
		ev := &a2a.TaskStatusUpdateEvent{TaskID: "task-1", ContextID: "ctx", Status: task.Status}
		appended <- s.Append(ctx, scope, "task-1", 1, []store.Event{{Seq: 2, Payload: ev}}, task)
	}()
	// The Append waits for the config's row, or, if it passed over it,
	// ends first.
	deadline := time.Now().Add(10 * time.Second)
	for waiting := false; !waiting; {
		select {
		case err := <-appended:
			tx.Commit(ctx)
			st, _ := s.PushState(ctx, scope, "task-1", "cfg-1")
			t.Fatalf("Append (%v) ended without waiting for the config going idle: it stays at %v", err, st.NextAttempt)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("Append neither ended nor waited for a lock in 10s")
		}
		if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND query LIKE '%' || $1 || '%')`, schema).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if !waiting {
			time.Sleep(5 * time.Millisecond) // poll
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-appended; err != nil {
		t.Fatalf("Append: %v", err)
	}
	st, err := s.PushState(ctx, scope, "task-1", "cfg-1")
	if err != nil {
		t.Fatal(err)
	}
	if !st.NextAttempt.IsZero() {
		t.Errorf("config after the Append: NextAttempt %v, want zero (woken)", st.NextAttempt)
	}
}
