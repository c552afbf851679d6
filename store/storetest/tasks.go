package storetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// richTask returns a snapshot that uses every part of a task: history,
// artifacts with each kind of part, metadata and a status message. It is
// the fold of richEvents.
func richTask(id string, ts a2a.Timestamp) *a2a.Task {
	evs := richLog(id, ts)
	return store.Fold(evs[0].Payload.(*a2a.Task), evs[1:])
}

// richEvents returns the log of richTask: the task, then one event of each
// other kind.
func richEvents(task *a2a.Task) []store.Event { return richLog(task.ID, task.Status.Timestamp) }

func richLog(id string, ts a2a.Timestamp) []store.Event {
	const contextID = "ctx-rich"
	user := a2a.Message{
		MessageID: "m-user", ContextID: contextID, TaskID: id, Role: a2a.RoleUser,
		Parts: []a2a.Part{
			a2a.TextPart("hello"),
			{Content: a2a.Raw("\x00\x01binary"), Filename: "b.bin", MediaType: "application/octet-stream"},
		},
		Metadata:         map[string]any{"client": "storetest"},
		Extensions:       []string{"https://example.com/ext"},
		ReferenceTaskIDs: []string{"task-ref"},
	}
	first := &a2a.Task{
		ID:        id,
		ContextID: contextID,
		Status:    a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: ts},
		History:   []a2a.Message{user},
		Metadata:  map[string]any{"k": "v", "n": 2.5, "nested": map[string]any{"list": []any{"a", 1.0}}},
	}
	art := a2a.Artifact{
		ArtifactID:  "art-1",
		Name:        "result",
		Description: "the result",
		Parts: []a2a.Part{
			a2a.TextPart("text ü ✓"),
			{Content: a2a.URL("https://example.com/f.pdf"), Filename: "f.pdf", MediaType: "application/pdf"},
			{Content: a2a.Data(`{"a":[1,2],"b":"c"}`), MediaType: "application/json", Metadata: map[string]any{"x": true}},
		},
	}
	return []store.Event{
		{Seq: 1, Payload: first},
		{Seq: 2, Payload: &a2a.Message{
			MessageID: "m-user-2", ContextID: contextID, TaskID: id, Role: a2a.RoleUser,
			Parts: []a2a.Part{a2a.TextPart("more")},
		}},
		{Seq: 3, Payload: &a2a.TaskStatusUpdateEvent{
			TaskID: id, ContextID: contextID,
			Status:   a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: ts},
			Metadata: map[string]any{"step": "one"},
		}},
		{Seq: 4, Payload: &a2a.TaskArtifactUpdateEvent{
			TaskID: id, ContextID: contextID,
			Artifact: art,
			Append:   true, LastChunk: true,
			Metadata: map[string]any{"chunk": 1.0},
		}},
		{Seq: 5, Payload: &a2a.TaskStatusUpdateEvent{
			TaskID: id, ContextID: contextID,
			Status: a2a.TaskStatus{
				State:     a2a.TaskStateInputRequired,
				Message:   a2a.NewTextMessage(a2a.RoleAgent, "m-agent", "which one?"),
				Timestamp: ts,
			},
		}},
	}
}

func testAppendCreate(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	got, seq := mustGet(t, s, scopeA, task.ID)
	checkTask(t, "Get after create", got, task)
	if seq != 1 {
		t.Errorf("Get after create: seq = %d, want 1", seq)
	}
	checkEvents(t, "Events(0) after create", mustEvents(t, s, scopeA, task.ID, 0), []store.Event{{Seq: 1, Payload: task}})

	// A task may be created with several events at once.
	rich := richTask("task-2", at(1))
	evs := richEvents(rich)
	if err := s.Append(t.Context(), scopeA, rich.ID, 0, evs, rich); err != nil {
		t.Fatalf("create with %d events: %v", len(evs), err)
	}
	got, seq = mustGet(t, s, scopeA, rich.ID)
	checkTask(t, "Get after create with several events", got, rich)
	if seq != int64(len(evs)) {
		t.Errorf("Get after create with several events: seq = %d, want %d", seq, len(evs))
	}
	checkEvents(t, "Events(0) after create with several events", mustEvents(t, s, scopeA, rich.ID, 0), evs)

	// The first task is untouched by the second.
	got, seq = mustGet(t, s, scopeA, task.ID)
	checkTask(t, "Get of the first task", got, task)
	if seq != 1 {
		t.Errorf("Get of the first task: seq = %d, want 1", seq)
	}
}

