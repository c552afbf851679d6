package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
)

// chunk returns the artifact chunk event of seq seq of task id, marked m.
func chunk(id string, seq int64, m string, appendTo bool) store.Event {
	return store.Event{Seq: seq, Payload: &a2a.TaskArtifactUpdateEvent{
		TaskID: id, ContextID: "ctx-" + id, Append: appendTo,
		Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart(m)}},
	}}
}

// withData returns ev with its Data set, as a writer that encoded it
// already would give it.
func withData(t testing.TB, ev store.Event) store.Event {
	t.Helper()
	b, err := ev.Encode()
	if err != nil {
		t.Fatal(err)
	}
	ev.Data = b
	return ev
}

// checkLog checks that task id has exactly the events want, in order,
// each with Data, the encoding of its payload, and that Get returns the
// fold snap at the last seq.
func checkLog(t *testing.T, s store.Store, scope store.Scope, id string, want []store.Event, snap *a2a.Task) {
	t.Helper()
	ctx := t.Context()
	got, err := s.Events(ctx, scope, id, 0)
	if err != nil {
		t.Errorf("Events of %s: %v", id, err)
		return
	}
	if g, w := eventsJSON(t, got), eventsJSON(t, want); g != w {
		t.Errorf("Events of %s:\n%s\nwant\n%s", id, g, w)
		return
	}
	for i, ev := range got {
		enc, err := (store.Event{Payload: ev.Payload}).Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ev.Data, enc) || (want[i].Data != nil && !bytes.Equal(ev.Data, want[i].Data)) {
			t.Errorf("event %d of %s: Data %q, want %q", ev.Seq, id, ev.Data, enc)
			return
		}
	}
	task, seq, err := s.Get(ctx, scope, id)
	if err != nil {
		t.Errorf("Get of %s: %v", id, err)
		return
	}
	if seq != int64(len(want)) || jsonOf(t, task) != jsonOf(t, snap) {
		t.Errorf("Get of %s = %s at seq %d, want the fold of its log %s at seq %d", id, jsonOf(t, task), seq, jsonOf(t, snap), len(want))
	}
}

