package deployer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/internal/capture"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/sse"
	"github.com/goa2a/a2a/server"
)

// kitToken is the bearer token of the kit's recordings.
const kitToken = "dpl_test_7c1e4b"

// kitClock starts at start and moves 250 ms per reading, as the kit's clock
// does, so our timestamps equal the recorded ones.
func kitClock(start time.Time) func() time.Time {
	var mu sync.Mutex
	t := start
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(250 * time.Millisecond)
		return t
	}
}

var kitEpoch = time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)

// testServer is one deployer on 127.0.0.1.
type testServer struct {
	URL   string // where it listens
	agent *Agent
	h     *server.Handler
}

// startServer runs a deployer that calls itself baseURL ("" for the URL it
// listens at) with the given tokens (nil for the kit's token).
func startServer(t *testing.T, baseURL string, tokens map[string]string, opts ...server.Option) *testServer {
	t.Helper()
	return startSigned(t, baseURL, tokens, DemoSigner(), opts...)
}

// startServerWith runs a deployer at its own URL whose card signer is
// signer (nil: a new ES256 key, as NewServer).
func startServerWith(t *testing.T, signer *auth.CardSigner) *testServer {
	t.Helper()
	return startSigned(t, "", nil, signer)
}

// startSigned is startServer with the card signer given.
func startSigned(t *testing.T, baseURL string, tokens map[string]string, signer *auth.CardSigner, opts ...server.Option) *testServer {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil) // listens on 127.0.0.1
	url := "http://" + srv.Listener.Addr().String()
	if baseURL == "" {
		baseURL = url
	}
	if tokens == nil {
		tokens = map[string]string{kitToken: Principal}
	}
	agent := &Agent{}
	handler, h, err := newServer(baseURL, tokens, agent, signer, opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = handler
	srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("closing the handler: %v", err)
		}
		srv.Close()
	})
	return &testServer{URL: url, agent: agent, h: h}
}

// do sends a request with an optional bearer token; an "A2A-Version" header
// is added to /a2a requests.
func do(t *testing.T, method, url, token, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if strings.Contains(url, "/a2a/") {
		req.Header.Set("A2A-Version", a2a.ProtocolVersion)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readBody reads and closes the body of resp.
func readBody(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rpc calls a JSON-RPC method with the kit's token and returns its result.
func rpc(t *testing.T, base, method string, params any) json.RawMessage {
	t.Helper()
	p, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	resp := do(t, http.MethodPost, base+"/a2a/jsonrpc", kitToken, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":%s}`, method, p))
	body := readBody(t, resp)
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil || resp.StatusCode != http.StatusOK || env.Error != nil {
		t.Fatalf("%s: status %d: %s", method, resp.StatusCode, body)
	}
	return env.Result
}

// sendText builds SendMessage params for a user text message.
func sendText(text string) map[string]any {
	return map[string]any{"message": map[string]any{
		"messageId": fmt.Sprintf("m-%d", time.Now().UnixNano()),
		"role":      "ROLE_USER",
		"parts":     []any{map[string]any{"text": text}},
	}}
}

// frames reads the data of an SSE stream in the background, so a test can
// wait for a frame with a timeout, and tell a closed stream from an idle
// one.
type frames struct {
	ch   chan []byte
	err  error // set before ch is closed
	body io.Closer
}

func readFrames(t *testing.T, body io.ReadCloser) *frames {
	f := &frames{ch: make(chan []byte, 64), body: body}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); body.Close() })
	go func() {
		defer close(f.ch)
		r := sse.NewReader(body, 0)
		for {
			ev, err := r.Next()
			if err != nil {
				f.err = err
				return
			}
			select {
			case f.ch <- bytes.Clone(ev.Data):
			case <-stop:
				return
			}
		}
	}()
	return f
}

const waitFor = 10 * time.Second

// next returns the next frame, failing if the stream ends or stays idle.
func (f *frames) next(t *testing.T) []byte {
	t.Helper()
	select {
	case b, ok := <-f.ch:
		if !ok {
			t.Fatalf("the stream ended early: %v", f.err)
		}
		return b
	case <-time.After(waitFor):
		t.Fatal("no frame arrived")
	}
	return nil
}

// end checks that the stream closes with no further frame.
func (f *frames) end(t *testing.T) {
	t.Helper()
	select {
	case b, ok := <-f.ch:
		if ok {
			t.Fatalf("a frame after the end: %s", b)
		}
		if f.err != io.EOF {
			t.Fatalf("the stream ended with %v, want EOF", f.err)
		}
	case <-time.After(waitFor):
		t.Fatal("the stream stayed open")
	}
}

// idle checks that nothing arrives, nor does the stream close, for a
// moment. It cannot prove a stream stays open; the frames that follow on
// the same stream later do.
func (f *frames) idle(t *testing.T) {
	t.Helper()
	select {
	case b, ok := <-f.ch:
		if ok {
			t.Fatalf("unexpected frame: %s", b)
		}
		t.Fatalf("the stream closed: %v", f.err)
	case <-time.After(100 * time.Millisecond):
	}
}

// idMap pairs the recording's generated ids with ours.
type idMap = capture.IDs

func newIDMap() *idMap { return capture.NewIDs() }

func parseJSON(t *testing.T, what string, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, b)
	}
	return v
}

// same compares a recorded and our JSON text.
func same(t *testing.T, m *idMap, what string, want, got []byte) {
	t.Helper()
	if diffs := m.Compare("", parseJSON(t, what+" (recorded)", want), parseJSON(t, what+" (ours)", got)); len(diffs) > 0 {
		t.Errorf("%s differs from the recording:\n  %s\nours:\n%s", what, strings.Join(diffs, "\n  "), got)
	}
}
