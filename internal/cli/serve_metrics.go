package cli

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/push"
)

// metricsContentType is the Prometheus text exposition format, version
// 0.0.4.
const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// latencyBuckets are the upper bounds, in seconds, of the request latency
// histogram. Streams last as long as their task, hence the long tail.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// numStates bounds the task states counted.
const numStates = int(a2a.TaskStateAuthRequired) + 1

// metrics holds what /metrics shows. Every label takes values from a small
// fixed set (bindings, method names, HTTP statuses, error kinds, task
// states), so no client can grow it without bound.
type metrics struct {
	start  time.Time
	agents func() int  // running agent executions
	ready  func() bool // serving, not shutting down

	mu       sync.Mutex
	inFlight int64
	idle     chan struct{} // closed when inFlight drops to 0; nil while it is 0
	requests map[requestKey]uint64
	errors   map[errorKey]uint64
	latency  map[routeKey]*histogram
	streams  map[string]int64 // open streams by binding
	// Tasks by state as this process saw them move: live maps the tasks
	// not yet terminal to their state; current counts them by state, plus,
	// for terminal states, every task that reached it since start.
	live        map[string]a2a.TaskState
	current     [numStates]int64
	transitions [numStates]uint64
	// Webhook calls by outcome: ok, retry (failed, will be retried),
	// failing (failed, the config gave up).
	pushCalls map[string]uint64
	// gRPC calls (--grpc-addr) by method and status code, and their
	// latency by method.
	grpcCalls   map[grpcKey]uint64
	grpcLatency map[string]*histogram
}

type grpcKey struct{ method, code string }

type routeKey struct{ binding, method string }

type requestKey struct {
	routeKey
	code int
}

type errorKey struct {
	routeKey
	kind string
}

