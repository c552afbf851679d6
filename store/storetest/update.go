package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// updateFn returns an Update callback that appends one status event (to
// state, marked by msgID) after what it is given, folded onto base, the
// task at seq after, and records in *got the events it was given.
func updateFn(base *a2a.Task, after int64, state a2a.TaskState, msgID string, got *[]store.Event) func([]store.Event) ([]store.Event, *a2a.Task, error) {
	return func(since []store.Event) ([]store.Event, *a2a.Task, error) {
		*got = since
		end := after
		if len(since) > 0 {
			end = since[len(since)-1].Seq
		}
		snap := store.Fold(base, since)
		snap = withStatus(snap, state, at(50), msgID)
		return []store.Event{statusEvent(end+1, snap)}, snap, nil
	}
}

// testUpdate: Update hands fn the events after the seq it is given and
// appends what fn returns after them, with fn's snapshot.
func testUpdate(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	snap := update(t, s, scopeA, task, 1, a2a.TaskStateWorking, at(1))
	snap = update(t, s, scopeA, snap, 2, a2a.TaskStateWorking, at(2))
	want := mustEvents(t, s, scopeA, task.ID, 1)

	var since []store.Event
	if err := s.Update(t.Context(), scopeA, task.ID, 1, updateFn(task, 1, a2a.TaskStateCanceled, "cancel", &since)); err != nil {
		t.Fatalf("Update: %v", err)
	}
	checkEvents(t, "the events Update gave fn after seq 1", since, want)
	got, seq := mustGet(t, s, scopeA, task.ID)
	if seq != 4 {
		t.Fatalf("after Update: seq %d, want 4", seq)
	}
	checkTask(t, "Get after Update", got, withStatus(snap, a2a.TaskStateCanceled, at(50), "cancel"))
	evs := mustEvents(t, s, scopeA, task.ID, 3)
	if len(evs) != 1 || evs[0].Seq != 4 {
		t.Fatalf("Events after 3: %s, want the update's event at seq 4", eventsString(t, evs))
	}

	// At the log's end, fn gets no events.
	since = []store.Event{{Seq: -1}}
	if err := s.Update(t.Context(), scopeA, task.ID, 4, func(evs []store.Event) ([]store.Event, *a2a.Task, error) {
		since = evs
		return nil, nil, nil
	}); err != nil {
		t.Fatalf("Update at the log's end appending nothing: %v", err)
	}
	if len(since) != 0 {
		t.Errorf("Update at the log's end gave fn %s, want no events", eventsString(t, since))
	}
}

// testUpdateNothing: an Update whose fn returns no events or an error
// changes nothing; the error comes back as it is.
func testUpdateNothing(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	update(t, s, scopeA, task, 1, a2a.TaskStateWorking, at(1))
	before := dump(t, s, scopeA, task.ID)
	if err := s.Update(t.Context(), scopeA, task.ID, 1, func([]store.Event) ([]store.Event, *a2a.Task, error) {
		return nil, nil, nil
	}); err != nil {
		t.Errorf("Update appending nothing: %v", err)
	}
	checkUnchanged(t, "Update appending nothing", s, scopeA, task.ID, before)

	mine := errors.New("fn says no")
	err := s.Update(t.Context(), scopeA, task.ID, 0, func(since []store.Event) ([]store.Event, *a2a.Task, error) {
		snap := withStatus(task, a2a.TaskStateFailed, at(9), "")
		return []store.Event{statusEvent(3, snap)}, snap, mine
	})
	checkErr(t, "Update whose fn fails", err, mine)
	checkUnchanged(t, "Update whose fn fails", s, scopeA, task.ID, before)
}

// testUpdateBadSeq: events fn numbers from anywhere but the log's end are
// refused, with an error other than ErrConflict, and nothing changes; so
// is an Update after a seq the log has not reached.
func testUpdateBadSeq(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	update(t, s, scopeA, task, 1, a2a.TaskStateWorking, at(1))
	before := dump(t, s, scopeA, task.ID)
	for _, seq := range []int64{2, 4} {
		err := s.Update(t.Context(), scopeA, task.ID, 1, func(since []store.Event) ([]store.Event, *a2a.Task, error) {
			snap := withStatus(task, a2a.TaskStateFailed, at(9), "")
			return []store.Event{statusEvent(seq, snap)}, snap, nil
		})
		if err == nil || errors.Is(err, store.ErrConflict) {
			t.Errorf("Update appending an event numbered %d to a log at 2: err = %v, want an error other than ErrConflict", seq, err)
		}
		checkUnchanged(t, fmt.Sprintf("Update appending an event numbered %d", seq), s, scopeA, task.ID, before)
	}
	called := false
	err := s.Update(t.Context(), scopeA, task.ID, 5, func([]store.Event) ([]store.Event, *a2a.Task, error) {
		called = true
		return nil, nil, nil
	})
	if err == nil || called {
		t.Errorf("Update after seq 5 of a log at 2: err = %v, fn called %v; want an error and no call", err, called)
	}
	checkUnchanged(t, "Update after seq 5", s, scopeA, task.ID, before)
}

