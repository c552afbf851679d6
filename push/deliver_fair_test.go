package push_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
	"github.com/goa2a/a2a/store/sqlite"
)

// hangHook is a webhook on 127.0.0.1 that never answers: each call is
// held until its caller gives up or the test ends. It counts the calls
// and the most it held at once.
type hangHook struct {
	srv  *httptest.Server
	done chan struct{}

	mu             sync.Mutex
	calls, now, hi int
	changed        chan struct{}
}

func newHangHook(t *testing.T) *hangHook {
	t.Helper()
	k := &hangHook{done: make(chan struct{}), changed: make(chan struct{}, 1)}
	k.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.calls++
		k.now++
		k.hi = max(k.hi, k.now)
		k.mu.Unlock()
		k.signal()
		select {
		case <-r.Context().Done():
		case <-k.done:
		}
		k.mu.Lock()
		k.now--
		k.mu.Unlock()
		k.signal()
	}))
	// Cleanups run last first: release the held calls, then close.
	t.Cleanup(k.srv.Close)
	t.Cleanup(func() { close(k.done) })
	return k
}

func (k *hangHook) signal() {
	select {
	case k.changed <- struct{}{}:
	default:
	}
}

func (k *hangHook) counts() (calls, now, hi int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.calls, k.now, k.hi
}

// waitHeld waits until the hook holds n calls at once.
func (k *hangHook) waitHeld(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(e2eTimeout)
	for {
		if _, now, _ := k.counts(); now >= n {
			return
		}
		select {
		case <-k.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			_, now, _ := k.counts()
			t.Fatalf("the hanging webhook holds %d calls, want %d", now, n)
		}
	}
}

// pushTask creates a task in scope with configs on the given URLs (ids
// c0, c1, ...) and appends n status updates to it, each a notification
// for every config.
func pushTask(t *testing.T, st store.Store, scope store.Scope, taskID string, urls []string, n int) {
	t.Helper()
	ctx := t.Context()
	task := &a2a.Task{ID: taskID, ContextID: "ctx-" + taskID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: a2a.TimestampOf(time.Now())}}
	if err := st.Append(ctx, scope, taskID, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
		t.Fatalf("creating task %s: %v", taskID, err)
	}
	for i, u := range urls {
		if err := st.PutPushConfig(ctx, scope, &a2a.TaskPushNotificationConfig{ID: fmt.Sprintf("c%d", i), TaskID: taskID, URL: u}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		seq := int64(i + 1)
		su := &a2a.TaskStatusUpdateEvent{TaskID: taskID, ContextID: task.ContextID,
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: a2a.TimestampOf(time.Now())}}
		next := task.Apply(su)
		if err := st.Append(ctx, scope, taskID, seq, []store.Event{{Seq: seq + 1, Payload: su}}, next); err != nil {
			t.Fatalf("appending to task %s: %v", taskID, err)
		}
		task = next
	}
}

