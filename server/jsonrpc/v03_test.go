package jsonrpc_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/jsonrpc"
)

// v03Agent is the echo agent, except for these texts: "reply" answers with
// a message, "auth" asks for authentication, "wait" works until canceled,
// and "gate" works until the test closes gate, then echoes.
type v03Agent struct{ gate chan struct{} }

func (a v03Agent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	switch req.Message.Text() {
	case "reply":
		return w.Reply(ctx, a2a.TextPart("replied"))
	case "auth":
		if err := w.Working(ctx, ""); err != nil {
			return err
		}
		return w.RequireAuth(ctx, "sign in")
	case "wait":
		if err := w.Working(ctx, ""); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	case "gate":
		if err := w.Working(ctx, ""); err != nil {
			return err
		}
		select {
		case <-a.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return echo.Agent{}.Execute(ctx, req, w)
}

// newV03 serves a Handler (with server.WithV03 when v03) over JSON-RPC on
// 127.0.0.1, every call by the principal "alice".
func newV03(t *testing.T, v03 bool) (*server.Handler, *httptest.Server, v03Agent) {
	t.Helper()
	card := echo.Card("http://127.0.0.1/a2a/jsonrpc", "http://127.0.0.1/a2a/rest")
	card.Capabilities.ExtendedAgentCard = a2a.Ptr(true)
	ext := *card
	ext.Name = "echo (extended)"
	opts := []server.Option{server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) { return &ext, nil })}
	if v03 {
		opts = append(opts, server.WithV03())
	}
	agent := v03Agent{gate: make(chan struct{})}
	h, err := server.NewHandler(card, agent, opts...)
	if err != nil {
		t.Fatal(err)
	}
	j := jsonrpc.NewHandler(h)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		j.ServeHTTP(w, r.WithContext(server.WithPrincipal(r.Context(), "alice")))
	}))
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = h.Close(ctx)
	})
	return h, srv, agent
}

