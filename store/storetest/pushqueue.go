package storetest

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// The clock of the push delivery tests: ClaimPush takes the time from its
// caller, so the tests pick it. pushNow has whole milliseconds; pushLease
// is the lease every claim takes.
var (
	pushNow   = baseTime.Add(time.Hour)
	pushLease = 30 * time.Second
)

// pushQueue returns s as a store.PushQueue. Every store of this module
// implements it, so a store that does not fails the test.
func pushQueue(t *testing.T, s store.Store) store.PushQueue {
	t.Helper()
	q, ok := s.(store.PushQueue)
	if !ok {
		t.Fatalf("%T does not implement store.PushQueue", s)
	}
	return q
}

// ms returns tm truncated to whole milliseconds, the precision stores keep.
func ms(tm time.Time) time.Time { return tm.Truncate(time.Millisecond) }

// pushStateString renders a PushState for comparisons and messages, with
// NextAttempt in milliseconds ("0" for the zero time).
func pushStateString(st store.PushState) string {
	next := "0"
	if !st.NextAttempt.IsZero() {
		next = ms(st.NextAttempt).UTC().Format("2006-01-02T15:04:05.000Z")
	}
	return fmt.Sprintf("{Delivered:%d Attempts:%d NextAttempt:%s Failing:%v LastError:%q}",
		st.Delivered, st.Attempts, next, st.Failing, st.LastError)
}

// checkPushState reports whether the state of a config equals want, with
// NextAttempt compared at millisecond precision.
func checkPushState(t *testing.T, q store.PushQueue, scope store.Scope, what, taskID, id string, want store.PushState) {
	t.Helper()
	got, err := q.PushState(t.Context(), scope, taskID, id)
	if err != nil {
		t.Errorf("%s: PushState(%q, %q): %v", what, taskID, id, err)
		return
	}
	if !samePushState(got, want) {
		t.Errorf("%s: PushState(%q, %q)\n got: %s\nwant: %s", what, taskID, id, pushStateString(got), pushStateString(want))
	}
}

// samePushState reports whether two states are equal, NextAttempt at
// millisecond precision.
func samePushState(a, b store.PushState) bool {
	return a.Delivered == b.Delivered && a.Attempts == b.Attempts && a.Failing == b.Failing &&
		a.LastError == b.LastError && a.NextAttempt.IsZero() == b.NextAttempt.IsZero() &&
		ms(a.NextAttempt).Equal(ms(b.NextAttempt))
}

// mustSetPush sets the state of a config whose Delivered is prev.
func mustSetPush(t *testing.T, q store.PushQueue, scope store.Scope, taskID, id string, prev int64, st store.PushState) {
	t.Helper()
	if err := q.SetPushState(t.Context(), scope, taskID, id, prev, st); err != nil {
		t.Fatalf("SetPushState(%q, %q, prev %d): %v", taskID, id, prev, err)
	}
}

// mustClaim calls ClaimPush and fails the test on an error.
func mustClaim(t *testing.T, q store.PushQueue, now time.Time, limit int) []store.PushJob {
	t.Helper()
	jobs, err := q.ClaimPush(t.Context(), now, pushLease, limit)
	if err != nil {
		t.Fatalf("ClaimPush(%v, limit %d): %v", now, limit, err)
	}
	return jobs
}

// jobKey names a job by its task and config ids.
func jobKey(j store.PushJob) string {
	if j.Config == nil {
		return "<nil config>"
	}
	return j.Config.TaskID + "/" + j.Config.ID
}

func jobKeys(jobs []store.PushJob) []string {
	keys := make([]string, len(jobs))
	for i, j := range jobs {
		keys[i] = jobKey(j)
	}
	return keys
}

// checkClaimed reports whether ClaimPush returned exactly the configs
// want (task/config), in that order.
func checkClaimed(t *testing.T, what string, jobs []store.PushJob, want ...string) {
	t.Helper()
	if got := jobKeys(jobs); !slices.Equal(got, want) {
		t.Errorf("%s: ClaimPush returned %q, want %q", what, got, want)
	}
}

// checkClaimedSet is checkClaimed in any order.
func checkClaimedSet(t *testing.T, what string, jobs []store.PushJob, want ...string) {
	t.Helper()
	got := jobKeys(jobs)
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("%s: ClaimPush returned %q, want %q in any order", what, got, want)
	}
}

