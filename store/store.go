// Package store defines where an A2A server keeps its tasks: each task is an
// append-only log of numbered events plus the snapshot that is their fold,
// and each task may have webhook (push notification) configs.
//
// The server owns every protocol rule, including how events fold into a
// task; a Store only persists what it is given, atomically, and answers
// queries. Implementations: store/memory, store/sqlite and
// store/postgres. store/storetest is the conformance suite every
// implementation must pass.
//
// Values passed to a Store and values it returns are shared: a Store must not
// modify what it is given, and callers must not modify what it returns.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// Errors a Store returns. Wrap them with context; callers test with
// errors.Is.
var (
	// ErrNotFound: no such task or push config within the scope.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: the task's log moved on since the caller read it (a
	// concurrent writer appended first), or a task with that id exists.
	ErrConflict = errors.New("store: concurrent modification")
)

// Scope limits every operation to one tenant and one owner (the
// authenticated principal, empty when the server runs open). A task outside
// the caller's scope does not exist for that caller.
type Scope struct {
	Tenant string
	Owner  string
}

// Event is one entry of a task's log. Seq numbers start at 1 and have no
// gaps. Payload is one of:
//   - *a2a.Task: the snapshot that creates the task (always Seq 1);
//   - *a2a.TaskStatusUpdateEvent or *a2a.TaskArtifactUpdateEvent: agent
//     progress, as streamed to clients;
//   - *a2a.Message: a client message that continued the task.
//
// Data is Payload encoded as the JSON of an a2a.StreamResponse: the bytes
// the JSON bindings send and the stores keep. A writer may set it (it must
// then be exactly that encoding of Payload) so that the store keeps these
// bytes instead of encoding the event again; every Store sets it on the
// events it returns, so that readers (streams, push) pass the stored bytes
// on instead of encoding the event once more. Nobody modifies it.
type Event struct {
	Seq     int64
	Payload a2a.Event
	Data    []byte
	// MessageID, when set, is the id of the client message the event
	// carries and MessageDigest the server's digest of it: Append records
	// them (see [Messages]).
	MessageID     string
	MessageDigest []byte
}

// Encode returns ev.Data, encoding ev.Payload when it is not set.
func (ev Event) Encode() ([]byte, error) {
	if ev.Data != nil {
		return ev.Data, nil
	}
	return a2a.StreamResponse{Event: ev.Payload}.AppendJSON(nil)
}

// ListQuery selects tasks for ListTasks. Results are ordered by status
// timestamp, newest first, then by id, descending.
type ListQuery struct {
	ContextID string
	// Status filters on the task state; TaskStateUnspecified means any.
	Status a2a.TaskState
	// StatusAfter keeps tasks whose status timestamp is at or after it;
	// the zero time means no bound.
	StatusAfter time.Time
	// After, when set, is the keyset cursor: only tasks strictly after it
	// in the result order are returned.
	After *Cursor
	// Limit is the page size, at least 1.
	Limit int
}

// Cursor is a position in the ListTasks order.
type Cursor struct {
	Timestamp time.Time
	ID        string
}

// ListResult is one page of tasks.
type ListResult struct {
	Tasks []*a2a.Task
	// Total counts every task that matches the filters, ignoring the
	// cursor and the limit.
	Total int
	// More reports that tasks follow this page.
	More bool
}

