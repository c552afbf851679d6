package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
)

// stepsWant is what following a stepsAgent task of n chunks yields, from
// its submitted snapshot on.
func stepsWant(n int) []string {
	want := []string{"task SUBMITTED", "status WORKING", "artifact log line 1"}
	for i := 2; i <= n; i++ {
		want = append(want, fmt.Sprintf("artifact log+ line %d", i))
	}
	return append(want, "status COMPLETED")
}

// followSteps sends a message to a gated stepsAgent, follows the task, and
// opens the gate once the first event has arrived.
func followSteps(t *testing.T, c *client.Client, agent *stepsAgent) []a2a.Event {
	t.Helper()
	task := send(t, c, "go", true)
	var evs []a2a.Event
	for ev, err := range c.Follow(t.Context(), task.ID) {
		if err != nil {
			t.Fatalf("after %q: %v", describe(evs), err)
		}
		evs = append(evs, ev)
		if len(evs) == 1 {
			close(agent.start)
		}
	}
	return evs
}

// TestFollowResume drops the stream twice, mid-task; Follow reconnects
// with Last-Event-ID and our server resumes exactly after it, so every
// event arrives once, in order.
func TestFollowResume(t *testing.T) {
	t.Parallel()
	for _, abort := range []bool{false, true} {
		for _, b := range bindings {
			name := b + "/clean end"
			if abort {
				name = b + "/connection torn down"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				agent := &stepsAgent{start: make(chan struct{}), n: 6, pause: time.Millisecond}
				cut := &cutter{frames: []int{3, 2}, abort: abort}
				ts := newTestServer(t, serverOpts{agent: agent, wrap: cut.wrap})
				c := newClient(t, ts.URL, b, client.WithBackoff(time.Millisecond, 10*time.Millisecond))
				evs := followSteps(t, c, agent)
				if got, want := describe(evs), stepsWant(6); !reflect.DeepEqual(got, want) {
					t.Errorf("events:\n got %q\nwant %q", got, want)
				}
				taskID := evs[0].(*a2a.Task).ID
				// Frames 1-3 were the snapshot (seq 1), working (2) and
				// chunk 1 (3); then chunks 2 and 3 (4, 5).
				want := []string{"", taskID + ":3", taskID + ":5"}
				if got := cut.ids(); !reflect.DeepEqual(got, want) {
					t.Errorf("Last-Event-ID of each stream = %q, want %q", got, want)
				}
			})
		}
	}
}

// TestFollowSnapshotDedup drops the stream at a server that cannot resume
// (Last-Event-ID is stripped): it answers with a fresh snapshot, which
// Follow reduces to what is new.
func TestFollowSnapshotDedup(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		for _, delay := range []time.Duration{0, 15 * time.Millisecond} {
			t.Run(fmt.Sprintf("%s/reconnect after %v", b, delay), func(t *testing.T) {
				t.Parallel()
				// With a slow reconnection, several chunks (or the end)
				// happen while disconnected and one snapshot covers them.
				agent := &stepsAgent{start: make(chan struct{}), n: 8, pause: 3 * time.Millisecond}
				cut := &cutter{frames: []int{3, 1, 2}, strip: true, delay: delay}
				ts := newTestServer(t, serverOpts{agent: agent, wrap: cut.wrap})
				c := newClient(t, ts.URL, b, client.WithBackoff(time.Millisecond, 10*time.Millisecond))
				evs := followSteps(t, c, agent)
				checkFollowed(t, c, evs, 8)
				if len(cut.ids()) < 2 {
					t.Errorf("the stream was not cut: %d streams", len(cut.ids()))
				}
			})
		}
	}
}

