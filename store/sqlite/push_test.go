package sqlite_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

// TestClaimPushUsesIndex: ClaimPush walks the partial index of configs
// that are not failing, in the order it returns them, and looks each
// task up by id: no scan of the tasks, no sort.
func TestClaimPushUsesIndex(t *testing.T) {
	s := openStore(t, newPath(t), sqlite.Options{})
	// With no scope skipped, and with two (the delivery worker skips the
	// principals that hold their share of its workers).
	skip := sqlite.ClaimPushQuery(2)
	for _, c := range []struct {
		q    string
		args []any
	}{
		{sqlite.ClaimPushSQL, nil},
		{"SELECT count(*) FROM (" + sqlite.ClaimPushSQL + ")", nil},
		{skip, []any{"t", "o", "u", "p"}},
		{"SELECT count(*) FROM (" + skip + ")", []any{"t", "o", "u", "p"}},
	} {
		q := c.q
		args := append(append([]any{time.Now().UnixMilli()}, c.args...), 10)
		plan, err := s.QueryPlan(t.Context(), q, args...)
		if err != nil {
			t.Fatalf("EXPLAIN QUERY PLAN %s: %v", q, err)
		}
		text := strings.Join(plan, "; ")
		if !strings.Contains(text, "SEARCH p USING INDEX push_configs_due (next_attempt<?)") ||
			!strings.Contains(text, "SEARCH t USING INDEX sqlite_autoindex_tasks_1 (id=?)") ||
			strings.Contains(text, "SCAN t") || strings.Contains(text, "SCAN p") || strings.Contains(text, "TEMP B-TREE") {
			t.Errorf("%s\n plan: %s\n want a search of push_configs_due and a lookup of each task", q, text)
		}
	}
}

// TestMigrationPushState: a database at schema version 2 with push
// configs upgrades to version 3 with each config at its task's last seq,
// so that no old event is delivered after the upgrade.
func TestMigrationPushState(t *testing.T) {
	path := newPath(t)
	if err := sqlite.MigrateTo(t.Context(), path, 2); err != nil {
		t.Fatalf("MigrateTo(2): %v", err)
	}
	db := rawDB(t, path)
	seqs := map[string]int64{"task-1": 1, "task-2": 4, "task-3": 7}
	for id, seq := range seqs {
		task := newTask(id, a2a.TaskStateWorking, int(seq))
		snap, err := json.Marshal(task)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(t.Context(), `INSERT INTO tasks (id, tenant, owner, context_id, state, status_ts, seq, runner, snapshot)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'gone', ?)`,
			id, scope.Tenant, scope.Owner, task.ContextID, int64(task.Status.State), task.Status.Timestamp.UnixMilli(), seq, snap); err != nil {
			t.Fatal(err)
		}
		for _, cfgID := range []string{"a", "b"} {
			cfg := &a2a.TaskPushNotificationConfig{ID: cfgID, TaskID: id, URL: "https://example.com/" + id}
			b, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(t.Context(), `INSERT INTO push_configs (task_id, id, tenant, owner, config) VALUES (?, ?, ?, ?, ?)`,
				id, cfgID, scope.Tenant, scope.Owner, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A config whose task is gone (no store leaves one) does not stop
	// the migration.
	if _, err := db.ExecContext(t.Context(), `INSERT INTO push_configs (task_id, id, tenant, owner, config) VALUES ('nowhere', 'a', 't1', 'alice', X'7b7d')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), "SELECT delivered FROM push_configs"); err == nil {
		t.Fatal("push_configs has a delivered column at schema version 2")
	}

	s := openStore(t, path, sqlite.Options{})
	var v int
	if err := db.QueryRowContext(t.Context(), "SELECT max(version) FROM schema_migrations").Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Fatalf("schema version after Open %d, %v; want %d", v, err, sqlite.SchemaVersion)
	}
	for id, seq := range seqs {
		for _, cfgID := range []string{"a", "b"} {
			st, err := s.PushState(t.Context(), scope, id, cfgID)
			if err != nil || st != (store.PushState{Delivered: seq}) {
				t.Errorf("after migrating: PushState(%s, %s) = %+v, %v; want Delivered %d and nothing else", id, cfgID, st, err, seq)
			}
		}
	}
	now := time.Now()
	if jobs, err := s.ClaimPush(t.Context(), now, time.Minute, 10); err != nil || len(jobs) != 0 {
		t.Fatalf("ClaimPush after migrating = %d jobs, %v; want none", len(jobs), err)
	}
	// The next event is delivered.
	task := newTask("task-2", a2a.TaskStateWorking, 4)
	if _, err := step(t.Context(), s, scope, task, 4, a2a.TaskStateCompleted, "m"); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.ClaimPush(t.Context(), now, time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, fmt.Sprintf("%s/%s@%d>%d", j.Config.TaskID, j.Config.ID, j.State.Delivered, j.Seq))
	}
	if want := "task-2/a@4>5 task-2/b@4>5"; strings.Join(got, " ") != want {
		t.Errorf("ClaimPush after an append = %q, want %q", strings.Join(got, " "), want)
	}
}