func testAppendCreateExisting(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	before := dump(t, s, scopeA, task.ID)

	other := newTask(task.ID, "ctx-other", a2a.TaskStateWorking, at(5))
	err := s.Append(t.Context(), scopeA, task.ID, 0, []store.Event{{Seq: 1, Payload: other}}, other)
	checkErr(t, "create of an existing task", err, store.ErrConflict)
	checkUnchanged(t, "create of an existing task", s, scopeA, task.ID, before)

	// Still a conflict once the log has grown.
	update(t, s, scopeA, task, 1, a2a.TaskStateWorking, at(1))
	before = dump(t, s, scopeA, task.ID)
	err = s.Append(t.Context(), scopeA, task.ID, 0, []store.Event{{Seq: 1, Payload: other}}, other)
	checkErr(t, "create of an existing task at seq 2", err, store.ErrConflict)
	checkUnchanged(t, "create of an existing task at seq 2", s, scopeA, task.ID, before)
}

func testAppendNext(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)

	snap2 := withStatus(task, a2a.TaskStateWorking, at(1), "m2")
	art := &a2a.TaskArtifactUpdateEvent{
		TaskID: task.ID, ContextID: task.ContextID,
		Artifact: a2a.Artifact{ArtifactID: "a1", Parts: []a2a.Part{a2a.TextPart("chunk")}},
	}
	snap3 := *snap2
	snap3.Artifacts = []a2a.Artifact{art.Artifact}
	batch := []store.Event{statusEvent(2, snap2), {Seq: 3, Payload: art}}
	if err := s.Append(t.Context(), scopeA, task.ID, 1, batch, &snap3); err != nil {
		t.Fatalf("Append after 1: %v", err)
	}
	got, seq := mustGet(t, s, scopeA, task.ID)
	checkTask(t, "Get after append", got, &snap3)
	if seq != 3 {
		t.Errorf("Get after append: seq = %d, want 3", seq)
	}
	all := append([]store.Event{{Seq: 1, Payload: task}}, batch...)
	checkEvents(t, "Events(0) after append", mustEvents(t, s, scopeA, task.ID, 0), all)

	msg := &a2a.Message{MessageID: "m4", TaskID: task.ID, ContextID: task.ContextID, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("more")}}
	snap4 := snap3
	snap4.History = []a2a.Message{*msg}
	if err := s.Append(t.Context(), scopeA, task.ID, 3, []store.Event{{Seq: 4, Payload: msg}}, &snap4); err != nil {
		t.Fatalf("Append after 3: %v", err)
	}
	got, seq = mustGet(t, s, scopeA, task.ID)
	checkTask(t, "Get after second append", got, &snap4)
	if seq != 4 {
		t.Errorf("Get after second append: seq = %d, want 4", seq)
	}
	all = append(all, store.Event{Seq: 4, Payload: msg})
	checkEvents(t, "Events(0) after second append", mustEvents(t, s, scopeA, task.ID, 0), all)
}

