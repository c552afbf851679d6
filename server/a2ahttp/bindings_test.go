package a2ahttp_test

import (
	"bufio"
	"bytes"
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

// agent is the echo agent, except that a message whose text is "wait"
// leaves its task waiting for input: a task that is not over, to
// subscribe to and cancel.
type agent struct{ echo.Agent }

// Execute implements [server.Agent].
func (a agent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	if req.Message.Text() == "wait" {
		return w.RequireInput(ctx, "more?")
	}
	return a.Agent.Execute(ctx, req, w)
}

// newHandler returns a Handler whose ids and clock are deterministic, so
// two Handlers fed the same calls give the same answers. It is closed at
// the end of the test, after the servers started later.
func newHandler(t *testing.T) *server.Handler {
	t.Helper()
	var mu sync.Mutex
	n := 0
	clock := time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
	// The same card on every server, so cards compare equal.
	card := echo.Card("http://agent.test"+a2ahttp.JSONRPCPath, "http://agent.test"+a2ahttp.RESTPath)
	card.Capabilities.ExtendedAgentCard = a2a.Ptr(true)
	extended := *card
	extended.Description = "The extended echo card."
	h, err := server.NewHandler(card, agent{},
		server.WithIDGenerator(func() string { mu.Lock(); defer mu.Unlock(); n++; return fmt.Sprintf("id-%d", n) }),
		server.WithClock(func() time.Time { mu.Lock(); defer mu.Unlock(); clock = clock.Add(time.Second); return clock }),
		server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) { return &extended, nil }),
		// Page tokens are signed: the same key on both servers makes them compare equal.
		server.WithTokenKey([]byte("bindings-test-page-token-key-0123456789")),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	return h
}

// newServer serves a deterministic Handler (see newHandler) over the two
// HTTP bindings and returns its base URL.
func newServer(t *testing.T) string {
	t.Helper()
	h := newHandler(t)
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
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
	t.Cleanup(srv.Close)
	return base
}

// outcome is what one call returned, in binding-neutral form.
type outcome struct {
	result any        // decoded JSON result, or the list of stream frames
	code   a2a.Code   // error kind; CodeUnknown when the call succeeded
	err    *a2a.Error // the decoded error, if any
	status string     // HTTP+JSON only: the gRPC status name of the error body
	mid    *outcome   // the outcome of the call's midStream
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
	// midStream, on a streaming call, is made over the same binding once
	// the first frame has arrived; its outcome is compared too.
	midStream *call

	// gRPC. Where the gRPC request or answer differs from the JSON ones,
	// because the proto cannot carry what JSON does, the call says so in
	// these fields; their uses say why.
	grpcParams string   // ProtoJSON request, when the params cannot be one
	grpcRaw    []byte   // request bytes, sent as they are
	grpcWant   a2a.Code // expected error kind, when not want
	// grpcAnswer returns the answer expected over gRPC from the JSON
	// bindings' one. It fails the test if the two would be the same: the
	// difference it describes must be real.
	grpcAnswer func(t *testing.T, result any) any
}

// httpClient bounds every call, streams included, so that a stream that
// does not end fails the test instead of hanging it.
var httpClient = &http.Client{Timeout: callTimeout}

func do(t *testing.T, req *http.Request, noVer bool) *http.Response {
	t.Helper()
	if !noVer {
		req.Header.Set("A2A-Version", "1.0")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// decodeJSON decodes an answer keeping numbers as they were written, so
// that no binding's answer is rounded before it is compared.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("data after the JSON value")
	}
	return v, nil
}

