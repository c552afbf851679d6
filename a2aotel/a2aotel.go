// Package a2aotel traces A2A with OpenTelemetry: a span for each operation
// a server answers and each call a client makes, for each execution of the
// agent, and for each webhook call of push delivery, with W3C trace
// context carried from the client to the server (headers or gRPC
// metadata), into the agent's context, and onto the webhook calls, so
// that one trace shows planner -> agent -> webhook.
//
//	t := a2aotel.New(a2aotel.WithTracerProvider(tp))
//	srv, err := serve.New(card, agent, serve.WithPush(serve.Push{}), serve.WithOptions(t.ServeOptions()...))
//	c, err := client.New(ctx, url, client.WithInterceptors(t.ClientInterceptor()))
//
// Spans follow the RPC semantic conventions: named
// "lf.a2a.v1.A2AService/<method>", with rpc.system (jsonrpc, grpc, or a2a
// for HTTP+JSON and calls in process), rpc.service, rpc.method, and the
// task as the attribute a2a.task.id, never in the name. An A2A error sets
// the span's status and a2a.error.code.
//
// Only programs that import this package compile OpenTelemetry: the core
// packages (a2a, server, client, store) do not.
package a2aotel

import (
	"context"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/serve"
	"github.com/goa2a/a2a/server"
)

// ScopeName is the instrumentation scope of the spans.
const ScopeName = "github.com/goa2a/a2a/a2aotel"

// Service is the rpc.service of the spans: the proto service of A2A.
const Service = "lf.a2a.v1.A2AService"

// Attribute keys of this package's own (the rest are semantic
// conventions).
const (
	AttrTaskID    = attribute.Key("a2a.task.id")
	AttrContextID = attribute.Key("a2a.context.id")
	AttrTenant    = attribute.Key("a2a.tenant")
	AttrBinding   = attribute.Key("a2a.protocol_binding")
	AttrErrorCode = attribute.Key("a2a.error.code")
	AttrConfigID  = attribute.Key("a2a.push.config.id")
	AttrEventSeq  = attribute.Key("a2a.event.seq")
	AttrAttempt   = attribute.Key("a2a.push.attempt")
)

// Tracing makes the interceptors and hooks of one tracer provider and
// propagator. Its hooks share what links push delivery to the execution
// that produced the events, so use one Tracing for a server's interceptor,
// execution hook and push hook.
type Tracing struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	tasks  *taskSpans
}

// Option configures a [Tracing].
type Option func(*Tracing)

// WithTracerProvider sets the tracer provider (default: the global one,
// otel.GetTracerProvider()).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(t *Tracing) { t.tracer = tp.Tracer(ScopeName) }
}

// WithPropagator sets how trace context travels (default: W3C Trace
// Context and Baggage).
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(t *Tracing) { t.prop = p }
}

// New returns a Tracing.
func New(opts ...Option) *Tracing {
	t := &Tracing{tasks: newTaskSpans()}
	for _, o := range opts {
		o(t)
	}
	if t.tracer == nil {
		t.tracer = otel.GetTracerProvider().Tracer(ScopeName)
	}
	if t.prop == nil {
		t.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	return t
}

// ServerOptions returns the Handler options that trace a server: its
// interceptor and its execution hook.
func (t *Tracing) ServerOptions() []server.Option {
	return []server.Option{server.WithInterceptors(t.ServerInterceptor()), server.WithExecutionHook(t.ExecutionHook())}
}

// ServeOptions returns the options that trace a serve.Server: the server
// options, and the push call hook for its webhook calls.
func (t *Tracing) ServeOptions() []serve.Option {
	return []serve.Option{serve.WithHandlerOptions(t.ServerOptions()...), serve.WithPushOptions(push.WithCallHook(t.PushHook()))}
}

// spanName is the name of an operation's span.
func spanName(method string) string { return Service + "/" + method }

// rpcSystem is the rpc.system of a binding.
func rpcSystem(binding string) string {
	switch binding {
	case a2a.BindingJSONRPC:
		return "jsonrpc"
	case a2a.BindingGRPC:
		return "grpc"
	}
	return "a2a"
}

func callAttrs(method, binding, tenant, taskID string) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		attribute.String("rpc.system", rpcSystem(binding)),
		attribute.String("rpc.service", Service),
		attribute.String("rpc.method", method),
	}
	if binding != "" {
		attrs = append(attrs, AttrBinding.String(binding))
	}
	if tenant != "" {
		attrs = append(attrs, AttrTenant.String(tenant))
	}
	if taskID != "" {
		attrs = append(attrs, AttrTaskID.String(taskID))
	}
	return attrs
}

// endCall records a call's outcome on span and ends it.
func endCall(span trace.Span, binding, taskID string, err error) {
	if taskID != "" {
		span.SetAttributes(AttrTaskID.String(taskID))
	}
	if err != nil {
		e := a2a.AsError(err)
		span.SetAttributes(AttrErrorCode.String(e.Code.String()))
		switch binding {
		case a2a.BindingJSONRPC:
			if n := e.Code.JSONRPCCode(); n != 0 {
				span.SetAttributes(attribute.Int("rpc.jsonrpc.error_code", n))
			}
		case a2a.BindingGRPC:
			span.SetAttributes(attribute.Int("rpc.grpc.status_code", e.Code.GRPCCode()))
		}
		span.SetStatus(codes.Error, e.Code.String())
	}
	span.End()
}

