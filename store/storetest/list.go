package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// taskIDs returns the ids of tasks, in order.
func taskIDs(tasks []*a2a.Task) []string {
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		if t == nil {
			ids[i] = "<nil>"
			continue
		}
		ids[i] = t.ID
	}
	return ids
}

// cursorOf returns the cursor just after task.
func cursorOf(task *a2a.Task) *store.Cursor {
	return &store.Cursor{Timestamp: task.Status.Timestamp.Time, ID: task.ID}
}

// checkList runs q and compares the ids, Total and More of the page.
func checkList(t *testing.T, s store.Store, scope store.Scope, what string, q store.ListQuery, wantIDs []string, wantTotal int, wantMore bool) []*a2a.Task {
	t.Helper()
	res, err := s.List(t.Context(), scope, q)
	if err != nil {
		t.Errorf("%s: List: %v", what, err)
		return nil
	}
	if got := taskIDs(res.Tasks); !slices.Equal(got, wantIDs) {
		t.Errorf("%s: tasks %v, want %v", what, got, wantIDs)
	}
	if res.Total != wantTotal {
		t.Errorf("%s: total %d, want %d", what, res.Total, wantTotal)
	}
	if res.More != wantMore {
		t.Errorf("%s: more %v, want %v", what, res.More, wantMore)
	}
	return res.Tasks
}

// walk lists every page of q with page size limit, following the cursor
// of the last task of each page, and returns the ids of each page. It
// checks Total on every page and the shape of each page. between, if not
// nil, runs after each page.
func walk(t *testing.T, s store.Store, scope store.Scope, q store.ListQuery, limit int, wantTotal func(page int) int, between func(page int)) [][]string {
	t.Helper()
	q.Limit, q.After = limit, nil
	var pages [][]string
	for page := 0; ; page++ {
		if page > 1000 {
			t.Fatalf("page size %d: more than 1000 pages, the cursor does not advance", limit)
		}
		res, err := s.List(t.Context(), scope, q)
		if err != nil {
			t.Fatalf("page size %d, page %d: List: %v", limit, page, err)
		}
		pages = append(pages, taskIDs(res.Tasks))
		if want := wantTotal(page); res.Total != want {
			t.Errorf("page size %d, page %d: total %d, want %d", limit, page, res.Total, want)
		}
		if len(res.Tasks) > limit {
			t.Errorf("page size %d, page %d: %d tasks, more than the limit", limit, page, len(res.Tasks))
		}
		if !res.More {
			return pages
		}
		if len(res.Tasks) < limit {
			t.Errorf("page size %d, page %d: %d tasks and more to come; want a full page", limit, page, len(res.Tasks))
		}
		if len(res.Tasks) == 0 {
			t.Fatalf("page size %d, page %d: empty page with more to come", limit, page)
		}
		if between != nil {
			between(page)
		}
		q.After = cursorOf(res.Tasks[len(res.Tasks)-1])
	}
}

