package client

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// Transport carries the operations of one protocol binding that this
// package does not implement itself, such as gRPC (package client/grpcclient).
// Install one with [WithTransport]. The [Client] does everything else:
// it chooses the interface, fills in the tenant, applies [WithTimeout],
// and turns streams into iterators.
//
// method is the A2A operation name, as in the JSON-RPC binding and the
// proto service: "SendMessage", "GetTask", "ListTasks", "CancelTask",
// "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
// "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig",
// "GetExtendedAgentCard" for Call, and "SendStreamingMessage" and
// "SubscribeToTask" for Stream. req is a pointer to the request type of
// package a2a for that operation (*a2a.TaskPushNotificationConfig for
// CreateTaskPushNotificationConfig). out is nil when the result is not
// wanted (DeleteTaskPushNotificationConfig), or a pointer to the result's
// model type (*a2a.Task, *a2a.SendMessageResponse, ...), or a
// *json.RawMessage that wants the result as its ProtoJSON (the client
// does so for GetExtendedAgentCard, to verify signatures from bytes): in
// every case, decoding the result's ProtoJSON into out with
// [encoding/json.Unmarshal] fills it.
//
// An error the agent answered with must be returned as an *[a2a.Error],
// so that callers see the same errors whichever the binding (errors.Is
// with the sentinels of package a2a); an answer that breaks the protocol
// is an [a2a.ErrInvalidAgentResponse]. Any other error means no answer was
// had (see the package doc); when ctx ended, it should wrap ctx.Err().
//
// A Transport must be safe for concurrent use.
type Transport interface {
	// Call makes a unary call and decodes its result into out.
	Call(ctx context.Context, method string, req, out any) error
	// Stream starts a server-streaming call. An error the agent answers
	// before the first event is returned here. Ending ctx, or closing the
	// stream, cancels the call.
	Stream(ctx context.Context, method string, req any) (EventStream, error)
}

// EventStream is the events of one streaming call of a [Transport]. It is
// used by one goroutine at a time.
type EventStream interface {
	// Next returns the next event: an *a2a.Task, *a2a.Message,
	// *a2a.TaskStatusUpdateEvent or *a2a.TaskArtifactUpdateEvent. It
	// returns io.EOF when the stream ended cleanly, and any other error
	// (with the same meaning as for [Transport.Call]) when it failed.
	Next() (a2a.Event, error)
	// Close ends the stream and cancels its call if it is still running.
	// The client calls it exactly once, when it stops reading.
	Close() error
}

// TransportConfig is what a [Transport] needs from the client's options,
// given to the dial function of [WithTransport] once for each agent card
// put to use.
type TransportConfig struct {
	// Extensions are the URIs of [WithExtensions], to be sent as the
	// binding's form of the A2A-Extensions service parameter (A2A §3.2.6).
	// The A2A-Version service parameter is always [a2a.ProtocolVersion].
	Extensions []string
	// Timeout is the [WithTimeout] duration, 0 if none. The client already
	// bounds the context of every unary call with it; a Transport need not
	// apply it again.
	Timeout time.Duration
	// TLS is the TLS configuration of the [WithHTTPClient] client's
	// transport, when it is an *http.Transport with a TLSClientConfig
	// (trusted roots, client certificate); nil otherwise. It is shared
	// with that transport and must not be modified; clone it to change it.
	TLS *tls.Config
	// Header returns the headers to send with one request, as the HTTP
	// bindings send them: those of [WithHeader], then the credentials of
	// [WithBearerToken] and [WithCredentials] (the latter computed with
	// ctx, as for every HTTP request). It does not include A2A-Version or
	// A2A-Extensions. It fails when a credential function fails, or when
	// a security scheme puts its API key in the query string, which a
	// binding without URLs cannot carry.
	Header func(ctx context.Context) (http.Header, error)
	// CardURL is where the agent card was fetched from, "" for a client
	// made with [NewFromCard]. A binding whose interface URL does not say
	// whether to use TLS (gRPC's host:port) must use it when the card came
	// over https: credentials must not travel in the clear to an agent
	// that was found securely.
	CardURL string
}