// sseFrames returns the data of every event of a stream. first, if not
// nil, is called once the first event has arrived, before the next one
// is read.
func sseFrames(t *testing.T, r io.Reader, first func()) []string {
	t.Helper()
	var frames []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			frames = append(frames, d)
			if len(frames) == 1 && first != nil {
				first()
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	return frames
}

// midStream returns the function sseFrames calls after the first frame
// of c, which makes c.midStream through via and stores its outcome in
// *mid; nil if c has none.
func midStream(t *testing.T, c call, mid **outcome, via func(t *testing.T, c call) outcome) func() {
	if c.midStream == nil {
		return nil
	}
	return func() {
		o := via(t, *c.midStream)
		*mid = &o
	}
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
		v, err := decodeJSON(r.Result)
		if err != nil {
			t.Fatalf("%s: bad JSON-RPC result %s", c.name, r.Result)
		}
		return v, nil
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var frames []any
		var mid *outcome
		next := midStream(t, c, &mid, func(t *testing.T, c call) outcome { return viaJSONRPC(t, base, c) })
		for _, f := range sseFrames(t, resp.Body, next) {
			v, errOut := decodeOne([]byte(f))
			if errOut != nil {
				return *errOut
			}
			frames = append(frames, v)
		}
		return outcome{result: frames, mid: mid}
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
		var mid *outcome
		next := midStream(t, c, &mid, func(t *testing.T, c call) outcome { return viaREST(t, base, c) })
		for _, f := range sseFrames(t, resp.Body, next) {
			v, err := decodeJSON([]byte(f))
			if err != nil {
				t.Fatalf("%s: bad frame %s", c.name, f)
			}
			frames = append(frames, v)
		}
		return outcome{result: frames, mid: mid}
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
	v, err := decodeJSON(b)
	if err != nil {
		t.Fatalf("%s: bad JSON %s", c.name, b)
	}
	return outcome{result: v}
}

const (
	hello = `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`
	// helloAgain is hello as a new message: the same messageId would be a
	// retry of hello, answered with its task.
	helloAgain = `{"message":{"messageId":"m7","role":"ROLE_USER","parts":[{"text":"hello"}]}}`
	// waitMsg makes a task that waits for input.
	waitMsg = `{"message":{"messageId":"m5","role":"ROLE_USER","parts":[{"text":"wait"}]}}`
	// bigData carries an integer a double cannot hold.
	bigData = `{"message":{"messageId":"m6","role":"ROLE_USER","parts":[{"data":{"n":9007199254740993,"small":12}}]}}`
)

// TestBindingsAgree runs every operation, and its typical errors, over
// JSON-RPC against one server, over HTTP+JSON against an identical one and
// over gRPC against a third, and asserts the same results and the same
// error kinds. Where gRPC cannot carry what the JSON bindings do, the call
// states the difference (grpcParams, grpcRaw, grpcWant, grpcAnswer).
func TestBindingsAgree(t *testing.T) {
	calls := []call{
		{name: "SendMessage", method: "SendMessage", params: hello, verb: "POST", path: "/message:send", body: hello,
			asserts: func(t *testing.T, r any) {
				task := r.(map[string]any)["task"].(map[string]any)
				if task["id"] != "id-1" || task["status"].(map[string]any)["state"] != "TASK_STATE_COMPLETED" {
					t.Errorf("task %v", task)
				}
			}},
		{name: "SendStreamingMessage", method: "SendStreamingMessage", params: helloAgain, verb: "POST", path: "/message:stream", body: helloAgain, stream: true,
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
		{name: "GetTask id too long", method: "GetTask", params: `{"id":"` + strings.Repeat("x", server.MaxIDLength+1) + `"}`, verb: "GET", path: "/tasks/" + strings.Repeat("x", server.MaxIDLength+1), want: a2a.CodeInvalidParams},
		{name: "SendMessage messageId too long", method: "SendMessage", params: `{"message":{"messageId":"` + strings.Repeat("m", server.MaxIDLength+1) + `","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, verb: "POST", path: "/message:send",
			body: `{"message":{"messageId":"` + strings.Repeat("m", server.MaxIDLength+1) + `","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, want: a2a.CodeInvalidParams},
		{name: "GetTask negative history", method: "GetTask", params: `{"id":"id-1","historyLength":-1}`, verb: "GET", path: "/tasks/id-1?historyLength=-1", want: a2a.CodeInvalidParams},
		{name: "ListTasks page", method: "ListTasks", params: `{"pageSize":1}`, verb: "GET", path: "/tasks?pageSize=1",
			asserts: func(t *testing.T, r any) {
				m := r.(map[string]any)
				if m["totalSize"] != json.Number("2") || m["pageSize"] != json.Number("1") || m["nextPageToken"] == "" {
					t.Errorf("page %v", m)
				}
			}},
		{name: "ListTasks filter", method: "ListTasks", params: `{"contextId":"id-2","includeArtifacts":true,"status":"TASK_STATE_COMPLETED"}`, verb: "GET", path: "/tasks?contextId=id-2&includeArtifacts=true&status=TASK_STATE_COMPLETED",
			asserts: func(t *testing.T, r any) {
				m := r.(map[string]any)
				if m["totalSize"] != json.Number("1") || m["nextPageToken"] != "" {
					t.Errorf("page %v", m)
				}
			}},
		{name: "ListTasks bad page size", method: "ListTasks", params: `{"pageSize":101}`, verb: "GET", path: "/tasks?pageSize=101", want: a2a.CodeInvalidParams},
		{name: "ListTasks unknown status", method: "ListTasks", params: `{"status":"TASK_STATE_NAPPING"}`, verb: "GET", path: "/tasks?status=TASK_STATE_NAPPING", want: a2a.CodeInvalidParams,
			// ProtoJSON has no unknown names: the gRPC form of a state the
			// server does not know is a number the proto does not name.
			grpcParams: `{"status":42}`},
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
		{name: "SendMessage malformed", method: "SendMessage", params: `{"message":`, verb: "POST", path: "/message:send", body: `{"message":`, want: a2a.CodeParseError,
			// The gRPC form of a body cut short: a message whose field 1
			// (message) claims 5 bytes and has 1.
			grpcRaw: []byte{0x0a, 0x05, 0x0a},
			// grpc-go decodes the request before the binding sees it and
			// answers any failure to with INTERNAL (rpc_util.go, recv), not
			// the INVALID_ARGUMENT of the JSON bindings: so over gRPC a
			// malformed request reads as a server error. (Were it
			// INVALID_ARGUMENT, it would still read as InvalidParams, not
			// ParseError: a kind without a reason has no ErrorInfo, and
			// gRPC, like HTTP+JSON, then tells kinds apart by code alone.)
			grpcWant: a2a.CodeInternal},
		{name: "SendMessage input required", method: "SendMessage", params: waitMsg, verb: "POST", path: "/message:send", body: waitMsg,
			asserts: func(t *testing.T, r any) {
				task := r.(map[string]any)["task"].(map[string]any)
				if task["id"] != "id-7" || task["status"].(map[string]any)["state"] != "TASK_STATE_INPUT_REQUIRED" {
					t.Errorf("task %v", task)
				}
			}},
		{name: "ListTasks no artifacts yet", method: "ListTasks", params: `{"status":"TASK_STATE_INPUT_REQUIRED","includeArtifacts":true}`,
			verb: "GET", path: "/tasks?status=TASK_STATE_INPUT_REQUIRED&includeArtifacts=true",
			asserts: func(t *testing.T, r any) {
				if m := r.(map[string]any); m["totalSize"] != json.Number("1") {
					t.Errorf("page %v", m)
				}
			},
			// Included, and none yet: the JSON bindings send
			// "artifacts": [], but a repeated field of the proto has no
			// presence, so over gRPC the member is absent.
			grpcAnswer: func(t *testing.T, r any) any {
				v, n := withoutEmptyArtifacts(r)
				if n != 1 {
					t.Errorf("%d empty artifact lists in the JSON answer, want 1: %v", n, r)
				}
				return v
			}},
		{name: "SubscribeToTask", method: "SubscribeToTask", params: `{"id":"id-7"}`, verb: "POST", path: "/tasks/id-7:subscribe", stream: true,
			// Once the task is shown, cancel it: the stream carries the
			// cancellation and ends.
			midStream: &call{name: "CancelTask", method: "CancelTask", params: `{"id":"id-7"}`, verb: "POST", path: "/tasks/id-7:cancel", body: `{}`,
				asserts: func(t *testing.T, r any) {
					if s := r.(map[string]any)["status"].(map[string]any)["state"]; s != "TASK_STATE_CANCELED" {
						t.Errorf("state %v", s)
					}
				}},
			asserts: func(t *testing.T, r any) {
				frames := r.([]any)
				if len(frames) != 2 {
					t.Fatalf("%d frames, want 2: %v", len(frames), frames)
				}
				if _, ok := frames[0].(map[string]any)["task"]; !ok {
					t.Errorf("first frame %v, want the task", frames[0])
				}
				up, ok := frames[1].(map[string]any)["statusUpdate"].(map[string]any)
				if !ok || up["status"].(map[string]any)["state"] != "TASK_STATE_CANCELED" {
					t.Errorf("second frame %v, want the cancellation", frames[1])
				}
			}},
		{name: "SendMessage big integer", method: "SendMessage", params: bigData, verb: "POST", path: "/message:send", body: bigData,
			asserts: func(t *testing.T, r any) {
				if !strings.Contains(fmt.Sprint(r), "9007199254740993") {
					t.Errorf("the data part's number lost its digits: %v", r)
				}
			},
			// Data parts are google.protobuf.Value in the proto, whose
			// numbers are doubles: 2^53+1 arrives as 2^53 (the gRPC request
			// already carries the rounded number).
			grpcAnswer: func(t *testing.T, r any) any {
				v := asDoubles(r)
				if reflect.DeepEqual(canonicalNumbers(v), canonicalNumbers(r)) {
					t.Errorf("no number of %v changes as a double", r)
				}
				return v
			}},
	}
	rpcBase, restBase, grpcConn := newServer(t), newServer(t), newGRPCServer(t)
	for _, c := range calls {
		// Sequential on purpose: later calls use the tasks earlier ones made.
		t.Run(c.name, func(t *testing.T) {
			viaRPC := viaJSONRPC(t, rpcBase, c)
			viaRest := viaREST(t, restBase, c)
			viaGrpc := viaGRPC(t, grpcConn, c)
			agree(t, c, viaRPC, viaRest, viaGrpc)
		})
	}
}

// agree asserts that the outcomes of c over the three bindings are the
// same: the same result, or errors of the same kind and reason, with the
// same metadata. Messages are not compared.
func agree(t *testing.T, c call, viaRPC, viaRest, viaGrpc outcome) {
	t.Helper()
	// HTTP+JSON tells A2A errors apart by their ErrorInfo reason;
	// other kinds only by status, so ParseError and InvalidParams
	// both read as 400 INVALID_ARGUMENT there.
	restKind := viaRest.code == c.want ||
		(c.want.Reason() == "" && viaRest.code.Reason() == "" && viaRest.err != nil &&
			viaRest.err.Code.HTTPStatus() == c.want.HTTPStatus() && viaRest.status == c.want.GRPCStatusName())
	// gRPC, too, has only the status code for the kinds without a
	// reason: the calls whose kind it cannot tell say so in grpcWant.
	grpcWant := c.want
	if c.grpcWant != a2a.CodeUnknown {
		grpcWant = c.grpcWant
	}
	if viaRPC.code != c.want || !restKind || viaGrpc.code != grpcWant {
		t.Fatalf("error kinds: JSON-RPC %v, HTTP+JSON %v, gRPC %v; want %v (gRPC %v)\nJSON-RPC: %v\nHTTP+JSON: %v\ngRPC: %v",
			viaRPC.code, viaRest.code, viaGrpc.code, c.want, grpcWant, viaRPC, viaRest, viaGrpc)
	}
	if c.want != a2a.CodeUnknown {
		if viaRPC.err.Code.Reason() != viaRest.err.Code.Reason() || !reflect.DeepEqual(viaRPC.err.Metadata, viaRest.err.Metadata) {
			t.Errorf("error details differ:\nJSON-RPC: %+v\nHTTP+JSON: %+v", viaRPC.err, viaRest.err)
		}
		// The reason and the ErrorInfo metadata travel in a gRPC status
		// as in the JSON bindings' errors, for every kind with a reason.
		// A kind without one has no ErrorInfo on any binding, hence no
		// metadata.
		if viaGrpc.err.Code.Reason() != viaRPC.err.Code.Reason() || len(viaGrpc.err.Metadata)+len(viaRPC.err.Metadata) > 0 && !reflect.DeepEqual(viaRPC.err.Metadata, viaGrpc.err.Metadata) {
			t.Errorf("error details differ:\nJSON-RPC: %+v\ngRPC: %+v", viaRPC.err, viaGrpc.err)
		}
		return
	}
	if !reflect.DeepEqual(viaRPC.result, viaRest.result) {
		t.Fatalf("results differ:\nJSON-RPC:  %v\nHTTP+JSON: %v", viaRPC, viaRest)
	}
	want := viaRPC.result
	if c.grpcAnswer != nil {
		want = c.grpcAnswer(t, want)
	}
	// Numbers are compared by value: the JSON encoder of the model and
	// ProtoJSON may spell the same number differently.
	if got, want := canonicalNumbers(viaGrpc.result), canonicalNumbers(want); !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("results differ:\ngRPC: %s\nwant: %s", g, w)
	}
	if c.asserts != nil {
		c.asserts(t, viaRPC.result)
	}
	if c.midStream != nil {
		if viaRPC.mid == nil || viaRest.mid == nil || viaGrpc.mid == nil {
			t.Fatalf("%s was not made during the stream (JSON-RPC %v, HTTP+JSON %v, gRPC %v)", c.midStream.name, viaRPC.mid != nil, viaRest.mid != nil, viaGrpc.mid != nil)
		}
		t.Run(c.midStream.name, func(t *testing.T) { agree(t, *c.midStream, *viaRPC.mid, *viaRest.mid, *viaGrpc.mid) })
	}
}