// TestGroupCommitOutcomes has many writers append, each to its own task,
// through two stores on one schema, so that the appends of many tasks
// share commits. Between their good appends they make ones that must fail
// alone: from a stale or a future seq (ErrConflict), to a missing task or
// from another scope (ErrNotFound), creations of existing ids
// (ErrConflict), and appends whose context is canceled at a random moment
// (ctx.Err() and nothing written, or success and all written). Several
// creators race for each of a few ids too: exactly one wins each. Every
// Append must get its own outcome, and every log must hold exactly the
// appends that succeeded, in order, with the fold as its task.
func TestGroupCommitOutcomes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	stores := []*postgres.Store{openStore(t, schema, postgres.Options{}), openStore(t, schema, postgres.Options{})}
	workers, rounds := 48, 16
	if raceEnabled {
		workers, rounds = 32, 8
	}
	create(t, stores[0], scopeA, newTask("existing", a2a.TaskStateWorking, 0))

	type result struct {
		id   string
		log  []store.Event
		snap *a2a.Task
	}
	results := make([]result, workers)
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		mu      sync.Mutex
		tallies = make(map[string]int)
	)
	// expect reports an outcome that is not want.
	expect := func(what string, err, want error) {
		t.Helper()
		mu.Lock()
		tallies[what]++
		mu.Unlock()
		if want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", what, err, want)
		}
	}
	for w := range workers {
		wg.Go(func() {
			s := stores[w%2]
			r := rand.New(rand.NewPCG(uint64(w), 42))
			id := fmt.Sprintf("own-%02d", w)
			task := newTask(id, a2a.TaskStateSubmitted, w)
			<-start
			log := []store.Event{{Seq: 1, Payload: task}}
			expect("create", s.Append(ctx, scopeA, id, 0, log, task), nil)
			snap, seq := task, int64(1)
			for i := range rounds {
				m := fmt.Sprintf("w%02d-%02d", w, i)
				bad := withStatus(snap, a2a.TaskStateWorking, "bad-"+m)
				switch r.IntN(7) {
				case 0:
					expect("stale", s.Append(ctx, scopeA, id, seq-1, []store.Event{statusEvent(seq, bad)}, bad), store.ErrConflict)
				case 1:
					expect("ahead", s.Append(ctx, scopeA, id, seq+1, []store.Event{statusEvent(seq+2, bad)}, bad), store.ErrConflict)
				case 2:
					miss := "missing-" + m
					expect("missing", s.Append(ctx, scopeA, miss, 1, []store.Event{statusEvent(2, bad)}, bad), store.ErrNotFound)
				case 3:
					expect("other scope", s.Append(ctx, scopeB, id, seq, []store.Event{statusEvent(seq+1, bad)}, bad), store.ErrNotFound)
				case 4:
					other := newTask("existing", a2a.TaskStateSubmitted, 0)
					expect("create existing", s.Append(ctx, scopeB, other.ID, 0, []store.Event{{Seq: 1, Payload: other}}, other), store.ErrConflict)
				case 5:
					again := newTask(id, a2a.TaskStateSubmitted, 0)
					expect("create own again", s.Append(ctx, scopeA, id, 0, []store.Event{{Seq: 1, Payload: again}}, again), store.ErrConflict)
				case 6:
					// Canceled at some moment: before it is queued, while
					// it waits or while it commits.
					cctx, cancel := context.WithCancel(ctx)
					timer := time.AfterFunc(time.Duration(r.IntN(3000))*time.Microsecond, cancel)
					ev := chunk(id, seq+1, "maybe-"+m, seq > 1)
					next := snap.Apply(ev.Payload)
					err := s.Append(cctx, scopeA, id, seq, []store.Event{ev}, next)
					timer.Stop()
					cancel()
					switch {
					case err == nil:
						log, snap, seq = append(log, ev), next, seq+1
						expect("canceled, applied", err, nil)
					case errors.Is(err, context.Canceled):
						// Nothing was written: only this writer appends
						// to the task.
						_, at, gerr := s.Get(ctx, scopeA, id)
						if gerr != nil || at != seq {
							t.Errorf("%s: Append returned %v, but the task is at %d (%v), want %d", m, err, at, gerr, seq)
						}
						expect("canceled, not applied", err, context.Canceled)
					default:
						expect("canceled", err, context.Canceled)
					}
				}
				// A good append, of one to three events.
				var evs []store.Event
				for k := range 1 + r.IntN(3) {
					ev := chunk(id, seq+int64(k)+1, fmt.Sprintf("%s-%d", m, k), seq+int64(k) > 1)
					if k == 0 {
						ev = statusEvent(seq+1, withStatus(snap, a2a.TaskStateWorking, m))
					}
					if r.IntN(2) == 0 {
						ev = withData(t, ev)
					}
					evs = append(evs, ev)
				}
				next := store.Fold(snap, evs)
				expect("append", s.Append(ctx, scopeA, id, seq, evs, next), nil)
				log, snap, seq = append(log, evs...), next, seq+int64(len(evs))
			}
			results[w] = result{id: id, log: log, snap: snap}
		})
	}
	// Creators racing for a few ids, in two scopes.
	const races, racers = 6, 8
	winners := make([][]int, races)
	var winMu sync.Mutex
	for k := range races {
		for c := range racers {
			wg.Go(func() {
				id := fmt.Sprintf("race-%d", k)
				task := newTask(id, a2a.TaskStateSubmitted, c)
				scope := []store.Scope{scopeA, scopeB}[c%2]
				<-start
				err := stores[c%2].Append(ctx, scope, id, 0, []store.Event{{Seq: 1, Payload: task}}, task)
				if err == nil {
					winMu.Lock()
					winners[k] = append(winners[k], c)
					winMu.Unlock()
				}
				if err != nil && !errors.Is(err, store.ErrConflict) {
					t.Errorf("racing creator %d of %s: %v, want nil or ErrConflict", c, id, err)
				}
			})
		}
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, res := range results {
		checkLog(t, stores[1], scopeA, res.id, res.log, res.snap)
	}
	for k, ws := range winners {
		if len(ws) != 1 {
			t.Errorf("race-%d: creators %v won, want exactly one", k, ws)
			continue
		}
		scope := []store.Scope{scopeA, scopeB}[ws[0]%2]
		task := newTask(fmt.Sprintf("race-%d", k), a2a.TaskStateSubmitted, ws[0])
		checkLog(t, stores[0], scope, task.ID, []store.Event{{Seq: 1, Payload: task}}, task)
	}
	var commits, appends, retries int64
	for _, s := range stores {
		c, a, r := s.GroupStats()
		commits, appends, retries = commits+c, appends+a, retries+r
	}
	t.Logf("outcomes %v; %d appends in %d commits (%.1f a commit), %d batches retried one by one",
		tallies, appends, commits, float64(appends)/float64(max(commits, 1)), retries)
}