// WithTransport makes binding usable through transport, the interfaces
// of that protocolBinding ("GRPC", say; compared without regard to case)
// joining those the client can choose from the card, in the card's order
// (A2A §8.3.2), and becoming valid names for [WithBindings]. When the
// client puts an interface of that binding to use (in [New],
// [NewFromCard], or after [Client.RefreshCard] brings a new card), it
// calls dial with the interface, whose URL it has not interpreted beyond
// requiring it to be non-empty, and the [TransportConfig] of the client's
// options. An error from dial fails that call.
//
// The built-in bindings JSONRPC and HTTP+JSON cannot be replaced. Given
// twice for one binding, the last dial wins.
func WithTransport(binding string, dial func(ctx context.Context, iface a2a.AgentInterface, cfg TransportConfig) (Transport, error)) Option {
	return func(c *config) error {
		if binding == "" || strings.ContainsAny(binding, " \t\r\n,") {
			return optionError("WithTransport", "%q is not a binding name", binding)
		}
		if _, builtin := builtinBinding(binding); builtin {
			return optionError("WithTransport", "binding %q is built in", binding)
		}
		if dial == nil {
			return optionError("WithTransport", "nil dial function for binding %q", binding)
		}
		for name := range c.transports {
			if strings.EqualFold(name, binding) {
				delete(c.transports, name)
			}
		}
		if c.transports == nil {
			c.transports = make(map[string]dialFunc)
		}
		c.transports[binding] = dial
		return nil
	}
}

// dialFunc is the dial function of [WithTransport].
type dialFunc = func(ctx context.Context, iface a2a.AgentInterface, cfg TransportConfig) (Transport, error)

// dial makes the transport of an interface whose binding was given to
// [WithTransport].
func (c *Client) dial(ctx context.Context, iface a2a.AgentInterface, cn *conn) (transport, error) {
	dial := c.cfg.transports[iface.ProtocolBinding]
	tc := TransportConfig{
		Extensions: slices.Clone(c.cfg.extensions),
		Timeout:    c.cfg.timeout,
		Header:     cn.header,
		CardURL:    c.cardURL,
	}
	if ht, ok := c.cfg.httpClient.Transport.(*http.Transport); ok && ht.TLSClientConfig != nil {
		tc.TLS = ht.TLSClientConfig
	}
	for _, cr := range cn.creds {
		if k := cr.scheme.APIKey; k != nil && strings.EqualFold(k.Location, "query") {
			return nil, optionError("WithCredentials", "security scheme %q puts its API key in the query string, which the %s binding cannot carry", cr.name, iface.ProtocolBinding)
		}
	}
	t, err := dial(ctx, iface, tc)
	if err != nil {
		return nil, fmt.Errorf("client: %s interface at %q: %w", iface.ProtocolBinding, iface.URL, err)
	}
	if t == nil {
		return nil, fmt.Errorf("client: %s interface at %q: the dial function returned no transport", iface.ProtocolBinding, iface.URL)
	}
	return &customTransport{t: t}, nil
}

// header is [TransportConfig.Header]: the headers of [WithHeader] and the
// credentials, as newRequest and authorize write them on an HTTP request.
func (cn *conn) header(ctx context.Context) (http.Header, error) {
	req := &http.Request{Header: make(http.Header, len(cn.cfg.header)+1), URL: &url.URL{}}
	for k, vs := range cn.cfg.header {
		req.Header[k] = slices.Clone(vs)
	}
	addCallHeader(ctx, req.Header)
	if err := cn.authorize(ctx, req); err != nil {
		return nil, err
	}
	if req.URL.RawQuery != "" { // refused when dialled; kept as a guard
		return nil, fmt.Errorf("client: an API key in the query string cannot be sent on this binding")
	}
	return req.Header, nil
}

// customTransport adapts a [Transport] to the seam of the built-in
// bindings.
type customTransport struct {
	t Transport
}

func (ct *customTransport) call(ctx context.Context, o op, req, out any) error {
	return ct.t.Call(ctx, o.String(), req, out)
}

// open starts a stream. A binding of [WithTransport] has no event ids, so
// there is nothing to resume after: lastEventID is always empty here, and
// [Client.Follow] reconciles the snapshot a new subscription starts with.
func (ct *customTransport) open(ctx context.Context, o op, req any, _ string) (*eventStream, error) {
	s, err := ct.t.Stream(ctx, o.String(), req)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fmt.Errorf("client: %s: the transport returned no stream", o)
	}
	return &eventStream{op: o.String(), src: s}, nil
}

// nextFrom reads the next event of a [Transport]'s stream.
func (s *eventStream) nextFrom() (a2a.Event, string, error) {
	ev, err := s.src.Next()
	switch {
	case err == io.EOF:
		return nil, "", io.EOF
	case err != nil:
		return nil, "", err
	case ev == nil:
		return nil, "", invalidResponse("%s: the stream yielded an empty event", s.op)
	}
	return ev, "", nil
}
