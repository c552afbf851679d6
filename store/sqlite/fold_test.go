package sqlite_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

// mixedEvent returns event seq of a task's log, the i-th after the
// creation, of a kind and size that depend on i: mostly artifact chunks
// (appended to one of three artifacts, which a chunk now and then
// replaces), a status update every tenth, a client message every tenth.
// Each chunk carries extra bytes of text, so that the log outgrows its
// snapshot now and then.
func mixedEvent(task *a2a.Task, seq int64, i, extra int) store.Event {
	var ev a2a.Event
	switch {
	case i%10 == 3:
		ev = &a2a.TaskStatusUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Status: a2a.TaskStatus{
			State:     a2a.TaskStateWorking,
			Timestamp: a2a.TimestampOf(baseTime.Add(time.Duration(i) * time.Millisecond)),
			Message:   a2a.NewTextMessage(a2a.RoleAgent, fmt.Sprintf("status-%d", i), fmt.Sprintf("step %d", i)),
		}}
	case i%10 == 7:
		ev = &a2a.Message{MessageID: fmt.Sprintf("msg-%d", i), ContextID: task.ContextID, TaskID: task.ID, Role: a2a.RoleUser,
			Parts: []a2a.Part{a2a.TextPart(fmt.Sprintf("more, please (%d)", i))}}
	default:
		id := fmt.Sprintf("art-%d", i%3)
		ev = &a2a.TaskArtifactUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Append: i%41 != 0,
			Artifact: a2a.Artifact{ArtifactID: id, Name: "name " + id, Parts: []a2a.Part{a2a.TextPart(fmt.Sprintf("chunk %06d %s", i, strings.Repeat("x", extra)))}}}
	}
	return store.Event{Seq: seq, Payload: ev}
}

// withData sets ev.Data, as a server that encodes its events once does.
func withData(t testing.TB, ev store.Event) store.Event {
	t.Helper()
	b, err := ev.Encode()
	if err != nil {
		t.Fatal(err)
	}
	ev.Data = b
	return ev
}

// checkTask fails unless got and want encode the same.
func checkTask(t testing.TB, what string, got, want *a2a.Task) {
	t.Helper()
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Fatalf("%s:\n got %.600s\nwant %.600s", what, g, w)
	}
}

// snapshotSeq returns the seq of the snapshot row of task id, 0 if it has
// none.
func snapshotSeq(t testing.TB, path, id string) int64 {
	t.Helper()
	var seq int64
	err := rawDB(t, path).QueryRowContext(t.Context(),
		"SELECT coalesce(max(s.seq), 0) FROM tasks t LEFT JOIN snapshots s ON s.rid = t.rid WHERE t.id = ?", id).Scan(&seq)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// checkEvents checks that Events(after) returns the events of want after
// after, in order, each with Data the encoding of its payload.
func checkEvents(t testing.TB, s store.Store, id string, after int64, want []store.Event) {
	t.Helper()
	evs, err := s.Events(t.Context(), scope, id, after)
	if err != nil {
		t.Fatalf("Events(%d): %v", after, err)
	}
	if len(evs) != len(want)-int(after) {
		t.Fatalf("Events(%d): %d events, want %d", after, len(evs), len(want)-int(after))
	}
	for i, ev := range evs {
		w := want[int(after)+i]
		if ev.Seq != w.Seq {
			t.Fatalf("Events(%d)[%d]: seq %d, want %d", after, i, ev.Seq, w.Seq)
		}
		enc, err := (store.Event{Seq: w.Seq, Payload: w.Payload}).Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ev.Data, enc) {
			t.Fatalf("Events(%d): event %d has Data %.200s, want %.200s", after, ev.Seq, ev.Data, enc)
		}
		if got := mustJSON(t, a2a.StreamResponse{Event: ev.Payload}); got != string(enc) {
			t.Fatalf("Events(%d): event %d has payload %.200s, want %.200s", after, ev.Seq, got, enc)
		}
	}
}

