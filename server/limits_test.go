package server_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

func TestLimitsDefaultsAndValidation(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	if got, want := h.Limits(), server.DefaultLimits(); got != want {
		t.Errorf("Limits() = %+v, want the defaults %+v", got, want)
	}
	def := server.DefaultLimits()
	if def.MaxParts <= 0 || def.MaxDepth <= 0 || def.MaxStreams <= 0 || def.MaxStreamsPerPrincipal <= 0 || def.MaxActiveTasksPerPrincipal <= 0 || def.MaxActiveTasks <= 0 || def.Rate != 0 {
		t.Errorf("DefaultLimits() = %+v: want every limit on but the rate", def)
	}

	h = newHandler(t, nil, scripted, server.WithLimits(server.Limits{MaxParts: -1, MaxStreams: 7, Rate: 2.5}))
	got := h.Limits()
	if got.MaxParts != -1 || got.MaxStreams != 7 || got.MaxDepth != def.MaxDepth || got.Rate != 2.5 || got.Burst != 5 {
		t.Errorf("Limits() = %+v: want MaxParts -1 (none), MaxStreams 7, default depth, rate 2.5, burst 5", got)
	}
	h = newHandler(t, nil, scripted, server.WithLimits(server.Limits{Rate: 0.1}))
	if got := h.Limits().Burst; got != 1 {
		t.Errorf("Burst for rate 0.1 = %d, want at least 1", got)
	}

	for name, l := range map[string]server.Limits{
		"NaN rate":       {Rate: math.NaN()},
		"infinite rate":  {Rate: math.Inf(1)},
		"negative burst": {Rate: 1, Burst: -1},
	} {
		if h, err := server.NewHandler(testCard(), server.AgentFunc(scripted), server.WithLimits(l)); err == nil {
			_ = h.Close(context.Background())
			t.Errorf("%s: NewHandler succeeded", name)
		} else if !strings.Contains(err.Error(), "WithLimits") {
			t.Errorf("%s: error %q does not name WithLimits", name, err)
		}
	}
}

// wantExhausted fails unless err is ResourceExhausted naming limit with
// value, and returns it.
func wantExhausted(t *testing.T, err error, limit string, value int) *a2a.Error {
	t.Helper()
	e := wantErr(t, err, a2a.ErrResourceExhausted)
	if e.Metadata["limit"] != limit || e.Metadata["value"] != strconv.Itoa(value) {
		t.Errorf("metadata %v, want limit %s value %d", e.Metadata, limit, value)
	}
	if want := "(limit " + strconv.Itoa(value); !strings.Contains(e.Text(), want) {
		t.Errorf("message %q does not say %q", e.Text(), want)
	}
	return e
}

func TestMaxParts(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted, server.WithLimits(server.Limits{MaxParts: 3}))
	ctx := v1(testCtx(t))
	req := newRequest("done")
	req.Message.Parts = []a2a.Part{a2a.TextPart("a"), a2a.TextPart("b"), a2a.TextPart("c")}
	if task := sendTask(t, h, ctx, req); task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("three parts: task %v", task.Status.State)
	}
	req = newRequest("done")
	req.Message.Parts = make([]a2a.Part, 1000) // empty parts: one violation, not 1000
	_, err := h.SendMessage(ctx, req)
	e := wantErr(t, err, a2a.ErrInvalidParams)
	if len(e.Violations) != 1 || e.Violations[0].Field != "message.parts" ||
		!strings.Contains(e.Violations[0].Description, "at most 3 parts") || !strings.Contains(e.Violations[0].Description, "got 1000") {
		t.Errorf("violations %+v, want one on message.parts naming the limit", e.Violations)
	}
	// The server still serves, the same caller included.
	if task := sendTask(t, h, ctx, newRequest("done")); task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("after the refusal: task %v", task.Status.State)
	}
}

// gated is an agent whose "block" tasks work until gate closes; anything
// else goes to scripted.
func gated(gate <-chan struct{}) server.AgentFunc {
	return func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Message.Text() != "block" {
			return scripted(ctx, req, w)
		}
		if err := w.Working(ctx, "working"); err != nil {
			return err
		}
		if err := await(ctx, gate); err != nil {
			return err
		}
		return w.Complete(ctx, "done")
	}
}

func as(ctx context.Context, principal string) context.Context {
	return server.WithPrincipal(ctx, principal)
}

