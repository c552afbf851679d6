package storetest

import (
	"bytes"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// Which states the maintenance tests ask for. The server's rules decide
// these in production; the store only filters on them.
var (
	finishedStates   = []a2a.TaskState{a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected}
	unfinishedStates = []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking}
)

func maintainer(t *testing.T, s store.Store) store.Maintainer {
	m, ok := s.(store.Maintainer)
	if !ok {
		t.Skipf("%T does not implement store.Maintainer", s)
	}
	return m
}

// testExpire deletes finished tasks older than the cutoff, oldest first,
// in batches, across scopes, and leaves everything else alone.
func testExpire(t *testing.T, s store.Store) {
	m := maintainer(t, s)
	ctx := t.Context()
	scopes := []store.Scope{scopeA, scopeOwner, scopeTenant}
	// Tasks 0..8: finished at at(i), in a scope that varies.
	for i := range 9 {
		task := newTask(fmt.Sprintf("old-%d", i), "ctx", a2a.TaskStateSubmitted, at(i))
		create(t, s, scopes[i%3], task)
		update(t, s, scopes[i%3], task, 1, finishedStates[i%len(finishedStates)], at(i))
		if err := s.PutPushConfig(ctx, scopes[i%3], &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "p", URL: "https://example.com/hook"}); err != nil {
			t.Fatal(err)
		}
	}
	// Unfinished tasks as old as the oldest, and interrupted ones: kept.
	create(t, s, scopeA, newTask("working", "ctx", a2a.TaskStateWorking, at(0)))
	create(t, s, scopeA, newTask("input", "ctx", a2a.TaskStateInputRequired, at(0)))
	// A finished task after the cutoff: kept.
	create(t, s, scopeA, newTask("new-done", "ctx", a2a.TaskStateCompleted, at(20)))

	cutoff := at(6).Time // old-0..old-5 are before it
	n, err := m.Expire(ctx, finishedStates, cutoff, 4)
	if err != nil || n != 4 {
		t.Fatalf("Expire(limit 4) = %d, %v; want 4, nil", n, err)
	}
	for i := range 4 {
		if _, _, err := s.Get(ctx, scopes[i%3], fmt.Sprintf("old-%d", i)); err == nil {
			t.Errorf("old-%d survived the first batch; the oldest should go first", i)
		}
	}
	n, err = m.Expire(ctx, finishedStates, cutoff, 4)
	if err != nil || n != 2 {
		t.Fatalf("second Expire = %d, %v; want 2, nil", n, err)
	}
	n, err = m.Expire(ctx, finishedStates, cutoff, 4)
	if err != nil || n != 0 {
		t.Fatalf("third Expire = %d, %v; want 0, nil", n, err)
	}
	for i := range 9 {
		id, sc := fmt.Sprintf("old-%d", i), scopes[i%3]
		_, _, err := s.Get(ctx, sc, id)
		if i < 6 {
			checkErr(t, "Get of expired "+id, err, store.ErrNotFound)
			_, err = s.Events(ctx, sc, id, 0)
			checkErr(t, "Events of expired "+id, err, store.ErrNotFound)
			_, err = s.GetPushConfig(ctx, sc, id, "p")
			checkErr(t, "GetPushConfig of expired "+id, err, store.ErrNotFound)
			continue
		}
		if err != nil {
			t.Errorf("Get(%s) after expiry: %v", id, err)
		}
	}
	for _, id := range []string{"working", "input", "new-done"} {
		mustGet(t, s, scopeA, id)
	}
	res, err := s.List(ctx, scopeA, store.ListQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, task := range res.Tasks {
		ids = append(ids, task.ID)
	}
	slices.Sort(ids)
	if want := []string{"input", "new-done", "old-6", "working"}; !slices.Equal(ids, want) || res.Total != len(want) {
		t.Errorf("List after expiry = %v (total %d), want %v", ids, res.Total, want)
	}
	// An expired id is free again.
	create(t, s, scopeA, newTask("old-0", "ctx", a2a.TaskStateSubmitted, at(30)))
}

// testOrphansOwn: tasks this Store value wrote are never orphans.
func testOrphansOwn(t *testing.T, s store.Store) {
	m := maintainer(t, s)
	create(t, s, scopeA, newTask("w", "ctx", a2a.TaskStateWorking, at(0)))
	create(t, s, scopeOwner, newTask("s", "ctx", a2a.TaskStateSubmitted, at(1)))
	refs, err := m.Orphans(t.Context(), unfinishedStates, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 0 {
		t.Errorf("Orphans = %v; this store's own tasks are not orphans", refs)
	}
}

// testSecret: a secret is created once, kept, and never shared between
// names.
func testSecret(t *testing.T, s store.Store) {
	sec, ok := s.(store.Secrets)
	if !ok {
		t.Skipf("%T does not implement store.Secrets", s)
	}
	ctx := t.Context()
	var wg sync.WaitGroup
	got := make([][]byte, 8)
	for i := range got {
		wg.Go(func() {
			b, err := sec.Secret(ctx, "page-token")
			if err != nil {
				t.Error(err)
			}
			got[i] = b
		})
	}
	wg.Wait()
	if len(got[0]) < 32 {
		t.Fatalf("secret has %d bytes, want at least 32", len(got[0]))
	}
	for i, b := range got {
		if !bytes.Equal(b, got[0]) {
			t.Errorf("concurrent call %d got another secret", i)
		}
	}
	again, err := sec.Secret(ctx, "page-token")
	if err != nil || !bytes.Equal(again, got[0]) {
		t.Errorf("second Secret = %x, %v; want the first one", again, err)
	}
	other, err := sec.Secret(ctx, "other")
	if err != nil || bytes.Equal(other, got[0]) {
		t.Errorf("Secret(other) = %x, %v; want a different secret", other, err)
	}
}