// grow appends n status events to a task whose log ends at seq after, and
// returns the new last seq and snapshot.
func grow(t *testing.T, s store.Store, scope store.Scope, task *a2a.Task, after int64, n int) (*a2a.Task, int64) {
	t.Helper()
	for range n {
		task = update(t, s, scope, task, after, a2a.TaskStateWorking, at(int(after)))
		after++
	}
	return task, after
}

// testPushQueueNew: a new config starts at its task's last seq, and once
// the task moves on, ClaimPush hands it out with everything a worker needs.
func testPushQueueNew(t *testing.T, s store.Store) {
	q := pushQueue(t, s)
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	task, seq := grow(t, s, scopeA, task, 1, 2) // seq 3
	cfg := &a2a.TaskPushNotificationConfig{
		Tenant: scopeA.Tenant, ID: "cfg-1", TaskID: "task-1",
		URL:            "https://example.com/hook",
		Token:          "tok",
		Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "abc"},
	}
	mustPut(t, s, scopeA, cfg)
	checkPushState(t, q, scopeA, "new config", "task-1", "cfg-1", store.PushState{Delivered: seq})
	checkClaimed(t, "nothing happened since the config was put", mustClaim(t, q, pushNow, 10))

	// Another scope's task, also with work: each job has its own scope.
	other := newTask("task-2", "ctx-2", a2a.TaskStateSubmitted, at(1))
	create(t, s, scopeOwner, other)
	cfg2 := pushConfig("task-2", "cfg-1", "https://example.com/other")
	mustPut(t, s, scopeOwner, cfg2)
	checkPushState(t, q, scopeOwner, "new config of a task at seq 1", "task-2", "cfg-1", store.PushState{Delivered: 1})
	grow(t, s, scopeOwner, other, 1, 1)

	_, last := grow(t, s, scopeA, task, seq, 2) // seq 5
	jobs := mustClaim(t, q, pushNow, 10)
	checkClaimedSet(t, "after appends", jobs, "task-1/cfg-1", "task-2/cfg-1")
	want := map[string]struct {
		scope store.Scope
		cfg   *a2a.TaskPushNotificationConfig
		seq   int64
		state store.PushState
	}{
		"task-1/cfg-1": {scopeA, cfg, last, store.PushState{Delivered: seq, NextAttempt: pushNow.Add(pushLease)}},
		"task-2/cfg-1": {scopeOwner, cfg2, 2, store.PushState{Delivered: 1, NextAttempt: pushNow.Add(pushLease)}},
	}
	for _, j := range jobs {
		w, ok := want[jobKey(j)]
		if !ok {
			continue
		}
		if j.Scope != w.scope {
			t.Errorf("job %s: Scope %+v, want %+v", jobKey(j), j.Scope, w.scope)
		}
		if g, w := mustJSON(t, j.Config), mustJSON(t, w.cfg); g != w {
			t.Errorf("job %s: Config\n got: %s\nwant: %s", jobKey(j), g, w)
		}
		if j.Seq != w.seq {
			t.Errorf("job %s: Seq %d, want %d", jobKey(j), j.Seq, w.seq)
		}
		if !samePushState(j.State, w.state) {
			t.Errorf("job %s: State\n got: %s\nwant: %s", jobKey(j), pushStateString(j.State), pushStateString(w.state))
		}
		checkPushState(t, q, j.Scope, "after the claim", j.Config.TaskID, j.Config.ID, w.state)
	}
}

