package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// TestServeHealthAndMetrics: /healthz and /readyz answer, /metrics is
// valid exposition text, and its counters move with the requests.
func TestServeHealthAndMetrics(t *testing.T) {
	t.Parallel()
	ts := startServe(t, "--agent", "echo")
	if code, body := httpGet(t, ts.base+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := httpGet(t, ts.base+"/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz: %d %q", code, body)
	}
	resp, err := http.Get(ts.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// The text format, version 0.0.4; promhttp adds an escaping parameter
	// the test need not pin.
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4; charset=utf-8") {
		t.Errorf("Content-Type %q", ct)
	}

	// Series are named as the exposition writes them: labels sorted by
	// name, le last.
	before := ts.metrics(t)
	const sends = `a2a_http_requests_total{binding="jsonrpc",code="200",method="SendMessage"}`
	if _, ok := before[sends]; ok {
		t.Errorf("%s before any request", sends)
	}
	for _, name := range []string{`a2a_ready`, `a2a_open_streams{binding="rest"}`, `a2a_tasks{state="TASK_STATE_WORKING"}`, `a2a_agent_executions`, `process_start_time_seconds`, `go_goroutines`} {
		if _, ok := before[name]; !ok {
			t.Errorf("no %s", name)
		}
	}
	if before["a2a_ready"] != 1 {
		t.Errorf("a2a_ready %v", before["a2a_ready"])
	}
	// The Go runtime collector's: a server runs goroutines.
	if before["go_goroutines"] < 1 {
		t.Errorf("go_goroutines %v", before["go_goroutines"])
	}

	jc := ts.client(t, a2a.BindingJSONRPC)
	for range 2 {
		if _, err := jc.SendMessage(t.Context(), textRequest("hi")); err != nil {
			t.Fatal(err)
		}
	}
	rc := ts.client(t, a2a.BindingHTTPJSON)
	if _, err := rc.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "missing"}); err == nil {
		t.Fatal("GetTask of a missing task succeeded")
	}
	if _, err := jc.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "missing"}); err == nil {
		t.Fatal("GetTask of a missing task succeeded")
	}
	for range rc.SendStreamingMessage(t.Context(), textRequest("stream")) {
	}

	// The client may read the stream's end before the server has done
	// accounting for it (a detached stream ends in a goroutine of its
	// own, which closes the stream, then records the request): wait for
	// both.
	after := ts.metrics(t)
	accounted := func() bool {
		return after[`a2a_open_streams{binding="rest"}`] == 0 &&
			after[`a2a_http_request_duration_seconds_count{binding="rest",method="SendStreamingMessage"}`] == 1
	}
	for deadline := time.Now().Add(30 * time.Second); !accounted() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		after = ts.metrics(t)
	}
	for series, want := range map[string]float64{
		sends: 2,
		`a2a_http_request_duration_seconds_count{binding="jsonrpc",method="SendMessage"}`:                 2,
		`a2a_http_requests_total{binding="rest",code="404",method="GetTask"}`:                             1,
		`a2a_http_requests_total{binding="jsonrpc",code="200",method="GetTask"}`:                          1,
		`a2a_http_request_errors_total{binding="rest",error="TaskNotFoundError",method="GetTask"}`:        1,
		`a2a_http_request_errors_total{binding="jsonrpc",error="TaskNotFoundError",method="GetTask"}`:     1,
		`a2a_http_requests_total{binding="rest",code="200",method="SendStreamingMessage"}`:                1,
		`a2a_http_requests_total{binding="card",code="200",method="GetAgentCard"}`:                        2,
		`a2a_task_transitions_total{state="TASK_STATE_SUBMITTED"}`:                                        3,
		`a2a_task_transitions_total{state="TASK_STATE_WORKING"}`:                                          3,
		`a2a_tasks{state="TASK_STATE_COMPLETED"}`:                                                         3,
		`a2a_tasks{state="TASK_STATE_WORKING"}`:                                                           0,
		`a2a_open_streams{binding="rest"}`:                                                                0,
		`a2a_agent_executions`:                                                                            0,
		`a2a_http_request_duration_seconds_bucket{binding="jsonrpc",method="SendMessage",le="+Inf"}`:      2,
		`a2a_http_request_duration_seconds_count{binding="rest",method="SendStreamingMessage"}`:           1,
		`a2a_http_request_duration_seconds_bucket{binding="rest",method="SendStreamingMessage",le="300"}`: 1,
	} {
		if got, ok := after[series]; !ok || got != want {
			t.Errorf("%s = %v (present: %v), want %v", series, got, ok, want)
		}
	}
	// The ops endpoints themselves are not counted.
	for series := range after {
		if strings.Contains(series, "healthz") || strings.Contains(series, "metrics\"") {
			t.Errorf("ops endpoint counted: %s", series)
		}
	}
}

