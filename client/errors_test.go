package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
)

// answer returns a handler answering every request with status and body.
func answer(status int, contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

const errorInfo = `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t9"}}`

// TestErrorMapping reads the errors of peers other than ours: v1.0.0
// statuses, missing ErrorInfo, unknown routes, malformed answers.
func TestErrorMapping(t *testing.T) {
	t.Parallel()
	const rest, rpc = a2a.BindingHTTPJSON, a2a.BindingJSONRPC
	cases := []struct {
		name    string
		binding string
		handler http.HandlerFunc
		want    a2a.Code
		check   func(t *testing.T, e *a2a.Error)
	}{
		// A v1.0.0 peer: 409 for TaskNotCancelable, with no ErrorInfo
		// (REQUIREMENTS B13), in the google.rpc.Status form and bare.
		{"v1.0.0 409 status body", rest, answer(409, "application/json", `{"error":{"code":409,"status":"FAILED_PRECONDITION","message":"Task cannot be canceled"}}`), a2a.CodeTaskNotCancelable,
			func(t *testing.T, e *a2a.Error) {
				if e.Message != "Task cannot be canceled" {
					t.Errorf("message = %q", e.Message)
				}
			}},
		{"v1.0.0 409 no body", rest, answer(409, "", ""), a2a.CodeTaskNotCancelable, nil},
		{"v1.0.0 415", rest, answer(415, "application/json", `{"error":{"code":415,"status":"INVALID_ARGUMENT","message":"no"}}`), a2a.CodeContentTypeNotSupported, nil},
		{"v1.0.0 502", rest, answer(502, "", "bad gateway"), a2a.CodeInvalidAgentResponse, nil},
		// An unknown route is UNIMPLEMENTED with no ErrorInfo: never
		// TaskNotFound.
		{"unknown route", rest, answer(404, "application/a2a+json", `{"error":{"code":404,"status":"UNIMPLEMENTED","message":"no A2A operation"}}`), a2a.CodeMethodNotFound, nil},
		{"router 404", rest, answer(404, "text/plain", "404 page not found\n"), a2a.CodeMethodNotFound,
			func(t *testing.T, e *a2a.Error) {
				if !strings.Contains(e.Message, "404 page not found") {
					t.Errorf("message = %q", e.Message)
				}
			}},
		{"NOT_FOUND without reason", rest, answer(404, "application/json", `{"error":{"code":404,"status":"NOT_FOUND","message":"gone"}}`), a2a.CodeTaskNotFound, nil},
		{"FAILED_PRECONDITION without reason", rest, answer(400, "application/json", `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"?"}}`), a2a.CodeUnknown, nil},
		{"reason decides", rest, answer(400, "application/json", `{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"x","details":[`+strings.Replace(errorInfo, "TASK_NOT_FOUND", "TASK_NOT_CANCELABLE", 1)+`]}}`), a2a.CodeTaskNotCancelable, nil},
		{"REST bad request violations", rest, answer(400, "application/json", `{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"bad","details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"id","description":"required"}]}]}}`), a2a.CodeInvalidParams,
			func(t *testing.T, e *a2a.Error) {
				if len(e.Violations) != 1 || e.Violations[0].Field != "id" {
					t.Errorf("violations = %+v", e.Violations)
				}
			}},
		{"REST 401 from a gateway", rest, answer(401, "text/html", "<h1>login</h1>"), a2a.CodeUnauthenticated, nil},
		{"REST malformed success", rest, answer(200, "application/json", `{"id":`), a2a.CodeInvalidAgentResponse, nil},
		{"REST wrong shape", rest, answer(200, "application/json", `{"id":7}`), a2a.CodeInvalidAgentResponse, nil},
		{"JSON-RPC code only", rpc, answer(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"nope"}}`), a2a.CodeTaskNotCancelable, nil},
		{"JSON-RPC reason before code", rpc, answer(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x","data":[`+errorInfo+`]}}`), a2a.CodeTaskNotFound,
			func(t *testing.T, e *a2a.Error) {
				if e.Metadata["taskId"] != "t9" {
					t.Errorf("metadata = %v", e.Metadata)
				}
			}},
		{"JSON-RPC foreign ErrorInfo", rpc, answer(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"x","data":[`+strings.Replace(errorInfo, "a2a-protocol.org", "example.com", 1)+`]}}`), a2a.CodeTaskNotFound,
			func(t *testing.T, e *a2a.Error) {
				if len(e.Details) != 1 {
					t.Errorf("details = %v", e.Details)
				}
			}},
		{"JSON-RPC data object", rpc, answer(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x","data":`+errorInfo+`}}`), a2a.CodeTaskNotFound, nil},
		{"JSON-RPC unknown code", rpc, answer(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"custom"}}`), a2a.CodeUnknown, nil},
		{"JSON-RPC not JSON", rpc, answer(200, "text/html", "<html>"), a2a.CodeInvalidAgentResponse, nil},
		{"JSON-RPC no result", rpc, answer(200, "application/json", `{"jsonrpc":"2.0","id":1}`), a2a.CodeInvalidAgentResponse, nil},
		{"JSON-RPC null result", rpc, answer(200, "application/json", `{"jsonrpc":"2.0","id":1,"result":null}`), a2a.CodeInvalidAgentResponse, nil},
		{"JSON-RPC other id", rpc, answer(200, "application/json", `{"jsonrpc":"2.0","id":2,"result":{"id":"t","status":{"state":"TASK_STATE_WORKING"}}}`), a2a.CodeInvalidAgentResponse, nil},
		{"JSON-RPC 401 from a gateway", rpc, answer(401, "text/plain", "unauthorized"), a2a.CodeUnauthenticated, nil},
		// An authentication layer in front of the JSON-RPC endpoint
		// answers with a google.rpc.Status body, whose "error" member
		// must not pass for a JSON-RPC error (the kit's deployer does).
		{"JSON-RPC 401 status body", rpc, answer(401, "application/json", `{"error":{"code":401,"status":"UNAUTHENTICATED","message":"Send Authorization: Bearer <token>"}}`), a2a.CodeUnauthenticated,
			func(t *testing.T, e *a2a.Error) {
				if e.Message != "Send Authorization: Bearer <token>" {
					t.Errorf("message = %q", e.Message)
				}
			}},
		{"JSON-RPC error with 401", rpc, answer(401, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"who are you"}}`), a2a.CodeUnauthenticated, nil},
		{"JSON-RPC 503", rpc, answer(503, "", ""), a2a.CodeUnavailable, nil},
		// A server limit: our own code, with the limit and a retry delay.
		{"JSON-RPC resource exhausted", rpc, answer(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-31429,"message":"slow down","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"RESOURCE_EXHAUSTED","domain":"a2a-protocol.org","metadata":{"limit":"rate","value":"20"}},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.25s"}]}}`), a2a.CodeResourceExhausted,
			func(t *testing.T, e *a2a.Error) {
				if e.Metadata["limit"] != "rate" || e.RetryAfter != 250*time.Millisecond {
					t.Errorf("metadata %v, retry after %v", e.Metadata, e.RetryAfter)
				}
			}},
		{"JSON-RPC code -31429 only", rpc, answer(200, "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-31429,"message":"slow down"}}`), a2a.CodeResourceExhausted, nil},
		{"REST RESOURCE_EXHAUSTED without reason", rest, answer(429, "application/json", `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"slow down"}}`), a2a.CodeResourceExhausted, nil},
		{"REST 429 from a gateway", rest, answer(429, "text/plain", "slow down"), a2a.CodeResourceExhausted, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := client.New(t.Context(), fakePeer(t, tc.binding, nil, tc.handler))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: "t9"})
			var e *a2a.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (%T), want an *a2a.Error", err, err)
			}
			if e.Code != tc.want {
				t.Errorf("kind = %v (%v), want %v", e.Code, err, tc.want)
			}
			if tc.want == a2a.CodeTaskNotCancelable && !errors.Is(err, a2a.ErrTaskNotCancelable) {
				t.Errorf("errors.Is(err, ErrTaskNotCancelable) = false")
			}
			if tc.check != nil {
				tc.check(t, e)
			}
		})
	}
}

