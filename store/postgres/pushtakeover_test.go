package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
)

// takeoverHook is a webhook on 127.0.0.1 that acknowledges every call but
// one, the first for the event hangID, which it holds without an answer
// until its caller goes away: the call the dead replica had in flight.
type takeoverHook struct {
	srv    *httptest.Server
	hangID string
	hung   chan struct{} // closed when the call to hold has arrived
	quit   chan struct{} // closed when the test ends

	mu     sync.Mutex
	held   bool
	ids    []string // the delivery ids acknowledged, in order
	bodies [][]byte
}

func newTakeoverHook(t *testing.T, hangID string) *takeoverHook {
	t.Helper()
	k := &takeoverHook{hangID: hangID, hung: make(chan struct{}), quit: make(chan struct{})}
	k.srv = httptest.NewServer(http.HandlerFunc(k.serve)) // binds 127.0.0.1
	t.Cleanup(k.srv.Close)
	t.Cleanup(func() { close(k.quit) }) // runs first: frees a held call
	return k
}

func (k *takeoverHook) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id := r.Header.Get(push.DeliveryIDHeader)
	k.mu.Lock()
	hold := id == k.hangID && !k.held
	if hold {
		k.held = true
		close(k.hung)
	}
	k.mu.Unlock()
	if hold {
		select {
		case <-r.Context().Done():
		case <-k.quit:
		}
		return // never acknowledged
	}
	k.mu.Lock()
	k.ids = append(k.ids, id)
	k.bodies = append(k.bodies, body)
	k.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (k *takeoverHook) acked() ([]string, [][]byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.ids), slices.Clone(k.bodies)
}

// seqsOf records the seqs a Deliverer's webhook calls acknowledged.
type seqsOf struct {
	mu   sync.Mutex
	seqs []int64
}

func (s *seqsOf) hook(r push.Result) {
	if r.Err != nil {
		return
	}
	s.mu.Lock()
	s.seqs = append(s.seqs, r.Seq)
	s.mu.Unlock()
}

func (s *seqsOf) get() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seqs)
}

// runDeliverer runs a Deliverer on st, whose webhook calls may reach
// 127.0.0.1, until the test ends.
func runDeliverer(t *testing.T, st store.Store, timeout, lease time.Duration, res *seqsOf) {
	t.Helper()
	g, err := push.NewGuard(push.WithAllow("127.0.0.1"), push.WithTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	d, err := push.NewDeliverer(st, push.WithGuard(g), push.WithLease(lease),
		push.WithBackoff(10*time.Millisecond, 50*time.Millisecond), push.WithPollInterval(50*time.Millisecond),
		push.WithResultHook(res.hook))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// waitUntil polls cond until it holds, failing the test after a generous
// limit.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPushTakeover: replica A dies (its store's connections close, as
// after kill -9) while its Deliverer has a webhook call in flight, with
// the config claimed. Replica B, a second store on the schema with its own
// Deliverer, takes the config over once A's lease runs out, and delivers
// the rest of the task's events, those written before and after A died,
// in order: the receiver acknowledges every status and artifact update of
// the task exactly once, and the config's cursor ends at the task's last
// seq.
func TestPushTakeover(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := newSchema(t)
	a := openStore(t, schema, postgres.Options{Replica: "replica-a"})
	b := openStore(t, schema, postgres.Options{Replica: "replica-b"})

	const id = "takeover"
	hook := newTakeoverHook(t, id+":4")
	snap := newTask(id, a2a.TaskStateSubmitted, 0)
	create(t, a, scopeA, snap) // seq 1, the snapshot: not a notification
	cfg := &a2a.TaskPushNotificationConfig{TaskID: id, ID: "cfg", URL: hook.srv.URL + "/hook"}
	if err := a.PutPushConfig(ctx, scopeA, cfg); err != nil {
		t.Fatal(err)
	}
	seq := int64(1)
	add := func(s *postgres.Store, ev store.Event) {
		t.Helper()
		next := snap.Apply(ev.Payload)
		if err := s.Append(ctx, scopeA, id, seq, []store.Event{ev}, next); err != nil {
			t.Fatalf("appending seq %d: %v", ev.Seq, err)
		}
		seq, snap = ev.Seq, next
	}
	// Seqs 2 to 5 while A runs: A delivers 2 and 3, and dies during 4.
	add(a, statusEvent(2, withStatus(snap, a2a.TaskStateWorking, "working")))
	for s := int64(3); s <= 5; s++ {
		add(a, chunk(id, s, fmt.Sprintf("c%d", s), s > 3))
	}

	// A's webhook timeout (2 s) leaves time to kill it before the held
	// call ends; its lease (3 s) must exceed that timeout.
	var byA, byB seqsOf
	runDeliverer(t, a, 2*time.Second, 3*time.Second, &byA)
	select {
	case <-hook.hung:
	case <-time.After(60 * time.Second):
		t.Fatal("replica A never called the webhook for seq 4")
	}
	a.Crash() // nothing A does from now on reaches the database
	if got := byA.get(); !slices.Equal(got, []int64{2, 3}) {
		t.Fatalf("replica A delivered seqs %v before it died, want [2 3]", got)
	}
	st, err := b.PushState(ctx, scopeA, id, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Delivered != 3 || st.NextAttempt.IsZero() || st.Phase != store.PushDue {
		t.Fatalf("state A left behind: %+v; want delivered 3, claimed until its lease ends", st)
	}

	// B starts while A's claim still holds, and the task goes on (written
	// through B) before and after B has caught up.
	runDeliverer(t, b, time.Second, 2*time.Second, &byB)
	add(b, chunk(id, 6, "c6", true))
	waitUntil(t, "replica B to deliver seq 6", func() bool { return slices.Contains(byB.get(), 6) })
	add(b, statusEvent(7, withStatus(snap, a2a.TaskStateCompleted, "done")))
	// The store records the delivery before the Deliverer reports it:
	// wait for both.
	waitUntil(t, "replica B to record and report the delivery of seq 7", func() bool {
		st, err := b.PushState(ctx, scopeA, id, cfg.ID)
		return err == nil && st.Delivered == seq && slices.Contains(byB.get(), seq)
	})

	if got := byB.get(); !slices.Equal(got, []int64{4, 5, 6, 7}) {
		t.Errorf("replica B delivered seqs %v, want [4 5 6 7]", got)
	}
	evs, err := b.Events(ctx, scopeA, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	ids, bodies := hook.acked()
	var wantIDs []string
	for _, ev := range evs {
		wantIDs = append(wantIDs, fmt.Sprintf("%s:%d", id, ev.Seq))
	}
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("webhook acknowledged %v, want every update once, in order: %v", ids, wantIDs)
	}
	for i, ev := range evs {
		want, err := ev.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(bodies[i], want) {
			t.Errorf("webhook body of seq %d = %s, want %s", ev.Seq, bodies[i], want)
		}
	}
	st, err = b.PushState(ctx, scopeA, id, cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Delivered != seq || st.Failing || st.Attempts != 0 || st.LastError != "" {
		t.Errorf("final push state %+v; want delivered %d, not failing, no attempts or error", st, seq)
	}
}
