package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// bindings are the two bindings every operation is run over.
var bindings = []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON}

// testAgent answers by the text of the message:
//
//	"reply ..."  a direct message "re: ..."
//	"ask"        working, then input-required; the answer completes the
//	             task with an artifact "answer: <text>"
//	"hang"       working, then waits for the task to be canceled
//	"auth"       auth-required, then completes after 200ms
//	anything     working, an artifact "echo: <text>", completed
type testAgent struct{}

func (testAgent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	text := req.Message.Text()
	if req.Task != nil { // an answer to "ask"
		if err := w.Artifact(ctx, a2a.Artifact{ArtifactID: "answer", Parts: []a2a.Part{a2a.TextPart("answer: " + text)}}); err != nil {
			return err
		}
		return w.Complete(ctx, "")
	}
	switch {
	case strings.HasPrefix(text, "reply "):
		return w.Reply(ctx, a2a.TextPart("re: "+strings.TrimPrefix(text, "reply ")))
	case text == "ask":
		if err := w.Working(ctx, ""); err != nil {
			return err
		}
		return w.RequireInput(ctx, "what is the answer?")
	case text == "hang":
		if err := w.Working(ctx, ""); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	case text == "auth":
		if err := w.RequireAuth(ctx, "approve me"); err != nil {
			return err
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
		return w.Complete(ctx, "approved")
	}
	if err := w.Working(ctx, ""); err != nil {
		return err
	}
	if err := w.Artifact(ctx, a2a.Artifact{ArtifactID: "echo", Parts: []a2a.Part{a2a.TextPart("echo: " + text)}}); err != nil {
		return err
	}
	return w.Complete(ctx, "")
}

// stepsAgent submits the task, waits for start to be closed, then reports
// working, an artifact "log" in chunks "line 1\n" ... "line n\n", and
// completes.
type stepsAgent struct {
	start chan struct{}
	n     int
	pause time.Duration
}

func (s *stepsAgent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	if err := w.Submit(ctx); err != nil {
		return err
	}
	select {
	case <-s.start:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := w.Working(ctx, "working"); err != nil {
		return err
	}
	for i := 1; i <= s.n; i++ {
		art := a2a.Artifact{ArtifactID: "log", Name: "log.txt", Parts: []a2a.Part{a2a.TextPart(fmt.Sprintf("line %d\n", i))}}
		if err := w.ArtifactChunk(ctx, art, i > 1, i == s.n); err != nil {
			return err
		}
		time.Sleep(s.pause)
	}
	return w.Complete(ctx, "done")
}

// testCard is the card of a test server at base.
func testCard(base string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:                "test",
		Description:         "An agent for the client's tests.",
		SupportedInterfaces: a2ahttp.Interfaces(base),
		Version:             "1.0.0",
		Capabilities: a2a.AgentCapabilities{
			Streaming:         a2a.Ptr(true),
			PushNotifications: a2a.Ptr(true),
			ExtendedAgentCard: a2a.Ptr(true),
		},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "Echoes.", Tags: []string{"test"}}},
	}
}

// testServer is our server on 127.0.0.1.
type testServer struct {
	URL string
	h   *server.Handler
}

type serverOpts struct {
	agent server.Agent
	card  func(card *a2a.AgentCard)       // edits the card before use
	wrap  func(http.Handler) http.Handler // middleware around the mux
}

func newTestServer(t *testing.T, o serverOpts) *testServer {
	t.Helper()
	if o.agent == nil {
		o.agent = testAgent{}
	}
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	card := testCard(base)
	if o.card != nil {
		o.card(card)
	}
	extended := *card
	extended.Description = "The extended card."
	h, err := server.NewHandler(card, o.agent,
		server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) { return &extended, nil }))
	if err != nil {
		t.Fatal(err)
	}
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{KeepAlive: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Every call comes from one principal, as behind an authenticator:
	// GetExtendedAgentCard refuses anonymous callers.
	var handler http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(server.WithPrincipal(r.Context(), "tester")))
	})
	if o.wrap != nil {
		handler = o.wrap(handler)
	}
	srv.Config.Handler = handler
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		_ = h.Close(context.Background())
	})
	return &testServer{URL: base, h: h}
}

