package postgres_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
)

// marker returns the status message id of a status event or snapshot.
func marker(v any) string {
	var st a2a.TaskStatus
	switch v := v.(type) {
	case *a2a.Task:
		st = v.Status
	case *a2a.TaskStatusUpdateEvent:
		st = v.Status
	}
	if st.Message == nil {
		return ""
	}
	return st.Message.MessageID
}

// TestRaceAppend has many goroutines append, with optimistic retry, to one
// shared task and each to its own, through two stores on one schema. Every
// event must be in its log exactly once, without gaps, and each snapshot
// must be the last one written.
func TestRaceAppend(t *testing.T) {
	t.Parallel()
	const (
		workers = 32
		rounds  = 10
	)
	ctx := t.Context()
	schema := newSchema(t)
	stores := []*postgres.Store{openStore(t, schema, postgres.Options{}), openStore(t, schema, postgres.Options{})}
	shared := newTask("shared", a2a.TaskStateSubmitted, 0)
	create(t, stores[0], scopeA, shared)
	for w := range workers {
		create(t, stores[w%2], scopeA, newTask(fmt.Sprintf("own-%02d", w), a2a.TaskStateSubmitted, 0))
	}

	var (
		wg        sync.WaitGroup
		conflicts atomic.Int64
		start     = make(chan struct{})
	)
	// appendOne appends one event marked m to task id, retrying on
	// conflict; it returns false after reporting an error.
	appendOne := func(s store.Store, id, m string) bool {
		for {
			snap, seq, err := s.Get(ctx, scopeA, id)
			if err != nil {
				t.Errorf("Get %s: %v", id, err)
				return false
			}
			next := withStatus(snap, a2a.TaskStateWorking, m)
			err = s.Append(ctx, scopeA, id, seq, []store.Event{statusEvent(seq+1, next)}, next)
			if err == nil {
				return true
			}
			if !errors.Is(err, store.ErrConflict) {
				t.Errorf("Append %s to %s after %d: %v", m, id, seq, err)
				return false
			}
			conflicts.Add(1)
		}
	}
	for w := range workers {
		s := stores[w%2]
		wg.Go(func() {
			<-start
			for r := range rounds {
				m := fmt.Sprintf("w%02d-%02d", w, r)
				if !appendOne(s, "shared", m) || !appendOne(s, fmt.Sprintf("own-%02d", w), m) {
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("%d conflicts retried", conflicts.Load())

	check := func(id string, want map[string]bool) {
		t.Helper()
		evs, err := stores[1].Events(ctx, scopeA, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1+len(want) {
			t.Errorf("%s: %d events, want %d", id, len(evs), 1+len(want))
		}
		seen := make(map[string]int)
		for i, ev := range evs {
			if ev.Seq != int64(i)+1 {
				t.Fatalf("%s: event %d has seq %d", id, i, ev.Seq)
			}
			if i > 0 {
				seen[marker(ev.Payload)]++
			}
		}
		for m := range want {
			if seen[m] != 1 {
				t.Errorf("%s: event %s is in the log %d times, want once", id, m, seen[m])
			}
		}
		snap, seq, err := stores[0].Get(ctx, scopeA, id)
		if err != nil {
			t.Fatal(err)
		}
		if seq != int64(len(evs)) || marker(snap) != marker(evs[len(evs)-1].Payload) {
			t.Errorf("%s: snapshot %q at seq %d, but the log ends with %q at %d", id, marker(snap), seq, marker(evs[len(evs)-1].Payload), len(evs))
		}
	}
	all := make(map[string]bool)
	for w := range workers {
		own := make(map[string]bool)
		for r := range rounds {
			m := fmt.Sprintf("w%02d-%02d", w, r)
			all[m], own[m] = true, true
		}
		check(fmt.Sprintf("own-%02d", w), own)
	}
	check("shared", all)
}