// testPushQueueNoWork: ClaimPush leaves alone the configs that are up to
// date, failing, waiting for a retry, or claimed by someone else.
func testPushQueueNoWork(t *testing.T, s store.Store) {
	q := pushQueue(t, s)
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	for _, id := range []string{"done", "failing", "later", "due"} {
		mustPut(t, s, scopeA, pushConfig("task-1", id, "https://example.com/"+id))
	}
	_, seq := grow(t, s, scopeA, task, 1, 2) // seq 3; every config is at 1
	mustSetPush(t, q, scopeA, "task-1", "done", 1, store.PushState{Delivered: seq})
	mustSetPush(t, q, scopeA, "task-1", "failing", 1, store.PushState{Delivered: 2, Attempts: 5, Failing: true, LastError: "gave up"})
	mustSetPush(t, q, scopeA, "task-1", "later", 1, store.PushState{Delivered: 1, Attempts: 1, NextAttempt: pushNow.Add(time.Hour)})
	mustSetPush(t, q, scopeA, "task-1", "due", 1, store.PushState{Delivered: 1, Attempts: 1, NextAttempt: pushNow})

	// A config due at now is due.
	checkClaimed(t, "first claim", mustClaim(t, q, pushNow, 10), "task-1/due")
	// Claimed: out until its lease ends.
	checkClaimed(t, "second claim at the same time", mustClaim(t, q, pushNow, 10))
	checkClaimed(t, "claim 1 ms before the lease ends", mustClaim(t, q, pushNow.Add(pushLease-time.Millisecond), 10))
	jobs := mustClaim(t, q, pushNow.Add(pushLease+time.Millisecond), 10)
	checkClaimed(t, "claim 1 ms after the lease", jobs, "task-1/due")
	if len(jobs) == 1 {
		want := store.PushState{Delivered: 1, Attempts: 1, NextAttempt: pushNow.Add(2*pushLease + time.Millisecond)}
		if !samePushState(jobs[0].State, want) {
			t.Errorf("reclaimed job: State\n got: %s\nwant: %s", pushStateString(jobs[0].State), pushStateString(want))
		}
	}
	// A retry is out until its time.
	checkClaimed(t, "claim 1 ms before the retry", mustClaim(t, q, pushNow.Add(time.Hour-time.Millisecond), 10), "task-1/due")
	checkClaimed(t, "claim at the retry", mustClaim(t, q, pushNow.Add(time.Hour), 10), "task-1/later")
	// Failing and up-to-date configs stay out at any time.
	checkClaimed(t, "claim much later", mustClaim(t, q, pushNow.Add(24*time.Hour), 10), "task-1/due", "task-1/later")
	checkPushState(t, q, scopeA, "failing config after the claims", "task-1", "failing",
		store.PushState{Delivered: 2, Attempts: 5, Failing: true, LastError: "gave up"})
	checkPushState(t, q, scopeA, "up-to-date config after the claims", "task-1", "done", store.PushState{Delivered: seq})
}

// testPushQueueOrder: the configs due longest go first, across tasks;
// limit caps each claim, and a limit below 1 claims nothing.
func testPushQueueOrder(t *testing.T, s store.Store) {
	q := pushQueue(t, s)
	due := map[string]time.Duration{ // config -> how long before pushNow it is due; -1 for zero
		"a": 2 * time.Second,
		"b": -1,
		"c": 3 * time.Second,
		"d": 1 * time.Second,
	}
	for i, id := range []string{"a", "b", "c", "d"} {
		taskID := fmt.Sprintf("task-%d", i%2)
		if i < 2 {
			task := newTask(taskID, "ctx-1", a2a.TaskStateSubmitted, at(i))
			create(t, s, scopeA, task)
			mustPut(t, s, scopeA, pushConfig(taskID, id, "https://example.com/"+id))
			grow(t, s, scopeA, task, 1, 1)
		} else {
			// The task is at seq 2: start the config at 1.
			mustPut(t, s, scopeA, pushConfig(taskID, id, "https://example.com/"+id))
			mustSetPush(t, q, scopeA, taskID, id, 2, store.PushState{Delivered: 1})
		}
		var next time.Time
		if due[id] >= 0 {
			next = pushNow.Add(-due[id])
		}
		mustSetPush(t, q, scopeA, taskID, id, 1, store.PushState{Delivered: 1, Attempts: 1, NextAttempt: next})
	}
	checkClaimed(t, "limit 0", mustClaim(t, q, pushNow, 0))
	checkClaimed(t, "limit -1", mustClaim(t, q, pushNow, -1))
	checkClaimed(t, "limit 2", mustClaim(t, q, pushNow, 2), "task-1/b", "task-0/c")
	checkClaimed(t, "limit 1", mustClaim(t, q, pushNow, 1), "task-0/a")
	checkClaimed(t, "limit 10", mustClaim(t, q, pushNow, 10), "task-1/d")
	checkClaimed(t, "none left", mustClaim(t, q, pushNow, 10))
}