func TestMaxStreams(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	h := newHandler(t, nil, gated(gate), server.WithLimits(server.Limits{MaxStreamsPerPrincipal: 2, MaxStreams: 4}))
	ctx := v1(testCtx(t))
	alice, bob := as(ctx, "alice"), as(ctx, "bob")

	// Alice holds her maximum: a stream of a new task and a subscription.
	s1 := openStream(t, alice, h.SendStreamingMessage(alice, newRequest("block")))
	task := asTask(t, s1.Next())
	s2 := openStream(t, alice, h.SubscribeToTask(alice, &a2a.SubscribeToTaskRequest{ID: task.ID}))
	asTask(t, s2.Next())

	// (a) A third stream for Alice is refused, whichever operation.
	e := wantExhausted(t, openStream(t, alice, h.SendStreamingMessage(alice, newRequest("block"))).Err(), "maxStreamsPerPrincipal", 2)
	if e.Text() != "too many open streams for this caller (limit 2)" {
		t.Errorf("message %q", e.Text())
	}
	wantExhausted(t, openStream(t, alice, h.SubscribeToTask(alice, &a2a.SubscribeToTaskRequest{ID: task.ID})).Err(), "maxStreamsPerPrincipal", 2)

	// (b) Alice's other calls and Bob's streams are still served.
	if task := sendTask(t, h, alice, newRequest("done")); task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("Alice's SendMessage: task %v", task.Status.State)
	}
	if _, err := h.GetTask(alice, &a2a.GetTaskRequest{ID: task.ID}); err != nil {
		t.Errorf("Alice's GetTask: %v", err)
	}
	b1 := openStream(t, bob, h.SendStreamingMessage(bob, newRequest("block")))
	asTask(t, b1.Next())
	// Anonymous callers are not counted per caller, but in the total.
	a1 := openStream(t, ctx, h.SendStreamingMessage(ctx, newRequest("block")))
	asTask(t, a1.Next())
	e = wantExhausted(t, openStream(t, as(ctx, "carol"), h.SendStreamingMessage(as(ctx, "carol"), newRequest("block"))).Err(), "maxStreams", 4)
	if e.Text() != "too many open streams on this server (limit 4)" {
		t.Errorf("message %q", e.Text())
	}

	// (c) Closing one of Alice's streams gives her a slot back.
	s2.stop()
	s3 := openStream(t, alice, h.SubscribeToTask(alice, &a2a.SubscribeToTaskRequest{ID: task.ID}))
	asTask(t, s3.Next())

	// Streams that end with their task give their slots back too.
	close(gate)
	for _, s := range []*stream{s1, s3, b1, a1} {
		if st := states(s.Rest()); len(st) == 0 || st[len(st)-1] != a2a.TaskStateCompleted {
			t.Errorf("stream ended with states %v, want completed last", st)
		}
	}
	for i := range 2 {
		st := openStream(t, alice, h.SendStreamingMessage(alice, newRequest("done")))
		if got := states(st.Rest()); len(got) == 0 {
			t.Errorf("stream %d after the others ended: no status frames", i)
		}
	}
	// As do streams that fail before their first frame.
	for range 3 {
		bad := newRequest("done")
		bad.Message.Parts = nil
		wantErr(t, openStream(t, alice, h.SendStreamingMessage(alice, bad)).Err(), a2a.ErrInvalidParams)
	}
	hold := make([]*stream, 2)
	for i := range hold {
		hold[i] = openStream(t, alice, h.SendStreamingMessage(alice, newRequest("input")))
		asTask(t, hold[i].Next())
	}
	for _, s := range hold {
		s.Rest() // input-required ends the stream
	}
	asTask(t, openStream(t, alice, h.SendStreamingMessage(alice, newRequest("input"))).Next())
}

