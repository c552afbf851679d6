package storetest

import (
	"fmt"
	"slices"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// allStates are the states a task may be in, for the tests of Total.
var allStates = []a2a.TaskState{
	a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted,
	a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateInputRequired,
	a2a.TaskStateRejected, a2a.TaskStateAuthRequired,
}

// totals is what a test expects ListResult.Total to be: the number of
// tasks of each state in each scope.
type totals map[store.Scope]map[a2a.TaskState]int

func (tt totals) add(scope store.Scope, state a2a.TaskState, n int) {
	if tt[scope] == nil {
		tt[scope] = make(map[a2a.TaskState]int)
	}
	tt[scope][state] += n
}

// check compares Total, unfiltered and for each state, with tt in every
// scope of scopes. A store may keep counts rather than count rows, so
// Total is checked after every kind of write that changes them.
func (tt totals) check(t *testing.T, s store.Store, what string, scopes []store.Scope) {
	t.Helper()
	for _, scope := range scopes {
		all := 0
		for _, st := range allStates {
			want := tt[scope][st]
			all += want
			res, err := s.List(t.Context(), scope, store.ListQuery{Status: st, Limit: 1})
			if err != nil {
				t.Fatalf("%s: List(%+v, state %v): %v", what, scope, st, err)
			}
			if res.Total != want {
				t.Errorf("%s: List(%+v, state %v).Total = %d, want %d", what, scope, st, res.Total, want)
			}
		}
		res, err := s.List(t.Context(), scope, store.ListQuery{Limit: 1})
		if err != nil {
			t.Fatalf("%s: List(%+v): %v", what, scope, err)
		}
		if res.Total != all {
			t.Errorf("%s: List(%+v).Total = %d, want %d", what, scope, res.Total, all)
		}
	}
}

// testListTotal follows ListResult.Total, per scope and per state,
// through creations, appends that change the state or keep it, failed
// appends and, for stores that implement them, imports (one failing) and
// expiry.
func testListTotal(t *testing.T, s store.Store) {
	ctx := t.Context()
	scopes := []store.Scope{scopeA, scopeTenant, scopeOwner, scopeNoOwner}
	want := totals{}
	want.check(t, s, "empty store", scopes)

	// Creations: task i in scope i%4, in an unfinished state (some
	// stores take no appends after a terminal state).
	unfinished := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired}
	type live struct {
		scope store.Scope
		task  *a2a.Task
		seq   int64
	}
	var tasks []*live
	for i := range 24 {
		sc, st := scopes[i%len(scopes)], unfinished[(i/len(scopes))%len(unfinished)]
		task := newTask(fmt.Sprintf("total-%d", i), "ctx", st, at(i))
		create(t, s, sc, task)
		tasks = append(tasks, &live{sc, task, 1})
		want.add(sc, st, 1)
	}
	want.check(t, s, "after creating", scopes)

	// Appends: every task moves on to another unfinished state; one in
	// three then gets an event that keeps its state; last, each moves to
	// a state of allStates, its own for some, terminal for others.
	move := func(l *live, to a2a.TaskState, ts a2a.Timestamp) {
		t.Helper()
		want.add(l.scope, l.task.Status.State, -1)
		want.add(l.scope, to, 1)
		l.task = update(t, s, l.scope, l.task, l.seq, to, ts)
		l.seq++
	}
	for i, l := range tasks {
		move(l, unfinished[(slices.Index(unfinished, l.task.Status.State)+1)%len(unfinished)], at(30+i))
		if i%3 == 0 {
			move(l, l.task.Status.State, at(60+i))
		}
	}
	want.check(t, s, "after appends", scopes)
	for i, l := range tasks {
		move(l, allStates[i%len(allStates)], at(90+i))
	}
	want.check(t, s, "after appends", scopes)

	// Appends that fail change nothing: a stale seq, a task of another
	// scope, a missing task, an id that exists.
	l := tasks[0]
	next := withStatus(l.task, a2a.TaskStateCanceled, at(120), "stale")
	checkErr(t, "stale append", s.Append(ctx, l.scope, l.task.ID, l.seq-1, []store.Event{statusEvent(l.seq, next)}, next), store.ErrConflict)
	checkErr(t, "append in another scope", s.Append(ctx, scopes[1], l.task.ID, l.seq, []store.Event{statusEvent(l.seq+1, next)}, next), store.ErrNotFound)
	missing := newTask("total-missing", "ctx", a2a.TaskStateWorking, at(121))
	checkErr(t, "append to a missing task", s.Append(ctx, l.scope, missing.ID, 1, []store.Event{statusEvent(2, missing)}, missing), store.ErrNotFound)
	again := newTask(l.task.ID, "ctx", a2a.TaskStateRejected, at(122))
	checkErr(t, "create an existing id", s.Append(ctx, scopes[2], again.ID, 0, []store.Event{{Seq: 1, Payload: again}}, again), store.ErrConflict)
	want.check(t, s, "after failed appends", scopes)

	if im, ok := s.(store.Importer); ok {
		for k, sc := range scopes[:3] {
			var batch []*a2a.Task
			for i := range 10 + k {
				st := allStates[(i+k)%len(allStates)]
				batch = append(batch, newTask(fmt.Sprintf("total-imp-%d-%d", k, i), "ctx", st, at(200+i)))
				want.add(sc, st, 1)
			}
			mustImport(t, im, sc, batch...)
		}
		want.check(t, s, "after imports", scopes)
		// An import with an id that exists creates none of its tasks.
		failing := []*a2a.Task{
			newTask("total-imp-new", "ctx", a2a.TaskStateCompleted, at(220)),
			newTask(tasks[1].task.ID, "ctx", a2a.TaskStateCompleted, at(221)),
		}
		if err := im.Import(ctx, scopes[3], failing); err == nil {
			t.Fatalf("Import with an existing id succeeded")
		}
		want.check(t, s, "after a failed import", scopes)
	}

	if m, ok := s.(store.Maintainer); ok {
		// Finished tasks with a status before at(200): those the appends
		// finished. Imported tasks are not older than at(200).
		cutoff := at(200).Time
		expired := 0
		for _, l := range tasks {
			if slices.Contains(finishedStates, l.task.Status.State) {
				want.add(l.scope, l.task.Status.State, -1)
				expired++
			}
		}
		got := 0
		for {
			n, err := m.Expire(ctx, finishedStates, cutoff, 5)
			if err != nil {
				t.Fatalf("Expire: %v", err)
			}
			if n == 0 {
				break
			}
			got += n
		}
		if got != expired {
			t.Fatalf("Expire deleted %d tasks, want %d", got, expired)
		}
		want.check(t, s, "after expiry", scopes)
	}
}
