package postgres_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/replicatest"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
)

// Two Handlers on two stores of one schema, as two replicas, follow each
// other through the change feed: LISTEN/NOTIFY.
func TestReplicas(t *testing.T) {
	t.Parallel()
	replicatest.Run(t, func(t *testing.T) (store.Store, store.Store) {
		schema := newSchema(t)
		return openStore(t, schema, postgres.Options{}), openStore(t, schema, postgres.Options{})
	})
}

// Follow hears the appends of another store of the schema, and of its own,
// with the last seq of each; a store nobody follows does not listen.
func TestFollow(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	s1 := openStore(t, schema, postgres.Options{})
	s2 := openStore(t, schema, postgres.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if s1.Listening() {
		t.Error("a store nobody follows listens")
	}
	changes := make(chan store.Change, 100)
	stop := s2.Follow(func(c store.Change) { changes <- c })
	defer stop()
	// The first change is the resync that follows the first LISTEN.
	select {
	case c := <-changes:
		if c != (store.Change{}) {
			t.Fatalf("first change %+v, want a resync", c)
		}
	case <-ctx.Done():
		t.Fatal("no resync after LISTEN")
	}
	if !s2.Listening() {
		t.Error("a followed store does not say it listens")
	}
	scope := store.Scope{Owner: "o"}
	for i, s := range []*postgres.Store{s1, s2} {
		id := "feed-" + strconv.Itoa(i)
		create(t, s, scope, newTask(id, a2a.TaskStateSubmitted, i))
		snap := withStatus(newTask(id, a2a.TaskStateSubmitted, i), a2a.TaskStateWorking, "")
		if err := s.Append(ctx, scope, id, 1, []store.Event{statusEvent(2, snap), statusEvent(3, snap)}, snap); err != nil {
			t.Fatal(err)
		}
		for _, want := range []store.Change{{TaskID: id, Seq: 1}, {TaskID: id, Seq: 3}} {
			select {
			case c := <-changes:
				if c != want {
					t.Fatalf("change %+v, want %+v", c, want)
				}
			case <-ctx.Done():
				t.Fatalf("no change %+v", want)
			}
		}
	}
}
