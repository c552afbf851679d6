package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// marker returns the id of the status message an event or snapshot carries,
// which the concurrency tests use to tell writes apart; "" if none.
func marker(v any) string {
	var st a2a.TaskStatus
	switch v := v.(type) {
	case *a2a.Task:
		st = v.Status
	case *a2a.TaskStatusUpdateEvent:
		st = v.Status
	default:
		return ""
	}
	if st.Message == nil {
		return ""
	}
	return st.Message.MessageID
}

// testConcurrentAppend has writers append to one task with optimistic
// concurrency (read the seq, append after it, retry on conflict) while
// readers check that what they see is consistent. Every event must end up
// in the log exactly once, without gaps, each writer's in its own order,
// and the snapshot must be the one written with the last event.
func testConcurrentAppend(t *testing.T, s store.Store) {
	const (
		writers  = 8
		appends  = 20 // per writer; batches of one or two events
		attempts = 100000
	)
	task := newTask("task-1", "ctx-1", a2a.TaskStateSubmitted, at(0))
	create(t, s, scopeA, task)
	ctx := t.Context()

	var (
		start    = make(chan struct{})
		done     = make(chan struct{})
		failed   atomic.Bool
		writes   sync.WaitGroup
		reads    sync.WaitGroup
		expected = 0
	)
	fail := func(format string, args ...any) {
		failed.Store(true)
		t.Errorf(format, args...)
	}
	for w := range writers {
		for i := range appends {
			expected += 1 + i%2
		}
		writes.Go(func() {
			<-start
			for i := range appends {
				for try := 0; ; try++ {
					if failed.Load() {
						return
					}
					if try == attempts {
						fail("writer %d, append %d: still conflicting after %d attempts", w, i, attempts)
						return
					}
					cur, seq, err := s.Get(ctx, scopeA, task.ID)
					if err != nil {
						fail("writer %d: Get: %v", w, err)
						return
					}
					var (
						evs  []store.Event
						snap *a2a.Task
					)
					snap = cur
					for k := range 1 + i%2 {
						snap = withStatus(snap, a2a.TaskStateWorking, at(1+i), fmt.Sprintf("w%d-%02d-%d", w, i, k))
						evs = append(evs, statusEvent(seq+int64(k)+1, snap))
					}
					err = s.Append(ctx, scopeA, task.ID, seq, evs, snap)
					if err == nil {
						break
					}
					if !errors.Is(err, store.ErrConflict) {
						fail("writer %d: Append after %d: %v", w, seq, err)
						return
					}
				}
			}
		})
	}
	// Readers: Get returns a snapshot and the seq of the event it was
	// written with, and the log has no gaps.
	for r := range 2 {
		reads.Go(func() {
			<-start
			for n := 0; ; n++ {
				select {
				case <-done:
					return
				default:
				}
				if failed.Load() {
					return
				}
				snap, seq, err := s.Get(ctx, scopeA, task.ID)
				if err != nil {
					fail("reader %d: Get: %v", r, err)
					return
				}
				evs, err := s.Events(ctx, scopeA, task.ID, seq-1)
				if err != nil {
					fail("reader %d: Events(%d): %v", r, seq-1, err)
					return
				}
				if len(evs) == 0 || evs[0].Seq != seq {
					fail("reader %d: Get says seq %d, but Events(%d) starts with %v", r, seq, seq-1, seqsOf(evs))
					return
				}
				if seq > 1 && marker(snap) != marker(evs[0].Payload) {
					fail("reader %d: snapshot at seq %d is %q, but event %d is %q", r, seq, marker(snap), seq, marker(evs[0].Payload))
					return
				}
				if n%10 == 0 {
					all, err := s.Events(ctx, scopeA, task.ID, 0)
					if err != nil {
						fail("reader %d: Events(0): %v", r, err)
						return
					}
					for i, ev := range all {
						if ev.Seq != int64(i)+1 {
							fail("reader %d: Events(0) has seqs %v, not 1..%d", r, seqsOf(all), len(all))
							return
						}
					}
				}
			}
		})
	}
	close(start)
	writes.Wait()
	close(done)
	reads.Wait()
	if failed.Load() {
		return
	}

	evs := mustEvents(t, s, scopeA, task.ID, 0)
	if len(evs) != 1+expected {
		t.Errorf("log has %d events, want %d", len(evs), 1+expected)
	}
	seen := make(map[string]int)
	last := make([]string, writers) // each writer's last marker seen in log order
	for i, ev := range evs {
		if ev.Seq != int64(i)+1 {
			t.Fatalf("log seqs %v are not 1..%d", seqsOf(evs), len(evs))
		}
		if i == 0 {
			continue
		}
		m := marker(ev.Payload)
		var w, n, k int
		if _, err := fmt.Sscanf(m, "w%d-%d-%d", &w, &n, &k); err != nil || w < 0 || w >= writers {
			t.Errorf("event %d: unexpected payload %s", ev.Seq, eventString(t, ev))
			continue
		}
		seen[m]++
		if m <= last[w] {
			t.Errorf("event %d: writer %d's %q comes after its %q", ev.Seq, w, m, last[w])
		}
		last[w] = m
	}
	for w := range writers {
		for i := range appends {
			for k := range 1 + i%2 {
				if m := fmt.Sprintf("w%d-%02d-%d", w, i, k); seen[m] != 1 {
					t.Errorf("event %s is in the log %d times, want once", m, seen[m])
				}
			}
		}
	}
	snap, seq := mustGet(t, s, scopeA, task.ID)
	if seq != int64(len(evs)) {
		t.Errorf("Get: seq %d, but the log has %d events", seq, len(evs))
	}
	if len(evs) > 0 && marker(snap) != marker(evs[len(evs)-1].Payload) {
		t.Errorf("Get: snapshot %q, but the last event is %q", marker(snap), marker(evs[len(evs)-1].Payload))
	}
}