// checkFollowed checks that the events fold into the final task, with each
// chunk once and in order, and end with its completion.
func checkFollowed(t *testing.T, c *client.Client, evs []a2a.Event, n int) {
	t.Helper()
	d := describe(evs)
	if d[0] != "task SUBMITTED" || d[len(d)-1] != "status COMPLETED" {
		t.Fatalf("events = %q", d)
	}
	var text strings.Builder
	for _, ev := range evs {
		if e, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			if !e.Append && text.Len() > 0 {
				t.Fatalf("artifact replaced instead of extended: %q", d)
			}
			text.WriteString(e.Artifact.Text())
		}
		if task, ok := ev.(*a2a.Task); ok && ev != evs[0] {
			t.Fatalf("a second task snapshot was yielded: %+v", task)
		}
	}
	var want strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if text.String() != want.String() {
		t.Errorf("artifact text = %q, want %q (events %q)", text.String(), want.String(), d)
	}
	final, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: evs[0].(*a2a.Task).ID})
	if err != nil {
		t.Fatal(err)
	}
	if final.Artifacts[0].Text() != want.String() {
		t.Errorf("server artifact = %q", final.Artifacts[0].Text())
	}
}

// TestFollowPolling follows a task of an agent whose card declares no
// streaming: Follow polls GetTask.
func TestFollowPolling(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			agent := &stepsAgent{start: make(chan struct{}), n: 5, pause: 3 * time.Millisecond}
			rec := &recorder{}
			ts := newTestServer(t, serverOpts{agent: agent, wrap: rec.wrap, card: func(c *a2a.AgentCard) { c.Capabilities.Streaming = nil }})
			c := newClient(t, ts.URL, b, client.WithBackoff(time.Millisecond, 4*time.Millisecond))
			evs := followSteps(t, c, agent)
			checkFollowed(t, c, evs, 5)
			for _, r := range rec.all() {
				if strings.Contains(r.path+r.body, "ubscribe") {
					t.Errorf("Follow subscribed to an agent without streaming: %s %s", r.path, r.body)
				}
			}
		})
	}
}

// TestFollowEnds checks the ends of Follow: a finished task, an
// input-required task, a task that goes through auth-required, an unknown
// task, and a canceled context.
func TestFollowEnds(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, serverOpts{})
	noStream := newTestServer(t, serverOpts{card: func(c *a2a.AgentCard) { c.Capabilities.Streaming = nil }})
	for _, b := range bindings {
		for _, srv := range []*testServer{ts, noStream} {
			c := newClient(t, srv.URL, b, client.WithBackoff(time.Millisecond, 5*time.Millisecond))
			name := b
			if srv == noStream {
				name += "/polling"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				done := send(t, c, "hello", false)
				if got := describe(collect(t, c.Follow(t.Context(), done.ID))); !reflect.DeepEqual(got, []string{"task COMPLETED"}) {
					t.Errorf("finished task: %q", got)
				}
				ask := send(t, c, "ask", false)
				if got := describe(collect(t, c.Follow(t.Context(), ask.ID))); !reflect.DeepEqual(got, []string{"task INPUT_REQUIRED"}) {
					t.Errorf("input-required task: %q", got)
				}
				auth := send(t, c, "auth", true)
				got := describe(collect(t, c.Follow(t.Context(), auth.ID)))
				if got[len(got)-1] != "status COMPLETED" || !strings.Contains(strings.Join(got, ","), "AUTH_REQUIRED") {
					t.Errorf("through auth-required: %q", got)
				}
				for _, err := range c.Follow(t.Context(), "missing") {
					if !errors.Is(err, a2a.ErrTaskNotFound) {
						t.Errorf("unknown task: %v", err)
					}
				}
				hang := send(t, c, "hang", true)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var last error
				for ev, err := range c.Follow(ctx, hang.ID) {
					if ev != nil {
						cancel()
					}
					last = err
				}
				if !errors.Is(last, context.Canceled) || errors.As(last, new(*a2a.Error)) {
					t.Errorf("canceled context: %v", last)
				}
				_, _ = c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: hang.ID})
			})
		}
	}
}

