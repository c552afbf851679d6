package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// The tests of client message ids (store.Messages), for stores that
// implement it. They are run by Run.
var messageTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store, m store.Messages)
}{
	{"MessagesCreate", testMessagesCreate},
	{"MessagesCreateUsed", testMessagesCreateUsed},
	{"MessagesContinue", testMessagesContinue},
	{"MessagesStaleAppend", testMessagesStaleAppend},
	{"MessagesFailedAppend", testMessagesFailedAppend},
	{"MessagesTwiceInOneAppend", testMessagesTwiceInOneAppend},
	{"MessagesReply", testMessagesReply},
	{"MessagesConcurrentCreate", testMessagesConcurrentCreate},
	{"MessagesConcurrentReply", testMessagesConcurrentReply},
	{"MessagesForget", testMessagesForget},
}

// runMessages runs the message id tests, each on a fresh store; a store
// that does not implement store.Messages skips them.
func runMessages(t *testing.T, newStore func(t *testing.T) store.Store) {
	for _, tt := range messageTests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			m, ok := s.(store.Messages)
			if !ok {
				t.Skipf("%T does not implement store.Messages", s)
			}
			tt.fn(t, s, m)
		})
	}
}

// digest returns a digest for the tests: any bytes do, the store keeps them.
func digest(s string) []byte { return []byte("digest of " + s) }

// createWith creates task in scope with the single event that carries it,
// registering msgID with it.
func createWith(ctx context.Context, s store.Store, scope store.Scope, task *a2a.Task, msgID string) error {
	ev := store.Event{Seq: 1, Payload: task, MessageID: msgID, MessageDigest: digest(msgID)}
	return s.Append(ctx, scope, task.ID, 0, []store.Event{ev}, task)
}

// clientMessage returns the event of a client message continuing task at
// seq, registered under its id, and the task after it.
func clientMessage(task *a2a.Task, seq int64, msgID string) (store.Event, *a2a.Task) {
	m := a2a.NewTextMessage(a2a.RoleUser, msgID, "answer "+msgID)
	m.TaskID, m.ContextID = task.ID, task.ContextID
	return store.Event{Seq: seq, Payload: m, MessageID: msgID, MessageDigest: digest(msgID)}, task.Apply(m)
}

// mustMessage returns the record of msgID in scope.
func mustMessage(t *testing.T, m store.Messages, scope store.Scope, msgID string) store.MessageRecord {
	t.Helper()
	rec, err := m.Message(t.Context(), scope, msgID)
	if err != nil {
		t.Fatalf("Message(%q) in %+v: %v", msgID, scope, err)
	}
	return rec
}

// checkNoMessage reports whether scope has no record of msgID.
func checkNoMessage(t *testing.T, m store.Messages, scope store.Scope, msgID, what string) {
	t.Helper()
	rec, err := m.Message(t.Context(), scope, msgID)
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("%s: Message(%q) in %+v = %+v, %v; want ErrNotFound", what, msgID, scope, rec, err)
	}
}

// checkRecord reports whether rec records msgID for taskID (a reply when
// taskID is ""), made within [from, to] to the millisecond.
func checkRecord(t *testing.T, what string, rec store.MessageRecord, msgID, taskID string, reply []byte, from, to time.Time) {
	t.Helper()
	if rec.ID != msgID || rec.TaskID != taskID || !bytes.Equal(rec.Digest, digest(msgID)) || !bytes.Equal(rec.Reply, reply) {
		t.Errorf("%s: record %+v, want id %q, task %q, digest %q, reply %q", what, rec, msgID, taskID, digest(msgID), reply)
	}
	if from.IsZero() {
		return
	}
	if rec.Created.Before(from.Truncate(time.Millisecond)) || rec.Created.After(to) {
		t.Errorf("%s: record made at %v, want between %v and %v", what, rec.Created, from, to)
	}
}

// usedRecord returns the record a *store.MessageUsedError carries, failing
// the test if err is not one.
func usedRecord(t *testing.T, what string, err error) store.MessageRecord {
	t.Helper()
	var used *store.MessageUsedError
	if !errors.Is(err, store.ErrMessageUsed) || !errors.As(err, &used) {
		t.Fatalf("%s: err = %v, want a *store.MessageUsedError", what, err)
	}
	if errors.Is(err, store.ErrConflict) {
		t.Errorf("%s: err %v is also ErrConflict, which writers retry", what, err)
	}
	return used.Record
}