// Store persists tasks, their event logs and their push configs.
// Implementations must be safe for concurrent use.
type Store interface {
	// Append adds events to the log of task taskID, which must currently
	// end at seq after, and replaces its snapshot with task, which must be
	// the fold of the whole log (see [a2a.Task.Apply]) after the events.
	// A store may keep the snapshot of an earlier seq and fold the events
	// after it when it reads the task (see [SnapshotDue]), so that an
	// append costs the same however long the log: Get and List return
	// the same task either way. With after 0
	// it creates the task in scope (ErrConflict if the id exists in any
	// scope; ids are server-generated, so this reveals nothing). Events
	// are numbered after+1, after+2, ... and must carry those numbers;
	// misnumbered events are an error other than ErrConflict, so that
	// optimistic retry loops do not spin on them. A task missing from the
	// scope is ErrNotFound. If the log does not end at after, Append
	// returns ErrConflict. A failed Append changes nothing. An appended
	// event is durable when Append returns.
	Append(ctx context.Context, scope Scope, taskID string, after int64, events []Event, task *a2a.Task) error

	// Update appends to task taskID what fn decides, atomically with
	// reading what others appended after seq after: while no other writer
	// can append to the task, it calls fn with the events after after
	// (with Data set; none if the log ends at after), and appends the
	// events fn returns, numbered from the log's end (the last seq of
	// since, or after), with task, their fold, as Append does. If fn
	// returns no events or an error, nothing is appended, and Update
	// returns that error. fn must not call the store; it may be called
	// more than once, as a store may run its transaction again, and only
	// the last call counts.
	//
	// It is how a writer whose Append lost the race to another writer
	// (ErrConflict) still gets in: retrying Append loses for as long as
	// the other appends faster than the loser reads and tries again, as
	// an agent streaming on one replica does to a cancel sent to another.
	Update(ctx context.Context, scope Scope, taskID string, after int64, fn func(since []Event) ([]Event, *a2a.Task, error)) error

	// Get returns the snapshot of a task and the seq of the last event
	// folded into it.
	Get(ctx context.Context, scope Scope, taskID string) (*a2a.Task, int64, error)

	// Events returns the events of a task with Seq > after, in order,
	// each with its Data set.
	Events(ctx context.Context, scope Scope, taskID string, after int64) ([]Event, error)

	// List returns one page of the tasks in scope that match q.
	List(ctx context.Context, scope Scope, q ListQuery) (ListResult, error)

	// PutPushConfig creates or replaces a push config (keyed by TaskID and
	// ID) of a task in scope; ErrNotFound if the task does not exist.
	PutPushConfig(ctx context.Context, scope Scope, cfg *a2a.TaskPushNotificationConfig) error

	// GetPushConfig returns one push config of a task.
	GetPushConfig(ctx context.Context, scope Scope, taskID, id string) (*a2a.TaskPushNotificationConfig, error)

	// ListPushConfigs returns the push configs of a task ordered by id,
	// those with id > afterID, at most limit of them (all when limit <= 0).
	// It returns ErrNotFound if the task does not exist.
	ListPushConfigs(ctx context.Context, scope Scope, taskID string, afterID string, limit int) ([]*a2a.TaskPushNotificationConfig, error)

	// DeletePushConfig removes a push config. Deleting one that does not
	// exist succeeds; ErrNotFound only if the task does not exist.
	DeletePushConfig(ctx context.Context, scope Scope, taskID, id string) error
}

// TaskRef names a task and the scope it belongs to.
type TaskRef struct {
	Scope Scope
	ID    string
	// Seq is the last seq of the task's log when Orphans found it, so
	// that whoever recovers the task can append after exactly that point
	// and learn from a conflict that another process got there first.
	Seq int64
	// Runner names the process that last wrote the task and is gone (a
	// replica's name, by default its host and process id), or is empty
	// when the store does not know it.
	Runner string
}

// Maintainer is implemented by stores that keep tasks beyond one request:
// the server uses it to finish tasks whose process died (crash recovery)
// and to delete old finished tasks (retention). Which states count as
// unfinished or finished is the server's rule; the store filters on the
// states it is given.
type Maintainer interface {
	// Orphans returns up to limit tasks, in any scope, whose state is one
	// of states and whose last Append was made by a process that is no
	// longer running (it crashed, or its lease on the store expired).
	// Tasks last written through this Store value are never orphans. A
	// store whose tasks die with the process (store/memory) returns none.
	Orphans(ctx context.Context, states []a2a.TaskState, limit int) ([]TaskRef, error)

	// Expire deletes up to limit tasks, in any scope, whose state is one
	// of states and whose status timestamp is before cutoff, with their
	// events and push configs, and returns how many it deleted. Oldest go
	// first.
	Expire(ctx context.Context, states []a2a.TaskState, cutoff time.Time, limit int) (int, error)
}

