// Package a2aprom exposes an A2A server's metrics in the Prometheus
// format, with prometheus/client_golang: requests by binding, method,
// status and A2A error kind, their latency (streams until they end), open
// streams, tasks by state, webhook calls by outcome, agent executions,
// readiness, and the Go runtime's and the process's metrics, from a
// registry of each Metrics' own.
//
//	m := a2aprom.New()
//	srv, err := serve.New(card, agent, serve.WithOptions(m.ServeOptions()...)) // /metrics beside the probes
//
// a2a serve's /metrics is this package. Only programs that import it
// compile Prometheus.
package a2aprom

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/serve"
	"github.com/goa2a/a2a/server"
)

// latencyBuckets are the upper bounds, in seconds, of the request latency
// histogram. Streams last as long as their task, hence the long tail.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// numStates bounds the task states counted.
const numStates = int(a2a.TaskStateAuthRequired) + 1

// Metrics holds what /metrics shows. Every label takes values from a small
// fixed set (bindings, method names, HTTP statuses, error kinds, task
// states), so no client can grow it without bound. Each Metrics has a
// registry of its own, never the default one, so that several servers in
// one process count apart.
type Metrics struct {
	start time.Time
	log   *slog.Logger // WithRequestLog; nil: no request log
	ready atomic.Bool  // serving, not shutting down
	execs atomic.Int64 // running agent executions

	reg         *prometheus.Registry
	requests    *prometheus.CounterVec   // by binding, method, code
	errors      *prometheus.CounterVec   // by binding, method, error
	latency     *prometheus.HistogramVec // by binding, method
	grpcCalls   *prometheus.CounterVec   // by method, code (--grpc-addr)
	grpcLatency *prometheus.HistogramVec // by method
	streams     *prometheus.GaugeVec     // open streams by binding
	// Tasks by state as this process saw them move: tasks counts the tasks
	// not yet terminal by state, plus, for terminal states, every task
	// that reached it since start; transitions counts the states entered.
	tasks       [numStates]prometheus.Gauge
	transitions [numStates]prometheus.Counter
	// Webhook calls by outcome: ok, retry (failed, will be retried),
	// failing (failed, the config gave up).
	pushCalls *prometheus.CounterVec

	mu       sync.Mutex
	inFlight int64
	// live maps the tasks not yet terminal to their state, to know which
	// gauge a task leaves when it moves.
	live map[string]a2a.TaskState
}

// Option configures [Metrics].
type Option func(*Metrics)

// WithRequestLog logs each request at debug level on log: binding, method,
// status, duration, error kind. A busy server writes little else at info.
func WithRequestLog(log *slog.Logger) Option { return func(m *Metrics) { m.log = log } }

// New returns Metrics of a server starting now.
func New(opts ...Option) *Metrics {
	m := &Metrics{
		start: time.Now(),
		reg:   prometheus.NewRegistry(),
		live:  make(map[string]a2a.TaskState),
	}
	for _, o := range opts {
		o(m)
	}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2a_http_requests_total",
		Help: "A2A HTTP requests answered, by binding, method and HTTP status code.",
	}, []string{"binding", "method", "code"})
	m.errors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2a_http_request_errors_total",
		Help: "A2A requests answered with an error, by binding, method and A2A error kind.",
	}, []string{"binding", "method", "error"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "a2a_http_request_duration_seconds",
		Help:    "Time to answer A2A requests (streams: until they end), by binding and method.",
		Buckets: latencyBuckets,
	}, []string{"binding", "method"})
	m.grpcCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2a_grpc_requests_total",
		Help: "A2A gRPC calls answered (--grpc-addr), by method and gRPC status code.",
	}, []string{"method", "code"})
	m.grpcLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "a2a_grpc_request_duration_seconds",
		Help:    "Time to answer A2A gRPC calls (streams: until they end), by method.",
		Buckets: latencyBuckets,
	}, []string{"method"})
	m.streams = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "a2a_open_streams",
		Help: "Open SSE streams, by binding.",
	}, []string{"binding"})
	tasks := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "a2a_tasks",
		Help: "Tasks by state as this process saw them: tasks now in a non-terminal state, and tasks that reached each terminal state since start.",
	}, []string{"state"})
	transitions := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2a_task_transitions_total",
		Help: "Task state changes stored by this process, by the state entered (a task's creation enters TASK_STATE_SUBMITTED).",
	}, []string{"state"})
	m.pushCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "a2a_push_deliveries_total",
		Help: "Webhook calls (push notifications) by outcome: ok, retry (failed and will be retried), failing (failed and the config was marked failing).",
	}, []string{"outcome"})

	// The series of a fixed label set show from the start, at 0, so that a
	// query finds them before the first stream, task or webhook call.
	for _, binding := range []string{BindingJSONRPC, BindingREST, BindingGRPC} {
		m.streams.WithLabelValues(binding)
	}
	for s := a2a.TaskStateSubmitted; int(s) < numStates; s++ {
		m.tasks[s] = tasks.WithLabelValues(s.String())
		m.transitions[s] = transitions.WithLabelValues(s.String())
	}
	for _, outcome := range []string{"ok", "retry", "failing"} {
		m.pushCalls.WithLabelValues(outcome)
	}

	m.reg.MustRegister(
		m.requests, m.errors, m.latency, m.grpcCalls, m.grpcLatency,
		// In flight, executions, readiness and uptime are read when
		// scraped, from what already knows them.
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "a2a_http_requests_in_flight",
			Help: "A2A requests being answered, streams included.",
		}, func() float64 {
			m.mu.Lock()
			defer m.mu.Unlock()
			return float64(m.inFlight)
		}),
		m.streams, tasks, transitions, m.pushCalls,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "a2a_agent_executions",
			Help: "Agent executions running (one per message being handled).",
		}, func() float64 { return float64(m.execs.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "a2a_ready",
			Help: "1 while serving, 0 once shutdown has begun.",
		}, func() float64 {
			if m.ready.Load() {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "a2a_uptime_seconds",
			Help: "Seconds since the server started.",
		}, func() float64 { return time.Since(m.start).Seconds() }),
		// process_start_time_seconds is the process collector's: the
		// process runs one server, so it is when that one started.
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

func (m *Metrics) requestStarted() {
	m.mu.Lock()
	m.inFlight++
	m.mu.Unlock()
}

// finished counts a request that requestStarted counted as no longer in
// flight.
func (m *Metrics) finished() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inFlight--
}

