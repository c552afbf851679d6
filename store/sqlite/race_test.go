package sqlite_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

// TestConcurrentWriters has many goroutines append with optimistic retry,
// half of them to one shared task and half each to a task of its own, in
// batches of one to three events. Every event must end up in its log once,
// the logs numbered without gaps, and each snapshot must be the one
// written with its log's last event.
func TestConcurrentWriters(t *testing.T) {
	s := openStore(t, newPath(t), sqlite.Options{})
	const (
		writers = 32
		appends = 15 // per writer
	)
	ctx := t.Context()
	shared := newTask("shared", a2a.TaskStateWorking, 0)
	create(t, s, scope, shared)
	for w := range writers {
		if w%2 == 1 {
			create(t, s, scope, newTask(fmt.Sprintf("own-%02d", w), a2a.TaskStateWorking, w))
		}
	}
	taskOf := func(w int) string {
		if w%2 == 0 {
			return "shared"
		}
		return fmt.Sprintf("own-%02d", w)
	}
	marker := func(w, i, k int) string { return fmt.Sprintf("w%02d-%02d-%d", w, i, k) }

	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			<-start
			id := taskOf(w)
			for i := range appends {
				for try := 0; ; try++ {
					if try == 10000 {
						t.Errorf("writer %d: append %d still conflicting after %d tries", w, i, try)
						return
					}
					task, seq, err := s.Get(ctx, scope, id)
					if err != nil {
						t.Errorf("writer %d: Get: %v", w, err)
						return
					}
					var evs []store.Event
					snap := task
					for k := range 1 + i%3 {
						next := *snap
						next.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Message: a2a.NewTextMessage(a2a.RoleAgent, marker(w, i, k), "")}
						snap = &next
						evs = append(evs, store.Event{Seq: seq + int64(k) + 1, Payload: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: task.ContextID, Status: next.Status}})
					}
					err = s.Append(ctx, scope, id, seq, evs, snap)
					if err == nil {
						break
					}
					if !errors.Is(err, store.ErrConflict) {
						t.Errorf("writer %d: Append after %d: %v", w, seq, err)
						return
					}
				}
			}
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}

	want := make(map[string]map[string]bool) // task -> markers
	for w := range writers {
		id := taskOf(w)
		if want[id] == nil {
			want[id] = make(map[string]bool)
		}
		for i := range appends {
			for k := range 1 + i%3 {
				want[id][marker(w, i, k)] = true
			}
		}
	}
	for id, markers := range want {
		evs, err := s.Events(ctx, scope, id, 0)
		if err != nil {
			t.Fatalf("Events(%s): %v", id, err)
		}
		seen := make(map[string]int)
		for i, ev := range evs {
			if ev.Seq != int64(i)+1 {
				t.Fatalf("%s: event %d has seq %d", id, i, ev.Seq)
			}
			if i == 0 {
				continue
			}
			up, ok := ev.Payload.(*a2a.TaskStatusUpdateEvent)
			if !ok || up.Status.Message == nil {
				t.Fatalf("%s: event %d is %T", id, ev.Seq, ev.Payload)
			}
			seen[up.Status.Message.MessageID]++
		}
		for m := range markers {
			if seen[m] != 1 {
				t.Errorf("%s: event %s is in the log %d times, want once", id, m, seen[m])
			}
		}
		if len(evs) != 1+len(markers) {
			t.Errorf("%s: log has %d events, want %d", id, len(evs), 1+len(markers))
		}
		snap, seq, err := s.Get(ctx, scope, id)
		if err != nil {
			t.Fatal(err)
		}
		last := evs[len(evs)-1].Payload.(*a2a.TaskStatusUpdateEvent)
		if seq != int64(len(evs)) || snap.Status.Message == nil || snap.Status.Message.MessageID != last.Status.Message.MessageID {
			t.Errorf("%s: snapshot at seq %d is not the one of the last event %d", id, seq, len(evs))
		}
	}
	st := s.Stats()
	t.Logf("stats: %+v", st)
}