// Secrets is implemented by stores that can keep a secret for every
// process that shares them, so that, for example, a ListTasks page token
// minted by one replica is accepted by another and after a restart.
type Secrets interface {
	// Secret returns the secret called name, creating it from random
	// bytes (at least 32) on first use. Concurrent first calls, from this
	// or other processes, all return the same secret.
	Secret(ctx context.Context, name string) ([]byte, error)
}

// Importer is implemented by stores that can create many tasks at once,
// far faster than one Append each: to move tasks from one store to
// another, or to fill a store for a benchmark.
type Importer interface {
	// Import creates every task in scope, each with a log of one event
	// (Seq 1, the task itself), exactly as Append with after 0 would.
	// It is all or nothing: if any id exists in any scope, or appears
	// twice in tasks, Import returns ErrConflict and creates none.
	Import(ctx context.Context, scope Scope, tasks []*a2a.Task) error
}

// CheckAppend checks the numbering of an Append after seq after (or of
// the events an Update's function returns, after the log's end): after
// is not negative, there is at least one event, and the events carry
// after+1, after+2, ... Every store calls it before anything else; its
// errors are never ErrConflict, so that optimistic retry loops do not
// spin on them.
func CheckAppend(after int64, events []Event) error {
	switch {
	case after < 0:
		return fmt.Errorf("append after negative seq %d", after)
	case len(events) == 0:
		return errors.New("append of no events")
	}
	for i, ev := range events {
		if want := after + int64(i) + 1; ev.Seq != want {
			return fmt.Errorf("event %d of the append has seq %d, want %d", i, ev.Seq, want)
		}
	}
	return nil
}

// CheckImport checks the tasks of an Import: none nil, each with an id, no
// id twice (ErrConflict). Importers call it before writing anything.
func CheckImport(tasks []*a2a.Task) error {
	seen := make(map[string]struct{}, len(tasks))
	for i, task := range tasks {
		switch {
		case task == nil:
			return fmt.Errorf("importing %d tasks: task %d is nil", len(tasks), i)
		case task.ID == "":
			return fmt.Errorf("importing %d tasks: task %d has no id", len(tasks), i)
		}
		if _, dup := seen[task.ID]; dup {
			return fmt.Errorf("importing %d tasks: task %q appears twice: %w", len(tasks), task.ID, ErrConflict)
		}
		seen[task.ID] = struct{}{}
	}
	return nil
}

// Before reports whether task t sorts before cursor c in the ListTasks
// order (newer first, then greater id first), that is, whether t belongs
// to an earlier page than the position c.
func (c Cursor) Before(ts time.Time, id string) bool {
	if !ts.Equal(c.Timestamp) {
		return ts.After(c.Timestamp)
	}
	return id > c.ID
}

// SnapshotDue reports whether a store that keeps a task's snapshot apart
// from its log should write the snapshot now, at an Append, rather than
// leave the events since the last one to be folded on read: when the task
// reaches a terminal or interrupted state (it is then read more than it is
// written), or when the events since the last snapshot (tail bytes of
// their Data) outweigh the snapshot (snap bytes) and a minimum. Writing it
// at that point costs, spread over the events, a constant per event byte,
// however long the task grows, and a read folds at most as many bytes as
// the snapshot holds.
func SnapshotDue(state a2a.TaskState, snap, tail int) bool {
	const minTail = 4 << 10
	return state.Terminal() || state.Interrupted() || (tail >= minTail && tail >= snap)
}

// Fold returns snap, the task at some seq, with the events after it
// applied in order ([a2a.Task.Apply]): how a store that keeps older
// snapshots rebuilds the task.
func Fold(snap *a2a.Task, events []Event) *a2a.Task {
	for _, ev := range events {
		snap = snap.Apply(ev.Payload)
	}
	return snap
}