// testPushQueueSkip: ClaimPush leaves out the configs of the scopes it is
// told to skip, in every field of the scope, and claims nothing of them:
// they are handed out once no longer skipped.
func testPushQueueSkip(t *testing.T, s store.Store) {
	q := pushQueue(t, s)
	scopes := append([]store.Scope{scopeA}, foreignScopes...)
	for i, sc := range scopes {
		taskID := fmt.Sprintf("task-%d", i)
		task := newTask(taskID, "ctx-1", a2a.TaskStateSubmitted, at(i))
		create(t, s, sc, task)
		mustPut(t, s, sc, pushConfig(taskID, "cfg", "https://example.com/"+taskID))
		grow(t, s, sc, task, 1, 1)
	}
	claim := func(skip ...store.Scope) []store.PushJob {
		t.Helper()
		jobs, err := q.ClaimPush(t.Context(), pushNow, pushLease, 10, skip...)
		if err != nil {
			t.Fatalf("ClaimPush skipping %v: %v", skip, err)
		}
		return jobs
	}
	// scopeA and scopeOwner differ in the owner only, scopeTenant in the
	// tenant only: skipping one leaves the others.
	checkClaimedSet(t, "skipping all", claim(scopes...))
	checkClaimedSet(t, "skipping all but scopeOwner", claim(scopeA, scopeTenant, scopeNoOwner, scopeNoTenant), "task-2/cfg")
	checkClaimedSet(t, "skipping scopeA and a scope with no config", claim(scopeA, store.Scope{Tenant: "t9", Owner: "zed"}),
		"task-1/cfg", "task-3/cfg", "task-4/cfg")
	checkClaimedSet(t, "skipping nothing", claim(), "task-0/cfg")
	checkClaimedSet(t, "all leased", claim())
}

// testPushQueueSetState: SetPushState moves a config on only from the
// Delivered its caller read, only in scope, and keeps every field.
func testPushQueueSetState(t *testing.T, s store.Store) {
	q := pushQueue(t, s)
	ctx := t.Context()
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	mustPut(t, s, scopeA, pushConfig("task-1", "cfg-1", "https://example.com/hook"))
	mustPut(t, s, scopeA, pushConfig("task-1", "gone", "https://example.com/gone"))
	grow(t, s, scopeA, task, 1, 4) // seq 5

	// Sub-millisecond times are kept to the millisecond.
	next := pushNow.Add(90*time.Second + 1500*time.Microsecond + 7)
	full := store.PushState{Delivered: 3, Attempts: 4, NextAttempt: next, Failing: true, LastError: "POST https://example.com/hook: 503 Service Unavailable — «retry»"}
	before := store.PushState{Delivered: 1}

	err := q.SetPushState(ctx, scopeA, "task-1", "cfg-1", 2, full)
	checkErr(t, "SetPushState from a stale Delivered", err, store.ErrConflict)
	checkPushState(t, q, scopeA, "after a conflict", "task-1", "cfg-1", before)

	for _, sc := range foreignScopes {
		err := q.SetPushState(ctx, sc, "task-1", "cfg-1", 1, full)
		checkErr(t, fmt.Sprintf("SetPushState in scope %+v", sc), err, store.ErrNotFound)
		_, err = q.PushState(ctx, sc, "task-1", "cfg-1")
		checkErr(t, fmt.Sprintf("PushState in scope %+v", sc), err, store.ErrNotFound)
	}
	checkPushState(t, q, scopeA, "after writes in other scopes", "task-1", "cfg-1", before)
	checkErr(t, "SetPushState on a missing task", q.SetPushState(ctx, scopeA, "task-9", "cfg-1", 1, full), store.ErrNotFound)
	_, err = q.PushState(ctx, scopeA, "task-9", "cfg-1")
	checkErr(t, "PushState on a missing task", err, store.ErrNotFound)
	checkErr(t, "SetPushState of a missing config", q.SetPushState(ctx, scopeA, "task-1", "cfg-9", 1, full), store.ErrNotFound)
	_, err = q.PushState(ctx, scopeA, "task-1", "cfg-9")
	checkErr(t, "PushState of a missing config", err, store.ErrNotFound)

	if err := s.DeletePushConfig(ctx, scopeA, "task-1", "gone"); err != nil {
		t.Fatal(err)
	}
	checkErr(t, "SetPushState of a deleted config", q.SetPushState(ctx, scopeA, "task-1", "gone", 1, full), store.ErrNotFound)
	_, err = s.GetPushConfig(ctx, scopeA, "task-1", "gone")
	checkErr(t, "GetPushConfig after SetPushState of a deleted config", err, store.ErrNotFound)

	mustSetPush(t, q, scopeA, "task-1", "cfg-1", 1, full)
	checkPushState(t, q, scopeA, "after SetPushState", "task-1", "cfg-1", full)
	checkErr(t, "SetPushState from the old Delivered", q.SetPushState(ctx, scopeA, "task-1", "cfg-1", 1, before), store.ErrConflict)
	checkPushState(t, q, scopeA, "after a second conflict", "task-1", "cfg-1", full)

	// Every field back to zero, but Delivered.
	cleared := store.PushState{Delivered: 5}
	mustSetPush(t, q, scopeA, "task-1", "cfg-1", 3, cleared)
	checkPushState(t, q, scopeA, "after clearing", "task-1", "cfg-1", cleared)
	// The config itself is untouched.
	checkPushGet(t, s, scopeA, "config after SetPushState", "task-1", "cfg-1", pushConfig("task-1", "cfg-1", "https://example.com/hook"))
	// Equal prev and Delivered is allowed: a retry that delivered nothing.
	retry := store.PushState{Delivered: 5, Attempts: 1, NextAttempt: pushNow}
	mustSetPush(t, q, scopeA, "task-1", "cfg-1", 5, retry)
	checkPushState(t, q, scopeA, "after a retry", "task-1", "cfg-1", retry)
}