// v03Response is a JSON-RPC response with a v0.3 error: data is an
// object, when there is any.
type v03Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// rpc03 posts a call without A2A-Version (a v0.3 call, A2A §3.6.2)
// unless header sets one, and returns the HTTP response with its body
// open.
func rpc03(t *testing.T, srv *httptest.Server, method, params string, header ...string) *http.Response {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"r1","method":%q,"params":%s}`, method, params)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// call03 makes a unary call and decodes its response.
func call03(t *testing.T, srv *httptest.Server, method, params string, header ...string) v03Response {
	t.Helper()
	resp := rpc03(t, srv, method, params, header...)
	var r v03Response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s: response is not JSON: %v", method, err)
	}
	if r.JSONRPC != "2.0" || string(r.ID) != `"r1"` {
		t.Fatalf("%s: envelope jsonrpc %q id %s", method, r.JSONRPC, r.ID)
	}
	return r
}

// result03 makes a unary call that must succeed and decodes its result.
func result03(t *testing.T, srv *httptest.Server, method, params string) map[string]any {
	t.Helper()
	r := call03(t, srv, method, params)
	if r.Error != nil {
		t.Fatalf("%s: error %+v", method, *r.Error)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Result, &m); err != nil {
		t.Fatalf("%s: result %s is not an object: %v", method, r.Result, err)
	}
	return m
}

// wantError03 makes a call that must fail with code, whose data, if any,
// is an object (v0.3's shape); it returns the data.
func wantError03(t *testing.T, srv *httptest.Server, code int, method, params string, header ...string) map[string]any {
	t.Helper()
	r := call03(t, srv, method, params, header...)
	if r.Error == nil || r.Error.Code != code || r.Error.Message == "" {
		t.Fatalf("%s %s: error %+v (result %s), want code %d", method, params, r.Error, r.Result, code)
	}
	var data map[string]any
	if len(r.Error.Data) > 0 {
		if err := json.Unmarshal(r.Error.Data, &data); err != nil {
			t.Fatalf("%s: error data %s is not an object", method, r.Error.Data)
		}
	}
	return data
}

// path reads a member of nested objects and arrays: path(m, "status", "state").
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func msg03(text string) string {
	return fmt.Sprintf(`{"messageId":"m-%d","role":"user","kind":"message","parts":[{"kind":"text","text":%q}]}`, time.Now().UnixNano(), text)
}

func send03(text, config string) string {
	if config == "" {
		return `{"message":` + msg03(text) + `}`
	}
	return `{"message":` + msg03(text) + `,"configuration":` + config + `}`
}

// TestV03Unary: with server.WithV03, every unary v0.3 method on a v0.3
// call answers in v0.3's shapes, and its errors are v0.3's.
func TestV03Unary(t *testing.T) {
	_, srv, _ := newV03(t, true)

	task := result03(t, srv, "message/send", send03("hello", ""))
	id, _ := task["id"].(string)
	if task["kind"] != "task" || path(task, "status", "state") != "completed" || id == "" {
		t.Fatalf("message/send result %v", task)
	}
	if path(task, "artifacts", 0, "parts", 0, "kind") != "text" || path(task, "artifacts", 0, "parts", 0, "text") != "echo: hello" {
		t.Errorf("artifacts %v", task["artifacts"])
	}
	if path(task, "history", 0, "kind") != "message" || path(task, "history", 0, "role") != "user" {
		t.Errorf("history %v", task["history"])
	}

	// The A2A-Version 0.3 header says the same as none.
	for _, header := range [][]string{nil, {"A2A-Version", "0.3"}, {"A2A-Version", "0.3.0"}} {
		r := call03(t, srv, "tasks/get", fmt.Sprintf(`{"id":%q,"historyLength":1}`, id), header...)
		var got map[string]any
		if r.Error != nil || json.Unmarshal(r.Result, &got) != nil {
			t.Fatalf("tasks/get with %v: %s %+v", header, r.Result, r.Error)
		}
		if got["kind"] != "task" || got["id"] != id || path(got, "status", "state") != "completed" {
			t.Errorf("tasks/get with %v: %v", header, got)
		}
		if h, _ := got["history"].([]any); len(h) != 1 {
			t.Errorf("tasks/get historyLength 1: history %v", got["history"])
		}
	}

	if m := result03(t, srv, "message/send", send03("reply", "")); m["kind"] != "message" || m["role"] != "agent" || path(m, "parts", 0, "text") != "replied" {
		t.Errorf("direct reply %v", m)
	}

	// Cancel a running task: a non-blocking send returns it working.
	running := result03(t, srv, "message/send", send03("wait", `{"blocking":false}`))
	if path(running, "status", "state") != "working" && path(running, "status", "state") != "submitted" {
		t.Fatalf("non-blocking send %v", running)
	}
	canceled := result03(t, srv, "tasks/cancel", fmt.Sprintf(`{"id":%q}`, running["id"]))
	if canceled["kind"] != "task" || path(canceled, "status", "state") != "canceled" {
		t.Errorf("tasks/cancel %v", canceled)
	}

	// Push configs: one set without an id gets the task's (as v0.3
	// servers give it), and a get naming none finds it.
	const hook = `{"url":"https://example.com/hook","token":"tok"}`
	set := result03(t, srv, "tasks/pushNotificationConfig/set", fmt.Sprintf(`{"taskId":%q,"pushNotificationConfig":%s}`, id, hook))
	if set["taskId"] != id || path(set, "pushNotificationConfig", "id") != id || path(set, "pushNotificationConfig", "url") != "https://example.com/hook" {
		t.Errorf("set %v", set)
	}
	result03(t, srv, "tasks/pushNotificationConfig/set", fmt.Sprintf(`{"taskId":%q,"pushNotificationConfig":{"id":"second","url":"https://example.com/2"}}`, id))
	if got := result03(t, srv, "tasks/pushNotificationConfig/get", fmt.Sprintf(`{"id":%q}`, id)); path(got, "pushNotificationConfig", "token") != "tok" {
		t.Errorf("get without a config id: %v", got)
	}
	if got := result03(t, srv, "tasks/pushNotificationConfig/get", fmt.Sprintf(`{"id":%q,"pushNotificationConfigId":"second"}`, id)); path(got, "pushNotificationConfig", "url") != "https://example.com/2" {
		t.Errorf("get second: %v", got)
	}
	list := func() []any {
		r := call03(t, srv, "tasks/pushNotificationConfig/list", fmt.Sprintf(`{"id":%q}`, id))
		var cs []any
		if r.Error != nil || json.Unmarshal(r.Result, &cs) != nil {
			t.Fatalf("list: %s %+v (want an array)", r.Result, r.Error)
		}
		return cs
	}
	if cs := list(); len(cs) != 2 || path(cs, 0, "taskId") != id {
		t.Errorf("list %v", cs)
	}
	if r := call03(t, srv, "tasks/pushNotificationConfig/delete", fmt.Sprintf(`{"id":%q,"pushNotificationConfigId":"second"}`, id)); r.Error != nil || string(r.Result) != "null" {
		t.Errorf("delete: result %s error %+v, want null", r.Result, r.Error)
	}
	if cs := list(); len(cs) != 1 {
		t.Errorf("list after delete %v", cs)
	}

	// So does a config given with message/send.
	withHook := result03(t, srv, "message/send", send03("hello", `{"pushNotificationConfig":{"url":"https://example.com/send"}}`))
	if got := result03(t, srv, "tasks/pushNotificationConfig/get", fmt.Sprintf(`{"id":%q}`, withHook["id"])); path(got, "pushNotificationConfig", "url") != "https://example.com/send" || path(got, "pushNotificationConfig", "id") != withHook["id"] {
		t.Errorf("config of message/send: %v", got)
	}

	card := result03(t, srv, "agent/getAuthenticatedExtendedCard", `null`)
	if card["name"] != "echo (extended)" || card["protocolVersion"] != "0.3.0" || card["url"] != "http://127.0.0.1/a2a/jsonrpc" || card["preferredTransport"] != "JSONRPC" {
		t.Errorf("extended card %v", card)
	}
	if card["supportedInterfaces"] == nil {
		t.Errorf("extended card is not dual: %v", card)
	}

	// Errors, with v0.3's codes and an object (or no) data.
	wantError03(t, srv, -32001, "tasks/get", `{"id":"no-such-task"}`)
	wantError03(t, srv, -32002, "tasks/cancel", fmt.Sprintf(`{"id":%q}`, id))
	wantError03(t, srv, -32602, "message/send", `{}`)
	wantError03(t, srv, -32602, "message/send", `{"message":{"messageId":"m","role":"ROLE_USER","kind":"message","parts":[]}}`)
	wantError03(t, srv, -32602, "tasks/get", `{"id":5}`)
	wantError03(t, srv, -32601, "tasks/list", `{}`)
	// v1.0 shapes with a v0.3 version are not served: the client asked for
	// v0.3, and SendMessage is no v0.3 method.
	// The answer has v1.0's shape: such a caller is a v1.0 client that
	// left the header out.
	if r := call03(t, srv, "SendMessage", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`); r.Error == nil || r.Error.Code != -32009 {
		t.Errorf("SendMessage without A2A-Version: %s %+v, want -32009", r.Result, r.Error)
	}
	// Under A2A-Version 1.0, a v0.3 name is no method (A2A §9.1).
	wantError03(t, srv, -32601, "message/send", send03("hello", ""), "A2A-Version", "1.0")
}