// eventAttrs describes a stream event for a span event.
func eventAttrs(ev a2a.Event, id string) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	switch e := ev.(type) {
	case *a2a.Task:
		attrs = append(attrs, attribute.String("a2a.event.kind", "task"), attribute.String("a2a.task.state", e.Status.State.String()))
	case *a2a.Message:
		attrs = append(attrs, attribute.String("a2a.event.kind", "message"))
	case *a2a.TaskStatusUpdateEvent:
		attrs = append(attrs, attribute.String("a2a.event.kind", "status-update"), attribute.String("a2a.task.state", e.Status.State.String()))
	case *a2a.TaskArtifactUpdateEvent:
		attrs = append(attrs, attribute.String("a2a.event.kind", "artifact-update"), attribute.String("a2a.artifact.id", e.Artifact.ArtifactID))
	}
	if id != "" {
		attrs = append(attrs, attribute.String("a2a.event.id", id))
	}
	return attrs
}

// PushHook returns the push.CallHook that traces each webhook call: a
// client span, the child of the execution that produced the task's events
// when it ran in this process (otherwise a root), whose trace context the
// webhook request carries (traceparent).
func (t *Tracing) PushHook() push.CallHook {
	return func(req *http.Request, call push.Result) (*http.Request, func(push.Result)) {
		ctx := req.Context()
		if sc, ok := t.tasks.get(call.TaskID); ok {
			ctx = trace.ContextWithSpanContext(ctx, sc)
		}
		attrs := []attribute.KeyValue{
			AttrTaskID.String(call.TaskID), AttrConfigID.String(call.ConfigID),
			AttrEventSeq.Int64(call.Seq), AttrAttempt.Int(call.Attempt),
			attribute.String("http.request.method", req.Method),
			attribute.String("server.address", req.URL.Hostname()),
		}
		ctx, span := t.tracer.Start(ctx, "a2a.push.deliver", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		t.prop.Inject(ctx, propagation.HeaderCarrier(req.Header))
		return req.WithContext(ctx), func(res push.Result) {
			if res.Status != 0 {
				span.SetAttributes(attribute.Int("http.response.status_code", res.Status))
			}
			if res.Err != nil {
				span.SetStatus(codes.Error, res.Err.Error())
			}
			span.End()
		}
	}
}

// ExecutionHook returns the server.ExecutionHook that traces each
// execution of the agent: a span "a2a.agent.execute", the child of the
// request's span, in the context the agent runs with, so that what the
// agent calls (another agent, through a traced client) joins the trace.
// It also notes the span for the task's webhook calls ([Tracing.PushHook]).
func (t *Tracing) ExecutionHook() server.ExecutionHook {
	return func(from, ctx context.Context, req *server.Request) (context.Context, func(error)) {
		parent := trace.SpanContextFromContext(from)
		if parent.IsValid() {
			ctx = trace.ContextWithSpanContext(ctx, parent)
		}
		attrs := []attribute.KeyValue{AttrTaskID.String(req.TaskID), AttrContextID.String(req.ContextID)}
		if req.Tenant != "" {
			attrs = append(attrs, AttrTenant.String(req.Tenant))
		}
		ctx, span := t.tracer.Start(ctx, "a2a.agent.execute", trace.WithAttributes(attrs...))
		t.tasks.put(req.TaskID, span.SpanContext())
		return ctx, func(err error) {
			if err != nil {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
			}
			span.End()
		}
	}
}

// taskSpans remembers the span of each task's latest execution, for its
// webhook calls, for a while: delivery follows the events within seconds,
// and a task whose webhooks are retried for longer gets root spans.
type taskSpans struct {
	mu sync.Mutex
	m  map[string]taskSpan
}

type taskSpan struct {
	sc trace.SpanContext
	at time.Time
}

const (
	taskSpanTTL   = 15 * time.Minute
	taskSpanSweep = 4096   // entries before expired ones are swept
	taskSpanMax   = 100000 // entries kept at most
)

func newTaskSpans() *taskSpans { return &taskSpans{m: make(map[string]taskSpan)} }

func (ts *taskSpans) put(taskID string, sc trace.SpanContext) {
	if taskID == "" || !sc.IsValid() {
		return
	}
	now := time.Now()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.m) >= taskSpanSweep {
		for id, e := range ts.m {
			if now.Sub(e.at) > taskSpanTTL || len(ts.m) >= taskSpanMax {
				delete(ts.m, id)
			}
		}
	}
	ts.m[taskID] = taskSpan{sc: sc, at: now}
}

func (ts *taskSpans) get(taskID string) (trace.SpanContext, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	e, ok := ts.m[taskID]
	if !ok || time.Since(e.at) > taskSpanTTL {
		return trace.SpanContext{}, false
	}
	return e.sc, true
}