// testUpdateMissing: an Update of a task that does not exist in the scope
// is ErrNotFound, and fn is not called.
func testUpdateMissing(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	before := dump(t, s, scopeA, task.ID)
	for _, c := range []struct {
		scope store.Scope
		id    string
	}{{scopeA, "nope"}, {scopeTenant, task.ID}, {scopeOwner, task.ID}} {
		called := false
		err := s.Update(t.Context(), c.scope, c.id, 1, func([]store.Event) ([]store.Event, *a2a.Task, error) {
			called = true
			return nil, nil, nil
		})
		checkErr(t, fmt.Sprintf("Update of %q in %+v", c.id, c.scope), err, store.ErrNotFound)
		if called {
			t.Errorf("Update of %q in %+v called fn", c.id, c.scope)
		}
	}
	checkUnchanged(t, "Updates of missing tasks", s, scopeA, task.ID, before)
}

// testUpdateAgainstAppends: while a writer appends to a task as fast as it
// can (reading the log again after each conflict), each Update gets in at
// its first call, sees exactly what was appended after its seq, and is
// placed right after it; no event is lost or doubled, and the snapshot is
// the fold of the whole log.
func testUpdateAgainstAppends(t *testing.T, s store.Store) {
	const updates = 20
	task := newTask("task-1", "ctx-1", a2a.TaskStateWorking, at(0))
	create(t, s, scopeA, task)
	ctx := t.Context()

	var (
		stop     atomic.Bool
		appended atomic.Int64 // chunks appended
		writer   sync.WaitGroup
		werr     error // read once wdone is closed
		wdone    = make(chan struct{})
	)
	writer.Go(func() {
		defer close(wdone)
		snap, seq := task, int64(1)
		for i := 0; !stop.Load(); {
			var evs []store.Event
			next := snap
			for k := range 8 {
				ev := chunkEvent(task, seq+int64(k)+1, i+k)
				next = next.Apply(ev.Payload)
				evs = append(evs, ev)
			}
			err := s.Append(ctx, scopeA, task.ID, seq, evs, next)
			switch {
			case err == nil:
				snap, seq, i = next, seq+int64(len(evs)), i+len(evs)
				appended.Store(int64(i))
			case errors.Is(err, store.ErrConflict):
				if snap, seq, err = s.Get(ctx, scopeA, task.ID); err != nil {
					werr = fmt.Errorf("Get after a conflict: %w", err)
					return
				}
			default:
				werr = fmt.Errorf("Append after %d: %w", seq, err)
				return
			}
		}
	})
	defer func() {
		stop.Store(true)
		writer.Wait()
	}()

	for u := range updates {
		// Wait for some appends since the last Update, then update after
		// the seq read now: the writer is sure to append meanwhile.
		for n := appended.Load(); appended.Load() < n+16; {
			select {
			case <-wdone:
				t.Fatalf("writer: %v", werr)
			case <-time.After(time.Millisecond):
			}
		}
		base, after := mustGet(t, s, scopeA, task.ID)
		calls := 0
		var since []store.Event
		fn := updateFn(base, after, a2a.TaskStateWorking, fmt.Sprintf("update-%02d", u), &since)
		err := s.Update(ctx, scopeA, task.ID, after, func(evs []store.Event) ([]store.Event, *a2a.Task, error) {
			calls++
			return fn(evs)
		})
		if err != nil {
			t.Fatalf("Update %d after %d while a writer appends: %v", u, after, err)
		}
		if calls == 0 {
			t.Fatalf("Update %d did not call fn", u)
		}
		for i, ev := range since {
			if ev.Seq != after+int64(i)+1 {
				t.Fatalf("Update %d after %d gave fn seqs %v, want them from %d without gaps", u, after, seqsOf(since), after+1)
			}
		}
	}
	stop.Store(true)
	writer.Wait()
	if werr != nil {
		t.Fatalf("writer: %v", werr)
	}

	log := mustEvents(t, s, scopeA, task.ID, 0)
	chunks, statuses := 0, 0
	for i, ev := range log {
		if ev.Seq != int64(i)+1 {
			t.Fatalf("the log has seq %d at position %d", ev.Seq, i)
		}
		switch p := ev.Payload.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			if want := fmt.Sprintf("chunk %06d", chunks); partText(p.Artifact.Parts[0]) != want {
				t.Fatalf("event %d is %q, want %q: a chunk was lost or doubled", ev.Seq, partText(p.Artifact.Parts[0]), want)
			}
			chunks++
		case *a2a.TaskStatusUpdateEvent:
			if want := fmt.Sprintf("update-%02d", statuses); p.Status.Message == nil || p.Status.Message.MessageID != want {
				t.Fatalf("event %d is status %s, want the one of %s", ev.Seq, mustJSON(t, p.Status), want)
			}
			statuses++
		}
	}
	if statuses != updates {
		t.Errorf("the log holds %d updates, want %d", statuses, updates)
	}
	got, seq := mustGet(t, s, scopeA, task.ID)
	if seq != int64(len(log)) {
		t.Errorf("Get: seq %d, want %d", seq, len(log))
	}
	checkTask(t, "Get after the appends and updates", got, store.Fold(log[0].Payload.(*a2a.Task), log[1:]))
}
