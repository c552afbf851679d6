package client

import (
	"context"
	"net/http"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// Interceptors. Every call a Client puts on the wire, whichever the
// binding, runs through the client's interceptors, outermost first, as in
// connect-go: each wraps the next and may look at the call before it
// (adding headers, such as W3C trace context), at its outcome after it,
// and at each event of a stream with its id. A call the client makes
// again (a stream [Client.Follow] resumes, say) is a call of its own.
// Metrics, logs and traces are interceptors.

// Call describes one call on the wire, as the interceptors see it. The
// client makes one per call and hands the same value to each interceptor,
// which passes it on to next as it is.
type Call struct {
	// Method is the operation's name, one of the a2a.Method constants.
	Method string
	// Binding is the protocol binding of the interface in use
	// (a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC, ...).
	Binding string
	// URL is the interface's URL.
	URL string
	// Request is the operation's request, as sent: *a2a.SendMessageRequest
	// for SendMessage and SendStreamingMessage, *a2a.GetTaskRequest for
	// GetTask, and so on. Interceptors must not modify it.
	Request any
	// LastEventID is the event a resumed stream continues after, "" for a
	// new one.
	LastEventID string
	// Header holds headers for this call only, sent after the client's own
	// (WithHeader, credentials): HTTP headers on the HTTP bindings,
	// metadata on gRPC. Interceptors may add to it before calling next.
	Header http.Header

	st *state
	o  op
	es *eventStream // the innermost stream, once open
}

// UnaryFunc is a call that answers once: it decodes the result into out, as
// [Transport.Call] does (out nil: the result is not wanted).
type UnaryFunc func(ctx context.Context, call *Call, out any) error

// StreamFunc opens a streaming call (SendStreamingMessage, SubscribeToTask).
type StreamFunc func(ctx context.Context, call *Call) (Stream, error)

// Stream is the events of a streaming call as the interceptors see them.
type Stream interface {
	// Next returns the next event and its id ("" when the binding gives
	// none: gRPC, or a stream that was not SSE); io.EOF when the stream
	// ended cleanly.
	Next() (ev a2a.Event, id string, err error)
	// Close ends the stream; it is called exactly once.
	Close() error
}

// Interceptor wraps the calls of a Client. WrapUnary and WrapStream are
// called once, when the Client is made, and what they return is called
// for each call, from many goroutines at once.
type Interceptor interface {
	WrapUnary(next UnaryFunc) UnaryFunc
	WrapStream(next StreamFunc) StreamFunc
}

// WithInterceptors adds interceptors to the client's calls: the first given
// is the outermost, and interceptors of a later WithInterceptors run
// inside those of an earlier one.
func WithInterceptors(is ...Interceptor) Option {
	return func(c *config) error {
		for _, i := range is {
			if i == nil {
				return optionError("WithInterceptors", "nil interceptor")
			}
		}
		c.interceptors = append(c.interceptors, is...)
		return nil
	}
}

// chain is the interceptors wrapped around the transports, built once.
type chain struct {
	unary  UnaryFunc
	stream StreamFunc
}

func newChain(is []Interceptor) *chain {
	if len(is) == 0 {
		return nil
	}
	ch := &chain{unary: callTransport, stream: openTransport}
	for i := len(is) - 1; i >= 0; i-- {
		ch.unary = is[i].WrapUnary(ch.unary)
		ch.stream = is[i].WrapStream(ch.stream)
	}
	return ch
}

// callTransport is the innermost UnaryFunc: the binding's call, with the
// call's headers.
func callTransport(ctx context.Context, call *Call, out any) error {
	return call.st.t.call(withCallHeader(ctx, call.Header), call.o, call.Request, out)
}

// openTransport is the innermost StreamFunc.
func openTransport(ctx context.Context, call *Call) (Stream, error) {
	s, err := call.st.t.open(withCallHeader(ctx, call.Header), call.o, call.Request, call.LastEventID)
	if err != nil {
		return nil, err
	}
	call.es = s
	return s, nil
}

func (c *Client) newCall(st *state, o op, req any, lastEventID string) *Call {
	return &Call{Method: o.String(), Binding: st.iface.ProtocolBinding, URL: st.iface.URL, Request: req,
		LastEventID: lastEventID, Header: make(http.Header), st: st, o: o}
}

// Next implements [Stream] for the innermost stream.
func (s *eventStream) Next() (a2a.Event, string, error) { return s.next() }

// Close implements [Stream].
func (s *eventStream) Close() error {
	s.close()
	return nil
}

// intercepted is the stream the interceptors returned, seen by the
// client's own loops as an eventStream.
type intercepted struct {
	s    Stream
	call *Call
}

func (i *intercepted) retry() time.Duration {
	if i.call.es == nil {
		return 0
	}
	return i.call.es.retry()
}

type callHeaderKey struct{}

// withCallHeader carries a call's headers to the binding that writes them.
func withCallHeader(ctx context.Context, h http.Header) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return context.WithValue(ctx, callHeaderKey{}, h)
}

// addCallHeader adds the headers of the call ctx carries to h.
func addCallHeader(ctx context.Context, h http.Header) {
	ch, _ := ctx.Value(callHeaderKey{}).(http.Header)
	for k, vs := range ch {
		h[k] = append(h[k], vs...)
	}
}
