// Package storetest is the conformance suite for [store.Store]
// implementations. Every implementation's tests call [Run]:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store { return memory.New() })
//	}
//
// The suite checks the promises documented on [store.Store] and nothing
// more: snapshots and events are compared by value (their JSON), never by
// pointer, so a store that returns decoded copies passes. Timestamps are
// built with [a2a.TimestampOf] and so have millisecond precision, which a
// store must keep. Run the suite with -race: it includes concurrent
// writers and readers.
//
// For stores that implement [store.Importer], [FillForList] fills a store
// with many tasks fast, and [ListBench] runs a ListTasks benchmark on it.
package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// Run runs the conformance suite as subtests of t. newStore is called once
// per subtest and must return a fresh, empty store; it may register
// cleanups on the t it is given. Subtests do not run in parallel with each
// other.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		// Append, Get and Events.
		{"AppendCreate", testAppendCreate},
		{"AppendCreateExisting", testAppendCreateExisting},
		{"AppendNext", testAppendNext},
		{"AppendStale", testAppendStale},
		{"AppendBadSeq", testAppendBadSeq},
		{"AppendMissingTask", testAppendMissingTask},
		{"AppendKeepsInput", testAppendKeepsInput},
		{"GetMissing", testGetMissing},
		{"Events", testEvents},
		{"EventData", testEventData},
		{"HugeTask", testHugeTask},
		{"InterleavedAppends", testInterleavedAppends},
		{"Update", testUpdate},
		{"UpdateNothing", testUpdateNothing},
		{"UpdateBadSeq", testUpdateBadSeq},
		{"UpdateMissing", testUpdateMissing},
		{"UpdateAgainstAppends", testUpdateAgainstAppends},

		// Scopes.
		{"ScopeIsolation", testScopeIsolation},
		{"ScopeCreateSameID", testScopeCreateSameID},

		// List.
		{"ListOrder", testListOrder},
		{"ListFilters", testListFilters},
		{"ListLatestSnapshot", testListLatestSnapshot},
		{"ListLimit", testListLimit},
		{"ListCursor", testListCursor},
		{"ListPagination", testListPagination},
		{"ListPaginationFiltered", testListPaginationFiltered},
		{"ListUpdateBetweenPages", testListUpdateBetweenPages},
		{"ListTotal", testListTotal},

		// Push configs.
		{"PushPutGet", testPushPutGet},
		{"PushReplace", testPushReplace},
		{"PushList", testPushList},
		{"PushDelete", testPushDelete},
		{"PushMissingTask", testPushMissingTask},
		{"PushMissingConfig", testPushMissingConfig},
		{"PushPerTask", testPushPerTask},
		{"PushSurvivesAppend", testPushSurvivesAppend},

		// Push delivery (store.PushQueue).
		{"PushQueueNew", testPushQueueNew},
		{"PushQueueNoWork", testPushQueueNoWork},
		{"PushQueueOrder", testPushQueueOrder},
		{"PushQueueSkip", testPushQueueSkip},
		{"PushQueueFIFO", testPushQueueFIFO},
		{"PushQueueSetState", testPushQueueSetState},
		{"PushQueueReplace", testPushQueueReplace},
		{"PushQueueDelete", testPushQueueDelete},
		{"PushQueueScope", testPushQueueScope},
		{"PushQueueExpire", testPushQueueExpire},
		{"PushQueueConcurrent", testPushQueueConcurrent},
		{"PushQueueIdle", testPushQueueIdle},

		// Concurrency.
		{"ConcurrentAppend", testConcurrentAppend},
		{"ConcurrentCreate", testConcurrentCreate},
		{"ConcurrentCreateSameID", testConcurrentCreateSameID},

		// Import, for stores that implement it.
		{"ImportCreate", testImportCreate},
		{"ImportList", testImportList},
		{"ImportConflict", testImportConflict},
		{"ImportDuplicate", testImportDuplicate},
		{"ImportEmpty", testImportEmpty},
		{"ImportThenAppend", testImportThenAppend},
		{"ImportKeepsInput", testImportKeepsInput},
		{"ImportMaintain", testImportMaintain},
		{"ImportFill", testImportFill},

		// Maintenance and secrets, for stores that implement them.
		{"Expire", testExpire},
		{"OrphansOwn", testOrphansOwn},
		{"Secret", testSecret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			if s == nil {
				t.Fatal("newStore returned nil")
			}
			tt.fn(t, s)
		})
	}
	runMessages(t, newStore) // messages.go
}

// Scopes used by the suite. scopeA is the default; the others differ from
// it in exactly one field.
var (
	scopeA        = store.Scope{Tenant: "t1", Owner: "alice"}
	scopeTenant   = store.Scope{Tenant: "t2", Owner: "alice"}
	scopeOwner    = store.Scope{Tenant: "t1", Owner: "bob"}
	scopeNoOwner  = store.Scope{Tenant: "t1", Owner: ""}
	scopeNoTenant = store.Scope{Tenant: "", Owner: "alice"}
	foreignScopes = []store.Scope{scopeTenant, scopeOwner, scopeNoOwner, scopeNoTenant}
)

// baseTime is the first timestamp of the suite.
var baseTime = time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)

// at returns the i-th timestamp of the suite. They are 1.5 s apart so that
// both the seconds and the milliseconds must survive storage.
func at(i int) a2a.Timestamp {
	return a2a.TimestampOf(baseTime.Add(time.Duration(i) * 1500 * time.Millisecond))
}

