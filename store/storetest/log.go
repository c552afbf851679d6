package storetest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// chunkEvent returns artifact chunk i (from 0) of a task's artifact "art":
// the first starts it, the others append one text part each.
func chunkEvent(task *a2a.Task, seq int64, i int) store.Event {
	return store.Event{Seq: seq, Payload: &a2a.TaskArtifactUpdateEvent{
		TaskID: task.ID, ContextID: task.ContextID,
		Artifact: a2a.Artifact{ArtifactID: "art", Parts: []a2a.Part{a2a.TextPart(fmt.Sprintf("chunk %06d", i))}},
		Append:   i > 0,
	}}
}

// testEventData: every event read back carries Data, the JSON of its
// StreamResponse; bytes given with an Append are what comes back.
func testEventData(t *testing.T, s store.Store) {
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	ev := chunkEvent(task, 2, 0)
	data, err := ev.Encode()
	if err != nil {
		t.Fatal(err)
	}
	ev.Data = data
	snap := task.Apply(ev.Payload)
	if err := s.Append(t.Context(), scopeA, task.ID, 1, []store.Event{ev, statusEvent(3, withStatus(snap, a2a.TaskStateWorking, at(1), ""))}, withStatus(snap, a2a.TaskStateWorking, at(1), "")); err != nil {
		t.Fatalf("Append: %v", err)
	}
	evs := mustEvents(t, s, scopeA, task.ID, 0)
	if len(evs) != 3 {
		t.Fatalf("Events: %d events, want 3", len(evs))
	}
	for _, ev := range evs {
		want, err := (store.Event{Seq: ev.Seq, Payload: ev.Payload}).Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ev.Data, want) {
			t.Errorf("event %d: Data = %s, want the encoding of its payload %s", ev.Seq, ev.Data, want)
		}
	}
	if !bytes.Equal(evs[1].Data, data) {
		t.Errorf("event 2: Data = %s, want the bytes it was appended with %s", evs[1].Data, data)
	}
}

// testHugeTask: a task of 100,000 events is read back whole and in
// order, and its snapshot is the fold of all of them, however the store
// keeps it.
func testHugeTask(t *testing.T, s store.Store) {
	const events, perAppend = 100_000, 5_000
	task := newTask("huge", "ctx-1", a2a.TaskStateWorking, at(0))
	create(t, s, scopeA, task)
	snap, seq := task, int64(1)
	for seq < events {
		n := min(perAppend, events-int(seq))
		evs := make([]store.Event, n)
		for k := range evs {
			evs[k] = chunkEvent(task, seq+int64(k)+1, int(seq)+k-1)
		}
		snap = store.Fold(snap, evs)
		if err := s.Append(t.Context(), scopeA, task.ID, seq, evs, snap); err != nil {
			t.Fatalf("Append after %d: %v", seq, err)
		}
		seq += int64(n)
		if seq%(4*perAppend) != 1 {
			continue
		}
		got, gotSeq := mustGet(t, s, scopeA, task.ID)
		if gotSeq != seq || len(got.Artifacts) != 1 || len(got.Artifacts[0].Parts) != int(seq-1) {
			t.Fatalf("Get after %d events: seq %d, %d artifacts", seq, gotSeq, len(got.Artifacts))
		}
	}
	got, _ := mustGet(t, s, scopeA, task.ID)
	checkTask(t, "Get of the huge task", got, snap)

	all := mustEvents(t, s, scopeA, task.ID, 0)
	if len(all) != events {
		t.Fatalf("Events(0): %d events, want %d", len(all), events)
	}
	for i, ev := range all {
		if ev.Seq != int64(i)+1 {
			t.Fatalf("Events(0)[%d] has seq %d", i, ev.Seq)
		}
		if i == 0 {
			continue
		}
		a, ok := ev.Payload.(*a2a.TaskArtifactUpdateEvent)
		if want := fmt.Sprintf("chunk %06d", i-1); !ok || partText(a.Artifact.Parts[0]) != want {
			t.Fatalf("event %d: %s, want %q", ev.Seq, ev.Data, want)
		}
	}
	tail := mustEvents(t, s, scopeA, task.ID, events-10)
	if len(tail) != 10 || tail[0].Seq != events-9 {
		t.Fatalf("Events(%d): %d events from %d", events-10, len(tail), tail[0].Seq)
	}

	// It ends, and reads back the same.
	done := withStatus(snap, a2a.TaskStateCompleted, at(1), "done")
	if err := s.Append(t.Context(), scopeA, task.ID, seq, []store.Event{statusEvent(seq+1, done)}, done); err != nil {
		t.Fatalf("completing: %v", err)
	}
	got, _ = mustGet(t, s, scopeA, task.ID)
	checkTask(t, "Get of the completed huge task", got, done)
	res, err := s.List(t.Context(), scopeA, store.ListQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tasks) != 1 {
		t.Fatalf("List: %d tasks, want 1", len(res.Tasks))
	}
	checkTask(t, "List of the completed huge task", res.Tasks[0], done)
}

