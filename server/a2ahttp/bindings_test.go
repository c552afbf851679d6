package a2ahttp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// newServer starts a server whose ids and clock are deterministic, so two
// servers fed the same calls give the same answers.
func newServer(t *testing.T) string {
	t.Helper()
	var mu sync.Mutex
	n := 0
	clock := time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	// The same card on both servers, so cards compare equal.
	card := echo.Card("http://agent.test"+a2ahttp.JSONRPCPath, "http://agent.test"+a2ahttp.RESTPath)
	card.Capabilities.ExtendedAgentCard = a2a.Ptr(true)
	extended := *card
	extended.Description = "The extended echo card."
	h, err := server.NewHandler(card, echo.Agent{},
		server.WithIDGenerator(func() string { mu.Lock(); defer mu.Unlock(); n++; return fmt.Sprintf("id-%d", n) }),
		server.WithClock(func() time.Time { mu.Lock(); defer mu.Unlock(); clock = clock.Add(time.Second); return clock }),
		server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) { return &extended, nil }),
		// Page tokens are signed: the same key on both servers makes them compare equal.
		server.WithTokenKey([]byte("bindings-test-page-token-key-0123456789")),
	)
	if err != nil {
		t.Fatal(err)
	}
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Every call comes from one principal, as behind an authenticator:
	// GetExtendedAgentCard refuses anonymous callers.
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(server.WithPrincipal(r.Context(), "tester")))
	})
	srv.Start()
	t.Cleanup(func() { srv.Close(); _ = h.Close(context.Background()) })
	return base
}

// outcome is what one call returned, in binding-neutral form.
type outcome struct {
	result any        // decoded JSON result, or the list of stream frames
	code   a2a.Code   // error kind; CodeUnknown when the call succeeded
	err    *a2a.Error // the decoded error, if any
	status string     // HTTP+JSON only: the gRPC status name of the error body
}

func (o outcome) String() string {
	if o.err != nil {
		return "error " + o.err.Error()
	}
	b, _ := json.Marshal(o.result)
	return string(b)
}

type call struct {
	name    string
	method  string // JSON-RPC method
	params  string // JSON-RPC params
	verb    string // REST verb
	path    string // REST path and query, relative to /a2a/rest
	body    string // REST body
	stream  bool
	noVer   bool     // omit A2A-Version
	want    a2a.Code // expected error kind, CodeUnknown for success
	asserts func(t *testing.T, result any)
}

func do(t *testing.T, req *http.Request, noVer bool) *http.Response {
	t.Helper()
	if !noVer {
		req.Header.Set("A2A-Version", "1.0")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func sseFrames(t *testing.T, r io.Reader) []string {
	t.Helper()
	var frames []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			frames = append(frames, d)
		}
	}
	return frames
}

func wireErr(kind a2a.Code, message string, details []map[string]any) outcome {
	e := a2a.ErrorFromWire(kind, message, details)
	return outcome{code: e.Code, err: e}
}

func viaJSONRPC(t *testing.T, base string, c call) outcome {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + c.method + `","params":` + c.params + `}`
	req, _ := http.NewRequest(http.MethodPost, base+a2ahttp.JSONRPCPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp := do(t, req, c.noVer)
	defer resp.Body.Close()
	type rpc struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int              `json:"code"`
			Message string           `json:"message"`
			Data    []map[string]any `json:"data"`
		} `json:"error"`
	}
	decodeOne := func(b []byte) (any, *outcome) {
		var r rpc
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: bad JSON-RPC response %s", c.name, b)
		}
		if r.Error != nil {
			kind, _ := a2a.CodeFromJSONRPC(r.Error.Code)
			o := wireErr(kind, r.Error.Message, r.Error.Data)
			return nil, &o
		}
		var v any
		_ = json.Unmarshal(r.Result, &v)
		return v, nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var frames []any
		for _, f := range sseFrames(t, resp.Body) {
			v, errOut := decodeOne([]byte(f))
			if errOut != nil {
				return *errOut
			}
			frames = append(frames, v)
		}
		return outcome{result: frames}
	}
	b, _ := io.ReadAll(resp.Body)
	v, errOut := decodeOne(b)
	if errOut != nil {
		return *errOut
	}
	return outcome{result: v}
}

