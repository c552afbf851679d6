package a2aprom

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// parseMetrics reads the samples of the text format: series -> value.
func parseMetrics(t *testing.T, text string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("not a sample: %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// TestMetricsHandler: handler serves the registry in the text format, with
// the Go runtime's metrics, and two metrics values count apart (no shared
// registry).
func TestMetricsHandler(t *testing.T) {
	t.Parallel()
	m, other := New(), New()
	m.requestStarted()
	m.requestDone(BindingJSONRPC, "SendMessage", 200, "", 3*time.Millisecond)
	const sends = `a2a_http_requests_total{binding="jsonrpc",code="200",method="SendMessage"}`

	scrape := func(m *Metrics) map[string]float64 {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
			t.Errorf("handler: %d, Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
		}
		return parseMetrics(t, rec.Body.String())
	}
	for name, got := range map[string]map[string]float64{"handler": scrape(m)} {
		for series, want := range map[string]float64{
			sends: 1,
			`a2a_http_request_duration_seconds_bucket{binding="jsonrpc",method="SendMessage",le="0.005"}`: 1,
			`a2a_http_requests_in_flight`:                            0,
			`a2a_push_deliveries_total{outcome="retry"}`:             0,
			`a2a_task_transitions_total{state="TASK_STATE_WORKING"}`: 0,
		} {
			if v, ok := got[series]; !ok || v != want {
				t.Errorf("%s: %s = %v (present: %v), want %v", name, series, v, ok, want)
			}
		}
		if got["go_goroutines"] < 1 {
			t.Errorf("%s: go_goroutines %v", name, got["go_goroutines"])
		}
	}
	if _, ok := scrape(other)[sends]; ok {
		t.Errorf("a request to one server counted in another's metrics")
	}
}