// TestHugeLog: a task of 100,000 events, appended in a few Appends of
// thousands of events each and then some small ones (whose events Get
// folds onto the last snapshot), reads back as the test folds it, from
// Get and List, and Events returns every event in order with its Data.
func TestHugeLog(t *testing.T) {
	const total, perAppend, small = 100_000, 24_000, 40
	path := newPath(t)
	s := openStore(t, path, sqlite.Options{})
	task := newTask("huge", a2a.TaskStateWorking, 0)
	log := []store.Event{{Seq: 1, Payload: task}}
	create(t, s, scope, task)
	snap, seq := task, int64(1)
	for i := 0; seq < total; i++ {
		n := min(perAppend, total-int(seq))
		if total-int(seq) <= small {
			n = 1
		}
		if int(seq)+n > total-small && int(seq) < total-small {
			n = total - small - int(seq)
		}
		evs := make([]store.Event, n)
		for k := range evs {
			evs[k] = mixedEvent(task, seq+int64(k)+1, int(seq)+k, k%50)
			if k%2 == 0 {
				evs[k] = withData(t, evs[k]) // half come encoded
			}
		}
		snap = store.Fold(snap, evs)
		if err := s.Append(t.Context(), scope, task.ID, seq, evs, snap); err != nil {
			t.Fatalf("Append after %d: %v", seq, err)
		}
		log = append(log, evs...)
		seq += int64(n)
	}
	got, gotSeq, err := s.Get(t.Context(), scope, task.ID)
	if err != nil || gotSeq != total {
		t.Fatalf("Get = seq %d, %v; want %d", gotSeq, err, total)
	}
	checkTask(t, "Get", got, snap)
	// The last Appends were too small to outweigh the snapshot: Get
	// folded them.
	at := snapshotSeq(t, path, task.ID)
	if at >= total-small || at < total-perAppend {
		t.Errorf("the snapshot is at seq %d; want it before the last %d appends, after %d", at, small+1, total-perAppend)
	}
	t.Logf("the snapshot is at seq %d; Get folds %d events onto it", at, total-at)
	checkEvents(t, s, task.ID, 0, log)
	checkEvents(t, s, task.ID, total-small-3, log)
	checkEvents(t, s, task.ID, total, log)

	other := newTask("other", a2a.TaskStateCompleted, 1)
	create(t, s, scope, other)
	res, err := s.List(t.Context(), scope, store.ListQuery{Limit: 10})
	if err != nil || len(res.Tasks) != 2 || res.Total != 2 {
		t.Fatalf("List = %d tasks, total %d, %v; want 2", len(res.Tasks), res.Total, err)
	}
	for _, lt := range res.Tasks {
		if lt.ID == task.ID {
			checkTask(t, "List", lt, snap)
		}
	}
	if err := s.Check(t.Context()); err != nil {
		t.Error(err)
	}
}