// newTask returns a task snapshot.
func newTask(id, contextID string, state a2a.TaskState, ts a2a.Timestamp) *a2a.Task {
	return &a2a.Task{
		ID:        id,
		ContextID: contextID,
		Status:    a2a.TaskStatus{State: state, Timestamp: ts},
	}
}

// withStatus returns the task after a status update to state at ts, with
// a status message marked by msgID (none for an empty msgID): the fold of
// that event, as Append requires of its snapshot (the old status message
// moves into history).
func withStatus(task *a2a.Task, state a2a.TaskState, ts a2a.Timestamp, msgID string) *a2a.Task {
	st := a2a.TaskStatus{State: state, Timestamp: ts}
	if msgID != "" {
		st.Message = a2a.NewTextMessage(a2a.RoleAgent, msgID, "status "+msgID)
	}
	return task.Apply(&a2a.TaskStatusUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Status: st})
}

// statusEvent returns the event that moves a task to the status of snap.
func statusEvent(seq int64, snap *a2a.Task) store.Event {
	return store.Event{Seq: seq, Payload: &a2a.TaskStatusUpdateEvent{
		TaskID:    snap.ID,
		ContextID: snap.ContextID,
		Status:    snap.Status,
	}}
}

// create creates task in scope with the single event that carries it.
func create(t *testing.T, s store.Store, scope store.Scope, task *a2a.Task) {
	t.Helper()
	if err := s.Append(t.Context(), scope, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
		t.Fatalf("create task %q in %+v: %v", task.ID, scope, err)
	}
}

// update appends one status event to a task whose log ends at after and
// returns the new snapshot.
func update(t *testing.T, s store.Store, scope store.Scope, task *a2a.Task, after int64, state a2a.TaskState, ts a2a.Timestamp) *a2a.Task {
	t.Helper()
	snap := withStatus(task, state, ts, fmt.Sprintf("%s-%d", task.ID, after+1))
	if err := s.Append(t.Context(), scope, task.ID, after, []store.Event{statusEvent(after+1, snap)}, snap); err != nil {
		t.Fatalf("append to task %q after %d: %v", task.ID, after, err)
	}
	return snap
}

// mustJSON returns the JSON encoding of v.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return string(b)
}

// eventString renders an event with its seq and its payload wrapped as a
// StreamResponse, so that the payload's type is part of the comparison.
func eventString(t *testing.T, ev store.Event) string {
	t.Helper()
	if ev.Payload == nil {
		return fmt.Sprintf("#%d <nil payload>", ev.Seq)
	}
	return fmt.Sprintf("#%d %s", ev.Seq, mustJSON(t, a2a.StreamResponse{Event: ev.Payload}))
}

func eventsString(t *testing.T, evs []store.Event) string {
	t.Helper()
	parts := make([]string, len(evs))
	for i, ev := range evs {
		parts[i] = eventString(t, ev)
	}
	return "[" + strings.Join(parts, "\n ") + "]"
}

// checkTask reports whether got equals want by value.
func checkTask(t *testing.T, what string, got, want *a2a.Task) {
	t.Helper()
	if got == nil {
		t.Errorf("%s: got nil task, want %s", what, mustJSON(t, want))
		return
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("%s: task mismatch\n got: %s\nwant: %s", what, g, w)
	}
}

// checkEvents reports whether got equals want, seq and payload.
func checkEvents(t *testing.T, what string, got, want []store.Event) {
	t.Helper()
	if g, w := eventsString(t, got), eventsString(t, want); g != w {
		t.Errorf("%s: events mismatch\n got: %s\nwant: %s", what, g, w)
	}
}

// checkErr reports whether errors.Is(err, target).
func checkErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: err = %v, want %v", what, err, target)
	}
}

// mustGet returns the snapshot and last seq of a task.
func mustGet(t *testing.T, s store.Store, scope store.Scope, id string) (*a2a.Task, int64) {
	t.Helper()
	task, seq, err := s.Get(t.Context(), scope, id)
	if err != nil {
		t.Fatalf("Get(%q) in %+v: %v", id, scope, err)
	}
	if task == nil {
		t.Fatalf("Get(%q) in %+v returned a nil task and no error", id, scope)
	}
	return task, seq
}

// mustEvents returns the events of a task after seq after.
func mustEvents(t *testing.T, s store.Store, scope store.Scope, id string, after int64) []store.Event {
	t.Helper()
	evs, err := s.Events(t.Context(), scope, id, after)
	if err != nil {
		t.Fatalf("Events(%q, %d) in %+v: %v", id, after, scope, err)
	}
	return evs
}

// dump renders the whole visible state of a task (snapshot, last seq, log
// and push configs) for before/after comparisons.
func dump(t *testing.T, s store.Store, scope store.Scope, id string) string {
	t.Helper()
	task, seq := mustGet(t, s, scope, id)
	evs := mustEvents(t, s, scope, id, 0)
	cfgs, err := s.ListPushConfigs(t.Context(), scope, id, "", 0)
	if err != nil {
		t.Fatalf("ListPushConfigs(%q) in %+v: %v", id, scope, err)
	}
	return fmt.Sprintf("seq=%d\ntask=%s\nevents=%s\npush=%s", seq, mustJSON(t, task), eventsString(t, evs), mustJSON(t, cfgs))
}

// checkUnchanged reports whether the state of a task still equals before.
func checkUnchanged(t *testing.T, what string, s store.Store, scope store.Scope, id, before string) {
	t.Helper()
	if after := dump(t, s, scope, id); after != before {
		t.Errorf("%s changed the task\nbefore: %s\n after: %s", what, before, after)
	}
}
