package sqlite_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

// TestMigrationSnapshots: a database at schema version 3, with tasks of
// several scopes, states and logs, and push configs, upgrades to version 4
// (migrations/0004_snapshots.sql): each snapshot moves to the snapshots
// table, the events follow their tasks to the new key, and Get, List,
// Events, the counts and ClaimPush answer exactly as before. Then the
// tasks go on: an Append folds onto the migrated snapshot, and Expire
// deletes what it should.
func TestMigrationSnapshots(t *testing.T) {
	path := newPath(t)
	if err := sqlite.MigrateTo(t.Context(), path, 3); err != nil {
		t.Fatalf("MigrateTo(3): %v", err)
	}
	db := rawDB(t, path)
	other := store.Scope{Tenant: "t2", Owner: "bob"}
	type oldTask struct {
		scope store.Scope
		snap  *a2a.Task
		log   []store.Event
	}
	var tasks []oldTask
	states := []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateInputRequired, a2a.TaskStateFailed}
	for i := range 12 {
		sc := scope
		if i%4 == 3 {
			sc = other
		}
		task := newTask(fmt.Sprintf("task-%02d", i), a2a.TaskStateSubmitted, i)
		if i%3 == 0 {
			task.ContextID = "ctx-2"
		}
		log := []store.Event{{Seq: 1, Payload: task}}
		snap := task
		for k := range i % 5 {
			ev := mixedEvent(task, int64(k)+2, k, 10*k)
			snap = store.Fold(snap, []store.Event{ev})
			log = append(log, ev)
		}
		st := a2a.TaskStatus{State: states[i%len(states)], Timestamp: a2a.TimestampOf(baseTime.Add(time.Duration(100-i) * time.Second))}
		ev := store.Event{Seq: int64(len(log)) + 1, Payload: &a2a.TaskStatusUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Status: st}}
		snap = store.Fold(snap, []store.Event{ev})
		log = append(log, ev)
		tasks = append(tasks, oldTask{sc, snap, log})
	}
	// Written as the schema-3 store wrote them, the tasks in an order
	// other than their ids'.
	for _, i := range []int{5, 0, 11, 3, 8, 1, 10, 2, 7, 4, 9, 6} {
		ot := tasks[i]
		st := ot.snap.Status
		if _, err := db.ExecContext(t.Context(), `INSERT INTO tasks (id, tenant, owner, context_id, state, status_ts, seq, runner, snapshot)
			VALUES (?, ?, ?, ?, ?, ?, ?, 'gone', ?)`,
			ot.snap.ID, ot.scope.Tenant, ot.scope.Owner, ot.snap.ContextID, int64(st.State), st.Timestamp.UnixMilli(), len(ot.log), []byte(mustJSON(t, ot.snap))); err != nil {
			t.Fatal(err)
		}
		for _, ev := range ot.log {
			if _, err := db.ExecContext(t.Context(), `INSERT INTO events (task_id, seq, payload) VALUES (?, ?, ?)`,
				ot.snap.ID, ev.Seq, []byte(mustJSON(t, a2a.StreamResponse{Event: ev.Payload}))); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.ExecContext(t.Context(), `INSERT INTO task_counts (tenant, owner, state, n) VALUES (?, ?, ?, 1)
			ON CONFLICT (tenant, owner, state) DO UPDATE SET n = n + 1`, ot.scope.Tenant, ot.scope.Owner, int64(st.State)); err != nil {
			t.Fatal(err)
		}
	}
	// An event whose task is gone (no store leaves one) is dropped.
	if _, err := db.ExecContext(t.Context(), `INSERT INTO events (task_id, seq, payload) VALUES ('nowhere', 1, X'7b7d')`); err != nil {
		t.Fatal(err)
	}
	// A push config that has delivered all of its task but the last event.
	cfg := &a2a.TaskPushNotificationConfig{ID: "cfg", TaskID: "task-04", URL: "https://example.com/hook"}
	if _, err := db.ExecContext(t.Context(), `INSERT INTO push_configs (task_id, id, tenant, owner, config, delivered) VALUES (?, ?, ?, ?, ?, ?)`,
		cfg.TaskID, cfg.ID, scope.Tenant, scope.Owner, []byte(mustJSON(t, cfg)), len(tasks[4].log)-1); err != nil {
		t.Fatal(err)
	}

	// What a schema-3 store answered: the snapshots as stored, and List
	// in status order, newest first, of each filter.
	type query struct {
		scope store.Scope
		q     store.ListQuery
	}
	queries := []query{
		{scope, store.ListQuery{Limit: 100}},
		{scope, store.ListQuery{Limit: 3}},
		{scope, store.ListQuery{Limit: 100, Status: a2a.TaskStateCompleted}},
		{scope, store.ListQuery{Limit: 100, ContextID: "ctx-2"}},
		{scope, store.ListQuery{Limit: 100, ContextID: "ctx-2", Status: a2a.TaskStateWorking}},
		{scope, store.ListQuery{Limit: 100, StatusAfter: baseTime.Add(94 * time.Second)}},
		{scope, store.ListQuery{Limit: 2, After: &store.Cursor{Timestamp: baseTime.Add(96 * time.Second), ID: "task-04"}}},
		{other, store.ListQuery{Limit: 100}},
	}
	wantList := func(q query) (ids []string, total int) {
		var match []oldTask
		for _, ot := range tasks {
			st := ot.snap.Status
			if ot.scope != q.scope || (q.q.ContextID != "" && ot.snap.ContextID != q.q.ContextID) ||
				(q.q.Status != a2a.TaskStateUnspecified && st.State != q.q.Status) ||
				(!q.q.StatusAfter.IsZero() && st.Timestamp.Before(q.q.StatusAfter)) {
				continue
			}
			match = append(match, ot)
		}
		slices.SortFunc(match, func(a, b oldTask) int {
			if c := b.snap.Status.Timestamp.Compare(a.snap.Status.Timestamp.Time); c != 0 {
				return c
			}
			return strings.Compare(b.snap.ID, a.snap.ID)
		})
		for _, ot := range match {
			ts, id := ot.snap.Status.Timestamp.Time, ot.snap.ID
			if c := q.q.After; c != nil && (c.Before(ts, id) || (ts.Equal(c.Timestamp) && id == c.ID)) {
				continue // on an earlier page
			}
			ids = append(ids, id)
		}
		total = len(match)
		return ids[:min(len(ids), q.q.Limit)], total
	}

	s := openStore(t, path, sqlite.Options{})
	var v int
	if err := db.QueryRowContext(t.Context(), "SELECT max(version) FROM schema_migrations").Scan(&v); err != nil || v != sqlite.SchemaVersion {
		t.Fatalf("schema version after Open %d, %v; want %d", v, err, sqlite.SchemaVersion)
	}
	if err := s.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	var indexes []string
	rows, err := db.QueryContext(t.Context(), "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'tasks' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		indexes = append(indexes, name)
	}
	rows.Close()
	if want := []string{"sqlite_autoindex_tasks_1", "tasks_list", "tasks_list_context", "tasks_state"}; !slices.Equal(indexes, want) {
		t.Errorf("indexes of tasks after migrating: %v, want %v", indexes, want)
	}
	var events, snapshots int
	if err := db.QueryRowContext(t.Context(), "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM snapshots)").Scan(&events, &snapshots); err != nil {
		t.Fatal(err)
	}
	wantEvents := 0
	for _, ot := range tasks {
		wantEvents += len(ot.log)
	}
	if events != wantEvents || snapshots != len(tasks) {
		t.Errorf("after migrating: %d events, %d snapshots; want %d and %d", events, snapshots, wantEvents, len(tasks))
	}

	for _, ot := range tasks {
		got, seq, err := s.Get(t.Context(), ot.scope, ot.snap.ID)
		if err != nil || seq != int64(len(ot.log)) {
			t.Fatalf("Get(%s) after migrating = seq %d, %v; want %d", ot.snap.ID, seq, err, len(ot.log))
		}
		checkTask(t, "Get("+ot.snap.ID+") after migrating", got, ot.snap)
		evs, err := s.Events(t.Context(), ot.scope, ot.snap.ID, 0)
		if err != nil || eventsJSON(t, evs) != eventsJSON(t, ot.log) {
			t.Errorf("Events(%s) after migrating:\n got %s\nwant %s (%v)", ot.snap.ID, eventsJSON(t, evs), eventsJSON(t, ot.log), err)
		}
		for _, ev := range evs {
			if want := mustJSON(t, a2a.StreamResponse{Event: ev.Payload}); string(ev.Data) != want {
				t.Errorf("Events(%s): event %d has Data %s, want %s", ot.snap.ID, ev.Seq, ev.Data, want)
			}
		}
	}
	checkList := func(what string) {
		t.Helper()
		for _, q := range queries {
			res, err := s.List(t.Context(), q.scope, q.q)
			if err != nil {
				t.Fatalf("%s: List(%+v): %v", what, q.q, err)
			}
			var ids []string
			for _, lt := range res.Tasks {
				ids = append(ids, lt.ID)
				for _, ot := range tasks {
					if ot.snap.ID == lt.ID {
						checkTask(t, what+": List task "+lt.ID, lt, ot.snap)
					}
				}
			}
			wantIDs, wantTotal := wantList(q)
			if !slices.Equal(ids, wantIDs) || res.Total != wantTotal {
				t.Errorf("%s: List(%+v) = %v, total %d; want %v, total %d", what, q.q, ids, res.Total, wantIDs, wantTotal)
			}
		}
	}
	checkList("after migrating")
	checkCounts(t, s, "after migrating")

	// The push config has the last event of its task to deliver, and
	// nothing else.
	jobs, err := s.ClaimPush(t.Context(), time.Now(), time.Minute, 10)
	if err != nil || len(jobs) != 1 || jobs[0].Config.ID != "cfg" || jobs[0].State.Delivered != int64(len(tasks[4].log)-1) || jobs[0].Seq != int64(len(tasks[4].log)) {
		t.Errorf("ClaimPush after migrating = %+v, %v; want the config of task-04 one event behind", jobs, err)
	}

	// A migrated working task goes on: Get folds the new events onto the
	// migrated snapshot.
	ot := &tasks[0]
	if ot.snap.Status.State != a2a.TaskStateWorking {
		t.Fatalf("task-00 is %v", ot.snap.Status.State)
	}
	for k := range 3 {
		seq := int64(len(ot.log))
		ev := mixedEvent(ot.snap, seq+1, 100+k, 20)
		ot.snap = store.Fold(ot.snap, []store.Event{ev})
		if err := s.Append(t.Context(), ot.scope, ot.snap.ID, seq, []store.Event{ev}, ot.snap); err != nil {
			t.Fatal(err)
		}
		ot.log = append(ot.log, ev)
	}
	if at := snapshotSeq(t, path, ot.snap.ID); at != int64(len(ot.log))-3 {
		t.Errorf("task-00's snapshot is at seq %d, want the migrated one, %d", at, len(ot.log)-3)
	}
	got, _, err := s.Get(t.Context(), ot.scope, ot.snap.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkTask(t, "Get(task-00) after three appends", got, ot.snap)
	checkList("after the appends")

	// Expire deletes the finished tasks with everything of theirs.
	n, err := s.Expire(t.Context(), countFinished, baseTime.Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	var left []oldTask
	for _, ot := range tasks {
		if !ot.snap.Status.State.Terminal() {
			left = append(left, ot)
		}
	}
	if n != len(tasks)-len(left) {
		t.Errorf("Expire = %d, want %d", n, len(tasks)-len(left))
	}
	tasks = left
	checkList("after Expire")
	checkCounts(t, s, "after Expire")
	wantEvents = 0
	for _, ot := range tasks {
		wantEvents += len(ot.log)
	}
	if err := db.QueryRowContext(t.Context(), "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM snapshots)").Scan(&events, &snapshots); err != nil {
		t.Fatal(err)
	}
	if events != wantEvents || snapshots != len(tasks) {
		t.Errorf("after Expire: %d events, %d snapshots; want %d and %d", events, snapshots, wantEvents, len(tasks))
	}
}