func testAppendStale(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	snap := update(t, s, scopeA, task, 1, a2a.TaskStateWorking, at(1))
	snap = update(t, s, scopeA, snap, 2, a2a.TaskStateWorking, at(2))
	before := dump(t, s, scopeA, task.ID)

	// The log ends at 3: any other after is a conflict, whether behind
	// (a writer that lost a race) or ahead.
	for _, after := range []int64{1, 2, 4, 10} {
		next := withStatus(task, a2a.TaskStateCompleted, at(9), "stale")
		err := s.Append(t.Context(), scopeA, task.ID, after, []store.Event{statusEvent(after+1, next)}, next)
		what := fmt.Sprintf("Append after %d to a log that ends at 3", after)
		checkErr(t, what, err, store.ErrConflict)
		checkUnchanged(t, what, s, scopeA, task.ID, before)
	}

	// Two writers read seq 3; the first to append wins, the second
	// conflicts and leaves the winner's state alone.
	_, seq := mustGet(t, s, scopeA, task.ID)
	winner := update(t, s, scopeA, snap, seq, a2a.TaskStateCompleted, at(3))
	before = dump(t, s, scopeA, task.ID)
	loser := withStatus(snap, a2a.TaskStateFailed, at(4), "loser")
	err := s.Append(t.Context(), scopeA, task.ID, seq, []store.Event{statusEvent(seq+1, loser)}, loser)
	checkErr(t, "second writer of seq 4", err, store.ErrConflict)
	checkUnchanged(t, "second writer of seq 4", s, scopeA, task.ID, before)
	got, _ := mustGet(t, s, scopeA, task.ID)
	checkTask(t, "Get after lost race", got, winner)
}

func testAppendBadSeq(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	before := dump(t, s, scopeA, task.ID)
	next := withStatus(task, a2a.TaskStateWorking, at(1), "bad")

	for _, seqs := range [][]int64{{3}, {1}, {0}, {-1}, {2, 2}, {2, 4}, {3, 2}, {2, 3, 5}} {
		evs := make([]store.Event, len(seqs))
		for i, seq := range seqs {
			evs[i] = statusEvent(seq, next)
		}
		what := fmt.Sprintf("Append after 1 with seqs %v", seqs)
		if err := s.Append(t.Context(), scopeA, task.ID, 1, evs, next); err == nil {
			t.Errorf("%s: succeeded, want an error", what)
		}
		checkUnchanged(t, what, s, scopeA, task.ID, before)
	}

	// After a negative seq: refused as misnumbered, not as a conflict
	// that a retry loop would try again.
	for _, after := range []int64{-1, -5} {
		evs := []store.Event{statusEvent(after+1, next)}
		what := fmt.Sprintf("Append after %d", after)
		err := s.Append(t.Context(), scopeA, task.ID, after, evs, next)
		if err == nil || errors.Is(err, store.ErrConflict) {
			t.Errorf("%s: err = %v, want an error other than ErrConflict", what, err)
		}
		checkUnchanged(t, what, s, scopeA, task.ID, before)
	}

	// Creating with bad numbers creates nothing.
	fresh := newTask("task-2", "ctx-1", a2a.TaskStateSubmitted, at(0))
	for _, seqs := range [][]int64{{2}, {0}, {1, 1}, {1, 3}} {
		evs := make([]store.Event, len(seqs))
		for i, seq := range seqs {
			evs[i] = store.Event{Seq: seq, Payload: fresh}
		}
		what := fmt.Sprintf("create with seqs %v", seqs)
		if err := s.Append(t.Context(), scopeA, fresh.ID, 0, evs, fresh); err == nil {
			t.Errorf("%s: succeeded, want an error", what)
		}
		_, _, err := s.Get(t.Context(), scopeA, fresh.ID)
		checkErr(t, "Get after "+what, err, store.ErrNotFound)
	}
}

func testAppendMissingTask(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(1))
	err := s.Append(t.Context(), scopeA, task.ID, 1, []store.Event{statusEvent(2, task)}, task)
	checkErr(t, "Append after 1 to a missing task", err, store.ErrNotFound)
	_, _, err = s.Get(t.Context(), scopeA, task.ID)
	checkErr(t, "Get after Append to a missing task", err, store.ErrNotFound)
}

func testAppendKeepsInput(t *testing.T, s store.Store) {
	rich := richTask("task-1", at(0))
	evs := richEvents(rich)
	payloads := make([]a2a.Event, len(evs))
	for i, ev := range evs {
		payloads[i] = ev.Payload
	}
	wantTask, wantEvents := mustJSON(t, rich), eventsString(t, evs)
	if err := s.Append(t.Context(), scopeA, rich.ID, 0, evs, rich); err != nil {
		t.Fatalf("create: %v", err)
	}
	if got := mustJSON(t, rich); got != wantTask {
		t.Errorf("Append modified the task it was given\n got: %s\nwant: %s", got, wantTask)
	}
	if got := eventsString(t, evs); got != wantEvents {
		t.Errorf("Append modified the events it was given\n got: %s\nwant: %s", got, wantEvents)
	}
	for i, ev := range evs {
		if ev.Payload != payloads[i] {
			t.Errorf("Append replaced the payload of event %d", i)
		}
	}
}

