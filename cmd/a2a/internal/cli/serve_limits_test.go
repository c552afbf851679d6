package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/serve"
	"github.com/goa2a/a2a/server"
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

	if cfg.authFailures != serve.DefaultAuthFailures {
		t.Errorf("default --max-auth-failures %d, want %d", cfg.authFailures, serve.DefaultAuthFailures)
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

func hasMetric(m map[string]float64, substr string) bool {
	for k := range m {
		if strings.Contains(k, substr) {
			return true
		}
	}
	return false
}