func TestMaxActiveTasksPerPrincipal(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	h := newHandler(t, nil, gated(gate), server.WithLimits(server.Limits{MaxActiveTasksPerPrincipal: 2}))
	released := make(chan struct{}, 100)
	server.OnLimitRelease(h, func() { released <- struct{}{} })
	ctx := v1(testCtx(t))
	alice, bob := as(ctx, "alice"), as(ctx, "bob")

	// A task that needs input no longer counts once its agent returns.
	waiting := sendTask(t, h, alice, newRequest("input"))
	if waiting.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task %v, want input-required", waiting.Status.State)
	}
	recv(t, released)

	var blocked []*a2a.Task
	for range 2 {
		blocked = append(blocked, sendTask(t, h, alice, immediate(newRequest("block"))))
	}
	_, err := h.SendMessage(alice, immediate(newRequest("block")))
	e := wantExhausted(t, err, "maxActiveTasksPerPrincipal", 2)
	if e.Text() != "too many tasks running for this caller (limit 2)" {
		t.Errorf("message %q", e.Text())
	}
	wantExhausted(t, openStream(t, alice, h.SendStreamingMessage(alice, newRequest("block"))).Err(), "maxActiveTasksPerPrincipal", 2)
	recv(t, released) // that stream's slot, given back as it ended
	if res, err := h.ListTasks(alice, &a2a.ListTasksRequest{}); err != nil || len(res.Tasks) != 3 {
		t.Errorf("Alice has %v tasks (%v), want 3: a refused message starts none", res, err)
	}

	// Continuing a task is not refused, and Bob is not affected.
	cont := sendTask(t, h, alice, immediate(continueRequest(waiting.ID, "block")))
	if cont.ID != waiting.ID || cont.Status.State != a2a.TaskStateWorking {
		t.Errorf("continued task %s in %v", cont.ID, cont.Status.State)
	}
	if res, err := h.SendMessage(bob, immediate(newRequest("block"))); err != nil {
		t.Errorf("Bob's SendMessage: %v", err)
	} else if _, ok := res.Result.(*a2a.Task); !ok {
		t.Errorf("Bob's SendMessage: %#v", res.Result)
	}
	if _, err := h.GetTask(alice, &a2a.GetTaskRequest{ID: blocked[0].ID}); err != nil {
		t.Errorf("Alice's GetTask: %v", err)
	}

	// A canceled task frees its slot: Alice is at 3 (two blocked and the
	// continuation), so one cancel is not enough and two are.
	for i, task := range blocked {
		if _, err := h.CancelTask(alice, &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
			t.Fatalf("CancelTask: %v", err)
		}
		recv(t, released)
		_, err := h.SendMessage(alice, immediate(newRequest("done")))
		if i == 0 {
			wantExhausted(t, err, "maxActiveTasksPerPrincipal", 2)
		} else if err != nil {
			t.Errorf("after two cancels: %v", err)
		}
	}
	// A completed task frees its slot.
	recv(t, released) // the "done" task just admitted
	close(gate)
	recv(t, released)
	recv(t, released) // Alice's continuation and Bob's task
	for range 2 {
		sendTask(t, h, alice, immediate(newRequest("block")))
	}
}

// TestMaxActiveTasks: the server-wide cap on running agent executions
// counts every caller, anonymous ones included; over it a new task is
// refused naming the limit, while continuing a task never is; a finished
// execution gives its slot back.
func TestMaxActiveTasks(t *testing.T) {
	t.Parallel()
	if got := server.DefaultLimits().MaxActiveTasks; got != server.DefaultMaxActiveTasks || got <= 0 {
		t.Errorf("DefaultLimits().MaxActiveTasks = %d, want DefaultMaxActiveTasks %d", got, server.DefaultMaxActiveTasks)
	}
	gate := make(chan struct{})
	h := newHandler(t, nil, gated(gate), server.WithLimits(server.Limits{MaxActiveTasks: 3}))
	released := make(chan struct{}, 100)
	server.OnLimitRelease(h, func() { released <- struct{}{} })
	if got := h.Limits().MaxActiveTasks; got != 3 {
		t.Errorf("Limits().MaxActiveTasks = %d, want 3", got)
	}
	ctx := v1(testCtx(t))
	alice, bob := as(ctx, "alice"), as(ctx, "bob")

	waiting := sendTask(t, h, alice, newRequest("input"))
	recv(t, released) // its execution ended at input-required
	// Alice, Bob and a caller the server cannot tell apart fill the server.
	var blocked []*a2a.Task
	for _, c := range []context.Context{alice, bob, ctx} {
		blocked = append(blocked, sendTask(t, h, c, immediate(newRequest("block"))))
	}
	for _, c := range []context.Context{as(ctx, "carol"), ctx, server.WithClientKey(ctx, "192.0.2.1")} {
		_, err := h.SendMessage(c, immediate(newRequest("block")))
		e := wantExhausted(t, err, "maxActiveTasks", 3)
		if e.Text() != "too many tasks running on this server (limit 3)" {
			t.Errorf("message %q", e.Text())
		}
	}
	wantExhausted(t, openStream(t, bob, h.SendStreamingMessage(bob, newRequest("block"))).Err(), "maxActiveTasks", 3)
	recv(t, released) // that stream's slot
	// Continuing a task is taken, and counts: now 4 run.
	if cont := sendTask(t, h, alice, immediate(continueRequest(waiting.ID, "block"))); cont.ID != waiting.ID {
		t.Errorf("continued task %s, want %s", cont.ID, waiting.ID)
	}
	// Cancelling one leaves 3 running, still full; a second frees a slot.
	for i, task := range blocked[:2] {
		c := []context.Context{alice, bob}[i]
		if _, err := h.CancelTask(c, &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
			t.Fatalf("CancelTask: %v", err)
		}
		recv(t, released)
		_, err := h.SendMessage(as(ctx, "carol"), immediate(newRequest("block")))
		if i == 0 {
			wantExhausted(t, err, "maxActiveTasks", 3)
		} else if err != nil {
			t.Errorf("after two cancels: %v", err)
		}
	}
	close(gate)
}