// newClient makes a client of ts that uses binding.
func newClient(t *testing.T, base, binding string, opts ...client.Option) *client.Client {
	t.Helper()
	opts = append([]client.Option{client.WithBindings(binding)}, opts...)
	c, err := client.New(t.Context(), base, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if c.Binding() != binding {
		t.Fatalf("Binding() = %q, want %q", c.Binding(), binding)
	}
	return c
}

// send sends text and returns the task the agent answers with.
func send(t *testing.T, c *client.Client, text string, returnImmediately bool) *a2a.Task {
	t.Helper()
	req := &a2a.SendMessageRequest{Message: client.TextMessage(text)}
	if returnImmediately {
		req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	}
	resp, err := c.SendMessage(t.Context(), req)
	if err != nil {
		t.Fatalf("SendMessage(%q): %v", text, err)
	}
	task, ok := resp.Result.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage(%q) = %T, want a task", text, resp.Result)
	}
	return task
}

// collect ranges over a sequence, failing the test on an error.
func collect(t *testing.T, seq func(func(a2a.Event, error) bool)) []a2a.Event {
	t.Helper()
	var out []a2a.Event
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		out = append(out, ev)
	}
	return out
}

// describe renders events compactly: "task SUBMITTED", "status WORKING",
// "artifact log+ line 2" (+ for append).
func describe(evs []a2a.Event) []string {
	var out []string
	for _, ev := range evs {
		switch e := ev.(type) {
		case *a2a.Task:
			out = append(out, "task "+shortState(e.Status.State))
		case *a2a.Message:
			out = append(out, "message "+e.Text())
		case *a2a.TaskStatusUpdateEvent:
			out = append(out, "status "+shortState(e.Status.State))
		case *a2a.TaskArtifactUpdateEvent:
			s := "artifact " + e.Artifact.ArtifactID
			if e.Append {
				s += "+"
			}
			out = append(out, s+" "+strings.TrimSpace(e.Artifact.Text()))
		}
	}
	return out
}

func shortState(s a2a.TaskState) string { return strings.TrimPrefix(s.String(), "TASK_STATE_") }

// errorKind returns the A2A kind of err, failing when it is not an
// *a2a.Error.
func errorKind(t *testing.T, err error) a2a.Code {
	t.Helper()
	var ae *a2a.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not an *a2a.Error", err, err)
	}
	return ae.Code
}

// recorder records the requests a server receives.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	method, path, query string
	header              http.Header
	body                string
}

func (rec *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recorded{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(body)})
		rec.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (rec *recorder) all() []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]recorded(nil), rec.reqs...)
}

// cutter cuts the first streams it serves after a number of frames each,
// to test resumption: with abort, the connection is torn down mid-response;
// without, the response ends cleanly as if the server had finished.
type cutter struct {
	frames []int // frames to let through on each successive stream
	abort  bool
	strip  bool          // drop Last-Event-ID, as a server that cannot resume
	delay  time.Duration // wait before serving each stream after the first

	mu           sync.Mutex
	streams      int
	lastEventIDs []string // the Last-Event-ID of each stream request
}

func (c *cutter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isStreamRequest(r) {
			next.ServeHTTP(w, r)
			return
		}
		c.mu.Lock()
		c.lastEventIDs = append(c.lastEventIDs, r.Header.Get("Last-Event-ID"))
		i := c.streams
		c.streams++
		c.mu.Unlock()
		if c.strip {
			r.Header.Del("Last-Event-ID")
		}
		if i > 0 && c.delay > 0 {
			time.Sleep(c.delay)
		}
		if i < len(c.frames) {
			w = &cutWriter{ResponseWriter: w, left: c.frames[i], abort: c.abort}
		}
		next.ServeHTTP(w, r)
	})
}

func (c *cutter) ids() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lastEventIDs...)
}

func isStreamRequest(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

var errCut = errors.New("test: stream cut")

type cutWriter struct {
	http.ResponseWriter
	left  int
	abort bool
}

func (w *cutWriter) Write(b []byte) (int, error) {
	if !bytes.Contains(b, []byte("data:")) {
		return w.ResponseWriter.Write(b)
	}
	if w.left <= 0 {
		if w.abort {
			panic(http.ErrAbortHandler) // net/http tears the connection down
		}
		return 0, errCut
	}
	w.left--
	return w.ResponseWriter.Write(b)
}

func (w *cutWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
