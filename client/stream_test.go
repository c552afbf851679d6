package client_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
)

// trackingTransport records whether response bodies were closed and
// request contexts ended.
type trackingTransport struct {
	mu     sync.Mutex
	bodies []*trackedBody
	reqs   []*http.Request
}

type trackedBody struct {
	io.ReadCloser
	mu     sync.Mutex
	closed bool
}

func (b *trackedBody) Close() error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return b.ReadCloser.Close()
}

func (b *trackedBody) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

func (tt *trackingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	b := &trackedBody{ReadCloser: resp.Body}
	resp.Body = b
	tt.mu.Lock()
	tt.bodies = append(tt.bodies, b)
	tt.reqs = append(tt.reqs, r)
	tt.mu.Unlock()
	return resp, nil
}

func (tt *trackingTransport) last() (*trackedBody, *http.Request) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.bodies[len(tt.bodies)-1], tt.reqs[len(tt.reqs)-1]
}

// TestStreamBreakReleases stops ranging over a stream after its first
// event: the response is closed, the request canceled, the server's
// handler returns, and no goroutine is left behind. It does not run in
// parallel, so that it can count goroutines.
func TestStreamBreakReleases(t *testing.T) {
	handlerDone := make(chan struct{}, 10)
	ts := newTestServer(t, serverOpts{wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r)
			if isStreamRequest(r) {
				handlerDone <- struct{}{}
			}
		})
	}})
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			tt := &trackingTransport{}
			hc := &http.Client{Transport: tt}
			c := newClient(t, ts.URL, b, client.WithHTTPClient(hc))
			// Warm up, then count.
			send(t, c, "hello", false)
			http.DefaultTransport.(*http.Transport).CloseIdleConnections()
			base := settledGoroutines()

			var task *a2a.Task
			for ev, err := range c.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("hang")}) {
				if err != nil {
					t.Fatal(err)
				}
				task = ev.(*a2a.Task)
				break
			}
			body, req := tt.last()
			if !body.isClosed() {
				t.Error("the response body is still open after break")
			}
			if req.Context().Err() == nil {
				t.Error("the request's context was not canceled after break")
			}
			select {
			case <-handlerDone:
			case <-time.After(5 * time.Second):
				t.Fatal("the server's stream handler did not return")
			}
			if _, err := c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
				t.Fatal(err)
			}
			http.DefaultTransport.(*http.Transport).CloseIdleConnections()
			deadline := time.Now().Add(5 * time.Second)
			for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > base {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines, %d before the stream:\n%s", n, base, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

// settledGoroutines waits briefly for the goroutine count to stop falling.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 50 {
		time.Sleep(5 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m >= n {
			return m
		}
		n = m
	}
	return n
}

// fakePeer serves a card with one interface of binding at base+"/a2a",
// and hands every other request to h.
func fakePeer(t *testing.T, binding string, edit func(*a2a.AgentCard), h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	card := testCard(base)
	card.SupportedInterfaces = []a2a.AgentInterface{{URL: base + "/a2a", ProtocolBinding: binding, ProtocolVersion: "1.0"}}
	if edit != nil {
		edit(card)
	}
	body, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == client.WellKnownCardPath {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
			return
		}
		h(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	return base
}

// sse writes a canned event stream.
func sse(frames string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, frames)
	}
}

const (
	statusFrame = `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`
	taskFrame   = `{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED"}}}`
)

