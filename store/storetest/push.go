package storetest

import (
	"fmt"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

func pushConfig(taskID, id, url string) *a2a.TaskPushNotificationConfig {
	return &a2a.TaskPushNotificationConfig{ID: id, TaskID: taskID, URL: url}
}

func mustPut(t *testing.T, s store.Store, scope store.Scope, cfg *a2a.TaskPushNotificationConfig) {
	t.Helper()
	if err := s.PutPushConfig(t.Context(), scope, cfg); err != nil {
		t.Fatalf("PutPushConfig(%q, %q): %v", cfg.TaskID, cfg.ID, err)
	}
}

// checkPushGet reports whether config id of a task equals want.
func checkPushGet(t *testing.T, s store.Store, scope store.Scope, what, taskID, id string, want *a2a.TaskPushNotificationConfig) {
	t.Helper()
	got, err := s.GetPushConfig(t.Context(), scope, taskID, id)
	if err != nil {
		t.Errorf("%s: GetPushConfig(%q, %q): %v", what, taskID, id, err)
		return
	}
	if got == nil {
		t.Errorf("%s: GetPushConfig(%q, %q) returned nil and no error", what, taskID, id)
		return
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("%s: GetPushConfig(%q, %q)\n got: %s\nwant: %s", what, taskID, id, g, w)
	}
}

// checkPushList reports whether ListPushConfigs returns exactly want.
func checkPushList(t *testing.T, s store.Store, scope store.Scope, what, taskID, afterID string, limit int, want []*a2a.TaskPushNotificationConfig) {
	t.Helper()
	got, err := s.ListPushConfigs(t.Context(), scope, taskID, afterID, limit)
	if err != nil {
		t.Errorf("%s: ListPushConfigs(%q, %q, %d): %v", what, taskID, afterID, limit, err)
		return
	}
	if want == nil {
		want = []*a2a.TaskPushNotificationConfig{}
	}
	if got == nil {
		got = []*a2a.TaskPushNotificationConfig{}
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("%s: ListPushConfigs(%q, %q, %d)\n got: %s\nwant: %s", what, taskID, afterID, limit, g, w)
	}
}

func testPushPutGet(t *testing.T, s store.Store) {
	create(t, s, scopeA, newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0)))
	full := &a2a.TaskPushNotificationConfig{
		Tenant: scopeA.Tenant, ID: "cfg-1", TaskID: "task-1",
		URL:            "https://example.com/hook?x=1",
		Token:          "secret-token",
		Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "abc.def"},
	}
	minimal := pushConfig("task-1", "cfg-2", "https://example.com/other")
	mustPut(t, s, scopeA, full)
	mustPut(t, s, scopeA, minimal)
	checkPushGet(t, s, scopeA, "full config", "task-1", "cfg-1", full)
	checkPushGet(t, s, scopeA, "minimal config", "task-1", "cfg-2", minimal)
	checkPushList(t, s, scopeA, "both configs", "task-1", "", 0, []*a2a.TaskPushNotificationConfig{full, minimal})
}

func testPushReplace(t *testing.T, s store.Store) {
	create(t, s, scopeA, newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0)))
	mustPut(t, s, scopeA, &a2a.TaskPushNotificationConfig{ID: "cfg-1", TaskID: "task-1", URL: "https://example.com/v1", Token: "old"})
	v2 := &a2a.TaskPushNotificationConfig{
		ID: "cfg-1", TaskID: "task-1", URL: "https://example.com/v2",
		Authentication: &a2a.AuthenticationInfo{Scheme: "Basic", Credentials: "dXNlcjpwYXNz"},
	}
	mustPut(t, s, scopeA, v2)
	checkPushGet(t, s, scopeA, "replaced config", "task-1", "cfg-1", v2)
	checkPushList(t, s, scopeA, "after replace", "task-1", "", 0, []*a2a.TaskPushNotificationConfig{v2})
}