type histogram struct {
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

func newMetrics(start time.Time) *metrics {
	return &metrics{
		start:    start,
		agents:   func() int { return 0 },
		ready:    func() bool { return false },
		requests: make(map[requestKey]uint64),
		errors:   make(map[errorKey]uint64),
		latency:  make(map[routeKey]*histogram),
		streams:  make(map[string]int64),
		live:     make(map[string]a2a.TaskState),
	}
}

func (m *metrics) requestStarted() {
	m.mu.Lock()
	if m.inFlight == 0 {
		m.idle = make(chan struct{})
	}
	m.inFlight++
	m.mu.Unlock()
}

// waitIdle waits until no A2A request is in flight, and reports whether
// that happened before ctx ended.
func (m *metrics) waitIdle(ctx context.Context) bool {
	for {
		m.mu.Lock()
		idle := m.idle
		m.mu.Unlock()
		if idle == nil {
			return true
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return false
		}
	}
}

func (m *metrics) requestDone(binding, method string, code int, errKind string, d time.Duration) {
	rk := routeKey{binding, method}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inFlight--
	if m.inFlight == 0 {
		close(m.idle)
		m.idle = nil
	}
	m.requests[requestKey{rk, code}]++
	if errKind != "" {
		m.errors[errorKey{rk, errKind}]++
	}
	observe(m.latency, rk, d)
}

// grpcDone records a gRPC call that requestStarted counted.
func (m *metrics) grpcDone(method, code string, d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inFlight--
	if m.inFlight == 0 {
		close(m.idle)
		m.idle = nil
	}
	if m.grpcCalls == nil {
		m.grpcCalls, m.grpcLatency = make(map[grpcKey]uint64), make(map[string]*histogram)
	}
	m.grpcCalls[grpcKey{method, code}]++
	observe(m.grpcLatency, method, d)
}

// observe adds a duration to the histogram of key in hs.
func observe[K comparable](hs map[K]*histogram, key K, d time.Duration) {
	h := hs[key]
	if h == nil {
		h = &histogram{counts: make([]uint64, len(latencyBuckets)+1)}
		hs[key] = h
	}
	secs := d.Seconds()
	i, _ := slices.BinarySearch(latencyBuckets, secs) // first bound >= secs
	h.counts[i]++
	h.sum += secs
	h.n++
}

func (m *metrics) streamOpened(binding string) {
	m.mu.Lock()
	m.streams[binding]++
	m.mu.Unlock()
}

func (m *metrics) streamClosed(binding string) {
	m.mu.Lock()
	m.streams[binding]--
	m.mu.Unlock()
}

// observeTask records that task id is now in state to. A status update
// that keeps the state is no transition.
func (m *metrics) observeTask(id string, to a2a.TaskState) {
	if !to.Valid() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if from, ok := m.live[id]; ok {
		if from == to {
			return
		}
		m.current[from]--
	}
	m.transitions[to]++
	m.current[to]++
	if to.Terminal() {
		delete(m.live, id)
	} else {
		m.live[id] = to
	}
}

// expose writes the metrics in the Prometheus text format, families and
// series in a stable order.
func (m *metrics) expose(now time.Time) []byte {
	agents, ready := m.agents(), m.ready()
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	family := func(name, typ, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
	}
	sample := func(name string, value float64, labels ...string) {
		b.WriteString(name)
		if len(labels) > 0 {
			b.WriteByte('{')
			for i := 0; i < len(labels); i += 2 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%s=\"%s\"", labels[i], escapeLabel(labels[i+1]))
			}
			b.WriteByte('}')
		}
		b.WriteByte(' ')
		b.WriteString(formatValue(value))
		b.WriteByte('\n')
	}

	family("a2a_http_requests_total", "counter", "A2A HTTP requests answered, by binding, method and HTTP status code.")
	for _, k := range sortedKeys(m.requests, func(a, b requestKey) int {
		return cmp.Or(cmpRoute(a.routeKey, b.routeKey), cmp.Compare(a.code, b.code))
	}) {
		sample("a2a_http_requests_total", float64(m.requests[k]), "binding", k.binding, "method", k.method, "code", strconv.Itoa(k.code))
	}

	family("a2a_http_request_errors_total", "counter", "A2A requests answered with an error, by binding, method and A2A error kind.")
	for _, k := range sortedKeys(m.errors, func(a, b errorKey) int {
		return cmp.Or(cmpRoute(a.routeKey, b.routeKey), cmp.Compare(a.kind, b.kind))
	}) {
		sample("a2a_http_request_errors_total", float64(m.errors[k]), "binding", k.binding, "method", k.method, "error", k.kind)
	}

	family("a2a_http_request_duration_seconds", "histogram", "Time to answer A2A requests (streams: until they end), by binding and method.")
	// writeHistogram writes the samples of one histogram.
	writeHistogram := func(name string, h *histogram, labels ...string) {
		var cum uint64
		for i, c := range h.counts {
			cum += c
			le := "+Inf"
			if i < len(latencyBuckets) {
				le = formatValue(latencyBuckets[i])
			}
			sample(name+"_bucket", float64(cum), append(labels[:len(labels):len(labels)], "le", le)...)
		}
		sample(name+"_sum", h.sum, labels...)
		sample(name+"_count", float64(h.n), labels...)
	}
	for _, k := range sortedKeys(m.latency, cmpRoute) {
		writeHistogram("a2a_http_request_duration_seconds", m.latency[k], "binding", k.binding, "method", k.method)
	}

	family("a2a_grpc_requests_total", "counter", "A2A gRPC calls answered (--grpc-addr), by method and gRPC status code.")
	for _, k := range sortedKeys(m.grpcCalls, func(a, b grpcKey) int {
		return cmp.Or(cmp.Compare(a.method, b.method), cmp.Compare(a.code, b.code))
	}) {
		sample("a2a_grpc_requests_total", float64(m.grpcCalls[k]), "method", k.method, "code", k.code)
	}

	family("a2a_grpc_request_duration_seconds", "histogram", "Time to answer A2A gRPC calls (streams: until they end), by method.")
	for _, method := range sortedKeys(m.grpcLatency, cmp.Compare[string]) {
		writeHistogram("a2a_grpc_request_duration_seconds", m.grpcLatency[method], "method", method)
	}

	family("a2a_http_requests_in_flight", "gauge", "A2A requests being answered, streams included.")
	sample("a2a_http_requests_in_flight", float64(m.inFlight))

	family("a2a_open_streams", "gauge", "Open SSE streams, by binding.")
	for _, binding := range []string{bindingJSONRPC, bindingREST, bindingGRPC} {
		sample("a2a_open_streams", float64(m.streams[binding]), "binding", binding)
	}

	family("a2a_tasks", "gauge", "Tasks by state as this process saw them: tasks now in a non-terminal state, and tasks that reached each terminal state since start.")
	for s := a2a.TaskStateSubmitted; int(s) < numStates; s++ {
		sample("a2a_tasks", float64(m.current[s]), "state", s.String())
	}

	family("a2a_task_transitions_total", "counter", "Task state changes stored by this process, by the state entered (a task's creation enters TASK_STATE_SUBMITTED).")
	for s := a2a.TaskStateSubmitted; int(s) < numStates; s++ {
		sample("a2a_task_transitions_total", float64(m.transitions[s]), "state", s.String())
	}

	family("a2a_push_deliveries_total", "counter", "Webhook calls (push notifications) by outcome: ok, retry (failed and will be retried), failing (failed and the config was marked failing).")
	for _, outcome := range []string{"ok", "retry", "failing"} {
		sample("a2a_push_deliveries_total", float64(m.pushCalls[outcome]), "outcome", outcome)
	}

	family("a2a_agent_executions", "gauge", "Agent executions running (one per message being handled).")
	sample("a2a_agent_executions", float64(agents))

	family("a2a_ready", "gauge", "1 while serving, 0 once shutdown has begun.")
	sample("a2a_ready", boolValue(ready))

	family("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch, in seconds.")
	sample("process_start_time_seconds", float64(m.start.UnixMilli())/1000)

	family("a2a_uptime_seconds", "gauge", "Seconds since the server started.")
	sample("a2a_uptime_seconds", now.Sub(m.start).Seconds())
	return []byte(b.String())
}

func cmpRoute(a, b routeKey) int {
	return cmp.Or(cmp.Compare(a.binding, b.binding), cmp.Compare(a.method, b.method))
}

func sortedKeys[K comparable, V any](m map[K]V, compare func(a, b K) int) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compare)
	return keys
}

// formatValue writes a sample value as the exposition format wants it.
func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	case math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', -1, 64) // counts in full, not 1.2e+06
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// escapeLabel escapes a label value: backslash, double quote and newline.
func escapeLabel(s string) string {
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// observePush counts a webhook call (push.WithResultHook).
func (m *metrics) observePush(r push.Result) {
	outcome := "ok"
	switch {
	case r.Failing:
		outcome = "failing"
	case r.Err != nil:
		outcome = "retry"
	}
	m.mu.Lock()
	if m.pushCalls == nil {
		m.pushCalls = make(map[string]uint64)
	}
	m.pushCalls[outcome]++
	m.mu.Unlock()
}