// TestStreamFrames reads streams from fake peers: keep-alives, CRLF,
// multi-line data, snake_case members, error frames after the stream
// started, and plain answers where a stream was expected.
func TestStreamFrames(t *testing.T) {
	t.Parallel()
	rpc := func(result string) string { return `{"jsonrpc":"2.0","id":1,"result":` + result + `}` }
	cases := []struct {
		name    string
		binding string
		handler http.HandlerFunc
		want    []string
		wantErr a2a.Code // the kind of the last item; CodeUnknown for none
	}{
		{"REST frames", a2a.BindingHTTPJSON,
			sse(": keep-alive\r\n\r\nid: t1:1\r\ndata: " + taskFrame + "\r\n\r\nevent: message\ndata: {\"status_update\":\ndata: {\"task_id\":\"t1\",\"context_id\":\"c1\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}\n\n"),
			[]string{"task SUBMITTED", "status COMPLETED"}, a2a.CodeUnknown},
		{"REST error frame", a2a.BindingHTTPJSON,
			sse("data: " + taskFrame + "\n\nevent: error\ndata: {\"error\":{\"code\":503,\"status\":\"UNAVAILABLE\",\"message\":\"shutting down\"}}\n\n"),
			[]string{"task SUBMITTED"}, a2a.CodeUnavailable},
		{"REST error frame with reason", a2a.BindingHTTPJSON,
			sse("data: {\"error\":{\"code\":400,\"status\":\"FAILED_PRECONDITION\",\"message\":\"x\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.ErrorInfo\",\"reason\":\"UNSUPPORTED_OPERATION\",\"domain\":\"a2a-protocol.org\"}]}}\n\n"),
			nil, a2a.CodeUnsupportedOperation},
		{"REST malformed frame", a2a.BindingHTTPJSON,
			sse("data: {\"task\":\n\n"), nil, a2a.CodeInvalidAgentResponse},
		{"REST two members", a2a.BindingHTTPJSON,
			sse("data: {\"task\":{\"id\":\"t\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}},\"message\":{\"messageId\":\"m\",\"role\":\"ROLE_AGENT\",\"parts\":[{\"text\":\"x\"}]}}\n\n"),
			nil, a2a.CodeInvalidAgentResponse},
		{"REST plain JSON answer", a2a.BindingHTTPJSON,
			func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, statusFrame) },
			[]string{"status WORKING"}, a2a.CodeUnknown},
		{"JSON-RPC frames", a2a.BindingJSONRPC,
			sse("id: a\ndata: " + rpc(taskFrame) + "\n\n: ping\n\nid: b\ndata: " + rpc(statusFrame) + "\n\n"),
			[]string{"task SUBMITTED", "status WORKING"}, a2a.CodeUnknown},
		{"JSON-RPC error frame", a2a.BindingJSONRPC,
			sse("data: " + rpc(taskFrame) + "\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32603,\"message\":\"boom\"}}\n\n"),
			[]string{"task SUBMITTED"}, a2a.CodeInternal},
		{"JSON-RPC frame with another id", a2a.BindingJSONRPC,
			sse("data: " + strings.Replace(rpc(taskFrame), `"id":1`, `"id":7`, 1) + "\n\n"),
			nil, a2a.CodeInvalidAgentResponse},
		{"JSON-RPC plain error answer", a2a.BindingJSONRPC,
			func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32004,"message":"no streaming"}}`)
			},
			nil, a2a.CodeUnsupportedOperation},
		{"JSON-RPC plain result answer", a2a.BindingJSONRPC,
			func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, rpc(statusFrame)) },
			[]string{"status WORKING"}, a2a.CodeUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := fakePeer(t, tc.binding, nil, tc.handler)
			c, err := client.New(t.Context(), base)
			if err != nil {
				t.Fatal(err)
			}
			var evs []a2a.Event
			var last error
			for ev, err := range c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: "t1"}) {
				if err != nil {
					last = err
					continue
				}
				evs = append(evs, ev)
			}
			if got := describe(evs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("events = %q, want %q", got, tc.want)
			}
			switch {
			case tc.wantErr == a2a.CodeUnknown && last != nil:
				t.Errorf("unexpected error %v", last)
			case tc.wantErr != a2a.CodeUnknown && last == nil:
				t.Errorf("no error, want %v", tc.wantErr)
			case last != nil:
				if got := errorKind(t, last); got != tc.wantErr {
					t.Errorf("error %v, want kind %v", last, tc.wantErr)
				}
			}
		})
	}
}

// TestSubscribeFallsBackToGET talks to an HTTP+JSON server that routes
// only GET for :subscribe, as the proto binds it (REQUIREMENTS C11).
func TestSubscribeFallsBackToGET(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var methods []string
	base := fakePeer(t, a2a.BindingHTTPJSON, nil, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method+" "+r.URL.EscapedPath())
		mu.Unlock()
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		sse("data: "+taskFrame+"\n\n")(w, r)
	})
	c, err := client.New(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: "t1"}))
	if got := describe(evs); !reflect.DeepEqual(got, []string{"task SUBMITTED"}) {
		t.Errorf("events = %q", got)
	}
	want := []string{"POST /a2a/tasks/t1:subscribe", "GET /a2a/tasks/t1:subscribe"}
	if !reflect.DeepEqual(methods, want) {
		t.Errorf("requests = %q, want %q", methods, want)
	}
}

// TestStreamConnectionFailure checks that a stream cut off mid-frame ends
// with an error that is not an *a2a.Error.
func TestStreamConnectionFailure(t *testing.T) {
	t.Parallel()
	base := fakePeer(t, a2a.BindingHTTPJSON, nil, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+taskFrame+"\n\ndata: {\"sta")
		http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	})
	c, err := client.New(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	var last error
	n := 0
	for ev, err := range c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: "t1"}) {
		if ev != nil {
			n++
		}
		last = err
	}
	if n != 1 || last == nil || errors.As(last, new(*a2a.Error)) {
		t.Errorf("events %d, last error %v; want 1 event and a transport error", n, last)
	}
}
