package push_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
	"github.com/goa2a/a2a/store/sqlite"
)

const e2eTimeout = 20 * time.Second

// hit is one webhook call as a test receiver saw it.
type hit struct {
	header http.Header
	body   []byte
	at     time.Time
}

// hook is a webhook receiver on 127.0.0.1 that records what it is sent;
// respond decides the answer to call n (1-based), 200 when nil.
type hook struct {
	srv *httptest.Server

	mu      sync.Mutex
	calls   int
	hits    []hit // acknowledged calls only
	changed chan struct{}
	respond func(n int, w http.ResponseWriter) bool // true: answered
	// check, when set, sees each call first and may refuse it (false).
	check func(w http.ResponseWriter, r *http.Request, body []byte) bool
}

func newHook(t *testing.T, respond func(n int, w http.ResponseWriter) bool) *hook {
	t.Helper()
	k := &hook{changed: make(chan struct{}, 1), respond: respond}
	k.srv = httptest.NewServer(http.HandlerFunc(k.serve))
	t.Cleanup(k.srv.Close)
	return k
}

func (k *hook) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if k.check != nil && !k.check(w, r, body) {
		return
	}
	k.mu.Lock()
	k.calls++
	n := k.calls
	k.mu.Unlock()
	if k.respond != nil && k.respond(n, w) {
		return
	}
	k.mu.Lock()
	k.hits = append(k.hits, hit{header: r.Header.Clone(), body: body, at: time.Now()})
	k.mu.Unlock()
	select {
	case k.changed <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusOK)
}

func (k *hook) url() string { return k.srv.URL + "/a2a-events" }

func (k *hook) got() []hit {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]hit(nil), k.hits...)
}

// waitFor waits until the hook has acknowledged n calls.
func (k *hook) waitFor(t *testing.T, n int) []hit {
	t.Helper()
	deadline := time.After(e2eTimeout)
	for {
		if hs := k.got(); len(hs) >= n {
			return hs
		}
		select {
		case <-k.changed:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("webhook got %d notifications, want %d", len(k.got()), n)
		}
	}
}

// gated is an agent that reports one update per step the test allows:
// working, then chunks artifact chunks, then completed.
type gated struct {
	chunks int
	step   chan struct{}
	taskID chan string
}

func newGated(chunks int) *gated {
	return &gated{chunks: chunks, step: make(chan struct{}, 100), taskID: make(chan string, 1)}
}

// allow lets the agent make n more updates.
func (g *gated) allow(n int) {
	for range n {
		g.step <- struct{}{}
	}
}

// updates is how many updates the agent makes in all.
func (g *gated) updates() int { return g.chunks + 2 }

func (g *gated) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	if err := w.Submit(ctx); err != nil {
		return err
	}
	g.taskID <- w.TaskID()
	wait := func() error {
		select {
		case <-g.step:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := wait(); err != nil {
		return err
	}
	if err := w.Working(ctx, "starting"); err != nil {
		return err
	}
	for i := range g.chunks {
		if err := wait(); err != nil {
			return err
		}
		art := a2a.Artifact{ArtifactID: "log", Parts: []a2a.Part{a2a.TextPart(fmt.Sprintf("line %d\n", i))}}
		if err := w.ArtifactChunk(ctx, art, i > 0, i == g.chunks-1); err != nil {
			return err
		}
	}
	if err := wait(); err != nil {
		return err
	}
	return w.Complete(ctx, "done")
}

func pushCard() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name: "push-e2e", Description: "test", Version: "1",
		SupportedInterfaces: []a2a.AgentInterface{{URL: "http://127.0.0.1:1/a2a/jsonrpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}},
		Capabilities:        a2a.AgentCapabilities{Streaming: a2a.Ptr(true), PushNotifications: a2a.Ptr(true)},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "s", Name: "s", Description: "s", Tags: []string{"t"}}},
	}
}

// rig is a Handler with a running Deliverer.
type rig struct {
	h     *server.Handler
	d     *push.Deliverer
	st    store.Store
	stop  func() // stops the deliverer and waits for it
	ctx   context.Context
	agent *gated
}

func newDeliverer(t *testing.T, st store.Store, opts ...push.DelivererOption) *push.Deliverer {
	t.Helper()
	g, err := push.NewGuard(push.WithAllow("127.0.0.1"), push.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]push.DelivererOption{push.WithGuard(g), push.WithBackoff(10*time.Millisecond, 50*time.Millisecond),
		push.WithPollInterval(50 * time.Millisecond)}, opts...)
	d, err := push.NewDeliverer(st, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// startDeliverer runs d until the returned stop is called.
func startDeliverer(d *push.Deliverer) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
}