// fairStores are the stores the fairness tests run on.
func fairStores(t *testing.T) map[string]func(t *testing.T) store.Store {
	return map[string]func(t *testing.T) store.Store{
		"memory": func(t *testing.T) store.Store { return memory.New() },
		"sqlite": func(t *testing.T) store.Store {
			st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "a2a.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
}

// TestDeliverFairBetweenPrincipals: one principal registers 30 tasks × 10
// configs on a webhook that never answers; the calls to it are held for
// good (the guard's timeout is an hour), so no worker they hold comes
// back. Another principal's notifications are all delivered meanwhile:
// the first principal holds at most its share of the workers, and the
// rest serve the others.
func TestDeliverFairBetweenPrincipals(t *testing.T) {
	t.Parallel()
	for name, open := range fairStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := open(t)
			hang := newHangHook(t)
			ok := newHook(t, nil)
			g, err := push.NewGuard(push.WithAllow("127.0.0.1"), push.WithTimeout(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			d, err := push.NewDeliverer(st, push.WithGuard(g), push.WithLease(2*time.Hour), push.WithPollInterval(50*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			stop := startDeliverer(d)
			defer stop()

			hog := store.Scope{Tenant: "t", Owner: "hog"}
			var urls []string
			for i := range 10 {
				urls = append(urls, fmt.Sprintf("%s/hook/%d", hang.srv.URL, i))
			}
			for i := range 30 {
				pushTask(t, st, hog, fmt.Sprintf("hog-%02d", i), urls, 1)
			}
			d.Appended(hog, "hog-00", 2)
			hang.waitHeld(t, push.DefaultWorkers/4)

			calm := store.Scope{Tenant: "t", Owner: "calm"}
			pushTask(t, st, calm, "calm", []string{ok.url()}, 3)
			d.Appended(calm, "calm", 4)
			hits := ok.waitFor(t, 3)
			if len(hits) != 3 {
				t.Errorf("the other principal's webhook got %d notifications, want 3", len(hits))
			}
			if _, _, hi := hang.counts(); hi > push.DefaultWorkers/4 {
				t.Errorf("the hanging webhook held %d calls at once, want at most the principal's share, %d", hi, push.DefaultWorkers/4)
			}
		})
	}
}

// TestDeliverHostLimit: two principals whose webhooks are on one host
// that never answers get at most DefaultHostCalls calls to it at once
// between them, and a third principal's webhook elsewhere is served.
func TestDeliverHostLimit(t *testing.T) {
	t.Parallel()
	st := memory.New()
	hang := newHangHook(t)
	ok := newHook(t, nil)
	g, err := push.NewGuard(push.WithAllow("127.0.0.1"), push.WithTimeout(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	d, err := push.NewDeliverer(st, push.WithGuard(g), push.WithLease(2*time.Hour),
		push.WithPollInterval(50*time.Millisecond), push.WithPrincipalShare(push.DefaultWorkers))
	if err != nil {
		t.Fatal(err)
	}
	stop := startDeliverer(d)
	defer stop()
	for _, owner := range []string{"a", "b"} {
		sc := store.Scope{Owner: owner}
		for i := range 5 {
			var urls []string
			for j := range 10 {
				urls = append(urls, fmt.Sprintf("%s/%s/%d/%d", hang.srv.URL, owner, i, j))
			}
			pushTask(t, st, sc, fmt.Sprintf("%s-%d", owner, i), urls, 1)
		}
	}
	d.Appended(store.Scope{}, "", 0)
	hang.waitHeld(t, push.DefaultHostCalls)
	pushTask(t, st, store.Scope{Owner: "c"}, "c", []string{ok.url()}, 2)
	d.Appended(store.Scope{}, "c", 3)
	ok.waitFor(t, 2)
	if _, _, hi := hang.counts(); hi > push.DefaultHostCalls {
		t.Errorf("the host held %d calls at once, want at most %d", hi, push.DefaultHostCalls)
	}
}

// TestDeliverPausesDeadHost: once HostPauseAfter calls in a row to a host
// end without a response, the configs on it are not called until the
// pause ends; each such attempt is counted, and says why. When the pause
// ends one call probes the host, and an answer resumes delivery to all.
// The Deliverer's clock stands still until the test moves it, so the
// pause lasts as long as the test wants.
func TestDeliverPausesDeadHost(t *testing.T) {
	t.Parallel()
	st := memory.New()
	var (
		mu      sync.Mutex
		answer  bool
		calls   int
		offset  time.Duration
		results []push.Result
	)
	base := time.Now()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return base.Add(offset)
	}
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		a := answer
		mu.Unlock()
		if a {
			w.WriteHeader(http.StatusOK)
			return
		}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) })

	g, err := push.NewGuard(push.WithAllow("127.0.0.1"), push.WithTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	d, err := push.NewDeliverer(st, push.WithGuard(g), push.WithPollInterval(20*time.Millisecond),
		push.WithDelivererClock(clock), push.WithResultHook(func(r push.Result) {
			mu.Lock()
			results = append(results, r)
			mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	stop := startDeliverer(d)
	defer stop()
	const configs = 100
	var urls []string
	for i := range configs / 10 {
		urls = append(urls, fmt.Sprintf("%s/%d", srv.URL, i))
	}
	for i := range 10 {
		pushTask(t, st, store.Scope{}, fmt.Sprintf("task-%d", i), urls, 1)
	}
	d.Appended(store.Scope{}, "", 0)

	// Each config gets one attempt: the clock stands still, so none is
	// due again. Wait for all of them.
	deadline := time.Now().Add(e2eTimeout)
	for {
		mu.Lock()
		n := len(results)
		mu.Unlock()
		if n >= configs {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d attempts, want one per config (%d)", n, configs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	var called, paused int
	for _, r := range results {
		switch {
		case r.Err == nil:
			t.Errorf("config %s/%s delivered to a host that never answers", r.TaskID, r.ConfigID)
		case r.Latency > 0:
			called++
		case strings.Contains(r.Err.Error(), "paused"):
			paused++
		default:
			t.Errorf("config %s/%s: not called, but not paused either: %v", r.TaskID, r.ConfigID, r.Err)
		}
	}
	// A call may time out before it reaches the handler on a busy
	// machine, never the other way round.
	if calls > called {
		t.Errorf("%d results of calls, but the host got %d calls", called, calls)
	}
	// The calls that may start before the pause: those in flight when the
	// HostPauseAfter-th failure comes back, and those that the first
	// failures' workers start meanwhile.
	if most := push.DefaultHostCalls + push.HostPauseAfter - 1; called > most {
		t.Errorf("the host got %d calls, want at most %d before it is paused", called, most)
	}
	if paused != configs-called {
		t.Errorf("%d configs not called while the host was paused, want %d", paused, configs-called)
	}
	answer = true
	offset = time.Hour // past the pause and every config's retry
	mu.Unlock()

	deadline = time.Now().Add(e2eTimeout)
	for {
		delivered := 0
		for _, tk := range []string{"task-0", "task-9"} {
			for i := range configs / 10 {
				s, err := st.PushState(t.Context(), store.Scope{}, tk, fmt.Sprintf("c%d", i))
				if err != nil {
					t.Fatal(err)
				}
				if s.Delivered == 2 {
					delivered++
				}
			}
		}
		if delivered == 2*configs/10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d configs delivered once the host answers", delivered, 2*configs/10)
		}
		// The configs that waited for the probe come back a guard's
		// timeout later: move the clock on.
		mu.Lock()
		offset += time.Second
		mu.Unlock()
		d.Appended(store.Scope{}, "", 0)
		time.Sleep(10 * time.Millisecond)
	}
}
