package rest_test

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

func detail(e wireErrorBody, typ string) map[string]any {
	for _, d := range e.Error.Details {
		if d["@type"] == typ {
			return d
		}
	}
	return nil
}

func TestRateLimitWireForm(t *testing.T) {
	fixed := time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
	f := newFixtureWith(t, testCard(), []server.Option{
		server.WithLimits(server.Limits{Rate: 0.5, Burst: 1}),
		server.WithClock(func() time.Time { return fixed }),
	})
	alice := map[string]string{testPrincipalHeader: "alice"}
	f.do(t, request{method: "GET", path: "/tasks/missing", headers: alice}).fail(t, 404, "NOT_FOUND", "TASK_NOT_FOUND")
	r := f.do(t, request{method: "GET", path: "/tasks/missing", headers: alice})
	e := r.fail(t, 429, "RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED")
	if got := r.header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After %q, want 2 (one token at 0.5/s)", got)
	}
	if want := "too many requests from this caller (limit 0.5 per second, burst 1)"; e.Error.Message != want {
		t.Errorf("message %q, want %q", e.Error.Message, want)
	}
	info := detail(e, a2a.ErrorInfoType)
	if md, _ := info["metadata"].(map[string]any); info["domain"] != a2a.ErrorDomain || md["limit"] != "rate" {
		t.Errorf("ErrorInfo %v", info)
	}
	if ri := detail(e, a2a.RetryInfoType); ri == nil || ri["retryDelay"] != "2s" {
		t.Errorf("RetryInfo %v, want retryDelay 2s", ri)
	}
	// Another caller is served.
	f.do(t, request{method: "GET", path: "/tasks/missing", headers: map[string]string{testPrincipalHeader: "bob"}}).
		fail(t, 404, "NOT_FOUND", "TASK_NOT_FOUND")
}

func TestStreamLimitWireForm(t *testing.T) {
	f := newFixtureWith(t, testCard(), []server.Option{server.WithLimits(server.Limits{MaxStreamsPerPrincipal: 1})})
	alice := map[string]string{testPrincipalHeader: "alice"}
	// Alice holds her one stream open.
	resp := f.open(t, request{method: "POST", path: "/message:stream", body: sendBody("wait", false), headers: alice})
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("first stream: status %d", resp.StatusCode)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "id:") && !strings.HasPrefix(line, "data:") {
		t.Fatalf("first stream: %q, %v", line, err)
	}
	r := f.do(t, request{method: "POST", path: "/message:stream", body: sendBody("again", false), headers: alice})
	e := r.fail(t, 429, "RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED")
	if want := "too many open streams for this caller (limit 1)"; e.Error.Message != want {
		t.Errorf("message %q, want %q", e.Error.Message, want)
	}
	if got := r.header.Get("Retry-After"); got != "" {
		t.Errorf("Retry-After %q on a stream refusal: no delay is known", got)
	}
	// Alice's other calls, and Bob's streams, are served.
	f.send(t, "", "hello", false)
	var res a2a.SendMessageResponse
	f.do(t, request{method: "POST", path: "/message:send", body: sendBody("hi", false), headers: alice}).ok(t, &res)
	bob := f.open(t, request{method: "POST", path: "/message:stream", body: sendBody("bob", false), headers: map[string]string{testPrincipalHeader: "bob"}})
	defer bob.Body.Close()
	if bob.StatusCode != 200 {
		t.Errorf("Bob's stream: status %d", bob.StatusCode)
	}
}

func TestMaxDepth(t *testing.T) {
	f := newFixtureWith(t, testCard(), []server.Option{server.WithLimits(server.Limits{MaxDepth: 8})})
	body := func(depth int) string {
		// The request and the message take 2 levels.
		// A messageId of its own for each depth: the same id with other
		// metadata would be refused as a reused one.
		return `{"message":{"messageId":"m-deep-` + strconv.Itoa(depth) + `","role":"ROLE_USER","parts":[{"text":"hi"}],"metadata":` +
			strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth) + `}}`
	}
	var res a2a.SendMessageResponse
	f.do(t, request{method: "POST", path: "/message:send", body: body(6)}).ok(t, &res)
	e := f.do(t, request{method: "POST", path: "/message:send", body: body(7)}).fail(t, 400, "INVALID_ARGUMENT", "")
	if want := "JSON nested deeper than 8 levels"; e.Error.Message != want {
		t.Errorf("message %q, want %q", e.Error.Message, want)
	}
	e = f.do(t, request{method: "POST", path: "/message:send", body: body(20000)}).fail(t, 400, "INVALID_ARGUMENT", "")
	if want := "JSON nested deeper than 8 levels"; e.Error.Message != want {
		t.Errorf("20002 levels: message %q, want %q", e.Error.Message, want)
	}
	f.do(t, request{method: "POST", path: "/message:send", body: body(1)}).ok(t, &res)
}