func testMessagesCreate(t *testing.T, s store.Store, m store.Messages) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	from := time.Now()
	if err := createWith(t.Context(), s, scopeA, task, "m1"); err != nil {
		t.Fatalf("create with a message id: %v", err)
	}
	to := time.Now()
	checkRecord(t, "after create", mustMessage(t, m, scopeA, "m1"), "m1", task.ID, nil, from, to)
	for _, other := range foreignScopes {
		checkNoMessage(t, m, other, "m1", "another scope")
	}
	checkNoMessage(t, m, scopeA, "m2", "an id never used")
	// The task is as it would be without the id.
	got, seq := mustGet(t, s, scopeA, task.ID)
	checkTask(t, "Get", got, task)
	if seq != 1 {
		t.Errorf("seq %d, want 1", seq)
	}
	// An Append without ids records nothing.
	update(t, s, scopeA, task, 1, a2a.TaskStateWorking, at(1))
	checkRecord(t, "after an append without ids", mustMessage(t, m, scopeA, "m1"), "m1", task.ID, nil, from, to)
}

func testMessagesCreateUsed(t *testing.T, s store.Store, m store.Messages) {
	first := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	if err := createWith(t.Context(), s, scopeA, first, "m1"); err != nil {
		t.Fatal(err)
	}
	second := newTask("task-2", "ctx-2", a2a.TaskStateSubmitted, at(1))
	rec := usedRecord(t, "second create with m1", createWith(t.Context(), s, scopeA, second, "m1"))
	checkRecord(t, "the record in the error", rec, "m1", first.ID, nil, time.Time{}, time.Time{})
	_, _, err := s.Get(t.Context(), scopeA, second.ID)
	checkErr(t, "Get of the task whose creation failed", err, store.ErrNotFound)
	res, err := s.List(t.Context(), scopeA, store.ListQuery{Limit: 10})
	if err != nil || res.Total != 1 || len(res.Tasks) != 1 {
		t.Errorf("List = %d tasks, total %d, %v; want the first task only", len(res.Tasks), res.Total, err)
	}
	// The failed Append left its id free: the task may be created
	// without it, or with another.
	if err := createWith(t.Context(), s, scopeA, second, "m2"); err != nil {
		t.Fatalf("create with another id: %v", err)
	}
	// Another scope has ids of its own.
	third := newTask("task-3", "ctx-3", a2a.TaskStateSubmitted, at(2))
	if err := createWith(t.Context(), s, scopeOwner, third, "m1"); err != nil {
		t.Fatalf("create with m1 in another scope: %v", err)
	}
	checkRecord(t, "m1 in scopeA", mustMessage(t, m, scopeA, "m1"), "m1", first.ID, nil, time.Time{}, time.Time{})
	checkRecord(t, "m1 in the other scope", mustMessage(t, m, scopeOwner, "m1"), "m1", third.ID, nil, time.Time{}, time.Time{})
}

func testMessagesContinue(t *testing.T, s store.Store, m store.Messages) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateInputRequired, at(0))
	if err := createWith(t.Context(), s, scopeA, task, "m1"); err != nil {
		t.Fatal(err)
	}
	working := withStatus(task, a2a.TaskStateWorking, at(1), "")
	ev, snap := clientMessage(working, 3, "m2")
	from := time.Now()
	if err := s.Append(t.Context(), scopeA, task.ID, 1, []store.Event{statusEvent(2, working), ev}, snap); err != nil {
		t.Fatalf("append with a continuing message: %v", err)
	}
	to := time.Now()
	checkRecord(t, "the continuing message", mustMessage(t, m, scopeA, "m2"), "m2", task.ID, nil, from, to)
	before := dump(t, s, scopeA, task.ID)

	// The same message again, or the creating one, is refused.
	for _, id := range []string{"m2", "m1"} {
		again, next := clientMessage(snap, 4, id)
		rec := usedRecord(t, "append of "+id+" again", s.Append(t.Context(), scopeA, task.ID, 3, []store.Event{again}, next))
		checkRecord(t, "the record in the error", rec, id, task.ID, nil, time.Time{}, time.Time{})
		checkUnchanged(t, "a refused append", s, scopeA, task.ID, before)
	}
	// A new id goes in, with an agent event before it in the same Append.
	st := withStatus(snap, a2a.TaskStateWorking, at(2), "progress")
	ev3, snap3 := clientMessage(st, 5, "m3")
	if err := s.Append(t.Context(), scopeA, task.ID, 3, []store.Event{statusEvent(4, st), ev3}, snap3); err != nil {
		t.Fatalf("append of m3: %v", err)
	}
	checkRecord(t, "m3", mustMessage(t, m, scopeA, "m3"), "m3", task.ID, nil, time.Time{}, time.Time{})
}

