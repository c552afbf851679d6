package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

func importer(t *testing.T, s store.Store) store.Importer {
	im, ok := s.(store.Importer)
	if !ok {
		t.Skipf("%T does not implement store.Importer", s)
	}
	return im
}

// mustImport imports tasks into scope.
func mustImport(t *testing.T, im store.Importer, scope store.Scope, tasks ...*a2a.Task) {
	t.Helper()
	if err := im.Import(t.Context(), scope, tasks); err != nil {
		t.Fatalf("Import of %d tasks in %+v: %v", len(tasks), scope, err)
	}
}

// checkCreated reports whether task exists in scope exactly as Append
// with after 0 would have left it: its snapshot, at seq 1, with a log of
// one event that is the task itself.
func checkCreated(t *testing.T, s store.Store, scope store.Scope, task *a2a.Task) {
	t.Helper()
	got, seq := mustGet(t, s, scope, task.ID)
	checkTask(t, "Get of imported "+task.ID, got, task)
	if seq != 1 {
		t.Errorf("Get of imported %s: seq = %d, want 1", task.ID, seq)
	}
	checkEvents(t, "Events of imported "+task.ID, mustEvents(t, s, scope, task.ID, 0), []store.Event{{Seq: 1, Payload: task}})
	checkEvents(t, "Events(1) of imported "+task.ID, mustEvents(t, s, scope, task.ID, 1), nil)
}

// checkAbsent reports whether none of ids exists, in any of scopes.
func checkAbsent(t *testing.T, what string, s store.Store, ids []string, scopes ...store.Scope) {
	t.Helper()
	for _, sc := range scopes {
		for _, id := range ids {
			_, _, err := s.Get(t.Context(), sc, id)
			checkErr(t, fmt.Sprintf("%s: Get(%q) in %+v", what, id, sc), err, store.ErrNotFound)
			_, err = s.Events(t.Context(), sc, id, 0)
			checkErr(t, fmt.Sprintf("%s: Events(%q) in %+v", what, id, sc), err, store.ErrNotFound)
		}
	}
}

// importSet returns tasks of every kind of state, two contexts and a
// snapshot with every part of a task.
func importSet() []*a2a.Task {
	done := withStatus(newTask("i-done", "ctx-1", a2a.TaskStateSubmitted, at(0)), a2a.TaskStateCompleted, at(4), "done")
	return []*a2a.Task{
		newTask("i-sub", "ctx-1", a2a.TaskStateSubmitted, at(1)),
		newTask("i-work", "ctx-2", a2a.TaskStateWorking, at(2)),
		richTask("i-rich", at(3)), // input required, in ctx-rich
		done,
		newTask("i-fail", "ctx-2", a2a.TaskStateFailed, at(2)), // same timestamp as i-work
	}
}

// testImportCreate: each imported task reads back as if Append had
// created it, in the scope of the import only.
func testImportCreate(t *testing.T, s store.Store) {
	im := importer(t, s)
	tasks := importSet()
	mustImport(t, im, scopeA, tasks...)
	for _, task := range tasks {
		checkCreated(t, s, scopeA, task)
	}
	ids := taskIDs(tasks)
	checkAbsent(t, "imported in another scope", s, ids, foreignScopes...)
	for _, sc := range foreignScopes {
		checkList(t, s, sc, fmt.Sprintf("List in %+v", sc), store.ListQuery{Limit: 100}, nil, 0, false)
	}
}

// testImportList: imported tasks and created ones list together, in
// order, with the filters and the cursor.
func testImportList(t *testing.T, s store.Store) {
	im := importer(t, s)
	imported := importSet()
	appended := []*a2a.Task{
		newTask("a-1", "ctx-1", a2a.TaskStateWorking, at(2)),
		newTask("a-2", "ctx-2", a2a.TaskStateCompleted, at(5)),
		newTask("a-3", "ctx-1", a2a.TaskStateSubmitted, at(0)),
	}
	create(t, s, scopeA, appended[0])
	mustImport(t, im, scopeA, imported...)
	for _, task := range appended[1:] {
		create(t, s, scopeA, task)
	}
	// Noise: the same contexts in other scopes, imported and created.
	mustImport(t, im, scopeOwner, newTask("o-1", "ctx-1", a2a.TaskStateWorking, at(3)))
	create(t, s, scopeTenant, newTask("o-2", "ctx-2", a2a.TaskStateCompleted, at(9)))

	all := slices.Concat(imported, appended)
	want := orderedIDs(all)
	got := checkList(t, s, scopeA, "List all", store.ListQuery{Limit: 100}, want, len(all), false)
	byID := make(map[string]*a2a.Task)
	for _, task := range all {
		byID[task.ID] = task
	}
	for _, task := range got {
		if task != nil {
			checkTask(t, "List task "+task.ID, task, byID[task.ID])
		}
	}
	for _, c := range []struct {
		name string
		q    store.ListQuery
		keep func(*a2a.Task) bool
	}{
		{"context", store.ListQuery{ContextID: "ctx-2"}, func(x *a2a.Task) bool { return x.ContextID == "ctx-2" }},
		{"status", store.ListQuery{Status: a2a.TaskStateWorking}, func(x *a2a.Task) bool { return x.Status.State == a2a.TaskStateWorking }},
		{"status after", store.ListQuery{StatusAfter: at(2).Time}, func(x *a2a.Task) bool { return !x.Status.Timestamp.Before(at(2).Time) }},
	} {
		var matched []*a2a.Task
		for _, task := range all {
			if c.keep(task) {
				matched = append(matched, task)
			}
		}
		c.q.Limit = 100
		checkList(t, s, scopeA, c.name, c.q, orderedIDs(matched), len(matched), false)
	}
	pages := walk(t, s, scopeA, store.ListQuery{}, 3, func(int) int { return len(all) }, nil)
	if got := slices.Concat(pages...); !slices.Equal(got, want) {
		t.Errorf("walk in pages of 3: %v\nwant %v", got, want)
	}
}