// TestSendAndFollow sends and follows, through a dropped stream when the
// agent streams, by polling when it does not.
func TestSendAndFollow(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b+"/resumed", func(t *testing.T) {
			t.Parallel()
			agent := &stepsAgent{start: make(chan struct{}), n: 4}
			close(agent.start)
			cut := &cutter{frames: []int{2}, abort: true}
			ts := newTestServer(t, serverOpts{agent: agent, wrap: cut.wrap})
			c := newClient(t, ts.URL, b, client.WithBackoff(time.Millisecond, 10*time.Millisecond))
			evs := collect(t, c.SendAndFollow(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("go")}))
			if got, want := describe(evs), stepsWant(4); !reflect.DeepEqual(got, want) {
				t.Errorf("events:\n got %q\nwant %q", got, want)
			}
			id := evs[0].(*a2a.Task).ID
			if got := cut.ids(); !reflect.DeepEqual(got, []string{"", id + ":2"}) {
				t.Errorf("Last-Event-IDs = %q", got)
			}
		})
		t.Run(b+"/polling", func(t *testing.T) {
			t.Parallel()
			ts := newTestServer(t, serverOpts{card: func(c *a2a.AgentCard) { c.Capabilities.Streaming = nil }})
			c := newClient(t, ts.URL, b, client.WithBackoff(time.Millisecond, 5*time.Millisecond))
			got := describe(collect(t, c.SendAndFollow(t.Context(), &a2a.SendMessageRequest{
				Message:       client.TextMessage("auth"),
				Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true},
			})))
			if got[len(got)-1] != "status COMPLETED" {
				t.Errorf("events = %q", got)
			}
			got = describe(collect(t, c.SendAndFollow(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("reply x")})))
			if !reflect.DeepEqual(got, []string{"message re: x"}) {
				t.Errorf("direct reply: %q", got)
			}
		})
	}
}

// TestFollowStaleCard uses a card that claims streaming for an agent that
// does not stream: Follow and SendAndFollow fall back to polling.
func TestFollowStaleCard(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, serverOpts{card: func(c *a2a.AgentCard) { c.Capabilities.Streaming = nil }})
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			stale := testCard(ts.URL) // declares streaming
			c, err := client.NewFromCard(t.Context(), stale, client.WithBindings(b), client.WithBackoff(time.Millisecond, 5*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			got := describe(collect(t, c.SendAndFollow(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("auth")})))
			// The blocking send returns at auth-required; polling goes on.
			if !reflect.DeepEqual(got, []string{"task AUTH_REQUIRED", "status COMPLETED"}) {
				t.Errorf("SendAndFollow: %q", got)
			}
			task := send(t, c, "auth", true)
			got = describe(collect(t, c.Follow(t.Context(), task.ID)))
			if got[len(got)-1] != "status COMPLETED" {
				t.Errorf("Follow: %q", got)
			}
		})
	}
}