// testPushQueueReplace: replacing a config keeps Delivered and clears the
// rest, so a failing config resumes where it stopped.
func testPushQueueReplace(t *testing.T, s store.Store) {
	q := pushQueue(t, s)
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	mustPut(t, s, scopeA, pushConfig("task-1", "cfg-1", "https://example.com/v1"))
	mustPut(t, s, scopeA, pushConfig("task-1", "idle", "https://example.com/idle"))
	_, seq := grow(t, s, scopeA, task, 1, 2) // seq 3
	mustSetPush(t, q, scopeA, "task-1", "cfg-1", 1, store.PushState{
		Delivered: 2, Attempts: 7, NextAttempt: pushNow.Add(time.Hour), Failing: true, LastError: "connection refused",
	})
	mustSetPush(t, q, scopeA, "task-1", "idle", 1, store.PushState{Delivered: seq, NextAttempt: pushNow.Add(time.Hour), LastError: "x"})
	checkClaimed(t, "failing config", mustClaim(t, q, pushNow, 10))

	v2 := &a2a.TaskPushNotificationConfig{ID: "cfg-1", TaskID: "task-1", URL: "https://example.com/v2", Token: "new"}
	mustPut(t, s, scopeA, v2)
	checkPushState(t, q, scopeA, "after replace", "task-1", "cfg-1", store.PushState{Delivered: 2})
	mustPut(t, s, scopeA, pushConfig("task-1", "idle", "https://example.com/idle2"))
	checkPushState(t, q, scopeA, "idle config after replace", "task-1", "idle", store.PushState{Delivered: seq})

	jobs := mustClaim(t, q, pushNow, 10)
	checkClaimed(t, "after replace", jobs, "task-1/cfg-1")
	if len(jobs) == 1 {
		if g, w := mustJSON(t, jobs[0].Config), mustJSON(t, v2); g != w {
			t.Errorf("claimed config after replace\n got: %s\nwant: %s", g, w)
		}
		if jobs[0].Seq != seq {
			t.Errorf("claimed job after replace: Seq %d, want %d", jobs[0].Seq, seq)
		}
		want := store.PushState{Delivered: 2, NextAttempt: pushNow.Add(pushLease)}
		if !samePushState(jobs[0].State, want) {
			t.Errorf("claimed job after replace: State\n got: %s\nwant: %s", pushStateString(jobs[0].State), pushStateString(want))
		}
	}
}