func testPushList(t *testing.T, s store.Store) {
	create(t, s, scopeA, newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0)))
	create(t, s, scopeA, newTask("task-2", "ctx-1", a2a.TaskStateWorking, at(1)))
	create(t, s, scopeA, newTask("task-3", "ctx-1", a2a.TaskStateWorking, at(2)))
	cfgs := map[string]*a2a.TaskPushNotificationConfig{}
	for _, id := range []string{"c", "a", "e", "b", "d"} {
		cfgs[id] = pushConfig("task-1", id, "https://example.com/"+id)
		mustPut(t, s, scopeA, cfgs[id])
	}
	// Another task's configs, one with an id task-1 also has.
	other := []*a2a.TaskPushNotificationConfig{pushConfig("task-2", "a", "https://example.com/2a"), pushConfig("task-2", "z", "https://example.com/2z")}
	for _, cfg := range other {
		mustPut(t, s, scopeA, cfg)
	}
	pick := func(ids ...string) []*a2a.TaskPushNotificationConfig {
		out := make([]*a2a.TaskPushNotificationConfig, len(ids))
		for i, id := range ids {
			out[i] = cfgs[id]
		}
		return out
	}
	for _, c := range []struct {
		afterID string
		limit   int
		want    []*a2a.TaskPushNotificationConfig
	}{
		{"", 0, pick("a", "b", "c", "d", "e")},
		{"", -1, pick("a", "b", "c", "d", "e")},
		{"", 5, pick("a", "b", "c", "d", "e")},
		{"", 100, pick("a", "b", "c", "d", "e")},
		{"", 1, pick("a")},
		{"", 2, pick("a", "b")},
		{"b", 0, pick("c", "d", "e")},
		{"b", 2, pick("c", "d")},
		{"bb", 0, pick("c", "d", "e")},
		{"d", 5, pick("e")},
		{"e", 0, nil},
		{"z", 0, nil},
	} {
		checkPushList(t, s, scopeA, fmt.Sprintf("after %q, limit %d", c.afterID, c.limit), "task-1", c.afterID, c.limit, c.want)
	}
	checkPushList(t, s, scopeA, "another task", "task-2", "", 0, other)
	checkPushList(t, s, scopeA, "a task without configs", "task-3", "", 0, nil)
}

func testPushDelete(t *testing.T, s store.Store) {
	create(t, s, scopeA, newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0)))
	a := pushConfig("task-1", "a", "https://example.com/a")
	b := pushConfig("task-1", "b", "https://example.com/b")
	mustPut(t, s, scopeA, a)
	mustPut(t, s, scopeA, b)

	if err := s.DeletePushConfig(t.Context(), scopeA, "task-1", "a"); err != nil {
		t.Fatalf("DeletePushConfig: %v", err)
	}
	_, err := s.GetPushConfig(t.Context(), scopeA, "task-1", "a")
	checkErr(t, "GetPushConfig of a deleted config", err, store.ErrNotFound)
	checkPushList(t, s, scopeA, "after delete", "task-1", "", 0, []*a2a.TaskPushNotificationConfig{b})
	checkPushGet(t, s, scopeA, "the other config after delete", "task-1", "b", b)

	if err := s.DeletePushConfig(t.Context(), scopeA, "task-1", "a"); err != nil {
		t.Errorf("second DeletePushConfig: %v, want success", err)
	}
	if err := s.DeletePushConfig(t.Context(), scopeA, "task-1", "never"); err != nil {
		t.Errorf("DeletePushConfig of a config that never existed: %v, want success", err)
	}
	checkPushList(t, s, scopeA, "after repeated deletes", "task-1", "", 0, []*a2a.TaskPushNotificationConfig{b})

	// A deleted id can be used again.
	a2 := pushConfig("task-1", "a", "https://example.com/a2")
	mustPut(t, s, scopeA, a2)
	checkPushList(t, s, scopeA, "after put of a deleted id", "task-1", "", 0, []*a2a.TaskPushNotificationConfig{a2, b})
}

