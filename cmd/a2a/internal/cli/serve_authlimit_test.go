package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/goa2a/a2a/auth"
)

// TestServeAuthFailureLimit: in a2a serve, failed API keys from a remote
// address lead to 429 on both bindings; each failure is in the request
// log without the key; loopback callers are not limited.
func TestServeAuthFailureLimit(t *testing.T) {
	t.Parallel()
	const key, badKey = "alice-key-0123456789", "bad-key-0123456789abcdef"
	// At debug level, for the request lines: they must not hold the key either.
	ts := startServe(t, "--store", "memory", "--api-key", "alice="+key, "--max-auth-failures", "2", "--log-level", "debug")
	h := ts.run.srv.HTTPHandler()
	call := func(method, path, key, body string) *httptest.ResponseRecorder {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req := httptest.NewRequest(method, path, rd)
		req.RemoteAddr = "203.0.113.5:4321"
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(auth.APIKeyHeader, key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for i := range 2 {
		if rec := call("GET", "/a2a/rest/tasks/missing", badKey, ""); rec.Code != 401 {
			t.Fatalf("failure %d: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	// A token comes back each second: whatever the machine's speed, a run
	// of failures soon meets the limit.
	var rec *httptest.ResponseRecorder
	for range 1000 {
		if rec = call("POST", "/a2a/jsonrpc", badKey, getTaskJSONRPC("missing")); rec.Code != 401 {
			break
		}
	}
	// The 429 itself, its Retry-After and body, are package serve's to
	// test (TestAuthFailureLimit there).
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" || !strings.Contains(rec.Body.String(), "maxAuthFailures") {
		t.Fatalf("after the limit: %d (Retry-After %q) %s, want 429 naming maxAuthFailures", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	if !strings.Contains(ts.stderr.String(), "status=401") || strings.Contains(ts.stderr.String(), badKey) {
		t.Errorf("log: want the refusals (status=401) and no key:\n%s", ts.stderr.String())
	}
	if !strings.Contains(ts.stderr.String(), "client=203.0.113.5") {
		t.Errorf("log names no limited address:\n%s", ts.stderr.String())
	}
	// Loopback callers (the test's real connections) are never limited.
	for range 5 {
		if resp, body := rawCall(t, "GET", ts.base+"/a2a/rest/tasks/missing", badKey, ""); resp.StatusCode != 401 {
			t.Fatalf("loopback: %d %s", resp.StatusCode, body)
		}
	}
	if resp, body := rawCall(t, "GET", ts.base+"/a2a/rest/tasks/missing", key, ""); resp.StatusCode != 404 {
		t.Errorf("loopback with the key: %d %s", resp.StatusCode, body)
	}
}
