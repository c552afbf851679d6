package a2aotel

import (
	"context"
	"iter"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/goa2a/a2a/server"
)

// ServerInterceptor returns the server.Interceptor that traces each
// operation: a server span, the child of the trace context the request
// carried (its headers or gRPC metadata), in the context the operation
// runs with, ended when it answers or, for a stream, at its last event
// (each event a span event).
func (t *Tracing) ServerInterceptor() server.Interceptor { return serverInterceptor{t} }

type serverInterceptor struct{ t *Tracing }

// start begins the span of call, from the trace context of its request.
func (i serverInterceptor) start(ctx context.Context, call *server.Call) (context.Context, trace.Span) {
	if p, ok := server.ServiceParamsFrom(ctx); ok && p.Metadata != nil {
		ctx = i.t.prop.Extract(ctx, metadataCarrier(p.Metadata))
	}
	return i.t.tracer.Start(ctx, spanName(call.Method), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(callAttrs(call.Method, call.Binding, call.Tenant, call.TaskID)...))
}

func (i serverInterceptor) WrapUnary(next server.UnaryFunc) server.UnaryFunc {
	return func(ctx context.Context, call *server.Call) (any, error) {
		ctx, span := i.start(ctx, call)
		res, err := next(ctx, call)
		endCall(span, call.Binding, call.TaskID, err)
		return res, err
	}
}

func (i serverInterceptor) WrapStream(next server.StreamFunc) server.StreamFunc {
	return func(ctx context.Context, call *server.Call) iter.Seq2[server.StreamEvent, error] {
		return func(yield func(server.StreamEvent, error) bool) {
			ctx, span := i.start(ctx, call)
			var failed error
			defer func() { endCall(span, call.Binding, call.TaskID, failed) }()
			for ev, err := range next(ctx, call) {
				if err != nil {
					failed = err
				} else {
					span.AddEvent("a2a.event", trace.WithAttributes(eventAttrs(ev.Event, ev.ID)...))
				}
				if !yield(ev, err) {
					return
				}
			}
		}
	}
}

// metadataCarrier reads trace context from a request's metadata, whatever
// the case of its keys (HTTP headers are canonical, gRPC metadata lower
// case).
type metadataCarrier map[string][]string

func (m metadataCarrier) Get(key string) string {
	return server.ServiceParams{Metadata: m}.Get(key)
}

func (m metadataCarrier) Set(string, string) {} // never written: the request's

func (m metadataCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

var _ propagation.TextMapCarrier = metadataCarrier(nil)