// frame03 is one SSE frame of a v0.3 stream.
type frame03 struct {
	id     string
	result map[string]any
}

// stream03 reads a v0.3 stream to its end (the server must end it; the
// request's deadline fails the test otherwise). Each frame must be a
// JSON-RPC response with the call's id and no error.
func stream03(t *testing.T, resp *http.Response) []frame03 {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q, want a stream", ct)
	}
	var frames []frame03
	var id string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "id: "); ok {
			id = v
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var r v03Response
		if err := json.Unmarshal([]byte(data), &r); err != nil || r.JSONRPC != "2.0" || string(r.ID) != `"r1"` || r.Error != nil {
			t.Fatalf("frame %s: %v", data, err)
		}
		var m map[string]any
		if err := json.Unmarshal(r.Result, &m); err != nil {
			t.Fatalf("frame result %s", r.Result)
		}
		frames = append(frames, frame03{id, m})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the stream: %v (it did not end)", err)
	}
	return frames
}

// describe writes frames as kind[/state][/final] for comparison.
func describe(frames []frame03) string {
	var out []string
	for _, f := range frames {
		s, _ := f.result["kind"].(string)
		if st, ok := path(f.result, "status", "state").(string); ok {
			s += "/" + st
		}
		if f.result["kind"] == "status-update" {
			s += fmt.Sprintf("/final=%v", f.result["final"])
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// TestV03Stream: message/stream and tasks/resubscribe stream v0.3 events
// (kind, lower-case states, final) and end after the one with final true,
// also at auth-required, where a v1.0 stream stays open.
func TestV03Stream(t *testing.T) {
	_, srv, agent := newV03(t, true)

	frames := stream03(t, rpc03(t, srv, "message/stream", send03("hello", "")))
	want := "task/submitted status-update/working/final=false artifact-update status-update/completed/final=true"
	if got := describe(frames); got != want {
		t.Errorf("message/stream frames %q, want %q", got, want)
	}
	if len(frames) > 0 && !strings.HasSuffix(frames[len(frames)-1].id, ":4") {
		t.Errorf("last SSE id %q, want the task's seq 4", frames[len(frames)-1].id)
	}
	if len(frames) == 4 && (path(frames[2].result, "artifact", "parts", 0, "kind") != "text" || frames[2].result["lastChunk"] != true) {
		t.Errorf("artifact-update %v", frames[2].result)
	}

	frames = stream03(t, rpc03(t, srv, "message/stream", send03("auth", "")))
	if got, want := describe(frames), "task/submitted status-update/working/final=false status-update/auth-required/final=true"; got != want {
		t.Errorf("auth-required stream %q, want %q", got, want)
	}

	if got := describe(stream03(t, rpc03(t, srv, "message/stream", send03("reply", "")))); got != "message" {
		t.Errorf("direct reply stream %q", got)
	}

	// Resubscribe to a running task: the snapshot, then the events to
	// the final one.
	task := result03(t, srv, "message/send", send03("gate", `{"blocking":false}`))
	resp := rpc03(t, srv, "tasks/resubscribe", fmt.Sprintf(`{"id":%q}`, task["id"]))
	close(agent.gate)
	frames = stream03(t, resp)
	if got := describe(frames); !strings.HasPrefix(got, "task/working") || !strings.HasSuffix(got, "artifact-update status-update/completed/final=true") {
		t.Errorf("tasks/resubscribe frames %q", got)
	}
	// A finished task cannot be subscribed to (A2A §3.1.6): the same
	// error as v1.0's, in v0.3's shape.
	wantError03(t, srv, -32004, "tasks/resubscribe", fmt.Sprintf(`{"id":%q}`, task["id"]))

	// An error before the first frame is a v0.3 error response.
	wantError03(t, srv, -32001, "tasks/resubscribe", `{"id":"no-such-task"}`)
}

// TestV03Refused: without server.WithV03, a v0.3 call of a v0.3 method is
// VersionNotSupported naming 1.0, not MethodNotFound.
func TestV03Refused(t *testing.T) {
	_, srv, _ := newV03(t, false)
	methods := []string{"message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe",
		"tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/list",
		"tasks/pushNotificationConfig/delete", "agent/getAuthenticatedExtendedCard"}
	for _, m := range methods {
		for _, header := range [][]string{nil, {"A2A-Version", "0.3"}} {
			r := call03(t, srv, m, `{"id":"x"}`, header...)
			if r.Error == nil || r.Error.Code != -32009 {
				t.Fatalf("%s with %v: %s %+v, want -32009", m, header, r.Result, r.Error)
			}
			if !strings.Contains(string(r.Error.Data), `"supported":"1.0"`) {
				t.Errorf("%s with %v: data %s does not name 1.0 as supported", m, header, r.Error.Data)
			}
		}
	}
	// v1.0 calls are served as before.
	if r := call03(t, srv, "GetTask", `{"id":"x"}`, "A2A-Version", "1.0"); r.Error == nil || r.Error.Code != -32001 {
		t.Errorf("GetTask: %+v, want TaskNotFound", r.Error)
	}
}

// TestV03StreamUndetached: a stream that stays on its handler (a
// ResponseWriter that cannot be hijacked, as under HTTP/2) ends after
// final too.
func TestV03StreamUndetached(t *testing.T) {
	h, err := server.NewHandler(echo.Card("http://127.0.0.1/a2a/jsonrpc", "http://127.0.0.1/a2a/rest"), v03Agent{}, server.WithV03())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	body := `{"jsonrpc":"2.0","id":"r1","method":"message/stream","params":` + send03("auth", "") + `}`
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	rec := httptest.NewRecorder()
	jsonrpc.NewHandler(h).ServeHTTP(rec, req) // returns only when the stream has ended
	var kinds []string
	for line := range strings.Lines(rec.Body.String()) {
		data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
		if !ok {
			continue
		}
		var r v03Response
		var m map[string]any
		if json.Unmarshal([]byte(data), &r) != nil || json.Unmarshal(r.Result, &m) != nil {
			t.Fatalf("frame %s", data)
		}
		kinds = append(kinds, describe([]frame03{{result: m}}))
	}
	if got, want := strings.Join(kinds, " "), "task/submitted status-update/working/final=false status-update/auth-required/final=true"; got != want {
		t.Errorf("frames %q, want %q", got, want)
	}
}
