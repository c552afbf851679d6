package jsonrpc_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/jsonrpc"
)

// asPrincipal is an authenticator for tests: the X-Test-Principal header
// names the caller.
func asPrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.Header.Get("X-Test-Principal"); p != "" {
			r = r.WithContext(server.WithPrincipal(r.Context(), p))
		}
		next.ServeHTTP(w, r)
	})
}

func newLimited(t *testing.T, l server.Limits) http.Handler {
	t.Helper()
	fixed := time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
	h, err := server.NewHandler(echo.Card("http://127.0.0.1/a2a/jsonrpc", "http://127.0.0.1/a2a/rest"), echo.Agent{},
		server.WithLimits(l), server.WithClock(func() time.Time { return fixed }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(t.Context()) })
	return asPrincipal(jsonrpc.NewHandler(h))
}

const getMissing = `{"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id":"missing"}}`

func TestRateLimitWireForm(t *testing.T) {
	h := newLimited(t, server.Limits{Rate: 4, Burst: 1})
	alice := map[string]string{"X-Test-Principal": "alice"}
	if r := decode(t, post(t, h, getMissing, alice)); r.Error == nil || r.Error.Code != -32001 {
		t.Fatalf("first call: %+v, want TaskNotFound", r.Error)
	}
	rec := post(t, h, getMissing, alice)
	if rec.Code != http.StatusOK {
		t.Errorf("HTTP status %d, want 200 as for every JSON-RPC error", rec.Code)
	}
	r := decode(t, rec)
	if string(r.ID) != `"g"` || r.Error == nil || r.Error.Code != -31429 {
		t.Fatalf("id %s error %+v, want -31429", r.ID, r.Error)
	}
	if want := "too many requests from this caller (limit 4 per second, burst 1)"; r.Error.Message != want {
		t.Errorf("message %q, want %q", r.Error.Message, want)
	}
	var info, retry map[string]any
	for _, d := range r.Error.Data {
		switch d["@type"] {
		case "type.googleapis.com/google.rpc.ErrorInfo":
			info = d
		case "type.googleapis.com/google.rpc.RetryInfo":
			retry = d
		}
	}
	if info == nil || info["reason"] != "RESOURCE_EXHAUSTED" || info["domain"] != "a2a-protocol.org" {
		t.Errorf("ErrorInfo %v", info)
	} else if md, _ := info["metadata"].(map[string]any); md["limit"] != "rate" || md["value"] != "4" {
		t.Errorf("ErrorInfo metadata %v", md)
	}
	if retry == nil || retry["retryDelay"] != "0.25s" {
		t.Errorf("RetryInfo %v, want retryDelay 0.25s", retry)
	}
	// Another caller is served.
	if r := decode(t, post(t, h, getMissing, map[string]string{"X-Test-Principal": "bob"})); r.Error == nil || r.Error.Code != -32001 {
		t.Errorf("Bob: %+v, want TaskNotFound", r.Error)
	}
}

func nestedJSON(depth int) string {
	return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
}

func TestMaxDepth(t *testing.T) {
	h := newLimited(t, server.Limits{MaxDepth: 16})
	// The envelope, params and message take 3 levels.
	send := func(depth int) string {
		// A messageId of its own for each depth: the same id with other
		// content would be refused as a reused one.
		return `{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"m-deep-` + strconv.Itoa(depth) + `","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":` +
			nestedJSON(depth) + `}}}`
	}
	if r := decode(t, post(t, h, send(13), nil)); r.Error != nil {
		t.Fatalf("16 levels: %+v", r.Error)
	}
	rec := post(t, h, send(14), nil)
	r := decode(t, rec)
	if rec.Code != http.StatusOK || string(r.ID) != "null" || r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("17 levels: status %d id %s error %+v, want -32600", rec.Code, r.ID, r.Error)
	}
	if want := "JSON nested deeper than 16 levels"; r.Error.Message != want {
		t.Errorf("message %q, want %q", r.Error.Message, want)
	}
	// Far deeper than encoding/json allows, and still the same answer.
	if r := decode(t, post(t, h, send(20000), nil)); r.Error == nil || r.Error.Message != "JSON nested deeper than 16 levels" {
		t.Errorf("20003 levels: %+v", r.Error)
	}
	// The server still serves.
	if r := decode(t, post(t, h, sendHello, nil)); r.Error != nil {
		t.Errorf("after the refusals: %+v", r.Error)
	}
	// The default applies without WithLimits.
	_, plain := newEcho(t)
	if r := decode(t, post(t, plain, send(61), nil)); r.Error != nil {
		t.Errorf("64 levels with the default: %+v", r.Error)
	}
	if r := decode(t, post(t, plain, send(62), nil)); r.Error == nil || r.Error.Message != "JSON nested deeper than 64 levels" {
		t.Errorf("65 levels with the default: %+v", r.Error)
	}
}