// testImportConflict: an id that exists, in the scope of the import or in
// another, fails the whole import.
func testImportConflict(t *testing.T, s store.Store) {
	im := importer(t, s)
	mine := newTask("mine", "ctx-1", a2a.TaskStateWorking, at(0))
	theirs := newTask("theirs", "ctx-1", a2a.TaskStateWorking, at(1))
	create(t, s, scopeA, mine)
	create(t, s, scopeOwner, theirs)
	mustImport(t, im, scopeTenant, newTask("imported", "ctx-1", a2a.TaskStateCompleted, at(2)))
	before := map[string]string{
		"mine":     dump(t, s, scopeA, "mine"),
		"theirs":   dump(t, s, scopeOwner, "theirs"),
		"imported": dump(t, s, scopeTenant, "imported"),
	}
	for _, c := range []struct {
		name     string
		existing string
	}{
		{"an id in the same scope", "mine"},
		{"an id in another scope", "theirs"},
		{"an imported id in another scope", "imported"},
	} {
		// The existing id comes first, in the middle or last: a store
		// that inserts in order must undo what came before it.
		for pos := range 3 {
			fresh := []*a2a.Task{
				newTask("new-1", "ctx-1", a2a.TaskStateCompleted, at(3)),
				newTask("new-2", "ctx-1", a2a.TaskStateCompleted, at(4)),
			}
			tasks := slices.Insert(fresh, pos, newTask(c.existing, "ctx-x", a2a.TaskStateCompleted, at(5)))
			err := im.Import(t.Context(), scopeA, tasks)
			what := fmt.Sprintf("Import with %s at %d", c.name, pos)
			checkErr(t, what, err, store.ErrConflict)
			checkAbsent(t, what, s, []string{"new-1", "new-2"}, scopeA)
		}
	}
	checkUnchanged(t, "conflicting imports", s, scopeA, "mine", before["mine"])
	checkUnchanged(t, "conflicting imports", s, scopeOwner, "theirs", before["theirs"])
	checkUnchanged(t, "conflicting imports", s, scopeTenant, "imported", before["imported"])
	checkList(t, s, scopeA, "List after conflicting imports", store.ListQuery{Limit: 100}, []string{"mine"}, 1, false)

	// Append cannot create an imported id either.
	other := newTask("imported", "ctx-x", a2a.TaskStateWorking, at(6))
	err := s.Append(t.Context(), scopeTenant, other.ID, 0, []store.Event{{Seq: 1, Payload: other}}, other)
	checkErr(t, "Append creating an imported id", err, store.ErrConflict)
	checkUnchanged(t, "Append creating an imported id", s, scopeTenant, "imported", before["imported"])
}

// testImportDuplicate: an id given twice in one call fails it, and
// creates nothing.
func testImportDuplicate(t *testing.T, s store.Store) {
	im := importer(t, s)
	tasks := []*a2a.Task{
		newTask("d-1", "ctx-1", a2a.TaskStateCompleted, at(0)),
		newTask("d-2", "ctx-1", a2a.TaskStateCompleted, at(1)),
		newTask("d-1", "ctx-2", a2a.TaskStateWorking, at(2)),
	}
	checkErr(t, "Import with an id twice", im.Import(t.Context(), scopeA, tasks), store.ErrConflict)
	checkAbsent(t, "Import with an id twice", s, []string{"d-1", "d-2"}, scopeA)
	checkList(t, s, scopeA, "List after Import with an id twice", store.ListQuery{Limit: 100}, nil, 0, false)
	// The ids are still free.
	mustImport(t, im, scopeA, tasks[:2]...)
	checkCreated(t, s, scopeA, tasks[0])
}

// testImportEmpty: importing nothing succeeds and changes nothing.
func testImportEmpty(t *testing.T, s store.Store) {
	im := importer(t, s)
	mustImport(t, im, scopeA)
	if err := im.Import(t.Context(), scopeA, []*a2a.Task{}); err != nil {
		t.Errorf("Import of an empty slice: %v", err)
	}
	checkList(t, s, scopeA, "List after empty imports", store.ListQuery{Limit: 100}, nil, 0, false)
}