// TestSnapshotThreshold: over hundreds of Appends of one to three mixed
// events of varied sizes, some into an interrupted state and back, the
// store writes the snapshot again and again (store.SnapshotDue), and after
// every Append, Get and List return the task as the test folds it, and
// Events the log.
func TestSnapshotThreshold(t *testing.T) {
	const appends = 400
	path := newPath(t)
	s := openStore(t, path, sqlite.Options{})
	task := newTask("task-1", a2a.TaskStateSubmitted, 0)
	log := []store.Event{{Seq: 1, Payload: task}}
	create(t, s, scope, task)
	snap, seq := task, int64(1)
	snapSeqs := make(map[int64]bool)
	folded := 0
	for i := range appends {
		var evs []store.Event
		for k := range 1 + i%3 {
			ev := mixedEvent(task, seq+int64(k)+1, i*3+k, (i*37+k*101)%900)
			if (i+k)%3 == 0 {
				ev = withData(t, ev)
			}
			evs = append(evs, ev)
		}
		if i%50 == 49 {
			// Into input-required, which writes the snapshot; the next
			// status update brings the task back to working.
			st := a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: a2a.TimestampOf(baseTime.Add(time.Duration(i) * time.Second)),
				Message: a2a.NewTextMessage(a2a.RoleAgent, fmt.Sprintf("ask-%d", i), "which one?")}
			evs = append(evs, store.Event{Seq: seq + int64(len(evs)) + 1, Payload: &a2a.TaskStatusUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Status: st}})
		}
		snap = store.Fold(snap, evs)
		if err := s.Append(t.Context(), scope, task.ID, seq, evs, snap); err != nil {
			t.Fatalf("Append %d after %d: %v", i, seq, err)
		}
		log = append(log, evs...)
		seq += int64(len(evs))

		got, gotSeq, err := s.Get(t.Context(), scope, task.ID)
		if err != nil || gotSeq != seq {
			t.Fatalf("Get after Append %d = seq %d, %v; want %d", i, gotSeq, err, seq)
		}
		checkTask(t, fmt.Sprintf("Get after Append %d", i), got, snap)
		res, err := s.List(t.Context(), scope, store.ListQuery{Status: snap.Status.State, Limit: 1})
		if err != nil || len(res.Tasks) != 1 {
			t.Fatalf("List after Append %d = %d tasks, %v; want 1", i, len(res.Tasks), err)
		}
		checkTask(t, fmt.Sprintf("List after Append %d", i), res.Tasks[0], snap)
		if i%40 == 0 {
			checkEvents(t, s, task.ID, 0, log)
		}
		at := snapshotSeq(t, path, task.ID)
		snapSeqs[at] = true
		if at < seq {
			folded++
		}
		if snap.Status.State.Interrupted() && at != seq {
			t.Fatalf("Append %d left the task %v with its snapshot at seq %d, not %d", i, snap.Status.State, at, seq)
		}
	}
	checkEvents(t, s, task.ID, 0, log)
	// The sizes make the log outgrow the snapshot many times over, and
	// most reads fold.
	if len(snapSeqs) < 20 || folded < appends/2 {
		t.Errorf("%d snapshots written, %d of %d reads folded; want many of both", len(snapSeqs), folded, appends)
	}
	t.Logf("%d events; %d snapshots; %d of %d Gets folded events onto the snapshot", seq, len(snapSeqs), folded, appends)

	// It ends, with its snapshot at the last seq.
	done := *snap
	done.Status = a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: a2a.TimestampOf(baseTime.Add(time.Hour))}
	ev := &a2a.TaskStatusUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Status: done.Status}
	final := store.Fold(snap, []store.Event{{Seq: seq + 1, Payload: ev}})
	if err := s.Append(t.Context(), scope, task.ID, seq, []store.Event{{Seq: seq + 1, Payload: ev}}, final); err != nil {
		t.Fatal(err)
	}
	if at := snapshotSeq(t, path, task.ID); at != seq+1 {
		t.Errorf("the completed task's snapshot is at seq %d, want %d", at, seq+1)
	}
	got, _, err := s.Get(t.Context(), scope, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkTask(t, "Get of the completed task", got, final)

	// Reopened, it reads the same.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path, sqlite.Options{})
	got, _, err = s.Get(t.Context(), scope, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkTask(t, "Get after reopening", got, final)
}

// TestExpireTakesSnapshots: Expire deletes a task's snapshot and events
// with it, so that a new task, which SQLite may give the same rid, starts
// clean.
func TestExpireTakesSnapshots(t *testing.T) {
	path := newPath(t)
	s := openStore(t, path, sqlite.Options{})
	old := newTask("old", a2a.TaskStateWorking, 0)
	old.History = []a2a.Message{*a2a.NewTextMessage(a2a.RoleUser, "m1", "old history")}
	create(t, s, scope, old)
	if _, err := step(t.Context(), s, scope, old, 1, a2a.TaskStateCompleted, "m2"); err != nil { // writes the snapshot
		t.Fatal(err)
	}
	if at := snapshotSeq(t, path, "old"); at != 2 {
		t.Fatalf("a completed task has its snapshot at seq %d, want 2", at)
	}
	n, err := s.Expire(t.Context(), []a2a.TaskState{a2a.TaskStateCompleted}, baseTime.Add(time.Hour), 10)
	if err != nil || n != 1 {
		t.Fatalf("Expire = %d, %v; want 1", n, err)
	}
	db := rawDB(t, path)
	for _, table := range []string{"tasks", "snapshots", "events"} {
		var rows int
		if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM "+table).Scan(&rows); err != nil || rows != 0 {
			t.Errorf("%s has %d rows after Expire, %v; want none", table, rows, err)
		}
	}
	fresh := newTask("fresh", a2a.TaskStateWorking, 1)
	create(t, s, scope, fresh)
	got, seq, err := s.Get(t.Context(), scope, "fresh")
	if err != nil || seq != 1 {
		t.Fatalf("Get(fresh) = seq %d, %v", seq, err)
	}
	checkTask(t, "Get(fresh)", got, fresh)
}