// orderedIDs returns the ids of tasks in ListTasks order, computed
// independently of any store.
func orderedIDs(tasks []*a2a.Task) []string {
	sorted := slices.Clone(tasks)
	slices.SortFunc(sorted, func(a, b *a2a.Task) int {
		if c := b.Status.Timestamp.Compare(a.Status.Timestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return taskIDs(sorted)
}

// orderTasks is the set of testListOrder and testListCursor: ties on the
// timestamp, timestamps a millisecond apart that would tie (and sort the
// other way by id) if a store dropped the milliseconds, and ids whose byte
// order is not their numeric order. Their ListTasks order is orderWant.
func orderTasks() []*a2a.Task {
	ms := time.Millisecond
	return []*a2a.Task{
		newTask("b", "ctx-1", a2a.TaskStateWorking, at(1)),
		newTask("x10", "ctx-1", a2a.TaskStateWorking, at(2)),
		newTask("a", "ctx-1", a2a.TaskStateWorking, at(3)),
		newTask("n", "ctx-1", a2a.TaskStateWorking, a2a.TimestampOf(at(1).Add(-ms))),
		newTask("g", "ctx-1", a2a.TaskStateWorking, at(2)),
		newTask("e", "ctx-1", a2a.TaskStateWorking, at(3)),
		newTask("f", "ctx-1", a2a.TaskStateWorking, at(0)),
		newTask("0", "ctx-1", a2a.TaskStateWorking, a2a.TimestampOf(at(3).Add(ms))),
		newTask("c", "ctx-1", a2a.TaskStateWorking, at(3)),
		newTask("d", "ctx-1", a2a.TaskStateWorking, at(2)),
		newTask("x9", "ctx-1", a2a.TaskStateWorking, at(2)),
	}
}

var orderWant = []string{"0", "e", "c", "a", "x9", "x10", "g", "d", "b", "n", "f"}

func testListOrder(t *testing.T, s store.Store) {
	tasks := orderTasks()
	if got := orderedIDs(tasks); !slices.Equal(got, orderWant) {
		t.Fatalf("storetest bug: orderedIDs = %v, want %v", got, orderWant)
	}
	for _, task := range tasks {
		create(t, s, scopeA, task)
	}
	got := checkList(t, s, scopeA, "List all", store.ListQuery{Limit: 100}, orderWant, len(tasks), false)
	byID := make(map[string]*a2a.Task)
	for _, task := range tasks {
		byID[task.ID] = task
	}
	for _, task := range got {
		if task != nil {
			checkTask(t, "List task "+task.ID, task, byID[task.ID])
		}
	}
}

func testListFilters(t *testing.T, s store.Store) {
	ms := time.Millisecond
	for _, task := range []*a2a.Task{
		newTask("t1", "ctx-a", a2a.TaskStateWorking, at(0)),
		newTask("t2", "ctx-a", a2a.TaskStateCompleted, at(1)),
		newTask("t3", "ctx-b", a2a.TaskStateWorking, at(2)),
		newTask("t4", "ctx-b", a2a.TaskStateWorking, at(3)),
		newTask("t5", "ctx-a", a2a.TaskStateWorking, at(3)),
		newTask("t6", "ctx-c", a2a.TaskStateSubmitted, at(4)),
	} {
		create(t, s, scopeA, task)
	}
	// Noise in other scopes, with the same contexts.
	create(t, s, scopeTenant, newTask("u1", "ctx-a", a2a.TaskStateWorking, at(3)))
	create(t, s, scopeOwner, newTask("u2", "ctx-b", a2a.TaskStateWorking, at(5)))

	east := time.FixedZone("UTC+5", 5*3600)
	for _, c := range []struct {
		name string
		q    store.ListQuery
		want []string
	}{
		{"no filter", store.ListQuery{}, []string{"t6", "t5", "t4", "t3", "t2", "t1"}},
		{"context", store.ListQuery{ContextID: "ctx-a"}, []string{"t5", "t2", "t1"}},
		{"unknown context", store.ListQuery{ContextID: "ctx-none"}, nil},
		{"status", store.ListQuery{Status: a2a.TaskStateWorking}, []string{"t5", "t4", "t3", "t1"}},
		{"status without match", store.ListQuery{Status: a2a.TaskStateCanceled}, nil},
		{"status after, equal timestamps included", store.ListQuery{StatusAfter: at(3).Time}, []string{"t6", "t5", "t4"}},
		{"status after, 1ms later", store.ListQuery{StatusAfter: at(3).Add(ms)}, []string{"t6"}},
		{"status after, 1ms earlier", store.ListQuery{StatusAfter: at(3).Add(-ms)}, []string{"t6", "t5", "t4"}},
		{"status after, other time zone", store.ListQuery{StatusAfter: at(3).In(east)}, []string{"t6", "t5", "t4"}},
		{"status after the newest", store.ListQuery{StatusAfter: at(4).Time}, []string{"t6"}},
		{"status after everything", store.ListQuery{StatusAfter: at(5).Time}, nil},
		{"status after the oldest", store.ListQuery{StatusAfter: at(0).Time}, []string{"t6", "t5", "t4", "t3", "t2", "t1"}},
		{"context and status", store.ListQuery{ContextID: "ctx-a", Status: a2a.TaskStateWorking}, []string{"t5", "t1"}},
		{"context and status after", store.ListQuery{ContextID: "ctx-b", StatusAfter: at(3).Time}, []string{"t4"}},
		{"all three", store.ListQuery{ContextID: "ctx-a", Status: a2a.TaskStateCompleted, StatusAfter: at(1).Time}, []string{"t2"}},
		{"all three without match", store.ListQuery{ContextID: "ctx-a", Status: a2a.TaskStateCompleted, StatusAfter: at(2).Time}, nil},
	} {
		c.q.Limit = 100
		checkList(t, s, scopeA, c.name, c.q, c.want, len(c.want), false)
	}

	// Total counts every match, not just the page.
	checkList(t, s, scopeA, "context and status, limit 1",
		store.ListQuery{ContextID: "ctx-a", Status: a2a.TaskStateWorking, Limit: 1}, []string{"t5"}, 2, true)
	checkList(t, s, scopeA, "status after, limit 2",
		store.ListQuery{StatusAfter: at(2).Time, Limit: 2}, []string{"t6", "t5"}, 4, true)
}

func testListLatestSnapshot(t *testing.T, s store.Store) {
	t1 := newTask("t1", "ctx-a", a2a.TaskStateSubmitted, at(0))
	t2 := newTask("t2", "ctx-a", a2a.TaskStateSubmitted, at(3))
	create(t, s, scopeA, t1)
	create(t, s, scopeA, t2)
	t1 = update(t, s, scopeA, t1, 1, a2a.TaskStateWorking, at(5))

	got := checkList(t, s, scopeA, "List after update", store.ListQuery{Limit: 100}, []string{"t1", "t2"}, 2, false)
	if len(got) == 2 {
		checkTask(t, "List after update, t1", got[0], t1)
		checkTask(t, "List after update, t2", got[1], t2)
	}
	checkList(t, s, scopeA, "old status", store.ListQuery{Status: a2a.TaskStateSubmitted, Limit: 100}, []string{"t2"}, 1, false)
	checkList(t, s, scopeA, "new status", store.ListQuery{Status: a2a.TaskStateWorking, Limit: 100}, []string{"t1"}, 1, false)
	checkList(t, s, scopeA, "status after the new timestamp", store.ListQuery{StatusAfter: at(4).Time, Limit: 100}, []string{"t1"}, 1, false)

	// A snapshot with every kind of content comes back intact.
	rich := richTask("t3", at(6))
	if err := s.Append(t.Context(), scopeA, rich.ID, 0, richEvents(rich), rich); err != nil {
		t.Fatalf("create rich task: %v", err)
	}
	got = checkList(t, s, scopeA, "rich task", store.ListQuery{ContextID: rich.ContextID, Limit: 100}, []string{"t3"}, 1, false)
	if len(got) == 1 {
		checkTask(t, "List of a rich task", got[0], rich)
	}
}

func testListLimit(t *testing.T, s store.Store) {
	checkList(t, s, scopeA, "empty store", store.ListQuery{Limit: 10}, nil, 0, false)
	for i := range 5 {
		create(t, s, scopeA, newTask(fmt.Sprintf("t%d", i), "ctx-1", a2a.TaskStateWorking, at(i)))
	}
	all := []string{"t4", "t3", "t2", "t1", "t0"}
	for _, c := range []struct {
		limit int
		more  bool
	}{{1, true}, {4, true}, {5, false}, {6, false}, {100, false}} {
		n := min(c.limit, len(all))
		checkList(t, s, scopeA, fmt.Sprintf("limit %d", c.limit), store.ListQuery{Limit: c.limit}, all[:n], len(all), c.more)
	}
}

func testListCursor(t *testing.T, s store.Store) {
	for _, task := range orderTasks() {
		create(t, s, scopeA, task)
	}
	n := len(orderWant)
	ms := time.Millisecond
	east := time.FixedZone("UTC+5", 5*3600)
	for _, c := range []struct {
		name string
		c    store.Cursor
		want []string
	}{
		{"at a task", store.Cursor{Timestamp: at(3).Time, ID: "a"}, orderWant[4:]},
		{"at the first task", store.Cursor{Timestamp: at(3).Add(ms), ID: "0"}, orderWant[1:]},
		{"at the last task", store.Cursor{Timestamp: at(0).Time, ID: "f"}, nil},
		{"same timestamp as a task, greater id", store.Cursor{Timestamp: at(1).Add(-ms), ID: "o"}, orderWant[9:]},
		{"same timestamp as a task, smaller id", store.Cursor{Timestamp: at(1).Add(-ms), ID: "m"}, orderWant[10:]},
		{"a millisecond after a task", store.Cursor{Timestamp: at(1).Add(-2 * ms), ID: "zz"}, orderWant[10:]},
		{"at a task, other time zone", store.Cursor{Timestamp: at(3).In(east), ID: "a"}, orderWant[4:]},
		{"between ids of a tie", store.Cursor{Timestamp: at(3).Time, ID: "d"}, orderWant[2:]},
		{"before the ids of a tie", store.Cursor{Timestamp: at(3).Time, ID: "zz"}, orderWant[1:]},
		{"after the ids of a tie", store.Cursor{Timestamp: at(3).Time, ID: ""}, orderWant[4:]},
		{"between timestamps", store.Cursor{Timestamp: at(2).Add(ms), ID: "a"}, orderWant[4:]},
		{"before every task", store.Cursor{Timestamp: at(10).Time, ID: ""}, orderWant},
		{"after every task", store.Cursor{Timestamp: at(-10).Time, ID: "zz"}, nil},
	} {
		cur := c.c
		checkList(t, s, scopeA, "cursor "+c.name, store.ListQuery{After: &cur, Limit: 100}, c.want, n, false)
	}
	cur := store.Cursor{Timestamp: at(3).Time, ID: "d"}
	checkList(t, s, scopeA, "cursor between ids of a tie, limit 2", store.ListQuery{After: &cur, Limit: 2}, orderWant[2:4], n, true)
	checkList(t, s, scopeA, "cursor between ids of a tie, limit 9", store.ListQuery{After: &cur, Limit: 9}, orderWant[2:], n, false)
	checkList(t, s, scopeA, "cursor with a filter", store.ListQuery{After: &cur, StatusAfter: at(2).Time, Limit: 100},
		[]string{"c", "a", "x9", "x10", "g", "d"}, 8, false)
}

// paginationTasks returns 23 tasks in groups of up to four with equal
// timestamps, ids unrelated to creation order, in two contexts and two
// states.
func paginationTasks() []*a2a.Task {
	tasks := make([]*a2a.Task, 23)
	for i := range tasks {
		state := a2a.TaskStateWorking
		if i%3 == 0 {
			state = a2a.TaskStateCompleted
		}
		tasks[i] = newTask(fmt.Sprintf("task-%02d", (i*7)%23), fmt.Sprintf("ctx-%d", i%2), state, at(i/4))
	}
	return tasks
}

func testListPagination(t *testing.T, s store.Store) {
	tasks := paginationTasks()
	for _, task := range tasks {
		create(t, s, scopeA, task)
	}
	want := orderedIDs(tasks)
	for _, size := range []int{1, 2, 4, 5, 7, 22, 23, 100} {
		pages := walk(t, s, scopeA, store.ListQuery{}, size, func(int) int { return len(tasks) }, nil)
		if wantPages := (len(tasks) + size - 1) / size; len(pages) != wantPages {
			t.Errorf("page size %d: %d pages, want %d", size, len(pages), wantPages)
		}
		if got := slices.Concat(pages...); !slices.Equal(got, want) {
			t.Errorf("page size %d: walked %v\nwant %v", size, got, want)
		}
	}
}

func testListPaginationFiltered(t *testing.T, s store.Store) {
	tasks := paginationTasks()
	for _, task := range tasks {
		create(t, s, scopeA, task)
	}
	// The same tasks under other ids in another scope must not show up.
	for _, task := range tasks {
		c := *task
		c.ID = "other-" + c.ID
		create(t, s, scopeOwner, &c)
	}
	for _, c := range []struct {
		name string
		q    store.ListQuery
		keep func(*a2a.Task) bool
	}{
		{"context", store.ListQuery{ContextID: "ctx-0"}, func(x *a2a.Task) bool { return x.ContextID == "ctx-0" }},
		{"status", store.ListQuery{Status: a2a.TaskStateWorking}, func(x *a2a.Task) bool { return x.Status.State == a2a.TaskStateWorking }},
		{"context, status and status after", store.ListQuery{ContextID: "ctx-1", Status: a2a.TaskStateWorking, StatusAfter: at(2).Time},
			func(x *a2a.Task) bool {
				return x.ContextID == "ctx-1" && x.Status.State == a2a.TaskStateWorking && !x.Status.Timestamp.Before(at(2).Time)
			}},
	} {
		var matched []*a2a.Task
		for _, task := range tasks {
			if c.keep(task) {
				matched = append(matched, task)
			}
		}
		if len(matched) < 3 {
			t.Fatalf("storetest bug: filter %s matches only %d tasks", c.name, len(matched))
		}
		want := orderedIDs(matched)
		for _, size := range []int{1, 3, 100} {
			pages := walk(t, s, scopeA, c.q, size, func(int) int { return len(matched) }, nil)
			if got := slices.Concat(pages...); !slices.Equal(got, want) {
				t.Errorf("%s, page size %d: walked %v\nwant %v", c.name, size, got, want)
			}
		}
	}
}

// testListUpdateBetweenPages changes tasks while a client pages through
// them. The cursor is a position, not a task, so the walk goes on: tasks
// that moved before the cursor are not returned again, and a new task
// after the cursor is.
func testListUpdateBetweenPages(t *testing.T, s store.Store) {
	tasks := make([]*a2a.Task, 12)
	for i := range tasks {
		tasks[i] = newTask(fmt.Sprintf("t%02d", i), "ctx-1", a2a.TaskStateWorking, at(i))
		create(t, s, scopeA, tasks[i])
	}
	// Pages of 4: t11..t08, t07..t04, t03..t00.
	pages := walk(t, s, scopeA, store.ListQuery{}, 4, func(page int) int {
		if page == 0 {
			return 12
		}
		return 13
	}, func(page int) {
		if page != 0 {
			return
		}
		// The task under the cursor and one on the last page move to
		// the front; a task older than all others appears.
		update(t, s, scopeA, tasks[8], 1, a2a.TaskStateCompleted, at(20))
		update(t, s, scopeA, tasks[2], 1, a2a.TaskStateCompleted, at(21))
		create(t, s, scopeA, newTask("t-late", "ctx-1", a2a.TaskStateWorking, at(-1)))
	})
	want := []string{"t11", "t10", "t09", "t08", "t07", "t06", "t05", "t04", "t03", "t01", "t00", "t-late"}
	if got := slices.Concat(pages...); !slices.Equal(got, want) {
		t.Errorf("walk with updates between pages: %v\nwant %v", got, want)
	}
}