// TestServeOpenStreams: a stream in progress shows in a2a_open_streams and
// in a2a_agent_executions.
func TestServeOpenStreams(t *testing.T) {
	t.Parallel()
	ts := startServe(t, "--agent", "test-runner")
	c := ts.client(t, a2a.BindingJSONRPC)
	seen := false
	for ev, err := range c.SendStreamingMessage(t.Context(), textRequest("Run the full suite for payments-api at a41d7c3")) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && !seen {
			seen = true
			m := ts.metrics(t)
			if m[`a2a_open_streams{binding="jsonrpc"}`] != 1 || m[`a2a_agent_executions`] != 1 || m[`a2a_tasks{state="TASK_STATE_WORKING"}`] != 1 {
				t.Errorf("during the stream: streams %v, executions %v, working %v",
					m[`a2a_open_streams{binding="jsonrpc"}`], m[`a2a_agent_executions`], m[`a2a_tasks{state="TASK_STATE_WORKING"}`])
			}
		}
	}
	waitFor(t, "the stream to be counted closed", func() bool {
		return ts.metrics(t)[`a2a_open_streams{binding="jsonrpc"}`] == 0
	})
}

// TestServeBindings: --bindings serves only the bindings named, and the
// card lists only those.
func TestServeBindings(t *testing.T) {
	t.Parallel()
	ts := startServe(t, "--agent", "echo", "--bindings", "rest")
	code, body := httpGet(t, ts.base+"/.well-known/agent-card.json")
	var card a2a.AgentCard
	if err := json.Unmarshal([]byte(body), &card); code != 200 || err != nil {
		t.Fatalf("card: %d %v", code, err)
	}
	if len(card.SupportedInterfaces) != 1 || card.SupportedInterfaces[0].ProtocolBinding != a2a.BindingHTTPJSON {
		t.Errorf("interfaces %+v", card.SupportedInterfaces)
	}
	resp, err := http.Post(ts.base+"/a2a/jsonrpc", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("JSON-RPC endpoint answered %d", resp.StatusCode)
	}
	if _, err := ts.client(t, a2a.BindingHTTPJSON).SendMessage(t.Context(), textRequest("hi")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(ts.stdout.String(), "HTTP+JSON") || strings.Contains(ts.stdout.String(), "JSON-RPC ") {
		t.Errorf("banner:\n%s", ts.stdout.String())
	}
}

// TestServeJSONLogs: --log-format json writes one JSON object per line,
// with a line per request at --log-level debug.
func TestServeJSONLogs(t *testing.T) {
	t.Parallel()
	ts := startServe(t, "--agent", "echo", "--log-format", "json", "--log-level", "debug")
	if _, err := ts.client(t, a2a.BindingJSONRPC).SendMessage(t.Context(), textRequest("hi")); err != nil {
		t.Fatal(err)
	}
	if code := ts.stop(t); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var requests int
	for line := range strings.SplitSeq(strings.TrimSpace(ts.stderr.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == "request" && rec["method"] == "SendMessage" && rec["binding"] == "jsonrpc" && rec["status"] == float64(200) {
			requests++
		}
	}
	if requests != 1 {
		t.Errorf("%d request lines in\n%s", requests, ts.stderr.String())
	}
}