// TestNewTaskEndsAtOnce: a task that ends in the Append that creates it (a
// blocking SendMessage) gets no snapshot row, unless its log outweighs its
// first event; Get, List and Events read it as it was stored. List reads
// the events after the snapshots of a page's tasks in one statement, a
// range of the events' primary key per task, whatever mix of tasks with
// and without snapshots and events after them the page holds.
func TestNewTaskEndsAtOnce(t *testing.T) {
	path := newPath(t)
	s := openStore(t, path, sqlite.Options{})
	type made struct {
		task *a2a.Task
		log  []store.Event
		snap bool // has a snapshot row
	}
	var tasks []made
	for i := range 12 {
		id := fmt.Sprintf("task-%02d", i)
		task := newTask(id, a2a.TaskStateSubmitted, i)
		task.History = []a2a.Message{*a2a.NewTextMessage(a2a.RoleUser, "m-"+id, "hello")}
		log := []store.Event{{Seq: 1, Payload: task}}
		snap := task
		extra := 10
		if i%4 == 3 {
			extra = 5000 // a log that outweighs the first event
		}
		for k := range 3 {
			log = append(log, mixedEvent(task, int64(k+2), i*3+k, extra))
		}
		final := a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: a2a.TimestampOf(baseTime.Add(time.Duration(i) * time.Second))}
		if i%3 == 1 {
			final.State = a2a.TaskStateInputRequired
		}
		log = append(log, store.Event{Seq: 5, Payload: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: task.ContextID, Status: final}})
		snap = store.Fold(snap, log[1:])
		if err := s.Append(t.Context(), scope, id, 0, log, snap); err != nil {
			t.Fatal(err)
		}
		m := made{snap, log, i%4 == 3}
		if i%3 == 2 {
			// Goes on working: one more event, with no snapshot row
			// either way, or ends again, with one.
			st := a2a.TaskStateWorking
			if i%2 == 0 {
				st = a2a.TaskStateFailed
				m.snap = true
			}
			next, err := step(t.Context(), s, scope, m.task, 5, st, "again-"+id)
			if err != nil {
				t.Fatal(err)
			}
			m.log = append(m.log, store.Event{Seq: 6, Payload: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: task.ContextID, Status: next.Status}})
			m.task = next
		}
		tasks = append(tasks, m)
	}
	for _, m := range tasks {
		id := m.task.ID
		at := snapshotSeq(t, path, id)
		if want := int64(len(m.log)); m.snap && at == 0 || !m.snap && at != 0 {
			t.Errorf("%s: snapshot at seq %d; want one: %v (at %d)", id, at, m.snap, want)
		}
		got, seq, err := s.Get(t.Context(), scope, id)
		if err != nil || seq != int64(len(m.log)) {
			t.Fatalf("Get(%s) = seq %d, %v; want %d", id, seq, err, len(m.log))
		}
		checkTask(t, "Get("+id+")", got, m.task)
		checkEvents(t, s, id, 0, m.log)
	}
	// Pages of every size, from every start.
	for limit := 1; limit <= len(tasks)+1; limit++ {
		var cursor *store.Cursor
		var listed []string
		for {
			res, err := s.List(t.Context(), scope, store.ListQuery{Limit: limit, After: cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, lt := range res.Tasks {
				listed = append(listed, lt.ID)
				for _, m := range tasks {
					if m.task.ID == lt.ID {
						checkTask(t, fmt.Sprintf("List(limit %d) task %s", limit, lt.ID), lt, m.task)
					}
				}
			}
			if !res.More {
				break
			}
			last := res.Tasks[len(res.Tasks)-1]
			cursor = &store.Cursor{Timestamp: last.Status.Timestamp.Time, ID: last.ID}
		}
		if len(listed) != len(tasks) {
			t.Errorf("List(limit %d) listed %v, want all %d tasks", limit, listed, len(tasks))
		}
	}
	plan, err := s.QueryPlan(t.Context(), sqlite.TailsSQL, "[[1,0,5],[2,0,5]]")
	if err != nil {
		t.Fatal(err)
	}
	if p := strings.Join(plan, "; "); !strings.Contains(p, "SEARCH e USING PRIMARY KEY (rid=? AND seq>? AND seq<?)") {
		t.Errorf("the plan of the tails of a page is %q; want a range of the events' primary key per task", p)
	}
}