// testMessagesStaleAppend: an Append that conflicts on its seq records
// nothing; appended again after the right seq, its id goes in.
func testMessagesStaleAppend(t *testing.T, s store.Store, m store.Messages) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0))
	create(t, s, scopeA, task)
	next := update(t, s, scopeA, task, 1, a2a.TaskStateWorking, at(1))
	ev, snap := clientMessage(task, 2, "m1")
	err := s.Append(t.Context(), scopeA, task.ID, 1, []store.Event{ev}, snap)
	checkErr(t, "a stale append with a message id", err, store.ErrConflict)
	checkNoMessage(t, m, scopeA, "m1", "after a stale append")
	ev, snap = clientMessage(next, 3, "m1")
	if err := s.Append(t.Context(), scopeA, task.ID, 2, []store.Event{ev}, snap); err != nil {
		t.Fatalf("the append again after the right seq: %v", err)
	}
	checkRecord(t, "after the append", mustMessage(t, m, scopeA, "m1"), "m1", task.ID, nil, time.Time{}, time.Time{})
}

// testMessagesFailedAppend: Appends that fail for other reasons record
// nothing.
func testMessagesFailedAppend(t *testing.T, s store.Store, m store.Messages) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0))
	// A task whose id exists.
	create(t, s, scopeA, task)
	err := createWith(t.Context(), s, scopeA, task, "m1")
	checkErr(t, "create of an existing task", err, store.ErrConflict)
	checkNoMessage(t, m, scopeA, "m1", "after creating an existing task")
	// A missing task.
	ghost := newTask("task-2", "ctx-1", a2a.TaskStateWorking, at(0))
	ev, snap := clientMessage(ghost, 2, "m2")
	err = s.Append(t.Context(), scopeA, ghost.ID, 1, []store.Event{ev}, snap)
	checkErr(t, "append to a missing task", err, store.ErrNotFound)
	checkNoMessage(t, m, scopeA, "m2", "after an append to a missing task")
	// Another scope's task.
	ev, snap = clientMessage(task, 2, "m3")
	err = s.Append(t.Context(), scopeOwner, task.ID, 1, []store.Event{ev}, snap)
	checkErr(t, "append to another scope's task", err, store.ErrNotFound)
	checkNoMessage(t, m, scopeOwner, "m3", "after an append to another scope's task")
	checkNoMessage(t, m, scopeA, "m3", "after an append to another scope's task")
	// Misnumbered events.
	ev, snap = clientMessage(task, 3, "m4")
	if err := s.Append(t.Context(), scopeA, task.ID, 1, []store.Event{ev}, snap); err == nil {
		t.Errorf("a misnumbered append succeeded")
	}
	checkNoMessage(t, m, scopeA, "m4", "after a misnumbered append")
}

// testMessagesTwiceInOneAppend: one Append may not carry an id twice; it
// fails, with an error other than ErrMessageUsed, and records nothing.
func testMessagesTwiceInOneAppend(t *testing.T, s store.Store, m store.Messages) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0))
	create(t, s, scopeA, task)
	before := dump(t, s, scopeA, task.ID)
	ev1, snap := clientMessage(task, 2, "m1")
	ev2, snap := clientMessage(snap, 3, "m1")
	err := s.Append(t.Context(), scopeA, task.ID, 1, []store.Event{ev1, ev2}, snap)
	if err == nil || errors.Is(err, store.ErrMessageUsed) || errors.Is(err, store.ErrConflict) {
		t.Errorf("an append with an id twice: err = %v, want an error that is neither ErrMessageUsed nor ErrConflict", err)
	}
	checkUnchanged(t, "the append with an id twice", s, scopeA, task.ID, before)
	checkNoMessage(t, m, scopeA, "m1", "after an append with an id twice")
}