func seqsOf(evs []store.Event) []int64 {
	seqs := make([]int64, len(evs))
	for i, ev := range evs {
		seqs[i] = ev.Seq
	}
	return seqs
}

// testConcurrentCreate creates distinct tasks from many goroutines.
func testConcurrentCreate(t *testing.T, s store.Store) {
	const n = 50
	tasks := make([]*a2a.Task, n)
	for i := range tasks {
		tasks[i] = newTask(fmt.Sprintf("task-%02d", i), fmt.Sprintf("ctx-%d", i%3), a2a.TaskStateSubmitted, at(i%5))
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, task := range tasks {
		wg.Go(func() {
			<-start
			if err := s.Append(t.Context(), scopeA, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
				t.Errorf("create %q: %v", task.ID, err)
				return
			}
			cfg := pushConfig(task.ID, "cfg", "https://example.com/"+task.ID)
			if err := s.PutPushConfig(t.Context(), scopeA, cfg); err != nil {
				t.Errorf("PutPushConfig on %q: %v", task.ID, err)
			}
		})
	}
	close(start)
	wg.Wait()

	for _, task := range tasks {
		got, seq := mustGet(t, s, scopeA, task.ID)
		checkTask(t, "Get "+task.ID, got, task)
		if seq != 1 {
			t.Errorf("Get %s: seq %d, want 1", task.ID, seq)
		}
		checkEvents(t, "Events "+task.ID, mustEvents(t, s, scopeA, task.ID, 0), []store.Event{{Seq: 1, Payload: task}})
		checkPushGet(t, s, scopeA, "push config of "+task.ID, task.ID, "cfg", pushConfig(task.ID, "cfg", "https://example.com/"+task.ID))
	}
	checkList(t, s, scopeA, "List after concurrent creates", store.ListQuery{Limit: 100}, orderedIDs(tasks), n, false)
}

// testConcurrentCreateSameID races goroutines to create one task: exactly
// one wins, the others get ErrConflict, and the task is the winner's.
func testConcurrentCreateSameID(t *testing.T, s store.Store) {
	const n = 16
	errs := make([]error, n)
	tasks := make([]*a2a.Task, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		tasks[i] = newTask("task-1", fmt.Sprintf("ctx-%02d", i), a2a.TaskStateSubmitted, at(i))
		wg.Go(func() {
			<-start
			errs[i] = s.Append(t.Context(), scopeA, "task-1", 0, []store.Event{{Seq: 1, Payload: tasks[i]}}, tasks[i])
		})
	}
	close(start)
	wg.Wait()

	var winners []int
	for i, err := range errs {
		switch {
		case err == nil:
			winners = append(winners, i)
		case !errors.Is(err, store.ErrConflict):
			t.Errorf("creator %d: %v, want nil or %v", i, err, store.ErrConflict)
		}
	}
	if len(winners) != 1 {
		t.Fatalf("%d creators succeeded (%v), want exactly 1", len(winners), winners)
	}
	win := tasks[winners[0]]
	got, seq := mustGet(t, s, scopeA, "task-1")
	checkTask(t, "Get after the race", got, win)
	if seq != 1 {
		t.Errorf("Get after the race: seq %d, want 1", seq)
	}
	checkEvents(t, "Events after the race", mustEvents(t, s, scopeA, "task-1", 0), []store.Event{{Seq: 1, Payload: win}})
	res, err := s.List(t.Context(), scopeA, store.ListQuery{Limit: 100})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if ids := taskIDs(res.Tasks); !slices.Equal(ids, []string{"task-1"}) || res.Total != 1 {
		t.Errorf("List after the race: %v, total %d; want [task-1], total 1", ids, res.Total)
	}
}