func viaREST(t *testing.T, base string, c call) outcome {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, _ := http.NewRequest(c.verb, base+a2ahttp.RESTPath+c.path, body)
	if c.body != "" {
		req.Header.Set("Content-Type", "application/a2a+json")
	}
	resp := do(t, req, c.noVer)
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var frames []any
		for _, f := range sseFrames(t, resp.Body) {
			var v any
			if err := json.Unmarshal([]byte(f), &v); err != nil {
				t.Fatalf("%s: bad frame %s", c.name, f)
			}
			frames = append(frames, v)
		}
		return outcome{result: frames}
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error struct {
				Code    int              `json:"code"`
				Status  string           `json:"status"`
				Message string           `json:"message"`
				Details []map[string]any `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(b, &e); err != nil || e.Error.Code != resp.StatusCode {
			t.Fatalf("%s: bad error body (status %d): %s", c.name, resp.StatusCode, b)
		}
		o := wireErr(a2a.CodeFromHTTPStatus(resp.StatusCode), e.Error.Message, e.Error.Details)
		o.status = e.Error.Status
		return o
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: bad JSON %s", c.name, b)
	}
	return outcome{result: v}
}

const hello = `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`

// TestBindingsAgree runs every operation, and its typical errors, over
// JSON-RPC against one server and over HTTP+JSON against an identical one,
// and asserts the same results and the same error kinds.
func TestBindingsAgree(t *testing.T) {
	calls := []call{
		{name: "SendMessage", method: "SendMessage", params: hello, verb: "POST", path: "/message:send", body: hello,
			asserts: func(t *testing.T, r any) {
				task := r.(map[string]any)["task"].(map[string]any)
				if task["id"] != "id-1" || task["status"].(map[string]any)["state"] != "TASK_STATE_COMPLETED" {
					t.Errorf("task %v", task)
				}
			}},
		{name: "SendStreamingMessage", method: "SendStreamingMessage", params: hello, verb: "POST", path: "/message:stream", body: hello, stream: true,
			asserts: func(t *testing.T, r any) {
				if n := len(r.([]any)); n != 4 {
					t.Errorf("%d frames, want 4", n)
				}
			}},
		{name: "GetTask", method: "GetTask", params: `{"id":"id-1","historyLength":0}`, verb: "GET", path: "/tasks/id-1?historyLength=0",
			asserts: func(t *testing.T, r any) {
				if _, ok := r.(map[string]any)["history"]; ok {
					t.Error("historyLength 0 returned history")
				}
			}},
		{name: "GetTask history 1", method: "GetTask", params: `{"id":"id-3","historyLength":1}`, verb: "GET", path: "/tasks/id-3?historyLength=1"},
		{name: "GetTask unknown", method: "GetTask", params: `{"id":"nope"}`, verb: "GET", path: "/tasks/nope", want: a2a.CodeTaskNotFound},
		{name: "GetTask negative history", method: "GetTask", params: `{"id":"id-1","historyLength":-1}`, verb: "GET", path: "/tasks/id-1?historyLength=-1", want: a2a.CodeInvalidParams},
		{name: "ListTasks page", method: "ListTasks", params: `{"pageSize":1}`, verb: "GET", path: "/tasks?pageSize=1",
			asserts: func(t *testing.T, r any) {
				m := r.(map[string]any)
				if m["totalSize"] != 2.0 || m["pageSize"] != 1.0 || m["nextPageToken"] == "" {
					t.Errorf("page %v", m)
				}
			}},
		{name: "ListTasks filter", method: "ListTasks", params: `{"contextId":"id-2","includeArtifacts":true,"status":"TASK_STATE_COMPLETED"}`, verb: "GET", path: "/tasks?contextId=id-2&includeArtifacts=true&status=TASK_STATE_COMPLETED",
			asserts: func(t *testing.T, r any) {
				m := r.(map[string]any)
				if m["totalSize"] != 1.0 || m["nextPageToken"] != "" {
					t.Errorf("page %v", m)
				}
			}},
		{name: "ListTasks bad page size", method: "ListTasks", params: `{"pageSize":101}`, verb: "GET", path: "/tasks?pageSize=101", want: a2a.CodeInvalidParams},
		{name: "ListTasks unknown status", method: "ListTasks", params: `{"status":"TASK_STATE_NAPPING"}`, verb: "GET", path: "/tasks?status=TASK_STATE_NAPPING", want: a2a.CodeInvalidParams},
		{name: "CancelTask finished", method: "CancelTask", params: `{"id":"id-1"}`, verb: "POST", path: "/tasks/id-1:cancel", body: `{}`, want: a2a.CodeTaskNotCancelable},
		{name: "CancelTask unknown", method: "CancelTask", params: `{"id":"nope"}`, verb: "POST", path: "/tasks/nope:cancel", want: a2a.CodeTaskNotFound},
		{name: "SubscribeToTask finished", method: "SubscribeToTask", params: `{"id":"id-1"}`, verb: "POST", path: "/tasks/id-1:subscribe", stream: true, want: a2a.CodeUnsupportedOperation},
		{name: "SubscribeToTask unknown", method: "SubscribeToTask", params: `{"id":"nope"}`, verb: "GET", path: "/tasks/nope:subscribe", stream: true, want: a2a.CodeTaskNotFound},
		{name: "CreatePushConfig", method: "CreateTaskPushNotificationConfig", params: `{"taskId":"id-1","id":"cfg-1","url":"http://127.0.0.1:9/hook","token":"t"}`,
			verb: "POST", path: "/tasks/id-1/pushNotificationConfigs", body: `{"id":"cfg-1","url":"http://127.0.0.1:9/hook","token":"t"}`},
		{name: "CreatePushConfig generated id", method: "CreateTaskPushNotificationConfig", params: `{"taskId":"id-1","url":"http://127.0.0.1:9/other"}`,
			verb: "POST", path: "/tasks/id-1/pushNotificationConfigs", body: `{"url":"http://127.0.0.1:9/other"}`},
		{name: "CreatePushConfig bad url", method: "CreateTaskPushNotificationConfig", params: `{"taskId":"id-1","url":"ftp://x"}`,
			verb: "POST", path: "/tasks/id-1/pushNotificationConfigs", body: `{"url":"ftp://x"}`, want: a2a.CodeInvalidParams},
		{name: "CreatePushConfig unknown task", method: "CreateTaskPushNotificationConfig", params: `{"taskId":"nope","url":"http://127.0.0.1:9/h"}`,
			verb: "POST", path: "/tasks/nope/pushNotificationConfigs", body: `{"url":"http://127.0.0.1:9/h"}`, want: a2a.CodeTaskNotFound},
		{name: "GetPushConfig", method: "GetTaskPushNotificationConfig", params: `{"taskId":"id-1","id":"cfg-1"}`, verb: "GET", path: "/tasks/id-1/pushNotificationConfigs/cfg-1"},
		{name: "ListPushConfigs", method: "ListTaskPushNotificationConfigs", params: `{"taskId":"id-1"}`, verb: "GET", path: "/tasks/id-1/pushNotificationConfigs",
			asserts: func(t *testing.T, r any) {
				if n := len(r.(map[string]any)["configs"].([]any)); n != 2 {
					t.Errorf("%d configs, want 2", n)
				}
			}},
		{name: "DeletePushConfig", method: "DeleteTaskPushNotificationConfig", params: `{"taskId":"id-1","id":"cfg-1"}`, verb: "DELETE", path: "/tasks/id-1/pushNotificationConfigs/cfg-1"},
		{name: "DeletePushConfig again", method: "DeleteTaskPushNotificationConfig", params: `{"taskId":"id-1","id":"cfg-1"}`, verb: "DELETE", path: "/tasks/id-1/pushNotificationConfigs/cfg-1"},
		{name: "GetPushConfig deleted", method: "GetTaskPushNotificationConfig", params: `{"taskId":"id-1","id":"cfg-1"}`, verb: "GET", path: "/tasks/id-1/pushNotificationConfigs/cfg-1", want: a2a.CodeTaskNotFound},
		{name: "GetExtendedAgentCard", method: "GetExtendedAgentCard", params: `{}`, verb: "GET", path: "/extendedAgentCard",
			asserts: func(t *testing.T, r any) {
				if r.(map[string]any)["description"] != "The extended echo card." {
					t.Errorf("card %v", r)
				}
			}},
		{name: "SendMessage unknown task", method: "SendMessage", params: `{"message":{"messageId":"m2","taskId":"nope","role":"ROLE_USER","parts":[{"text":"x"}]}}`,
			verb: "POST", path: "/message:send", body: `{"message":{"messageId":"m2","taskId":"nope","role":"ROLE_USER","parts":[{"text":"x"}]}}`, want: a2a.CodeTaskNotFound},
		{name: "SendMessage finished task", method: "SendMessage", params: `{"message":{"messageId":"m3","taskId":"id-1","role":"ROLE_USER","parts":[{"text":"x"}]}}`,
			verb: "POST", path: "/message:send", body: `{"message":{"messageId":"m3","taskId":"id-1","role":"ROLE_USER","parts":[{"text":"x"}]}}`, want: a2a.CodeUnsupportedOperation},
		{name: "SendMessage no messageId", method: "SendMessage", params: `{"message":{"role":"ROLE_USER","parts":[{"text":"x"}]}}`,
			verb: "POST", path: "/message:send", body: `{"message":{"role":"ROLE_USER","parts":[{"text":"x"}]}}`, want: a2a.CodeInvalidParams},
		{name: "SendMessage image", method: "SendMessage", params: `{"message":{"messageId":"m4","role":"ROLE_USER","parts":[{"url":"http://127.0.0.1/a.png","mediaType":"image/png"}]}}`,
			verb: "POST", path: "/message:send", body: `{"message":{"messageId":"m4","role":"ROLE_USER","parts":[{"url":"http://127.0.0.1/a.png","mediaType":"image/png"}]}}`, want: a2a.CodeContentTypeNotSupported},
		{name: "SendMessage without version", method: "SendMessage", params: hello, verb: "POST", path: "/message:send", body: hello, noVer: true, want: a2a.CodeVersionNotSupported},
		{name: "SendMessage malformed", method: "SendMessage", params: `{"message":`, verb: "POST", path: "/message:send", body: `{"message":`, want: a2a.CodeParseError},
	}
	rpcBase, restBase := newServer(t), newServer(t)
	for _, c := range calls {
		// Sequential on purpose: later calls use the tasks earlier ones made.
		t.Run(c.name, func(t *testing.T) {
			viaRPC := viaJSONRPC(t, rpcBase, c)
			viaRest := viaREST(t, restBase, c)
			// HTTP+JSON tells A2A errors apart by their ErrorInfo reason;
			// other kinds only by status, so ParseError and InvalidParams
			// both read as 400 INVALID_ARGUMENT there.
			restKind := viaRest.code == c.want ||
				(c.want.Reason() == "" && viaRest.code.Reason() == "" && viaRest.err != nil &&
					viaRest.err.Code.HTTPStatus() == c.want.HTTPStatus() && viaRest.status == c.want.GRPCStatusName())
			if viaRPC.code != c.want || !restKind {
				t.Fatalf("error kinds: JSON-RPC %v, HTTP+JSON %v, want %v\nJSON-RPC: %v\nHTTP+JSON: %v", viaRPC.code, viaRest.code, c.want, viaRPC, viaRest)
			}
			if c.want != a2a.CodeUnknown {
				if viaRPC.err.Code.Reason() != viaRest.err.Code.Reason() || !reflect.DeepEqual(viaRPC.err.Metadata, viaRest.err.Metadata) {
					t.Errorf("error details differ:\nJSON-RPC: %+v\nHTTP+JSON: %+v", viaRPC.err, viaRest.err)
				}
				return
			}
			if !reflect.DeepEqual(viaRPC.result, viaRest.result) {
				t.Fatalf("results differ:\nJSON-RPC:  %v\nHTTP+JSON: %v", viaRPC, viaRest)
			}
			if c.asserts != nil {
				c.asserts(t, viaRPC.result)
			}
		})
	}
}