// TestFollowRetryHint honours a stream's "retry:" before reconnecting.
func TestFollowRetryHint(t *testing.T) {
	t.Parallel()
	var (
		mu       sync.Mutex
		served   []time.Time
		lastIDs  []string
		finished = `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}`
	)
	base := fakePeer(t, a2a.BindingHTTPJSON, nil, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := len(served)
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		mu.Unlock()
		if n == 0 {
			sse("retry: 60\nid: t1:1\ndata: "+taskFrame+"\n\n")(w, r)
		} else {
			sse("id: t1:2\ndata: "+finished+"\n\n")(w, r)
		}
		mu.Lock()
		served = append(served, time.Now())
		mu.Unlock()
	})
	c, err := client.New(t.Context(), base, client.WithBackoff(time.Millisecond, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := describe(collect(t, c.Follow(t.Context(), "t1")))
	if !reflect.DeepEqual(got, []string{"task SUBMITTED", "status COMPLETED"}) {
		t.Errorf("events = %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(lastIDs, []string{"", "t1:1"}) {
		t.Errorf("Last-Event-IDs = %q", lastIDs)
	}
	if len(served) == 2 && served[1].Sub(served[0]) < 60*time.Millisecond {
		t.Errorf("reconnected after %v, before the 60ms retry hint", served[1].Sub(served[0]))
	}
}

// TestSendAndFollowNoTask: a send stream that ends before naming its task
// cannot be resumed, and the message is not sent twice.
func TestSendAndFollowNoTask(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	requests := 0
	base := fakePeer(t, a2a.BindingHTTPJSON, nil, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		mu.Unlock()
		sse(": nothing\n\n")(w, r)
	})
	c, err := client.New(t.Context(), base, client.WithBackoff(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for _, err := range c.SendAndFollow(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("x")}) {
		last = err
	}
	if !errors.Is(last, a2a.ErrInvalidAgentResponse) {
		t.Errorf("err = %v", last)
	}
	mu.Lock()
	defer mu.Unlock()
	if requests != 1 {
		t.Errorf("%d requests, want 1", requests)
	}
}

// TestReconnectHook: the hook of WithReconnectHook hears of each lost
// stream once, with the task and what ended the stream, however many
// attempts the reconnection takes; a stream that runs to the task's end
// is not reported.
func TestReconnectHook(t *testing.T) {
	t.Parallel()
	type drop struct {
		taskID string
		failed bool // the stream ended with an error, not cleanly
	}
	for _, abort := range []bool{false, true} {
		for _, b := range bindings {
			name := b + "/clean end"
			if abort {
				name = b + "/connection torn down"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				agent := &stepsAgent{start: make(chan struct{}), n: 6, pause: time.Millisecond}
				cut := &cutter{frames: []int{3, 2}, abort: abort}
				// The first attempt to reconnect after each cut is
				// refused as unavailable, and retried.
				var mu sync.Mutex
				streams, refused := 0, 0
				refuse := func(next http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if isStreamRequest(r) {
							mu.Lock()
							streams++
							no := streams == 2 || streams == 4
							if no {
								refused++
							}
							mu.Unlock()
							if no {
								http.Error(w, "try again", http.StatusServiceUnavailable)
								return
							}
						}
						next.ServeHTTP(w, r)
					})
				}
				ts := newTestServer(t, serverOpts{agent: agent, wrap: func(h http.Handler) http.Handler { return refuse(cut.wrap(h)) }})
				var drops []drop // appended on the ranging goroutine only
				c := newClient(t, ts.URL, b, client.WithBackoff(time.Millisecond, 10*time.Millisecond),
					client.WithReconnectHook(func(taskID string, err error) { drops = append(drops, drop{taskID, err != nil}) }))
				evs := followSteps(t, c, agent)
				if got, want := describe(evs), stepsWant(6); !reflect.DeepEqual(got, want) {
					t.Errorf("events:\n got %q\nwant %q", got, want)
				}
				id := evs[0].(*a2a.Task).ID
				want := []drop{{id, abort}, {id, abort}}
				if !reflect.DeepEqual(drops, want) {
					t.Errorf("hook calls = %+v, want %+v", drops, want)
				}
				mu.Lock()
				defer mu.Unlock()
				if refused != 2 {
					t.Errorf("%d reconnections refused, want 2 (streams %d)", refused, streams)
				}
			})
		}
	}
	t.Run("SendAndFollow", func(t *testing.T) {
		t.Parallel()
		agent := &stepsAgent{start: make(chan struct{}), n: 3}
		close(agent.start)
		cut := &cutter{frames: []int{2}, abort: true}
		ts := newTestServer(t, serverOpts{agent: agent, wrap: cut.wrap})
		var drops []drop
		c := newClient(t, ts.URL, a2a.BindingJSONRPC, client.WithBackoff(time.Millisecond, 10*time.Millisecond),
			client.WithReconnectHook(func(taskID string, err error) { drops = append(drops, drop{taskID, err != nil}) }))
		evs := collect(t, c.SendAndFollow(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("go")}))
		if want := []drop{{evs[0].(*a2a.Task).ID, true}}; !reflect.DeepEqual(drops, want) {
			t.Errorf("hook calls = %+v, want %+v", drops, want)
		}
		// An uncut stream is not reported.
		drops = nil
		collect(t, c.SendAndFollow(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("go")}))
		if len(drops) != 0 {
			t.Errorf("hook called for a stream that was not cut: %+v", drops)
		}
	})
}