// testImportThenAppend: an imported task's log goes on at seq 2.
func testImportThenAppend(t *testing.T, s store.Store) {
	im := importer(t, s)
	task := newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0))
	mustImport(t, im, scopeA, task)
	stale := withStatus(task, a2a.TaskStateFailed, at(1), "stale")
	for _, after := range []int64{0, 2} {
		err := s.Append(t.Context(), scopeA, task.ID, after, []store.Event{statusEvent(after+1, stale)}, stale)
		checkErr(t, fmt.Sprintf("Append after %d to an imported task", after), err, store.ErrConflict)
	}
	snap := update(t, s, scopeA, task, 1, a2a.TaskStateCompleted, at(2))
	got, seq := mustGet(t, s, scopeA, task.ID)
	checkTask(t, "Get after Append to an imported task", got, snap)
	if seq != 2 {
		t.Errorf("Get after Append to an imported task: seq = %d, want 2", seq)
	}
	checkEvents(t, "Events after Append to an imported task", mustEvents(t, s, scopeA, task.ID, 0),
		[]store.Event{{Seq: 1, Payload: task}, statusEvent(2, snap)})
	checkList(t, s, scopeA, "List after Append to an imported task", store.ListQuery{Status: a2a.TaskStateCompleted, Limit: 10},
		[]string{task.ID}, 1, false)
	if err := s.PutPushConfig(t.Context(), scopeA, &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "p", URL: "https://example.com/hook"}); err != nil {
		t.Errorf("PutPushConfig on an imported task: %v", err)
	}
}

// testImportKeepsInput: Import does not change the tasks it is given.
func testImportKeepsInput(t *testing.T, s store.Store) {
	im := importer(t, s)
	tasks := importSet()
	before := mustJSON(t, tasks)
	mustImport(t, im, scopeA, tasks...)
	if after := mustJSON(t, tasks); after != before {
		t.Errorf("Import changed its input\nbefore: %s\n after: %s", before, after)
	}
}

// testImportMaintain: imported tasks belong to the store that imported
// them (never its orphans), and expire like any other.
func testImportMaintain(t *testing.T, s store.Store) {
	im := importer(t, s)
	m := maintainer(t, s)
	ctx := t.Context()
	mustImport(t, im, scopeA,
		newTask("working", "ctx", a2a.TaskStateWorking, at(0)),
		newTask("submitted", "ctx", a2a.TaskStateSubmitted, at(0)),
		newTask("old-done", "ctx", a2a.TaskStateCompleted, at(1)),
		newTask("new-done", "ctx", a2a.TaskStateCompleted, at(9)),
	)
	refs, err := m.Orphans(ctx, unfinishedStates, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 0 {
		t.Errorf("Orphans = %v; tasks this store imported are not orphans", refs)
	}
	n, err := m.Expire(ctx, finishedStates, at(5).Time, 10)
	if err != nil || n != 1 {
		t.Fatalf("Expire = %d, %v; want 1, nil", n, err)
	}
	checkAbsent(t, "expired imported task", s, []string{"old-done"}, scopeA)
	for _, id := range []string{"working", "submitted", "new-done"} {
		mustGet(t, s, scopeA, id)
	}
}

// testImportFill checks FillForList against the store, on enough tasks
// for several batches, each larger than a store's internal chunks, with a
// remainder: Count, the first page and the page at CursorFromEnd, for
// each filter a ListTasks benchmark uses.
func testImportFill(t *testing.T, s store.Store) {
	im := importer(t, s)
	const n, batch, page = 1234, 500, 100
	f := FillForList(t, im, scopeA, n, batch)
	FillForList(t, im, scopeOwner, 50, 0) // noise in another scope
	if f.N != n || f.Count(store.ListQuery{}) != n {
		t.Fatalf("Fill: N = %d, Count = %d; want %d", f.N, f.Count(store.ListQuery{}), n)
	}
	for _, q := range []store.ListQuery{
		{},
		{Status: f.States[1]},
		{ContextID: f.Contexts[3]},
		{ContextID: f.Contexts[3], Status: f.States[2]},
		{StatusAfter: f.Timestamp(n - 150)},
	} {
		total := f.Count(q)
		q.Limit = page
		what := fmt.Sprintf("query %+v", q)
		checkList(t, s, scopeA, what+", first page", q, f.firstIDs(q, page), total, total > page)
		for _, k := range []int{page, 1, 0} {
			q.After = f.CursorFromEnd(q, k)
			if total <= k {
				if q.After != nil {
					t.Errorf("%s: CursorFromEnd(%d) = %+v with only %d matches, want nil", what, k, q.After, total)
				}
				continue
			}
			checkList(t, s, scopeA, fmt.Sprintf("%s, %d from the end", what, k), q, f.lastIDs(q, k), total, false)
		}
	}
	// A task of the fill reads back whole.
	task := f.task(7)
	checkCreated(t, s, scopeA, task)
}