func testPushMissingTask(t *testing.T, s store.Store) {
	cfg := pushConfig("task-1", "cfg-1", "https://example.com/hook")
	checkErr(t, "PutPushConfig on a missing task", s.PutPushConfig(t.Context(), scopeA, cfg), store.ErrNotFound)
	_, err := s.GetPushConfig(t.Context(), scopeA, "task-1", "cfg-1")
	checkErr(t, "GetPushConfig on a missing task", err, store.ErrNotFound)
	_, err = s.ListPushConfigs(t.Context(), scopeA, "task-1", "", 0)
	checkErr(t, "ListPushConfigs on a missing task", err, store.ErrNotFound)
	checkErr(t, "DeletePushConfig on a missing task", s.DeletePushConfig(t.Context(), scopeA, "task-1", "cfg-1"), store.ErrNotFound)

	// The failed put left nothing behind for a task created later.
	create(t, s, scopeA, newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0)))
	_, err = s.GetPushConfig(t.Context(), scopeA, "task-1", "cfg-1")
	checkErr(t, "GetPushConfig after a put on a missing task", err, store.ErrNotFound)
	checkPushList(t, s, scopeA, "after a put on a missing task", "task-1", "", 0, nil)

	// Another existing task does not make a missing one exist.
	checkErr(t, "PutPushConfig on a missing task next to an existing one",
		s.PutPushConfig(t.Context(), scopeA, pushConfig("task-2", "cfg-1", "https://example.com/hook")), store.ErrNotFound)
}

func testPushMissingConfig(t *testing.T, s store.Store) {
	create(t, s, scopeA, newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0)))
	create(t, s, scopeA, newTask("task-2", "ctx-1", a2a.TaskStateWorking, at(1)))
	_, err := s.GetPushConfig(t.Context(), scopeA, "task-1", "cfg-1")
	checkErr(t, "GetPushConfig of a task without configs", err, store.ErrNotFound)

	mustPut(t, s, scopeA, pushConfig("task-1", "cfg-1", "https://example.com/hook"))
	_, err = s.GetPushConfig(t.Context(), scopeA, "task-1", "cfg-2")
	checkErr(t, "GetPushConfig of another id", err, store.ErrNotFound)
	_, err = s.GetPushConfig(t.Context(), scopeA, "task-2", "cfg-1")
	checkErr(t, "GetPushConfig of the id under another task", err, store.ErrNotFound)
}

func testPushPerTask(t *testing.T, s store.Store) {
	create(t, s, scopeA, newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0)))
	create(t, s, scopeA, newTask("task-2", "ctx-1", a2a.TaskStateWorking, at(1)))
	one := pushConfig("task-1", "cfg", "https://example.com/1")
	two := pushConfig("task-2", "cfg", "https://example.com/2")
	mustPut(t, s, scopeA, one)
	mustPut(t, s, scopeA, two)
	checkPushGet(t, s, scopeA, "task-1", "task-1", "cfg", one)
	checkPushGet(t, s, scopeA, "task-2", "task-2", "cfg", two)

	if err := s.DeletePushConfig(t.Context(), scopeA, "task-1", "cfg"); err != nil {
		t.Fatalf("DeletePushConfig: %v", err)
	}
	checkPushGet(t, s, scopeA, "task-2 after delete on task-1", "task-2", "cfg", two)
	checkPushList(t, s, scopeA, "task-1 after delete", "task-1", "", 0, nil)
}

func testPushSurvivesAppend(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	cfg := pushConfig("task-1", "cfg-1", "https://example.com/hook")
	mustPut(t, s, scopeA, cfg)

	snap := update(t, s, scopeA, task, 1, a2a.TaskStateWorking, at(1))
	update(t, s, scopeA, snap, 2, a2a.TaskStateCompleted, at(2))
	checkPushGet(t, s, scopeA, "after appends", "task-1", "cfg-1", cfg)
	checkPushList(t, s, scopeA, "after appends", "task-1", "", 0, []*a2a.TaskPushNotificationConfig{cfg})

	// A failed append does not lose them either.
	next := withStatus(task, a2a.TaskStateFailed, at(3), "stale")
	err := s.Append(t.Context(), scopeA, task.ID, 1, []store.Event{statusEvent(2, next)}, next)
	checkErr(t, "stale Append", err, store.ErrConflict)
	checkPushList(t, s, scopeA, "after a stale append", "task-1", "", 0, []*a2a.TaskPushNotificationConfig{cfg})
}