func testMessagesReply(t *testing.T, s store.Store, m store.Messages) {
	reply := []byte(`{"messageId":"r1","role":"ROLE_AGENT","parts":[{"text":"hi"}]}`)
	rec := store.MessageRecord{ID: "m1", Digest: digest("m1"), Reply: reply}
	from := time.Now()
	if err := m.PutReply(t.Context(), scopeA, rec); err != nil {
		t.Fatalf("PutReply: %v", err)
	}
	to := time.Now()
	checkRecord(t, "the reply", mustMessage(t, m, scopeA, "m1"), "m1", "", reply, from, to)
	checkNoMessage(t, m, scopeOwner, "m1", "another scope")

	// A second reply, or a task, with the id is refused.
	other := store.MessageRecord{ID: "m1", Digest: digest("other"), Reply: []byte(`{}`)}
	got := usedRecord(t, "a second PutReply", m.PutReply(t.Context(), scopeA, other))
	checkRecord(t, "the record in the error", got, "m1", "", reply, time.Time{}, time.Time{})
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	got = usedRecord(t, "create with a replied id", createWith(t.Context(), s, scopeA, task, "m1"))
	checkRecord(t, "the record in the error", got, "m1", "", reply, time.Time{}, time.Time{})
	_, _, err := s.Get(t.Context(), scopeA, task.ID)
	checkErr(t, "Get of the task whose creation failed", err, store.ErrNotFound)
	// A task's id cannot be replied to.
	if err := createWith(t.Context(), s, scopeA, task, "m2"); err != nil {
		t.Fatal(err)
	}
	got = usedRecord(t, "PutReply of a task's id", m.PutReply(t.Context(), scopeA, store.MessageRecord{ID: "m2", Digest: digest("m2"), Reply: reply}))
	checkRecord(t, "the record in the error", got, "m2", task.ID, nil, time.Time{}, time.Time{})
	// The same id in another scope is that scope's.
	if err := m.PutReply(t.Context(), scopeOwner, rec); err != nil {
		t.Errorf("PutReply in another scope: %v", err)
	}
	// Bad records.
	for _, bad := range []store.MessageRecord{
		{Digest: digest("x"), Reply: reply},
		{ID: "m9", Digest: digest("m9")},
		{ID: "m9", Digest: digest("m9"), Reply: reply, TaskID: "task-1"},
	} {
		if err := m.PutReply(t.Context(), scopeA, bad); err == nil || errors.Is(err, store.ErrMessageUsed) {
			t.Errorf("PutReply(%+v) = %v, want an error", bad, err)
		}
	}
	checkNoMessage(t, m, scopeA, "m9", "after bad PutReply calls")
}

// testMessagesConcurrentCreate: many writers create a task each with one
// message id at once, as replicas given a client's retries would: one
// task is created, and every other writer is told which.
func testMessagesConcurrentCreate(t *testing.T, s store.Store, m store.Messages) {
	const writers = 8
	ctx := t.Context()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]error, writers)
	)
	for i := range writers {
		wg.Go(func() {
			<-start
			task := newTask(fmt.Sprintf("task-%d", i), "ctx-1", a2a.TaskStateSubmitted, at(i))
			errs[i] = createWith(ctx, s, scopeA, task, "m1")
		})
	}
	close(start)
	wg.Wait()
	winner := ""
	for i, err := range errs {
		if err == nil {
			if winner != "" {
				t.Errorf("task-%d and %s were both created with m1", i, winner)
			}
			winner = fmt.Sprintf("task-%d", i)
		}
	}
	if winner == "" {
		t.Fatalf("no task was created: %v", errs)
	}
	for i, err := range errs {
		if err == nil {
			continue
		}
		rec := usedRecord(t, fmt.Sprintf("creation of task-%d", i), err)
		if rec.TaskID != winner {
			t.Errorf("creation of task-%d was refused for task %q, want %q", i, rec.TaskID, winner)
		}
		_, _, gerr := s.Get(t.Context(), scopeA, fmt.Sprintf("task-%d", i))
		checkErr(t, fmt.Sprintf("Get task-%d", i), gerr, store.ErrNotFound)
	}
	checkRecord(t, "m1", mustMessage(t, m, scopeA, "m1"), "m1", winner, nil, time.Time{}, time.Time{})
	res, err := s.List(t.Context(), scopeA, store.ListQuery{Limit: writers})
	if err != nil || res.Total != 1 {
		t.Errorf("List: total %d, %v; want 1", res.Total, err)
	}
}

