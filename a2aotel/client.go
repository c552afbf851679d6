package a2aotel

import (
	"context"
	"io"
	"net"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
)

// ClientInterceptor returns the client.Interceptor that traces each call a
// client puts on the wire: a client span, the child of the caller's
// context, whose trace context the call carries to the agent (traceparent
// in HTTP headers or gRPC metadata). A stream's span lasts until it ends,
// each event a span event; a resumed stream is a span of its own.
func (t *Tracing) ClientInterceptor() client.Interceptor { return clientInterceptor{t} }

type clientInterceptor struct{ t *Tracing }

func (i clientInterceptor) start(ctx context.Context, call *client.Call) (context.Context, trace.Span) {
	tenant, taskID := a2a.RequestTask(call.Request)
	attrs := callAttrs(call.Method, call.Binding, tenant, taskID)
	if host, port := hostPort(call.URL); host != "" {
		attrs = append(attrs, attribute.String("server.address", host))
		if port != "" {
			attrs = append(attrs, attribute.String("server.port", port))
		}
	}
	if call.LastEventID != "" {
		attrs = append(attrs, attribute.String("a2a.last_event.id", call.LastEventID))
	}
	ctx, span := i.t.tracer.Start(ctx, spanName(call.Method), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	i.t.prop.Inject(ctx, propagation.HeaderCarrier(call.Header))
	return ctx, span
}

// hostPort is the host and port of an interface URL (gRPC's is host:port).
func hostPort(raw string) (host, port string) {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Hostname(), u.Port()
	}
	if h, p, err := net.SplitHostPort(raw); err == nil {
		return h, p
	}
	return "", ""
}

func (i clientInterceptor) WrapUnary(next client.UnaryFunc) client.UnaryFunc {
	return func(ctx context.Context, call *client.Call, out any) error {
		ctx, span := i.start(ctx, call)
		err := next(ctx, call, out)
		_, taskID := a2a.RequestTask(call.Request)
		if err == nil {
			if id := a2a.AnswerTaskID(out); id != "" {
				taskID = id
			}
		}
		endCall(span, call.Binding, taskID, err)
		return err
	}
}

func (i clientInterceptor) WrapStream(next client.StreamFunc) client.StreamFunc {
	return func(ctx context.Context, call *client.Call) (client.Stream, error) {
		ctx, span := i.start(ctx, call)
		s, err := next(ctx, call)
		_, taskID := a2a.RequestTask(call.Request)
		if err != nil {
			endCall(span, call.Binding, taskID, err)
			return nil, err
		}
		return &tracedStream{Stream: s, span: span, binding: call.Binding, taskID: taskID}, nil
	}
}

// tracedStream ends its span when the stream ends or is closed.
type tracedStream struct {
	client.Stream
	span    trace.Span
	binding string
	taskID  string
	ended   bool
}

func (s *tracedStream) Next() (a2a.Event, string, error) {
	ev, id, err := s.Stream.Next()
	switch {
	case err == io.EOF:
		s.end(nil)
	case err != nil:
		s.end(err)
	default:
		if s.taskID == "" {
			s.taskID = a2a.EventTaskID(ev)
		}
		s.span.AddEvent("a2a.event", trace.WithAttributes(eventAttrs(ev, id)...))
	}
	return ev, id, err
}

func (s *tracedStream) Close() error {
	s.end(nil)
	return s.Stream.Close()
}

func (s *tracedStream) end(err error) {
	if !s.ended {
		s.ended = true
		endCall(s.span, s.binding, s.taskID, err)
	}
}
