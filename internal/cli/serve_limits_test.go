package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/jsonrpc"
)

func TestServeLimitFlags(t *testing.T) {
	t.Parallel()
	var stderr syncBuffer
	cfg, code := parseServeArgs(nil, &stderr)
	if cfg == nil {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := server.Limits{
		MaxParts: server.DefaultMaxParts, MaxDepth: a2a.DefaultMaxDepth,
		MaxStreams: server.DefaultMaxStreams, MaxStreamsPerPrincipal: server.DefaultMaxStreamsPerPrincipal,
		MaxActiveTasksPerPrincipal: server.DefaultMaxActiveTasksPerPrincipal, MaxActiveTasks: server.DefaultMaxActiveTasks,
		Rate: 20, Burst: 40,
	}
	if got := cfg.limits(); got != want {
		t.Errorf("default limits %+v, want %+v", got, want)
	}

	if cfg.authFailures != serveAuthFailures {
		t.Errorf("default --max-auth-failures %d, want %d", cfg.authFailures, serveAuthFailures)
	}

	cfg, code = parseServeArgs([]string{"--max-streams", "0", "--max-streams-per-principal", "5", "--max-tasks-per-principal", "6",
		"--rate", "2.5", "--burst", "3", "--max-parts", "7", "--max-depth", "0", "--max-tasks", "8", "--max-auth-failures", "0"}, &stderr)
	if cfg == nil {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want = server.Limits{MaxParts: 7, MaxDepth: -1, MaxStreams: -1, MaxStreamsPerPrincipal: 5, MaxActiveTasksPerPrincipal: 6, MaxActiveTasks: 8, Rate: 2.5, Burst: 3}
	if got := cfg.limits(); got != want {
		t.Errorf("limits %+v, want %+v (0 is no limit)", got, want)
	}
	if cfg.authFailures != 0 {
		t.Errorf("--max-auth-failures 0: %d", cfg.authFailures)
	}
	if cfg, _ = parseServeArgs([]string{"--max-tasks", "0"}, &stderr); cfg == nil || cfg.limits().MaxActiveTasks != -1 {
		t.Errorf("--max-tasks 0: %+v, want no limit (-1)", cfg)
	}
	cfg, _ = parseServeArgs([]string{"--rate", "0", "--burst", "0"}, &stderr)
	if cfg == nil || cfg.limits().Rate != 0 {
		t.Errorf("--rate 0: %+v, want rate limiting off", cfg)
	}

	path := writeConfig(t, `{"rate": 5, "burst": 9, "max-streams-per-principal": 11, "max-depth": 32}`)
	cfg, code = parseServeArgs([]string{"--config", path, "--burst", "10"}, &stderr)
	if cfg == nil {
		t.Fatalf("config: exit %d: %s", code, stderr.String())
	}
	if l := cfg.limits(); l.Rate != 5 || l.Burst != 10 || l.MaxStreamsPerPrincipal != 11 || l.MaxDepth != 32 {
		t.Errorf("config limits %+v: want rate 5, burst 10 (the flag wins), 11 streams, depth 32", l)
	}
}

func TestServeLimitFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-streams", "-1"}, "--max-streams must not be negative (0 for no limit), got -1"},
		{[]string{"--max-streams-per-principal", "-2"}, "--max-streams-per-principal must not be negative"},
		{[]string{"--max-tasks-per-principal", "-3"}, "--max-tasks-per-principal must not be negative"},
		{[]string{"--max-parts", "-4"}, "--max-parts must not be negative"},
		{[]string{"--max-tasks", "-6"}, "--max-tasks must not be negative (0 for no limit), got -6"},
		{[]string{"--max-auth-failures", "-7"}, "--max-auth-failures must not be negative (0 for no limit), got -7"},
		{[]string{"--max-depth", "-5"}, "--max-depth must not be negative"},
		{[]string{"--rate", "-1"}, "--rate must be a number of calls per second, 0 or more"},
		{[]string{"--rate", "NaN"}, "--rate must be a number of calls per second"},
		{[]string{"--rate", "+Inf"}, "--rate must be a number of calls per second"},
		{[]string{"--rate", "5", "--burst", "0"}, "--burst must be at least 1 with --rate, got 0"},
		{[]string{"--rate", "0", "--burst", "-1"}, "--burst must not be negative"},
	} {
		var stderr syncBuffer
		cfg, code := parseServeArgs(tc.args, &stderr)
		if cfg != nil || code != ExitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want it to contain %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestServeRateLimit: the rate limit is on in a2a serve and counts by
// principal; the refusal names the limit on both bindings and carries
// Retry-After on HTTP+JSON, and other callers are still served.
func TestServeRateLimit(t *testing.T) {
	t.Parallel()
	const keyAlice, keyBob = "alice-key-0123456789", "bob-key-0123456789"
	ts := startServe(t, "--store", "memory", "--rate", "0.01", "--burst", "2",
		"--api-key", "alice="+keyAlice, "--api-key", "bob="+keyBob)
	if want := "  limits      0.01 calls/s per caller (burst 2), 100 streams and 100 running tasks per caller, 10000 streams and 10000 running tasks in all\n"; !strings.Contains(ts.stdout.String(), want) {
		t.Errorf("banner lacks %q:\n%s", want, ts.stdout.String())
	}
	rpc := ts.base + "/a2a/jsonrpc"
	for i := range 2 {
		if resp, body := rawCall(t, "POST", rpc, keyAlice, getTaskJSONRPC("missing")); resp.StatusCode != 200 || !strings.Contains(body, "-32001") {
			t.Fatalf("call %d: %d %s", i+1, resp.StatusCode, body)
		}
	}
	resp, body := rawCall(t, "POST", rpc, keyAlice, getTaskJSONRPC("missing"))
	var r struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || resp.StatusCode != 200 || r.Error.Code != -31429 {
		t.Fatalf("third call: %d %s", resp.StatusCode, body)
	}
	if !strings.Contains(r.Error.Message, "too many requests from this caller (limit 0.01 per second, burst 2)") {
		t.Errorf("message %q", r.Error.Message)
	}
	resp, body = rawCall(t, "GET", ts.base+"/a2a/rest/tasks/missing", keyAlice, "")
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, `"RESOURCE_EXHAUSTED"`) {
		t.Errorf("REST: %d %s", resp.StatusCode, body)
	}
	if ra := resp.Header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("Retry-After %q", ra)
	}
	// Bob is served, and so is the agent card.
	if resp, body := rawCall(t, "POST", rpc, keyBob, getTaskJSONRPC("missing")); !strings.Contains(body, "-32001") {
		t.Errorf("Bob: %d %s", resp.StatusCode, body)
	}
	if code, _ := httpGet(t, ts.base+server.WellKnownCardPath); code != 200 {
		t.Errorf("agent card: %d", code)
	}
	if m := ts.metrics(t); !hasMetric(m, "ResourceExhausted") {
		t.Errorf("metrics name no ResourceExhausted error: %v", m)
	}
}