func newRig(t *testing.T, st store.Store, agent *gated, opts ...push.DelivererOption) *rig {
	t.Helper()
	d := newDeliverer(t, st, opts...)
	h, err := server.NewHandler(pushCard(), agent, server.WithStore(st), server.WithPusher(d))
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{h: h, d: d, st: st, agent: agent, stop: startDeliverer(d)}
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	r.ctx = server.WithServiceParams(ctx, server.ServiceParams{Version: a2a.ProtocolVersion})
	t.Cleanup(func() {
		cancel()
		r.stop()
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		h.Close(cctx)
	})
	return r
}

// start sends a message that starts a task, with cfg registered in the
// request when not nil, and returns the task id once the agent has
// submitted it.
func (r *rig) start(t *testing.T, cfg *a2a.TaskPushNotificationConfig) string {
	t.Helper()
	req := &a2a.SendMessageRequest{
		Message:       a2a.NewTextMessage(a2a.RoleUser, "m-"+strconv.FormatInt(time.Now().UnixNano(), 10), "go"),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true, TaskPushNotificationConfig: cfg},
	}
	if _, err := r.h.SendMessage(r.ctx, req); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	select {
	case id := <-r.agent.taskID:
		return id
	case <-time.After(e2eTimeout):
		t.Fatal("the agent did not start")
		return ""
	}
}