// testInterleavedAppends: many tasks, each appended by its own writer in
// batches of varying size, all at once (a store that commits many appends
// together must keep each task's events in order, none lost or doubled,
// and each snapshot the fold of its own log). Gets between the appends
// always see a whole append.
func testInterleavedAppends(t *testing.T, s store.Store) {
	const tasks, perTask = 24, 120
	var wg sync.WaitGroup
	errs := make(chan error, tasks)
	for w := range tasks {
		wg.Go(func() {
			task := newTask(fmt.Sprintf("task-%02d", w), "ctx-1", a2a.TaskStateWorking, at(0))
			if err := s.Append(t.Context(), scopeA, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
				errs <- fmt.Errorf("creating %s: %w", task.ID, err)
				return
			}
			snap, seq, i := task, int64(1), 0
			for batch := 1; i < perTask; batch = batch%7 + 1 {
				var evs []store.Event
				for range min(batch, perTask-i) {
					var ev store.Event
					if i%10 == 9 {
						ev = statusEvent(seq+int64(len(evs))+1, withStatus(snap, a2a.TaskStateWorking, at(i), fmt.Sprintf("%s-%d", task.ID, i)))
					} else {
						ev = chunkEvent(task, seq+int64(len(evs))+1, i)
					}
					snap = snap.Apply(ev.Payload)
					evs = append(evs, ev)
					i++
				}
				if err := s.Append(t.Context(), scopeA, task.ID, seq, evs, snap); err != nil {
					errs <- fmt.Errorf("appending to %s after %d: %w", task.ID, seq, err)
					return
				}
				seq += int64(len(evs))
				got, gotSeq, err := s.Get(t.Context(), scopeA, task.ID)
				if err != nil {
					errs <- err
					return
				}
				if gotSeq != seq || mustJSON(t, got) != mustJSON(t, snap) {
					errs <- fmt.Errorf("Get of %s after %d: seq %d, snapshot\n%s\nwant\n%s", task.ID, seq, gotSeq, mustJSON(t, got), mustJSON(t, snap))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	for w := range tasks {
		id := fmt.Sprintf("task-%02d", w)
		evs := mustEvents(t, s, scopeA, id, 0)
		if len(evs) != perTask+1 {
			t.Errorf("%s: %d events, want %d", id, len(evs), perTask+1)
			continue
		}
		chunks := 0
		for k, ev := range evs {
			if ev.Seq != int64(k)+1 {
				t.Errorf("%s: event %d has seq %d", id, k, ev.Seq)
				break
			}
			if a, ok := ev.Payload.(*a2a.TaskArtifactUpdateEvent); ok {
				if want := fmt.Sprintf("chunk %06d", k-1); partText(a.Artifact.Parts[0]) != want {
					t.Errorf("%s: event %d is %q, want %q", id, ev.Seq, partText(a.Artifact.Parts[0]), want)
					break
				}
				chunks++
			}
		}
		if want := perTask - perTask/10; chunks != want {
			t.Errorf("%s: %d chunks, want %d", id, chunks, want)
		}
	}
}

func partText(p a2a.Part) string {
	s, _ := p.Content.(a2a.Text)
	return string(s)
}