// testPushQueueDelete: deleting a config deletes its state; the same id
// put again is a new config.
func testPushQueueDelete(t *testing.T, s store.Store) {
	q := pushQueue(t, s)
	ctx := t.Context()
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	mustPut(t, s, scopeA, pushConfig("task-1", "cfg-1", "https://example.com/hook"))
	task, seq := grow(t, s, scopeA, task, 1, 2) // seq 3, config at 1
	mustSetPush(t, q, scopeA, "task-1", "cfg-1", 1, store.PushState{Delivered: 2, Attempts: 2, Failing: true, LastError: "x"})

	if err := s.DeletePushConfig(ctx, scopeA, "task-1", "cfg-1"); err != nil {
		t.Fatal(err)
	}
	_, err := q.PushState(ctx, scopeA, "task-1", "cfg-1")
	checkErr(t, "PushState of a deleted config", err, store.ErrNotFound)
	checkClaimed(t, "after delete", mustClaim(t, q, pushNow, 10))

	_, seq = grow(t, s, scopeA, task, seq, 1) // seq 4
	mustPut(t, s, scopeA, pushConfig("task-1", "cfg-1", "https://example.com/again"))
	checkPushState(t, q, scopeA, "config put again after delete", "task-1", "cfg-1", store.PushState{Delivered: seq})
	checkClaimed(t, "after put again", mustClaim(t, q, pushNow, 10))
}

// testPushQueueScope: the state of a config exists only in its task's
// scope.
func testPushQueueScope(t *testing.T, s store.Store) {
	q := pushQueue(t, s)
	create(t, s, scopeA, newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0)))
	create(t, s, scopeOwner, newTask("task-2", "ctx-1", a2a.TaskStateWorking, at(1)))
	mustPut(t, s, scopeA, pushConfig("task-1", "cfg-1", "https://example.com/1"))
	mustPut(t, s, scopeOwner, pushConfig("task-2", "cfg-1", "https://example.com/2"))
	for _, sc := range foreignScopes {
		_, err := q.PushState(t.Context(), sc, "task-1", "cfg-1")
		checkErr(t, fmt.Sprintf("PushState in scope %+v", sc), err, store.ErrNotFound)
	}
	_, err := q.PushState(t.Context(), scopeA, "task-2", "cfg-1")
	checkErr(t, "PushState of another scope's task", err, store.ErrNotFound)
	checkPushState(t, q, scopeA, "own scope", "task-1", "cfg-1", store.PushState{Delivered: 1})
	checkPushState(t, q, scopeOwner, "own scope", "task-2", "cfg-1", store.PushState{Delivered: 1})
}

// testPushQueueExpire: an expired task's configs leave the queue with it.
func testPushQueueExpire(t *testing.T, s store.Store) {
	q := pushQueue(t, s)
	m, ok := s.(store.Maintainer)
	if !ok {
		t.Fatalf("%T does not implement store.Maintainer", s)
	}
	for i, id := range []string{"old", "kept"} {
		task := newTask(id, "ctx", a2a.TaskStateSubmitted, at(i))
		create(t, s, scopeA, task)
		mustPut(t, s, scopeA, pushConfig(id, "cfg-1", "https://example.com/"+id))
		update(t, s, scopeA, task, 1, a2a.TaskStateCompleted, at(10*i))
	}
	n, err := m.Expire(t.Context(), finishedStates, at(5).Time, 10)
	if err != nil || n != 1 {
		t.Fatalf("Expire = %d, %v; want 1, nil", n, err)
	}
	_, err = q.PushState(t.Context(), scopeA, "old", "cfg-1")
	checkErr(t, "PushState of an expired task's config", err, store.ErrNotFound)
	checkClaimed(t, "after Expire", mustClaim(t, q, pushNow, 10), "kept/cfg-1")
	// A new task with the expired id does not inherit the configs.
	create(t, s, scopeA, newTask("old", "ctx", a2a.TaskStateSubmitted, at(20)))
	update(t, s, scopeA, newTask("old", "ctx", a2a.TaskStateSubmitted, at(20)), 1, a2a.TaskStateWorking, at(21))
	checkClaimed(t, "after the id is reused", mustClaim(t, q, pushNow.Add(time.Hour), 10), "kept/cfg-1")
}

