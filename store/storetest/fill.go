package storetest

import (
	"fmt"
	"hash/fnv"
	"slices"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// Fill describes the tasks that [FillForList] imported: enough to build
// the queries, and the cursors, of a ListTasks benchmark without keeping
// the tasks in memory.
//
// Task i (0 <= i < N) is in context Contexts[i%len(Contexts)] and state
// States[i%len(States)]; every combination of the two occurs. Its status
// timestamp is strictly later than that of task i-1, about one second
// later, with a millisecond part that varies: the ListTasks order is task
// N-1 first and task 0 last.
type Fill struct {
	Scope    store.Scope
	N        int
	Contexts []string
	States   []a2a.TaskState
	// Elapsed is the time the Import calls took, the stores' encoding
	// included, but not making the tasks.
	Elapsed time.Duration

	prefix string // of the task ids
}

// fillStart is the status timestamp of the first task of a Fill.
var fillStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// FillForList imports n finished tasks into scope, batch at a time (all
// at once when batch < 1), and returns their description. Each task has a
// status message and one history message, as a finished task would. Task
// ids depend on the scope, so one store can be filled in several scopes;
// filling one scope twice conflicts. It fails tb if an Import fails.
func FillForList(tb testing.TB, s store.Importer, scope store.Scope, n, batch int) Fill {
	tb.Helper()
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s", scope.Tenant, scope.Owner)
	f := Fill{
		Scope:    scope,
		N:        n,
		Contexts: []string{"ctx-a", "ctx-b", "ctx-c", "ctx-d", "ctx-e", "ctx-f", "ctx-g"},
		// Four finished states: with seven contexts, every pair occurs.
		States: []a2a.TaskState{a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected},
		prefix: fmt.Sprintf("fill-%016x-", h.Sum64()),
	}
	if batch < 1 || batch > n {
		batch = n
	}
	tasks := make([]*a2a.Task, 0, batch)
	for lo := 0; lo < n; lo += batch {
		tasks = tasks[:0]
		for i := lo; i < min(lo+batch, n); i++ {
			tasks = append(tasks, f.task(i))
		}
		start := time.Now()
		if err := s.Import(tb.Context(), scope, tasks); err != nil {
			tb.Fatalf("FillForList: importing tasks %d to %d of %d: %v", lo, lo+len(tasks)-1, n, err)
		}
		f.Elapsed += time.Since(start)
	}
	return f
}

// ID returns the id of task i.
func (f Fill) ID(i int) string { return fmt.Sprintf("%s%08d", f.prefix, i) }

// Timestamp returns the status timestamp of task i: i seconds after the
// start, plus (i*389)%1000 milliseconds, so that the timestamps of
// successive tasks grow strictly and none falls on a whole second.
func (f Fill) Timestamp(i int) time.Time {
	return fillStart.Add(time.Duration(i)*time.Second + time.Duration((i*389)%1000)*time.Millisecond)
}

// task returns task i.
func (f Fill) task(i int) *a2a.Task {
	id, ctx := f.ID(i), f.Contexts[i%len(f.Contexts)]
	ts := a2a.TimestampOf(f.Timestamp(i))
	user := a2a.NewTextMessage(a2a.RoleUser, id+"-m1", fmt.Sprintf("please handle request number %d", i))
	user.ContextID, user.TaskID = ctx, id
	return &a2a.Task{
		ID:        id,
		ContextID: ctx,
		Status: a2a.TaskStatus{
			State:     f.States[i%len(f.States)],
			Message:   a2a.NewTextMessage(a2a.RoleAgent, id+"-m2", fmt.Sprintf("request %d handled", i)),
			Timestamp: ts,
		},
		History: []a2a.Message{*user},
	}
}

// matches reports whether task i matches the filters of q (its ContextID,
// Status and StatusAfter).
func (f Fill) matches(i int, q store.ListQuery) bool {
	return (q.ContextID == "" || f.Contexts[i%len(f.Contexts)] == q.ContextID) &&
		(q.Status == a2a.TaskStateUnspecified || f.States[i%len(f.States)] == q.Status) &&
		(q.StatusAfter.IsZero() || !f.Timestamp(i).Before(q.StatusAfter))
}

// Count returns how many of the tasks match the filters of q (its
// ContextID, Status and StatusAfter): the Total a List of q must report.
func (f Fill) Count(q store.ListQuery) int {
	n := 0
	for i := range f.N {
		if f.matches(i, q) {
			n++
		}
	}
	return n
}

// CursorFromEnd returns the cursor after which exactly k tasks that match
// the filters of q remain in the ListTasks order: a List of q from it
// reads the last page of a walk, as deep as a cursor can go. It returns
// nil if at most k tasks match.
func (f Fill) CursorFromEnd(q store.ListQuery, k int) *store.Cursor {
	seen := 0
	for i := range f.N {
		if !f.matches(i, q) {
			continue
		}
		if seen == k {
			// Tasks older than i, the last ones listed, number k.
			return &store.Cursor{Timestamp: f.Timestamp(i), ID: f.ID(i)}
		}
		seen++
	}
	return nil
}

// lastIDs returns the ids of the last k tasks that match the filters of q
// in the ListTasks order, in that order: the page that CursorFromEnd(q, k)
// starts.
func (f Fill) lastIDs(q store.ListQuery, k int) []string {
	var ids []string
	for i := 0; i < f.N && len(ids) < k; i++ {
		if f.matches(i, q) {
			ids = append(ids, f.ID(i))
		}
	}
	slices.Reverse(ids)
	return ids
}

// firstIDs returns the ids of the first k tasks that match the filters of
// q in the ListTasks order, in that order.
func (f Fill) firstIDs(q store.ListQuery, k int) []string {
	var ids []string
	for i := f.N - 1; i >= 0 && len(ids) < k; i-- {
		if f.matches(i, q) {
			ids = append(ids, f.ID(i))
		}
	}
	return ids
}