// pushed returns the notifications a task's log holds for webhooks, as
// ProtoJSON bodies in log order.
func pushed(t *testing.T, st store.Store, taskID string) [][]byte {
	t.Helper()
	evs, err := st.Events(context.Background(), store.Scope{}, taskID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, ev := range evs {
		switch ev.Payload.(type) {
		case *a2a.TaskStatusUpdateEvent, *a2a.TaskArtifactUpdateEvent:
			b, err := a2a.StreamResponse{Event: ev.Payload}.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}

// checkBodies checks that hits carry exactly want, in order.
func checkBodies(t *testing.T, what string, hits []hit, want [][]byte) {
	t.Helper()
	if len(hits) != len(want) {
		t.Errorf("%s: got %d notifications, want %d", what, len(hits), len(want))
	}
	for i := range min(len(hits), len(want)) {
		if string(hits[i].body) != string(want[i]) {
			t.Errorf("%s: notification %d\n got: %s\nwant: %s", what, i+1, hits[i].body, want[i])
		}
	}
}

func waitState(t *testing.T, r *rig, taskID string, state a2a.TaskState) {
	t.Helper()
	deadline := time.Now().Add(e2eTimeout)
	for {
		task, err := r.h.GetTask(r.ctx, &a2a.GetTaskRequest{ID: taskID})
		if err != nil {
			t.Fatal(err)
		}
		if task.Status.State == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %v, want %v", taskID, task.Status.State, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDeliverTwoConfigsInOrder(t *testing.T) {
	t.Parallel()
	st := memory.New()
	signer, err := push.GenerateSigner("push-test")
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, st, newGated(5), push.WithSigning(signer))
	a := newHook(t, nil)

	// b verifies signatures with the push.Receiver helper.
	var bMu sync.Mutex
	var bEvents []push.Event
	recv, err := push.NewReceiver(func(ctx context.Context, ev push.Event) error {
		bMu.Lock()
		bEvents = append(bEvents, ev)
		bMu.Unlock()
		return nil
	}, push.WithSigner(signer), push.WithToken("tok-b"))
	if err != nil {
		t.Fatal(err)
	}
	b := &hook{changed: make(chan struct{}, 1), check: func(w http.ResponseWriter, req *http.Request, body []byte) bool {
		rec := httptest.NewRecorder()
		req.Body = io.NopCloser(strings.NewReader(string(body)))
		recv.ServeHTTP(rec, req)
		if rec.Code/100 != 2 {
			t.Errorf("the receiver helper refused a notification: %d %s", rec.Code, rec.Body)
			w.WriteHeader(rec.Code)
			return false
		}
		return true
	}}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)

	taskID := r.start(t, &a2a.TaskPushNotificationConfig{
		URL: a.url(), Token: "tok-a",
		Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret-a"},
	})
	if _, err := r.h.CreateTaskPushNotificationConfig(r.ctx, &a2a.TaskPushNotificationConfig{TaskID: taskID, URL: b.url(), Token: "tok-b"}); err != nil {
		t.Fatal(err)
	}
	r.agent.allow(r.agent.updates())
	waitState(t, r, taskID, a2a.TaskStateCompleted)

	want := pushed(t, st, taskID)
	if len(want) != r.agent.updates() {
		t.Fatalf("the log holds %d notifications, want %d", len(want), r.agent.updates())
	}
	ha, hb := a.waitFor(t, len(want)), b.waitFor(t, len(want))
	checkBodies(t, "webhook a", ha, want)
	checkBodies(t, "webhook b", hb, want)

	h := ha[0].header
	for name, value := range map[string]string{
		"Content-Type":             "application/a2a+json",
		"Authorization":            "Bearer secret-a",
		"A2A-Notification-Token":   "tok-a",
		"X-A2A-Notification-Token": "tok-a",
	} {
		if got := h.Get(name); got != value {
			t.Errorf("webhook a: %s = %q, want %q", name, got, value)
		}
	}
	if got := hb[0].header.Get("Authorization"); got != "" {
		t.Errorf("webhook b got Authorization %q though its config has no authentication", got)
	}
	ids := map[string]bool{}
	for i, x := range ha {
		id := x.header.Get(push.DeliveryIDHeader)
		if !strings.HasPrefix(id, taskID+":") || ids[id] {
			t.Errorf("notification %d: %s %q, want a new %q prefix", i+1, push.DeliveryIDHeader, id, taskID+":")
		}
		ids[id] = true
		if x.header.Get(push.SignatureHeader) == "" {
			t.Errorf("notification %d is not signed", i+1)
		}
	}
	bMu.Lock()
	defer bMu.Unlock()
	if len(bEvents) != len(want) {
		t.Errorf("the receiver helper handed on %d events, want %d", len(bEvents), len(want))
	}
	for i, ev := range bEvents {
		if ev.TaskID != taskID || ev.Signature == nil || ev.Signature.EventID == "" {
			t.Errorf("event %d: task %q signature %+v, want task %q with a signed event id", i+1, ev.TaskID, ev.Signature, taskID)
		}
	}
}

func TestDeliverRetriesAfter503(t *testing.T) {
	t.Parallel()
	st := memory.New()
	var mu sync.Mutex
	var results []push.Result
	r := newRig(t, st, newGated(2), push.WithResultHook(func(res push.Result) {
		mu.Lock()
		results = append(results, res)
		mu.Unlock()
	}))
	k := newHook(t, func(n int, w http.ResponseWriter) bool {
		if n <= 3 {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return true
		}
		return false
	})
	taskID := r.start(t, &a2a.TaskPushNotificationConfig{URL: k.url()})
	r.agent.allow(r.agent.updates())
	waitState(t, r, taskID, a2a.TaskStateCompleted)
	want := pushed(t, st, taskID)
	checkBodies(t, "webhook", k.waitFor(t, len(want)), want)

	mu.Lock()
	all := append([]push.Result(nil), results...)
	mu.Unlock()
	var failed []push.Result
	for _, res := range all {
		if res.Err != nil {
			failed = append(failed, res)
		}
	}
	if len(failed) != 3 {
		t.Fatalf("%d failed calls, want 3: %+v", len(failed), failed)
	}
	for i, res := range failed {
		if res.Status != http.StatusServiceUnavailable || res.Attempt != i+1 || res.Failing {
			t.Errorf("failed call %d = %+v, want status 503, attempt %d, not failing", i+1, res, i+1)
		}
	}
	// Once the ended task is fully delivered, its config is parked: no
	// claim looks at it again.
	id := mustOnlyConfig(t, r, taskID)
	deadline := time.Now().Add(e2eTimeout)
	for {
		stt, err := st.PushState(context.Background(), store.Scope{}, taskID, id)
		if err != nil {
			t.Fatal(err)
		}
		if stt.Phase == store.PushParked {
			if stt.Failing || stt.Attempts != 0 || stt.LastError != "" {
				t.Errorf("state after the retries succeeded: %+v, want attempts and error cleared", stt)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %+v, want the config parked once the task is delivered", stt)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func mustOnlyConfig(t *testing.T, r *rig, taskID string) string {
	t.Helper()
	res, err := r.h.ListTaskPushNotificationConfigs(r.ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Configs) != 1 {
		t.Fatalf("task has %d configs, want 1", len(res.Configs))
	}
	return res.Configs[0].ID
}

func TestDeliverGivesUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		status   int
		attempts int
	}{
		{"500 until the budget is spent", http.StatusInternalServerError, 3},
		{"404 is not retried", http.StatusNotFound, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := memory.New()
			failing := make(chan push.Result, 10)
			r := newRig(t, st, newGated(1), push.WithMaxAttempts(3), push.WithResultHook(func(res push.Result) {
				if res.Failing {
					failing <- res
				}
			}))
			k := newHook(t, func(n int, w http.ResponseWriter) bool {
				http.Error(w, "no such hook", tc.status)
				return true
			})
			taskID := r.start(t, &a2a.TaskPushNotificationConfig{URL: k.url()})
			r.agent.allow(r.agent.updates())
			var res push.Result
			select {
			case res = <-failing:
			case <-time.After(e2eTimeout):
				t.Fatal("the config was never marked failing")
			}
			if res.Attempt != tc.attempts || res.Status != tc.status {
				t.Errorf("failing result %+v, want attempt %d status %d", res, tc.attempts, tc.status)
			}
			id := mustOnlyConfig(t, r, taskID)
			stt, err := st.PushState(context.Background(), store.Scope{}, taskID, id)
			if err != nil {
				t.Fatal(err)
			}
			if !stt.Failing || stt.Attempts != tc.attempts || !strings.Contains(stt.LastError, strconv.Itoa(tc.status)) {
				t.Errorf("state %+v, want failing after %d attempts with the status in the error", stt, tc.attempts)
			}
			k.mu.Lock()
			calls := k.calls
			k.mu.Unlock()
			if calls != tc.attempts {
				t.Errorf("the webhook was called %d times, want %d", calls, tc.attempts)
			}
			if got := r.d.Stats().Failing; got != 1 {
				t.Errorf("Stats().Failing = %d, want 1", got)
			}
			// Registering the config again resumes it from the event
			// that failed.
			if _, err := r.h.CreateTaskPushNotificationConfig(r.ctx, &a2a.TaskPushNotificationConfig{TaskID: taskID, ID: id, URL: newHook(t, nil).url()}); err != nil {
				t.Fatal(err)
			}
			waitState(t, r, taskID, a2a.TaskStateCompleted)
			deadline := time.Now().Add(e2eTimeout)
			for {
				stt, err := st.PushState(context.Background(), store.Scope{}, taskID, id)
				if err != nil {
					t.Fatal(err)
				}
				_, seq, _ := st.Get(context.Background(), store.Scope{}, taskID)
				if !stt.Failing && stt.Delivered == seq {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after re-registering: %+v, want delivered up to %d", stt, seq)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

func TestDeliverAcrossRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "push.db")
	ctx := context.Background()
	st1, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A port that refuses connections until the receiver starts on it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var failures sync.WaitGroup
	failures.Add(1)
	var once sync.Once
	r := newRig(t, st1, newGated(3), push.WithResultHook(func(res push.Result) {
		if res.Err != nil {
			once.Do(failures.Done)
		}
	}))
	taskID := r.start(t, &a2a.TaskPushNotificationConfig{URL: "http://" + addr + "/a2a-events"})
	r.agent.allow(r.agent.updates())
	waitState(t, r, taskID, a2a.TaskStateCompleted)
	failures.Wait() // the receiver is down: at least one call failed
	want := pushed(t, st1, taskID)
	r.stop()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := r.h.Close(cctx); err != nil {
		t.Fatal(err)
	}
	if err := st1.Close(); err != nil {
		t.Fatal(err)
	}

	// The receiver comes up while the server is down.
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening again on %s: %v", addr, err)
	}
	k := &hook{changed: make(chan struct{}, 1)}
	k.srv = httptest.NewUnstartedServer(http.HandlerFunc(k.serve))
	k.srv.Listener.Close()
	k.srv.Listener = l
	k.srv.Start()
	defer k.srv.Close()

	st2, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	d := newDeliverer(t, st2)
	stop := startDeliverer(d)
	defer stop()
	checkBodies(t, "after the restart", k.waitFor(t, len(want)), want)
}

func TestDeliverNothingAfterDelete(t *testing.T) {
	t.Parallel()
	st := memory.New()
	r := newRig(t, st, newGated(6))
	deleted := newHook(t, nil)
	control := newHook(t, nil)
	taskID := r.start(t, &a2a.TaskPushNotificationConfig{ID: "goes", URL: deleted.url()})
	if _, err := r.h.CreateTaskPushNotificationConfig(r.ctx, &a2a.TaskPushNotificationConfig{TaskID: taskID, ID: "stays", URL: control.url()}); err != nil {
		t.Fatal(err)
	}
	r.agent.allow(3)
	deleted.waitFor(t, 3)
	// Let more updates happen while the delete runs.
	r.agent.allow(2)
	if err := r.h.DeleteTaskPushNotificationConfig(r.ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: taskID, ID: "goes"}); err != nil {
		t.Fatal(err)
	}
	returned := time.Now()
	r.agent.allow(r.agent.updates() - 5)
	waitState(t, r, taskID, a2a.TaskStateCompleted)
	want := pushed(t, st, taskID)
	checkBodies(t, "the config that stays", control.waitFor(t, len(want)), want)
	// The control config has everything: the deliverer has been through
	// every event. The deleted one got a prefix, all before the delete
	// returned.
	got := deleted.got()
	if len(got) < 3 || len(got) >= len(want) {
		t.Errorf("the deleted config got %d notifications, want 3 to %d", len(got), len(want)-1)
	}
	checkBodies(t, "the deleted config", got, want[:len(got)])
	for i, x := range got {
		if x.at.After(returned) {
			t.Errorf("notification %d reached the deleted config %v after the delete returned", i+1, x.at.Sub(returned))
		}
	}
}

func TestSlowWebhookDoesNotDelayStream(t *testing.T) {
	t.Parallel()
	st := memory.New()
	r := newRig(t, st, newGated(4))
	release := make(chan struct{})
	slow := newHook(t, func(n int, w http.ResponseWriter) bool {
		<-release
		return false
	})
	defer close(release)
	taskID := r.start(t, &a2a.TaskPushNotificationConfig{URL: slow.url()})

	ctx, cancel := context.WithTimeout(r.ctx, e2eTimeout)
	defer cancel()
	frames := 0
	done := make(chan error, 1)
	subscribed := make(chan struct{})
	go func() {
		for ev, err := range r.h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: taskID}) {
			if err != nil {
				done <- err
				return
			}
			frames++
			if frames == 1 {
				close(subscribed)
			}
			if su, ok := ev.Event.(*a2a.TaskStatusUpdateEvent); ok && su.Status.State.Terminal() {
				done <- nil
				return
			}
		}
		done <- errors.New("the stream ended before the task did")
	}()
	select {
	case <-subscribed:
	case err := <-done:
		t.Fatal(err)
	}
	r.agent.allow(r.agent.updates())
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(e2eTimeout):
		t.Fatal("the stream subscriber did not see the task end while the webhook hung")
	}
	if want := 1 + r.agent.updates(); frames != want {
		t.Errorf("the subscriber saw %d frames, want %d (snapshot and every update)", frames, want)
	}
	if n := len(slow.got()); n != 0 {
		t.Errorf("the hung webhook acknowledged %d notifications", n)
	}
}

// Compile-time check that the Deliverer is what a Handler wants.
var _ server.Pusher = (*push.Deliverer)(nil)

// TestDeliverClaimWhileFinishing: an event appended just as the worker of
// its config finishes is claimed while that worker is still known; it is
// delivered at once, not after the claim's lease.
func TestDeliverClaimWhileFinishing(t *testing.T) {
	t.Parallel()
	st := memory.New()
	r := newRig(t, st, newGated(3), push.WithLease(time.Minute), push.WithAfterWorkDelay(300*time.Millisecond))
	k := newHook(t, nil)
	taskID := r.start(t, &a2a.TaskPushNotificationConfig{ID: "c", URL: k.url()})
	for n := 1; n <= r.agent.updates(); n++ {
		r.agent.allow(1)
		k.waitFor(t, n) // within e2eTimeout, far below the lease
		// Wait until the worker has released the config (it then pauses
		// before forgetting it), so that the next event comes in that
		// window.
		deadline := time.Now().Add(e2eTimeout)
		for {
			s, err := st.PushState(context.Background(), store.Scope{}, taskID, "c")
			if err != nil {
				t.Fatal(err)
			}
			if s.Delivered > 0 && (s.NextAttempt.IsZero() || s.Phase != store.PushDue) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the worker never released the config: %+v", s)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitState(t, r, taskID, a2a.TaskStateCompleted)
}

// TestDeliverIdleUntilAppend: a config that has delivered all of a task
// that goes on waits idle, passed over by claims, and the next event
// wakes it.
func TestDeliverIdleUntilAppend(t *testing.T) {
	t.Parallel()
	st := memory.New()
	r := newRig(t, st, newGated(2))
	k := newHook(t, nil)
	taskID := r.start(t, &a2a.TaskPushNotificationConfig{ID: "c", URL: k.url()})
	r.agent.allow(1)
	k.waitFor(t, 1)
	deadline := time.Now().Add(e2eTimeout)
	for {
		s, err := st.PushState(context.Background(), store.Scope{}, taskID, "c")
		if err != nil {
			t.Fatal(err)
		}
		if s.Phase == store.PushIdle {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("state %+v, want idle once the task's log is delivered", s)
		}
		time.Sleep(time.Millisecond)
	}
	if jobs, err := st.ClaimPush(context.Background(), time.Now(), time.Minute, 10); err != nil || len(jobs) != 0 {
		t.Fatalf("ClaimPush of an idle config = %v, %v; want nothing", jobs, err)
	}
	r.agent.allow(1)
	k.waitFor(t, 2)
}

// TestDeliverCallHook: the hook sees each call before it is made, with
// its task and event, may add a header that the webhook receives, and is
// told each call's outcome.
func TestDeliverCallHook(t *testing.T) {
	t.Parallel()
	st := memory.New()
	var mu sync.Mutex
	var before, after []push.Result
	r := newRig(t, st, newGated(1), push.WithCallHook(func(req *http.Request, call push.Result) (*http.Request, func(push.Result)) {
		req.Header.Set("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		mu.Lock()
		before = append(before, call)
		mu.Unlock()
		return req, func(res push.Result) {
			mu.Lock()
			after = append(after, res)
			mu.Unlock()
		}
	}))
	k := newHook(t, nil)
	taskID := r.start(t, &a2a.TaskPushNotificationConfig{URL: k.url()})
	r.agent.allow(r.agent.updates())
	waitState(t, r, taskID, a2a.TaskStateCompleted)
	want := pushed(t, st, taskID)
	hits := k.waitFor(t, len(want))
	for i, h := range hits {
		if h.header.Get("Traceparent") == "" {
			t.Errorf("webhook call %d has no header of the hook", i+1)
		}
	}
	// The outcome is reported once the worker has read the answer, after
	// the webhook got the call: wait for it.
	deadline := time.Now().Add(e2eTimeout)
	for {
		mu.Lock()
		nb, na := len(before), len(after)
		mu.Unlock()
		if nb >= len(want) && na == nb {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hook saw %d calls before and %d after, want %d of each at least", nb, na, len(want))
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range before {
		if before[i].TaskID != taskID || before[i].Seq == 0 || after[i].Status != http.StatusOK {
			t.Errorf("call %d: before %+v, after %+v; want the task's event, answered 200", i+1, before[i], after[i])
		}
	}
}

// TestDeliverRefusedState: a webhook the guard refuses is marked failing
// at once, and its recorded error begins with push.RefusedPrefix, so that
// a reader of the state (a2a push get) can tell the server's refusal from
// a receiver's answer.
func TestDeliverRefusedState(t *testing.T) {
	t.Parallel()
	st := memory.New()
	strict, err := push.NewGuard() // 127.0.0.1 is not admitted
	if err != nil {
		t.Fatal(err)
	}
	failing := make(chan push.Result, 10)
	r := newRig(t, st, newGated(0), push.WithGuard(strict), push.WithResultHook(func(res push.Result) {
		if res.Failing {
			failing <- res
		}
	}))
	k := newHook(t, nil)
	taskID := r.start(t, &a2a.TaskPushNotificationConfig{URL: k.url()})
	r.agent.allow(r.agent.updates())
	select {
	case <-failing:
	case <-time.After(e2eTimeout):
		t.Fatal("the config was never marked failing")
	}
	id := mustOnlyConfig(t, r, taskID)
	stt, err := st.PushState(context.Background(), store.Scope{}, taskID, id)
	if err != nil {
		t.Fatal(err)
	}
	if want := push.RefusedPrefix + "webhook address 127.0.0.1 is loopback"; !stt.Failing || stt.Attempts != 1 || !strings.HasPrefix(stt.LastError, want) {
		t.Errorf("state %+v, want failing after 1 attempt with an error beginning %q", stt, want)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.calls != 0 {
		t.Errorf("the refused webhook was called %d times", k.calls)
	}
}