// testPushQueueConcurrent: claimers racing on one store, at one time,
// never claim a config twice, and together claim every config with work.
func testPushQueueConcurrent(t *testing.T, s store.Store) {
	const (
		tasks    = 10
		perTask  = 5
		claimers = 8
	)
	q := pushQueue(t, s)
	var want []string
	for i := range tasks {
		id := fmt.Sprintf("task-%02d", i)
		task := newTask(id, "ctx", a2a.TaskStateSubmitted, at(i))
		create(t, s, scopeA, task)
		for j := range perTask {
			cfg := pushConfig(id, fmt.Sprintf("cfg-%d", j), "https://example.com/hook")
			mustPut(t, s, scopeA, cfg)
			want = append(want, id+"/"+cfg.ID)
		}
		update(t, s, scopeA, task, 1, a2a.TaskStateWorking, at(i))
	}
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		got   = make([][]string, claimers)
	)
	for c := range claimers {
		wg.Go(func() {
			<-start
			// Claim until nothing is left; small batches make the
			// claimers interleave.
			for range tasks*perTask + 1 {
				jobs, err := q.ClaimPush(t.Context(), pushNow, pushLease, 3)
				if err != nil {
					t.Errorf("claimer %d: ClaimPush: %v", c, err)
					return
				}
				if len(jobs) == 0 {
					return
				}
				got[c] = append(got[c], jobKeys(jobs)...)
			}
			t.Errorf("claimer %d: still claiming after %d calls", c, tasks*perTask)
		})
	}
	close(start)
	wg.Wait()
	var all []string
	by := make(map[string][]int)
	for c, keys := range got {
		all = append(all, keys...)
		for _, k := range keys {
			by[k] = append(by[k], c)
		}
	}
	for k, cs := range by {
		if len(cs) > 1 {
			t.Errorf("config %s claimed by claimers %v", k, cs)
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	if !slices.Equal(all, want) {
		t.Errorf("claimed %d configs, want all %d:\n got: %s\nwant: %s", len(all), len(want), strings.Join(all, " "), strings.Join(want, " "))
	}
	checkClaimed(t, "after the race", mustClaim(t, q, pushNow, 100))
}

// testPushQueueIdle: a config in the store.PushIdle phase is out of every
// claim until its task's log grows; the Append that grows it wakes it
// (back to store.PushDue, at once), and leaves the other configs of the
// task alone. A failed Append wakes nothing.
func testPushQueueIdle(t *testing.T, s store.Store) {
	q := pushQueue(t, s)
	ctx := t.Context()
	now := time.Now()
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	for _, id := range []string{"idle", "leased", "retry"} {
		mustPut(t, s, scopeA, pushConfig("task-1", id, "https://example.com/"+id))
	}
	task, seq := grow(t, s, scopeA, task, 1, 2) // seq 3; every config is at 1
	idle := store.PushState{Delivered: seq, Phase: store.PushIdle}
	leased := store.PushState{Delivered: 2, NextAttempt: now.Add(pushLease)}
	retry := store.PushState{Delivered: 1, Attempts: 3, NextAttempt: now.Add(time.Hour), LastError: "503"}
	mustSetPush(t, q, scopeA, "task-1", "idle", 1, idle)
	mustSetPush(t, q, scopeA, "task-1", "leased", 1, leased)
	mustSetPush(t, q, scopeA, "task-1", "retry", 1, retry)
	// Another task's idle config, whose log does not grow.
	other := newTask("task-2", "ctx-1", a2a.TaskStateSubmitted, at(1))
	create(t, s, scopeA, other)
	mustPut(t, s, scopeA, pushConfig("task-2", "idle", "https://example.com/other"))
	grow(t, s, scopeA, other, 1, 1) // seq 2, config at 1
	otherIdle := store.PushState{Delivered: 2, Phase: store.PushIdle}
	mustSetPush(t, q, scopeA, "task-2", "idle", 1, otherIdle)

	checkPushState(t, q, scopeA, "idle config", "task-1", "idle", idle)
	checkClaimed(t, "idle, leased and waiting configs", mustClaim(t, q, now, 10))

	// Failed Appends: a stale after, a missing task, another scope.
	snap := withStatus(task, a2a.TaskStateWorking, at(50), "stale")
	err := s.Append(ctx, scopeA, "task-1", seq-1, []store.Event{statusEvent(seq, snap)}, snap)
	checkErr(t, "Append after a stale seq", err, store.ErrConflict)
	err = s.Append(ctx, scopeOwner, "task-1", seq, []store.Event{statusEvent(seq+1, snap)}, snap)
	checkErr(t, "Append in another scope", err, store.ErrNotFound)
	checkPushState(t, q, scopeA, "idle config after failed Appends", "task-1", "idle", idle)
	checkClaimed(t, "after failed Appends", mustClaim(t, q, now, 10))

	// A successful Append wakes the idle config of its task only.
	_, last := grow(t, s, scopeA, task, seq, 1) // seq 4
	woken := store.PushState{Delivered: seq}
	checkPushState(t, q, scopeA, "idle config after an Append", "task-1", "idle", woken)
	checkPushState(t, q, scopeA, "leased config after an Append", "task-1", "leased", leased)
	checkPushState(t, q, scopeA, "waiting config after an Append", "task-1", "retry", retry)
	checkPushState(t, q, scopeA, "idle config of another task", "task-2", "idle", otherIdle)

	jobs := mustClaim(t, q, now, 10)
	checkClaimed(t, "after an Append", jobs, "task-1/idle")
	if len(jobs) == 1 {
		if jobs[0].Seq != last {
			t.Errorf("woken job: Seq %d, want %d", jobs[0].Seq, last)
		}
		want := store.PushState{Delivered: seq, NextAttempt: now.Add(pushLease)}
		if !samePushState(jobs[0].State, want) {
			t.Errorf("woken job: State\n got: %s\nwant: %s", pushStateString(jobs[0].State), pushStateString(want))
		}
	}
	// The other configs come when they are due, as before (and the
	// woken one again, its lease over).
	checkClaimed(t, "when the leases end", mustClaim(t, q, now.Add(pushLease), 10), "task-1/idle", "task-1/leased")
	checkClaimed(t, "at the retry", mustClaim(t, q, now.Add(time.Hour), 10), "task-1/idle", "task-1/leased", "task-1/retry")
}

// testPushQueueFIFO: of the configs due at once, ClaimPush hands out
// first the one that has waited longest (since it was registered, woken
// by an Append, or released), whatever its task id: under steady load a
// claim takes only some of them, and an order by id would starve the
// configs of the tasks whose ids sort last.
func testPushQueueFIFO(t *testing.T, s store.Store) {
	q := pushQueue(t, s)
	// tick waits until the clock has moved on, so that what follows is
	// later than what came before even for a store that keeps time.
	tick := func() {
		for t0 := time.Now(); !time.Now().After(t0.Add(time.Millisecond)); {
			time.Sleep(100 * time.Microsecond)
		}
	}
	tasks := map[string]*a2a.Task{}
	seqs := map[string]int64{}
	for i, id := range []string{"task-z", "task-a"} { // registered z first
		task := newTask(id, "ctx-1", a2a.TaskStateSubmitted, at(i))
		create(t, s, scopeA, task)
		mustPut(t, s, scopeA, pushConfig(id, "cfg", "https://example.com/"+id))
		tasks[id], seqs[id] = grow(t, s, scopeA, task, 1, 1)
		tick()
	}
	checkClaimed(t, "registered z, then a", mustClaim(t, q, pushNow, 1), "task-z/cfg")
	checkClaimed(t, "then", mustClaim(t, q, pushNow, 1), "task-a/cfg")

	// Both caught up and idle; a's log grows first, then z's.
	for _, id := range []string{"task-a", "task-z"} {
		mustSetPush(t, q, scopeA, id, "cfg", 1, store.PushState{Delivered: seqs[id], Phase: store.PushIdle})
	}
	for _, id := range []string{"task-a", "task-z"} {
		tasks[id], seqs[id] = grow(t, s, scopeA, tasks[id], seqs[id], 1)
		tick()
	}
	checkClaimed(t, "woken a, then z", mustClaim(t, q, pushNow, 1), "task-a/cfg")

	// a is released (due at once again, nothing delivered) after z was
	// woken: z first.
	release := func(id string) {
		t.Helper()
		mustSetPush(t, q, scopeA, id, "cfg", seqs[id]-1, store.PushState{Delivered: seqs[id] - 1})
	}
	release("task-a")
	checkClaimed(t, "woken z, then released a", mustClaim(t, q, pushNow, 1), "task-z/cfg")
	checkClaimed(t, "then", mustClaim(t, q, pushNow, 1), "task-a/cfg")
	// Released in the order z, a: z first.
	release("task-z")
	tick()
	release("task-a")
	checkClaimed(t, "released z, then a", mustClaim(t, q, pushNow, 2), "task-z/cfg", "task-a/cfg")
}