// testMessagesConcurrentReply: writers record a reply or create a task
// with one id at once: one wins.
func testMessagesConcurrentReply(t *testing.T, s store.Store, m store.Messages) {
	const writers = 8
	ctx := t.Context()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		errs  = make([]error, writers)
	)
	for i := range writers {
		wg.Go(func() {
			<-start
			if i%2 == 0 {
				errs[i] = m.PutReply(ctx, scopeA, store.MessageRecord{ID: "m1", Digest: digest("m1"), Reply: fmt.Appendf(nil, `{"n":%d}`, i)})
				return
			}
			errs[i] = createWith(ctx, s, scopeA, newTask(fmt.Sprintf("task-%d", i), "ctx-1", a2a.TaskStateSubmitted, at(i)), "m1")
		})
	}
	close(start)
	wg.Wait()
	won := -1
	for i, err := range errs {
		if err == nil {
			if won >= 0 {
				t.Errorf("writers %d and %d both recorded m1", won, i)
			}
			won = i
		}
	}
	if won < 0 {
		t.Fatalf("no writer recorded m1: %v", errs)
	}
	rec := mustMessage(t, m, scopeA, "m1")
	for i, err := range errs {
		if err == nil {
			continue
		}
		got := usedRecord(t, fmt.Sprintf("writer %d", i), err)
		if got.TaskID != rec.TaskID || !bytes.Equal(got.Reply, rec.Reply) {
			t.Errorf("writer %d was refused for %+v, but the record is %+v", i, got, rec)
		}
	}
	if won%2 == 0 {
		checkRecord(t, "the reply that won", rec, "m1", "", fmt.Appendf(nil, `{"n":%d}`, won), time.Time{}, time.Time{})
	} else {
		checkRecord(t, "the task that won", rec, "m1", fmt.Sprintf("task-%d", won), nil, time.Time{}, time.Time{})
	}
}

func testMessagesForget(t *testing.T, s store.Store, m store.Messages) {
	ctx := t.Context()
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	if err := createWith(t.Context(), s, scopeA, task, "m1"); err != nil {
		t.Fatal(err)
	}
	if err := m.PutReply(ctx, scopeOwner, store.MessageRecord{ID: "m2", Digest: digest("m2"), Reply: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := createWith(t.Context(), s, scopeTenant, newTask("task-2", "ctx-1", a2a.TaskStateSubmitted, at(1)), "m3"); err != nil {
		t.Fatal(err)
	}
	// Nothing is older than a minute ago.
	if n, err := m.ForgetMessages(ctx, time.Now().Add(-time.Minute), 10); err != nil || n != 0 {
		t.Errorf("ForgetMessages(a minute ago) = %d, %v; want 0", n, err)
	}
	for _, c := range []struct {
		scope store.Scope
		id    string
	}{{scopeA, "m1"}, {scopeOwner, "m2"}, {scopeTenant, "m3"}} {
		mustMessage(t, m, c.scope, c.id)
	}
	// Everything is older than an hour from now: two, then the last.
	later := time.Now().Add(time.Hour)
	if n, err := m.ForgetMessages(ctx, later, 2); err != nil || n != 2 {
		t.Errorf("ForgetMessages(later, 2) = %d, %v; want 2", n, err)
	}
	if n, err := m.ForgetMessages(ctx, later, 2); err != nil || n != 1 {
		t.Errorf("ForgetMessages(later, 2) again = %d, %v; want 1", n, err)
	}
	if n, err := m.ForgetMessages(ctx, later, 2); err != nil || n != 0 {
		t.Errorf("ForgetMessages(later, 2) a third time = %d, %v; want 0", n, err)
	}
	checkNoMessage(t, m, scopeA, "m1", "forgotten")
	checkNoMessage(t, m, scopeOwner, "m2", "forgotten")
	checkNoMessage(t, m, scopeTenant, "m3", "forgotten")
	// The tasks stay, and their ids are free again.
	got, _ := mustGet(t, s, scopeA, task.ID)
	checkTask(t, "the task after its id was forgotten", got, task)
	if err := createWith(t.Context(), s, scopeA, newTask("task-3", "ctx-1", a2a.TaskStateSubmitted, at(2)), "m1"); err != nil {
		t.Errorf("create with a forgotten id: %v", err)
	}
	if n, err := m.ForgetMessages(ctx, later, 0); err != nil || n != 0 {
		t.Errorf("ForgetMessages with limit 0 = %d, %v; want 0, nil", n, err)
	}
	mustMessage(t, m, scopeA, "m1")
}
