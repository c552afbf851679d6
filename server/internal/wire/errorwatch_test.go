package wire_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/jsonrpc"
	"github.com/goa2a/a2a/server/rest"
)

// errorWatcher records the error a binding answers with.
type errorWatcher struct {
	http.ResponseWriter
	codes []a2a.Code
}

func (e *errorWatcher) A2AError(code a2a.Code)      { e.codes = append(e.codes, code) }
func (e *errorWatcher) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// TestErrorWatcher: both JSON bindings tell a server.ErrorWatcher, found by
// unwrapping, the error of a request no operation saw, and of one an
// operation answered.
func TestErrorWatcher(t *testing.T) {
	h, err := server.NewHandler(&a2a.AgentCard{Name: "t", Version: "1",
		SupportedInterfaces: []a2a.AgentInterface{{URL: "http://127.0.0.1/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}}},
		server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(t.Context())
	for _, tc := range []struct {
		name    string
		handler http.Handler
		method  string
		path    string
		body    string
		want    a2a.Code
	}{
		{"JSON-RPC parse error", jsonrpc.NewHandler(h), "POST", "/", `{"jsonrpc":`, a2a.CodeParseError},
		{"JSON-RPC unknown method", jsonrpc.NewHandler(h), "POST", "/", `{"jsonrpc":"2.0","id":1,"method":"Nope","params":{}}`, a2a.CodeMethodNotFound},
		{"JSON-RPC missing task", jsonrpc.NewHandler(h), "POST", "/", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, a2a.CodeTaskNotFound},
		{"HTTP+JSON unknown route", rest.NewHandler(h), "GET", "/nothing/here", "", a2a.CodeMethodNotFound},
		{"HTTP+JSON missing task", rest.NewHandler(h), "GET", "/tasks/x", "", a2a.CodeTaskNotFound},
	} {
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		// Two wrappers deep, as behind middleware.
		inner := &errorWatcher{ResponseWriter: httptest.NewRecorder()}
		outer := &errorWatcher{ResponseWriter: inner}
		tc.handler.ServeHTTP(outer, req)
		if len(outer.codes) != 1 || outer.codes[0] != tc.want || len(inner.codes) != 1 {
			t.Errorf("%s: watchers saw %v and %v, want %v once each", tc.name, outer.codes, inner.codes, tc.want)
		}
	}
}