func testGetMissing(t *testing.T, s store.Store) {
	_, _, err := s.Get(t.Context(), scopeA, "task-1")
	checkErr(t, "Get in an empty store", err, store.ErrNotFound)
	_, err = s.Events(t.Context(), scopeA, "task-1", 0)
	checkErr(t, "Events in an empty store", err, store.ErrNotFound)

	create(t, s, scopeA, newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0)))
	for _, id := range []string{"task-2", "task", "task-", "TASK-1", "task-1 ", ""} {
		_, _, err := s.Get(t.Context(), scopeA, id)
		checkErr(t, fmt.Sprintf("Get(%q)", id), err, store.ErrNotFound)
		_, err = s.Events(t.Context(), scopeA, id, 0)
		checkErr(t, fmt.Sprintf("Events(%q)", id), err, store.ErrNotFound)
	}
}

func testEvents(t *testing.T, s store.Store) {
	rich := richTask("task-1", at(0))
	evs := richEvents(rich)
	if err := s.Append(t.Context(), scopeA, rich.ID, 0, evs[:2], store.Fold(evs[0].Payload.(*a2a.Task), evs[1:2])); err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := s.Append(t.Context(), scopeA, rich.ID, 2, evs[2:], rich); err != nil {
		t.Fatalf("append after 2: %v", err)
	}
	n := int64(len(evs))
	for after := int64(-1); after <= n+2; after++ {
		want := evs[min(max(after, 0), n):]
		got := mustEvents(t, s, scopeA, rich.ID, after)
		checkEvents(t, fmt.Sprintf("Events(%d) of a log of %d", after, n), got, want)
	}
	checkEvents(t, "Events(1000)", mustEvents(t, s, scopeA, rich.ID, 1000), nil)

	// Another task's log is separate.
	other := newTask("task-2", "ctx-2", a2a.TaskStateSubmitted, at(1))
	create(t, s, scopeA, other)
	checkEvents(t, "Events(0) of another task", mustEvents(t, s, scopeA, other.ID, 0), []store.Event{{Seq: 1, Payload: other}})
	checkEvents(t, "Events(0) after another task was created", mustEvents(t, s, scopeA, rich.ID, 0), evs)
}