// TestGroupCommitNotify LISTENs while many tasks are created and appended
// to at once, by two stores on one schema, with failing appends mixed in:
// every task:seq that succeeded comes in some notification, once, only
// once its events can be read, and nothing else does; payloads stay
// within PostgreSQL's limit.
func TestGroupCommitNotify(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	stores := []*postgres.Store{openStore(t, schema, postgres.Options{}), openStore(t, schema, postgres.Options{})}
	conn, err := pgx.Connect(ctx, testDSN())
	if err != nil {
		t.Fatalf("connecting the listener: %v\n%s", err, startHint)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{stores[0].Channel()}.Sanitize()); err != nil {
		t.Fatal(err)
	}

	n := 300
	if raceEnabled {
		n = 120
	}
	want := make(map[string]bool) // task:seq lines to come
	var wg sync.WaitGroup
	for i := range n {
		id := fmt.Sprintf("n-%03d", i)
		want[id+":1"], want[id+":3"] = true, true
		wg.Go(func() {
			s := stores[i%2]
			task := newTask(id, a2a.TaskStateSubmitted, i)
			if err := s.Append(ctx, scopeA, id, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
				t.Errorf("create %s: %v", id, err)
				return
			}
			snap := withStatus(task, a2a.TaskStateWorking, id)
			evs := []store.Event{statusEvent(2, snap), chunk(id, 3, id, false)}
			if err := s.Append(ctx, scopeA, id, 1, evs, store.Fold(task, evs)); err != nil {
				t.Errorf("append to %s: %v", id, err)
			}
			// Failures notify nothing: no line n-...:2, nor any for
			// a missing task.
			if err := s.Append(ctx, scopeA, id, 1, evs[:1], snap); !errors.Is(err, store.ErrConflict) {
				t.Errorf("stale append to %s: %v, want ErrConflict", id, err)
			}
			if err := s.Append(ctx, scopeA, "missing-"+id, 1, evs[:1], snap); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("append to missing-%s: %v, want ErrNotFound", id, err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// The sentinel commits after every append above: once its line comes,
	// every line of theirs has.
	create(t, stores[0], scopeA, newTask("sentinel", a2a.TaskStateSubmitted, 0))
	seen := make(map[string]bool)
	notes, multi := 0, 0
	for !seen["sentinel:1"] {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		note, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil {
			t.Fatalf("waiting for notifications, %d of %d lines seen: %v", len(seen), len(want), err)
		}
		notes++
		if len(note.Payload) > postgres.MaxNotifyPayload {
			t.Errorf("a payload of %d bytes, over %d", len(note.Payload), postgres.MaxNotifyPayload)
		}
		lines := strings.Split(note.Payload, "\n")
		if len(lines) > 1 {
			multi++
		}
		for _, line := range lines {
			i := strings.LastIndexByte(line, ':')
			seq, err := strconv.ParseInt(line[i+1:], 10, 64)
			if i < 0 || err != nil {
				t.Fatalf("line %q of payload %q: want <task>:<seq>", line, note.Payload)
			}
			if seen[line] {
				t.Errorf("line %q notified twice", line)
			}
			seen[line] = true
			if line == "sentinel:1" {
				continue
			}
			if !want[line] {
				t.Errorf("unexpected line %q", line)
				continue
			}
			evs, err := stores[0].Events(ctx, scopeA, line[:i], seq-1)
			if err != nil || len(evs) == 0 || evs[0].Seq != seq {
				t.Errorf("line %q: Events(%d) = %d events, %v; want seq %d readable", line, seq-1, len(evs), err, seq)
			}
		}
	}
	for line := range want {
		if !seen[line] {
			t.Errorf("line %q never notified", line)
		}
	}
	t.Logf("%d lines in %d notifications, %d of them with several lines", len(seen), notes, multi)
}

// TestNotifyPayloads: the lines of a commit's notifications are those of
// its appends that succeeded, the last seq of each task, in id order,
// packed into as few payloads within the limit as whole lines allow.
func TestNotifyPayloads(t *testing.T) {
	t.Parallel()
	var (
		ids    []string
		lasts  []int64
		failed []bool
		want   []string
	)
	pad := strings.Repeat("x", 90)
	for i := range 400 {
		id := fmt.Sprintf("task-%04d-%s", i, pad)
		ids, lasts, failed = append(ids, id), append(lasts, int64(i+1)), append(failed, i%5 == 3)
		switch {
		case i%7 == 0:
			// Two appends to one task: the later reached further.
			ids, lasts, failed = append(ids, id), append(lasts, int64(i+10)), append(failed, i%5 == 3)
			if i%5 != 3 {
				want = append(want, id+":"+strconv.Itoa(i+10))
			}
		case i%5 != 3:
			want = append(want, id+":"+strconv.Itoa(i+1))
		}
	}
	notes := postgres.NotifyPayloads(ids, lasts, failed)
	var got []string
	for i, note := range notes {
		if len(note) > postgres.MaxNotifyPayload {
			t.Errorf("payload %d: %d bytes, over %d", i, len(note), postgres.MaxNotifyPayload)
		}
		if i+1 < len(notes) && len(note)+1+len(ids[0])+5 <= postgres.MaxNotifyPayload {
			t.Errorf("payload %d: %d bytes, though the next line would have fit", i, len(note))
		}
		got = append(got, strings.Split(note, "\n")...)
	}
	if !slices.Equal(got, want) {
		t.Errorf("lines:\n%v\nwant\n%v", got, want)
	}
	if len(notes) < 4 {
		t.Errorf("%d payloads for %d bytes of lines", len(notes), len(strings.Join(want, "\n")))
	}
	if n := postgres.NotifyPayloads([]string{"a", "b"}, []int64{1, 2}, []bool{true, true}); len(n) != 0 {
		t.Errorf("payloads of a commit whose appends all failed: %q, want none", n)
	}
	if n := postgres.NotifyPayloads([]string{"task:1"}, []int64{3}, []bool{false}); !slices.Equal(n, []string{"task:1:3"}) {
		t.Errorf("payloads of one append: %q, want [task:1:3]", n)
	}
}

// TestLongTask builds a task of 100,000 events in a few large Appends of
// every kind of event (artifact chunks, replaced artifacts, status
// updates that push messages into the history, client messages), then
// many small ones that leave a tail of events after the stored snapshot:
// Get and List return the fold the test computes, and Events returns every
// event in order with its Data. A second store, which knows nothing of
// the task's sizes, appends on and completes it.
func TestLongTask(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openStore(t, schema, postgres.Options{})
	const total, perAppend, small = 100_000, 5_000, 40
	id := "long"
	task := newTask(id, a2a.TaskStateWorking, 0)
	log := []store.Event{{Seq: 1, Payload: task}}
	if err := s.Append(ctx, scopeA, id, 0, log, task); err != nil {
		t.Fatal(err)
	}
	snap, seq := task, int64(1)
	event := func(seq int64) store.Event {
		switch {
		case seq%100 == 0:
			return statusEvent(seq, withStatus(snap, a2a.TaskStateWorking, fmt.Sprintf("status-%d", seq)))
		case seq%250 == 1:
			return store.Event{Seq: seq, Payload: a2a.NewTextMessage(a2a.RoleUser, fmt.Sprintf("user-%d", seq), "more")}
		case seq%1000 == 2:
			return store.Event{Seq: seq, Payload: &a2a.TaskArtifactUpdateEvent{TaskID: id, ContextID: task.ContextID,
				Artifact: a2a.Artifact{ArtifactID: "b", Name: fmt.Sprintf("b-%d", seq), Parts: []a2a.Part{a2a.TextPart("b")}}}}
		}
		return chunk(id, seq, fmt.Sprintf("c%d", seq), seq > 3)
	}
	add := func(s *postgres.Store, n int) {
		t.Helper()
		evs := make([]store.Event, n)
		for k := range evs {
			evs[k] = event(seq + int64(k) + 1)
			if k%2 == 0 {
				evs[k] = withData(t, evs[k])
			}
			snap = snap.Apply(evs[k].Payload)
		}
		if err := s.Append(ctx, scopeA, id, seq, evs, snap); err != nil {
			t.Fatalf("Append of %d events after %d: %v", n, seq, err)
		}
		log, seq = append(log, evs...), seq+int64(n)
	}
	for seq+perAppend <= total-small {
		add(s, perAppend)
	}
	add(s, total-small-int(seq))
	for seq < total {
		add(s, 1)
	}

	admin := adminPool(t)
	var snapSeq int64
	if err := admin.QueryRow(ctx, "SELECT snap_seq FROM "+pgx.Identifier{schema, "tasks"}.Sanitize()+" WHERE id = $1", id).Scan(&snapSeq); err != nil {
		t.Fatal(err)
	}
	if snapSeq >= seq {
		t.Fatalf("the snapshot is at seq %d, the log at %d: the small appends should have left a tail", snapSeq, seq)
	}
	t.Logf("the snapshot is at seq %d of %d", snapSeq, seq)
	want := jsonOf(t, snap)
	check := func(what string, s *postgres.Store) {
		t.Helper()
		got, gotSeq, err := s.Get(ctx, scopeA, id)
		if err != nil || gotSeq != seq {
			t.Fatalf("%s: Get = seq %d, %v; want %d", what, gotSeq, err, seq)
		}
		if jsonOf(t, got) != want {
			t.Fatalf("%s: Get is not the fold of the log", what)
		}
		res, err := s.List(ctx, scopeA, store.ListQuery{Limit: 10})
		if err != nil || len(res.Tasks) != 1 || jsonOf(t, res.Tasks[0]) != want {
			t.Fatalf("%s: List = %d tasks, %v; want the fold of the log", what, len(res.Tasks), err)
		}
		evs, err := s.Events(ctx, scopeA, id, 0)
		if err != nil || len(evs) != len(log) {
			t.Fatalf("%s: Events(0) = %d events, %v; want %d", what, len(evs), err, len(log))
		}
		for i, ev := range evs {
			w, err := log[i].Encode()
			if err != nil {
				t.Fatal(err)
			}
			if ev.Seq != int64(i)+1 || !bytes.Equal(ev.Data, w) {
				t.Fatalf("%s: event %d has seq %d and Data %q, want %q", what, i+1, ev.Seq, ev.Data, w)
			}
		}
		if evs, err := s.Events(ctx, scopeA, id, seq-3); err != nil || len(evs) != 3 || evs[0].Seq != seq-2 {
			t.Fatalf("%s: Events(%d) = %d events, %v; want the last 3", what, seq-3, len(evs), err)
		}
	}
	check("after 100,000 events", s)
	if len(snap.History) < total/100 || len(snap.Artifacts) != 2 {
		t.Fatalf("the test's fold has %d history messages and %d artifacts: the log is not what the test means", len(snap.History), len(snap.Artifacts))
	}

	// Another store goes on with it, then completes it: the snapshot is
	// then at the end.
	s2 := openStore(t, schema, postgres.Options{})
	for range 20 {
		add(s2, 1)
	}
	want = jsonOf(t, snap)
	check("after appends by a second store", s2)
	done := withStatus(snap, a2a.TaskStateCompleted, "done")
	ev := statusEvent(seq+1, done)
	snap = snap.Apply(ev.Payload)
	if err := s2.Append(ctx, scopeA, id, seq, []store.Event{ev}, snap); err != nil {
		t.Fatal(err)
	}
	log, seq = append(log, ev), seq+1
	want = jsonOf(t, snap)
	if err := admin.QueryRow(ctx, "SELECT snap_seq FROM "+pgx.Identifier{schema, "tasks"}.Sanitize()+" WHERE id = $1", id).Scan(&snapSeq); err != nil || snapSeq != seq {
		t.Errorf("after completion the snapshot is at seq %d (%v), want %d", snapSeq, err, seq)
	}
	check("after completion", s)
}

// TestGroupCommitFailedBatch makes some appends fail with an error that
// aborts the whole transaction (their next seq is already in the events
// table, put there behind the store's back, so the events' primary key
// refuses them) while many others run: those get ErrConflict, and every
// other append, though it may have shared the failed transaction, is
// committed, tried again alone.
func TestGroupCommitFailedBatch(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	s := openStore(t, schema, postgres.Options{})
	admin := adminPool(t)
	workers, rounds := 32, 20
	if raceEnabled {
		rounds = 8
	}
	for w := range workers {
		create(t, s, scopeA, newTask(fmt.Sprintf("w-%02d", w), a2a.TaskStateWorking, w))
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			id := fmt.Sprintf("w-%02d", w)
			snap, seq := newTask(id, a2a.TaskStateWorking, w), int64(1)
			log := []store.Event{{Seq: 1, Payload: snap}}
			for i := range rounds {
				ev := chunk(id, seq+1, fmt.Sprintf("%s-%d", id, i), seq > 1)
				poisoned := w%4 == 0 && i%3 == 1
				if poisoned {
					// The row is at seq, but seq+1 is taken.
					if _, err := admin.Exec(ctx, "INSERT INTO "+pgx.Identifier{schema, "events"}.Sanitize()+
						" (task_id, seq, payload) VALUES ($1, $2, '\\x7b7d')", id, seq+1); err != nil {
						t.Error(err)
						return
					}
				}
				next := snap.Apply(ev.Payload)
				err := s.Append(ctx, scopeA, id, seq, []store.Event{ev}, next)
				if poisoned {
					if !errors.Is(err, store.ErrConflict) {
						t.Errorf("%s: poisoned append after %d: %v, want ErrConflict", id, seq, err)
					}
					if _, err := admin.Exec(ctx, "DELETE FROM "+pgx.Identifier{schema, "events"}.Sanitize()+
						" WHERE task_id = $1 AND seq = $2", id, seq+1); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: append after %d: %v", id, seq, err)
					return
				}
				log, snap, seq = append(log, ev), next, seq+1
			}
			checkLog(t, s, scopeA, id, log, snap)
		})
	}
	wg.Wait()
	commits, appends, retries := s.GroupStats()
	t.Logf("%d appends in %d commits, %d batches retried one by one", appends, commits, retries)
}