func (m *Metrics) requestDone(binding, method string, code int, errKind string, d time.Duration) {
	// Counted before the request leaves the in-flight count, so that a
	// scrape that sees none in flight sees it counted.
	m.requests.WithLabelValues(binding, method, strconv.Itoa(code)).Inc()
	if errKind != "" {
		m.errors.WithLabelValues(binding, method, errKind).Inc()
	}
	m.latency.WithLabelValues(binding, method).Observe(d.Seconds())
	m.finished()
}

// grpcDone records a gRPC call that requestStarted counted.
func (m *Metrics) grpcDone(method, code string, d time.Duration) {
	m.grpcCalls.WithLabelValues(method, code).Inc()
	m.grpcLatency.WithLabelValues(method).Observe(d.Seconds())
	m.finished()
}

func (m *Metrics) streamOpened(binding string) {
	m.streams.WithLabelValues(binding).Inc()
}

func (m *Metrics) streamClosed(binding string) {
	m.streams.WithLabelValues(binding).Dec()
}

// ObserveTask records that task id is now in state to
// ([server.WithStateHook]). A status update
// that keeps the state is no transition.
func (m *Metrics) ObserveTask(id string, to a2a.TaskState) {
	if !to.Valid() {
		return
	}
	// Under the lock, so that two updates of one task leave its old state
	// once and in order.
	m.mu.Lock()
	defer m.mu.Unlock()
	if from, ok := m.live[id]; ok {
		if from == to {
			return
		}
		m.tasks[from].Dec()
	}
	m.transitions[to].Inc()
	m.tasks[to].Inc()
	if to.Terminal() {
		delete(m.live, id)
	} else {
		m.live[id] = to
	}
}

// ObservePush counts a webhook call ([push.WithResultHook]).
func (m *Metrics) ObservePush(r push.Result) {
	outcome := "ok"
	switch {
	case r.Failing:
		outcome = "failing"
	case r.Err != nil:
		outcome = "retry"
	}
	m.pushCalls.WithLabelValues(outcome).Inc()
}

// Registry is where the metrics are registered; add a program's own to it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics, in whichever format the scraper asks for
// (the text format when it asks for none).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// ServeOptions returns the options that measure a serve.Server and serve
// /metrics beside its health probes.
func (m *Metrics) ServeOptions() []serve.Option {
	return []serve.Option{
		serve.WithHTTPMiddleware(m.Middleware),
		// A stats handler sees every call, those refused before any
		// interceptor runs (authentication, before decoding) too.
		serve.WithGRPCOptions(grpc.StatsHandler(m.GRPCStatsHandler())),
		serve.WithHandlerOptions(m.ServerOptions()...),
		serve.WithPushOptions(push.WithResultHook(m.ObservePush)),
		serve.WithOpsHandler("GET /metrics", m.Handler()),
		serve.WithOnServing(func() { m.ready.Store(true) }),
		serve.WithOnShutdown(func(int) { m.ready.Store(false) }),
	}
}

// ServerOptions returns the Handler options the metrics need: the state
// hook, the interceptor that names each request's method, and the hook
// that counts agent executions.
func (m *Metrics) ServerOptions() []server.Option {
	return []server.Option{
		server.WithStateHook(m.ObserveTask),
		server.WithInterceptors(noteCalls{}),
		server.WithExecutionHook(func(_, ctx context.Context, _ *server.Request) (context.Context, func(error)) {
			m.execs.Add(1)
			return ctx, func(error) { m.execs.Add(-1) }
		}),
	}
}