func testScopeIsolation(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0))
	create(t, s, scopeA, task)
	cfg := &a2a.TaskPushNotificationConfig{ID: "cfg-1", TaskID: task.ID, URL: "https://example.com/hook", Token: "tok"}
	if err := s.PutPushConfig(t.Context(), scopeA, cfg); err != nil {
		t.Fatalf("PutPushConfig: %v", err)
	}
	before := dump(t, s, scopeA, task.ID)

	for _, sc := range foreignScopes {
		in := fmt.Sprintf("scope %+v", sc)
		_, _, err := s.Get(t.Context(), sc, task.ID)
		checkErr(t, "Get in "+in, err, store.ErrNotFound)
		_, err = s.Events(t.Context(), sc, task.ID, 0)
		checkErr(t, "Events in "+in, err, store.ErrNotFound)

		next := withStatus(task, a2a.TaskStateCompleted, at(1), "intruder")
		err = s.Append(t.Context(), sc, task.ID, 1, []store.Event{statusEvent(2, next)}, next)
		checkErr(t, "Append in "+in, err, store.ErrNotFound)

		res, err := s.List(t.Context(), sc, store.ListQuery{Limit: 100})
		if err != nil {
			t.Errorf("List in %s: %v", in, err)
		} else if len(res.Tasks) != 0 || res.Total != 0 || res.More {
			t.Errorf("List in %s: %d tasks, total %d, more %v; want none", in, len(res.Tasks), res.Total, res.More)
		}
		res, err = s.List(t.Context(), sc, store.ListQuery{ContextID: task.ContextID, Limit: 100})
		if err != nil {
			t.Errorf("List by context in %s: %v", in, err)
		} else if len(res.Tasks) != 0 || res.Total != 0 {
			t.Errorf("List by context in %s: %d tasks, total %d; want none", in, len(res.Tasks), res.Total)
		}

		evil := &a2a.TaskPushNotificationConfig{ID: "cfg-2", TaskID: task.ID, URL: "https://evil.example.com/"}
		checkErr(t, "PutPushConfig in "+in, s.PutPushConfig(t.Context(), sc, evil), store.ErrNotFound)
		evil = &a2a.TaskPushNotificationConfig{ID: cfg.ID, TaskID: task.ID, URL: "https://evil.example.com/"}
		checkErr(t, "PutPushConfig over an existing id in "+in, s.PutPushConfig(t.Context(), sc, evil), store.ErrNotFound)
		_, err = s.GetPushConfig(t.Context(), sc, task.ID, cfg.ID)
		checkErr(t, "GetPushConfig in "+in, err, store.ErrNotFound)
		_, err = s.ListPushConfigs(t.Context(), sc, task.ID, "", 0)
		checkErr(t, "ListPushConfigs in "+in, err, store.ErrNotFound)
		checkErr(t, "DeletePushConfig in "+in, s.DeletePushConfig(t.Context(), sc, task.ID, cfg.ID), store.ErrNotFound)

		checkUnchanged(t, "operations in "+in, s, scopeA, task.ID, before)
	}

	// The owner still sees its task.
	res, err := s.List(t.Context(), scopeA, store.ListQuery{Limit: 100})
	if err != nil {
		t.Fatalf("List in the task's scope: %v", err)
	}
	if len(res.Tasks) != 1 || res.Total != 1 {
		t.Fatalf("List in the task's scope: %d tasks, total %d; want 1", len(res.Tasks), res.Total)
	}
	checkTask(t, "List in the task's scope", res.Tasks[0], task)

	// Each scope lists only its own tasks.
	for i, sc := range foreignScopes {
		create(t, s, sc, newTask(fmt.Sprintf("task-other-%d", i), "ctx-1", a2a.TaskStateWorking, at(i+1)))
	}
	for i, sc := range append([]store.Scope{scopeA}, foreignScopes...) {
		want := task.ID
		if i > 0 {
			want = fmt.Sprintf("task-other-%d", i-1)
		}
		res, err := s.List(t.Context(), sc, store.ListQuery{Limit: 100})
		if err != nil {
			t.Errorf("List in scope %+v: %v", sc, err)
			continue
		}
		if ids := taskIDs(res.Tasks); len(ids) != 1 || ids[0] != want || res.Total != 1 {
			t.Errorf("List in scope %+v: tasks %v, total %d; want [%s], total 1", sc, ids, res.Total, want)
		}
	}
}

// testScopeCreateSameID creates a task whose id is taken in another scope.
// The contract allows either answer: ErrConflict (task ids are unique in
// the store) or success (they are unique per scope). Either way the first
// task must stay as it was and invisible to the other scope.
func testScopeCreateSameID(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0))
	create(t, s, scopeA, task)
	before := dump(t, s, scopeA, task.ID)

	for i, sc := range foreignScopes {
		in := fmt.Sprintf("scope %+v", sc)
		other := newTask(task.ID, fmt.Sprintf("ctx-other-%d", i), a2a.TaskStateSubmitted, at(i+1))
		err := s.Append(t.Context(), sc, task.ID, 0, []store.Event{{Seq: 1, Payload: other}}, other)
		switch {
		case err == nil:
			got, seq := mustGet(t, s, sc, task.ID)
			checkTask(t, "Get in "+in+" of its own task", got, other)
			if seq != 1 {
				t.Errorf("Get in %s of its own task: seq = %d, want 1", in, seq)
			}
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("create in %s of an id taken in another scope: err = %v, want nil or %v", in, err, store.ErrConflict)
		}
		checkUnchanged(t, "create in "+in, s, scopeA, task.ID, before)
	}
}