// TestMaxActiveTasksUnlimited: a negative MaxActiveTasks is no limit.
func TestMaxActiveTasksUnlimited(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	defer close(gate)
	h := newHandler(t, nil, gated(gate), server.WithLimits(server.Limits{MaxActiveTasks: -1, MaxActiveTasksPerPrincipal: -1}))
	ctx := v1(testCtx(t))
	for range server.DefaultMaxActiveTasksPerPrincipal + 5 {
		sendTask(t, h, ctx, immediate(newRequest("block")))
	}
}

// advance moves c forward by d.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	clock := newClock(0)
	h := newHandler(t, nil, scripted, server.WithClock(clock.Now), server.WithLimits(server.Limits{Rate: 2, Burst: 3}))
	ctx := v1(testCtx(t))
	alice := as(ctx, "alice")
	get := func(ctx context.Context) error {
		_, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: "none"})
		if errors.Is(err, a2a.ErrTaskNotFound) {
			return nil // served
		}
		return err
	}
	for i := range 3 {
		if err := get(alice); err != nil {
			t.Fatalf("call %d of the burst: %v", i+1, err)
		}
	}
	e := wantExhausted(t, get(alice), "rate", 2)
	if e.RetryAfter != 500*time.Millisecond {
		t.Errorf("RetryAfter = %v, want 500ms (one token at 2/s)", e.RetryAfter)
	}
	if e.Text() != "too many requests from this caller (limit 2 per second, burst 3)" {
		t.Errorf("message %q", e.Text())
	}
	// Every operation takes a token, streams included.
	wantExhausted(t, firstErr(h.SendStreamingMessage(alice, newRequest("done"))), "rate", 2)
	_, err := h.SendMessage(alice, newRequest("done"))
	wantExhausted(t, err, "rate", 2)

	// Others are served: another principal, another client key, and
	// callers the server cannot tell apart.
	if err := get(as(ctx, "bob")); err != nil {
		t.Errorf("Bob: %v", err)
	}
	for range 10 {
		if err := get(ctx); err != nil {
			t.Fatalf("anonymous caller without a key: %v", err)
		}
	}
	ip := server.WithClientKey(ctx, "192.0.2.1")
	for range 3 {
		if err := get(ip); err != nil {
			t.Fatalf("client key: %v", err)
		}
	}
	wantExhausted(t, get(ip), "rate", 2)
	// A principal is counted as itself whatever its client key.
	wantExhausted(t, get(server.WithClientKey(alice, "192.0.2.2")), "rate", 2)

	// Half a second later Alice has one token again, and only one.
	clock.advance(500 * time.Millisecond)
	if err := get(alice); err != nil {
		t.Errorf("after the retry delay: %v", err)
	}
	wantExhausted(t, get(alice), "rate", 2)
}

func TestRateBucketsOfIdleCallersAreForgotten(t *testing.T) {
	t.Parallel()
	clock := newClock(0)
	h := newHandler(t, nil, scripted, server.WithClock(clock.Now), server.WithLimits(server.Limits{Rate: 100, Burst: 1}))
	ctx := v1(testCtx(t))
	call := func(i int) {
		_, err := h.GetTask(as(ctx, "p"+strconv.Itoa(i)), &a2a.GetTaskRequest{ID: "none"})
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	const first, second = 3000, 5000
	for i := range first {
		call(i)
	}
	clock.advance(time.Second) // every bucket so far refills
	for i := first; i < first+second; i++ {
		call(i)
	}
	// Without eviction all 8000 would be kept; the first 3000 are idle.
	if n := server.RateBuckets(h); n > second {
		t.Errorf("%d buckets kept, want at most the %d recent callers", n, second)
	}
}