// TestClientKey: without a principal, remote callers are told apart by
// their IP address; loopback callers are not limited per caller.
func TestClientKey(t *testing.T) {
	t.Parallel()
	h, err := server.NewHandler(echo.Card("http://127.0.0.1/a2a/jsonrpc", "http://127.0.0.1/a2a/rest"), echo.Agent{},
		server.WithLimits(server.Limits{Rate: 0.01, Burst: 1}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	app := withClientKey(jsonrpc.NewHandler(h))
	call := func(remote string) int {
		req := httptest.NewRequest("POST", "/a2a/jsonrpc", strings.NewReader(getTaskJSONRPC("missing")))
		req.RemoteAddr = remote
		req.Header.Set("A2A-Version", "1.0")
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		var r struct {
			Error struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v: %s", remote, err, rec.Body)
		}
		return r.Error.Code
	}
	for _, c := range []struct {
		remote string
		want   int
	}{
		{"192.0.2.1:1000", -32001},
		{"192.0.2.1:2000", -31429}, // the same address, another port
		{"192.0.2.2:1000", -32001},
		{"[2001:db8::1]:1000", -32001},
		{"[2001:db8::1]:1001", -31429},
		// IPv6 callers are counted by their /64: one host usually has one.
		{"[2001:db8::2]:1000", -31429},
		{"[2001:db8:0:0:ffff:ffff:ffff:ffff]:1000", -31429},
		{"[2001:db8:0:1::1]:1000", -32001},
		{"[2001:db8:0:1::2]:1000", -31429},
		{"[fe80::1%eth0]:1000", -32001},
		{"[fe80::2%eth1]:1000", -31429},
		// IPv4 callers are counted by their whole address, however written.
		{"[::ffff:192.0.2.9]:1000", -32001},
		{"192.0.2.9:1000", -31429},
		{"192.0.2.10:1000", -32001},
		{"[::ffff:127.0.0.1]:1000", -32001},
		{"[::ffff:127.0.0.1]:1000", -32001},
		{"127.0.0.1:1000", -32001},
		{"127.0.0.1:1000", -32001},
		{"[::1]:1000", -32001},
		{"[::1]:1000", -32001},
	} {
		if got := call(c.remote); got != c.want {
			t.Errorf("from %s: code %d, want %d", c.remote, got, c.want)
		}
	}
}

func hasMetric(m map[string]float64, substr string) bool {
	for k := range m {
		if strings.Contains(k, substr) {
			return true
		}
	}
	return false
}

// TestClientKeyOf: the key of an anonymous caller is its IPv4 address or
// its IPv6 /64, and none for loopback or what is not an address.
func TestClientKeyOf(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]string{
		"192.0.2.1:1000":             "192.0.2.1",
		"192.0.2.1":                  "192.0.2.1",
		"[::ffff:192.0.2.1]:80":      "192.0.2.1",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:DB8:1:2::]:443":       "2001:db8:1:2::/64",
		"2001:db8:1:2::9":            "2001:db8:1:2::/64",
		"[fe80::1%eth0]:1":           "fe80::/64",
		"127.0.0.1:1":                "",
		"127.9.9.9:1":                "",
		"[::1]:1":                    "",
		"[::ffff:127.0.0.1]:1":       "",
		"":                           "",
		"pipe":                       "",
		"[not-an-address]:1":         "",
	} {
		if got := clientKeyOf(remote); got != want {
			t.Errorf("clientKeyOf(%q) = %q, want %q", remote, got, want)
		}
	}
}