// TestLenientDecoding reads a snake_case answer with a quoted int32, as
// ProtoJSON parsers must accept.
func TestLenientDecoding(t *testing.T) {
	t.Parallel()
	base := fakePeer(t, a2a.BindingHTTPJSON, nil, answer(200, "application/a2a+json",
		`{"tasks":[{"id":"t1","context_id":"c1","status":{"state":"TASK_STATE_WORKING"}}],"next_page_token":"","page_size":"1","total_size":1,"extra":true}`))
	c, err := client.New(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.ListTasks(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tasks) != 1 || page.Tasks[0].ContextID != "c1" || page.PageSize != 1 {
		t.Errorf("page = %+v", page)
	}
}

// TestConnectionErrors checks that failures to reach the peer are not
// *a2a.Error values, and that cancellation shows through.
func TestConnectionErrors(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, serverOpts{})
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			down := httptest.NewServer(http.NotFoundHandler())
			card := testCard(down.URL)
			down.Close()
			c, err := client.NewFromCard(t.Context(), card, client.WithBindings(b))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t"})
			if err == nil || errors.As(err, new(*a2a.Error)) || !strings.HasPrefix(err.Error(), "client: GetTask: ") {
				t.Errorf("server down: %v", err)
			}
			for _, err := range c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: "t"}) {
				if err == nil || errors.As(err, new(*a2a.Error)) {
					t.Errorf("stream, server down: %v", err)
				}
			}

			live := newClient(t, ts.URL, b)
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			_, err = live.SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("hello")})
			if !errors.Is(err, context.Canceled) || errors.As(err, new(*a2a.Error)) {
				t.Errorf("canceled: %v", err)
			}
		})
	}
	if _, err := client.New(t.Context(), "http://127.0.0.1:1"); err == nil || errors.As(err, new(*a2a.Error)) {
		t.Errorf("New, nothing listening: %v", err)
	}
}
