// Package grpcclient adds the gRPC binding of A2A (A2A §10) to package
// client, as a [client.Transport]:
//
//	c, err := client.New(ctx, baseURL, grpcclient.Transport())
//
// With it, the card's interfaces whose protocolBinding is "GRPC" are
// candidates like the JSON ones, in the card's order (A2A §8.3.2), and
// client.WithBindings("GRPC") prefers them. Every operation of
// [client.Client] works the same on every binding: the same request and
// result types, the same *a2a.Error kinds (from the google.rpc.ErrorInfo
// reason, then the gRPC code), the same streams.
//
// # Addresses and TLS
//
// The URL of a gRPC interface is taken in one of three forms:
//
//   - "host:port", the usual form for gRPC: TLS when [WithTLS] is given,
//     when the client has TLS settings (the TLSClientConfig of the
//     client.WithHTTPClient client's *http.Transport, as a2a --cacert
//     and --cert make), or when the card was fetched over https (then
//     with the system's roots); plaintext (h2c) otherwise, that is for
//     an agent found over plain http;
//   - "https://host[:port]": TLS (port 443 by default), with the settings
//     of [WithTLS], else the client's, else the system's roots;
//   - "http://host[:port]": plaintext (port 80 by default).
//
// A URL with a path, a query or user information is refused, as is any
// other scheme: the gRPC method paths are fixed (/lf.a2a.v1.A2AService/…).
// A2A §10.1 asks for TLS in production; plaintext is for local use and
// for deployments that terminate TLS in front of the agent.
//
// # Metadata
//
// Every call carries "a2a-version: 1.0" and, with client.WithExtensions,
// "a2a-extensions" (comma-separated), the gRPC form of the A2A service
// parameters (A2A §10.2); the headers of client.WithHeader and the
// credentials of client.WithBearerToken and client.WithCredentials, with
// lower-case keys ("authorization", "x-api-key", ...), as the HTTP
// bindings send them as headers. An API key that a security scheme puts in
// the query string cannot be sent and makes the client fail when it is
// made. Metadata the caller put in the context with
// metadata.AppendToOutgoingContext is sent too.
//
// # Connections
//
// The [client.Option] that [Transport] returns dials each distinct address
// once, lazily (grpc.NewClient), and shares the connection between the
// clients made with that same option value and across card refreshes.
// Connections are not closed explicitly: like an http.Transport's idle
// connections, they live on, and gRPC lets them go after its idle timeout
// (30 minutes unless [WithDialOptions] sets grpc.WithIdleTimeout).
package grpcclient

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/internal/grpcpb"
)

// maxMessageBytes bounds a received message, as the JSON bindings bound a
// response body (64 MiB; gRPC's own default is 4 MiB).
const maxMessageBytes = 64 << 20

// Option configures [Transport].
type Option func(*settings)

type settings struct {
	tls     bool
	tlsConf *tls.Config
	dial    []grpc.DialOption
}

// WithTLS makes the transport use TLS for "host:port" interfaces too, and
// sets the configuration of every TLS connection (trusted roots, client
// certificate for mutual TLS, server name). A nil cfg means the system's
// roots. By default, "host:port" is plaintext only for an agent whose
// card came over plain http and a client without TLS settings (see the
// package doc).
func WithTLS(cfg *tls.Config) Option {
	return func(s *settings) {
		s.tls = true
		s.tlsConf = cfg
	}
}

// WithDialOptions adds options to grpc.NewClient, after the transport's
// own (credentials, message size limit), so that they can override them:
// interceptors, keepalive, an idle timeout, a custom dialer.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(s *settings) { s.dial = append(s.dial, opts...) }
}

// Transport returns the client option that makes the "GRPC" binding
// ([a2a.BindingGRPC]) usable; see the package doc. A nil option is
// ignored.
func Transport(opts ...Option) client.Option {
	d := &dialer{conns: make(map[connKey]*grpc.ClientConn)}
	for _, o := range opts {
		if o != nil {
			o(&d.s)
		}
	}
	return client.WithTransport(a2a.BindingGRPC, d.dial)
}

// dialer makes the transports of one [Transport] option, sharing a
// connection per address and TLS configuration.
type dialer struct {
	s     settings
	mu    sync.Mutex
	conns map[connKey]*grpc.ClientConn
}

type connKey struct {
	target string
	tls    bool
	conf   *tls.Config
}

func (d *dialer) dial(_ context.Context, iface a2a.AgentInterface, cfg client.TransportConfig) (client.Transport, error) {
	target, scheme, err := parseURL(iface.URL)
	if err != nil {
		return nil, err
	}
	key := connKey{target: target}
	switch {
	case scheme == "http":
	case scheme == "https", d.s.tls:
		key.tls, key.conf = true, d.s.tlsConf
		if !d.s.tls {
			key.conf = cfg.TLS
		}
	case cfg.TLS != nil:
		key.tls, key.conf = true, cfg.TLS
	case strings.HasPrefix(strings.ToLower(cfg.CardURL), "https://"):
		// A host:port found through a card fetched over TLS: TLS with the
		// system's roots, never plaintext (the credentials would travel
		// in the clear).
		key.tls = true
	}
	cc, err := d.conn(key)
	if err != nil {
		return nil, err
	}
	return &transport{cc: cc, api: grpcpb.NewA2AServiceClient(cc), cfg: cfg}, nil
}

// conn returns the connection of key, made on first use.
func (d *dialer) conn(key connKey) (*grpc.ClientConn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if cc, ok := d.conns[key]; ok {
		return cc, nil
	}
	creds := insecure.NewCredentials()
	if key.tls {
		conf := key.conf
		if conf == nil {
			conf = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		creds = credentials.NewTLS(conf) // clones conf
	}
	opts := append([]grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessageBytes)),
	}, d.s.dial...)
	cc, err := grpc.NewClient(key.target, opts...)
	if err != nil {
		return nil, fmt.Errorf("grpcclient: %s: %w", key.target, err)
	}
	d.conns[key] = cc
	return cc, nil
}

// parseURL reads the URL of a gRPC interface (see the package doc): the
// host:port to dial, and the scheme, "" when there is none.
func parseURL(raw string) (target, scheme string, err error) {
	bad := func(why string) (string, string, error) {
		return "", "", fmt.Errorf("grpcclient: interface URL %q: %s", raw, why)
	}
	if !strings.Contains(raw, "://") {
		host, port, err := net.SplitHostPort(raw)
		if err != nil || host == "" || port == "" {
			return bad("want host:port, https://host[:port] or http://host[:port]")
		}
		return raw, "", nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad(err.Error())
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("the scheme must be http or https, or none")
	case u.Hostname() == "":
		return bad("no host")
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return bad("user information, a query or a fragment cannot be used with gRPC")
	case u.Path != "" && u.Path != "/":
		return bad("gRPC method paths are fixed: the URL cannot have a path")
	}
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(u.Hostname(), port), u.Scheme, nil
}

// transport calls one gRPC interface.
type transport struct {
	cc  *grpc.ClientConn
	api grpcpb.A2AServiceClient
	cfg client.TransportConfig
}

// unaryMethod returns the full gRPC method name of a unary A2A operation
// and fresh messages for its request and result.
func unaryMethod(name string) (full string, in, out proto.Message, ok bool) {
	switch name {
	case a2a.MethodSendMessage:
		return grpcpb.A2AService_SendMessage_FullMethodName, new(grpcpb.SendMessageRequest), new(grpcpb.SendMessageResponse), true
	case a2a.MethodGetTask:
		return grpcpb.A2AService_GetTask_FullMethodName, new(grpcpb.GetTaskRequest), new(grpcpb.Task), true
	case a2a.MethodListTasks:
		return grpcpb.A2AService_ListTasks_FullMethodName, new(grpcpb.ListTasksRequest), new(grpcpb.ListTasksResponse), true
	case a2a.MethodCancelTask:
		return grpcpb.A2AService_CancelTask_FullMethodName, new(grpcpb.CancelTaskRequest), new(grpcpb.Task), true
	case a2a.MethodCreateTaskPushNotificationConfig:
		return grpcpb.A2AService_CreateTaskPushNotificationConfig_FullMethodName, new(grpcpb.TaskPushNotificationConfig), new(grpcpb.TaskPushNotificationConfig), true
	case a2a.MethodGetTaskPushNotificationConfig:
		return grpcpb.A2AService_GetTaskPushNotificationConfig_FullMethodName, new(grpcpb.GetTaskPushNotificationConfigRequest), new(grpcpb.TaskPushNotificationConfig), true
	case a2a.MethodListTaskPushNotificationConfigs:
		return grpcpb.A2AService_ListTaskPushNotificationConfigs_FullMethodName, new(grpcpb.ListTaskPushNotificationConfigsRequest), new(grpcpb.ListTaskPushNotificationConfigsResponse), true
	case a2a.MethodDeleteTaskPushNotificationConfig:
		return grpcpb.A2AService_DeleteTaskPushNotificationConfig_FullMethodName, new(grpcpb.DeleteTaskPushNotificationConfigRequest), new(emptypb.Empty), true
	case a2a.MethodGetExtendedAgentCard:
		return grpcpb.A2AService_GetExtendedAgentCard_FullMethodName, new(grpcpb.GetExtendedAgentCardRequest), new(grpcpb.AgentCard), true
	}
	return "", nil, nil, false
}

// Call makes a unary call (see [client.Transport]).
func (t *transport) Call(ctx context.Context, method string, req, out any) error {
	full, in, resp, ok := unaryMethod(method)
	if !ok {
		return fmt.Errorf("grpcclient: %q is not a unary A2A operation", method)
	}
	if err := grpcpb.ToProto(req, in); err != nil {
		return fmt.Errorf("grpcclient: %s: encoding the request: %w", method, err)
	}
	callCtx, err := t.outgoing(ctx)
	if err != nil {
		return err
	}
	var md metadata.MD
	if err := t.cc.Invoke(callCtx, full, in, resp, grpc.Header(&md)); err != nil {
		return callError(ctx, method, err)
	}
	if len(md) > 0 {
		// For extensions that answer in headers (server.PushDeliveryHeader).
		hdr := make(http.Header, len(md))
		for k, vs := range md {
			for _, v := range vs {
				hdr.Add(k, v)
			}
		}
		client.SetResponseHeader(ctx, hdr)
	}
	if out == nil {
		return nil
	}
	if err := grpcpb.FromProto(resp, out); err != nil {
		return invalidResponse(err, "%s: malformed result: %v", method, err)
	}
	return nil
}

// Stream starts a server-streaming call (see [client.Transport]). It
// waits for the first event, so that an error the agent answers at once
// (an unsupported operation, a task not found) is returned here rather
// than by the first Next.
func (t *transport) Stream(ctx context.Context, method string, req any) (client.EventStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	s, err := t.open(ctx, method, req)
	if err != nil {
		cancel()
		return nil, err
	}
	es := &stream{method: method, ctx: ctx, cancel: cancel, s: s}
	first, err := s.Recv()
	switch {
	case err == io.EOF:
		es.done = true
	case err != nil:
		cancel()
		return nil, callError(ctx, method, err)
	default:
		es.first = first
	}
	return es, nil
}

func (t *transport) open(ctx context.Context, method string, req any) (grpc.ServerStreamingClient[grpcpb.StreamResponse], error) {
	var in proto.Message
	switch method {
	case a2a.MethodSendStreamingMessage:
		in = new(grpcpb.SendMessageRequest)
	case a2a.MethodSubscribeToTask:
		in = new(grpcpb.SubscribeToTaskRequest)
	default:
		return nil, fmt.Errorf("grpcclient: %q is not a streaming A2A operation", method)
	}
	if err := grpcpb.ToProto(req, in); err != nil {
		return nil, fmt.Errorf("grpcclient: %s: encoding the request: %w", method, err)
	}
	callCtx, err := t.outgoing(ctx)
	if err != nil {
		return nil, err
	}
	var s grpc.ServerStreamingClient[grpcpb.StreamResponse]
	if m, ok := in.(*grpcpb.SendMessageRequest); ok {
		s, err = t.api.SendStreamingMessage(callCtx, m)
	} else {
		s, err = t.api.SubscribeToTask(callCtx, in.(*grpcpb.SubscribeToTaskRequest))
	}
	if err != nil {
		return nil, callError(ctx, method, err)
	}
	return s, nil
}

// outgoing adds the metadata of one call to ctx: the client's headers and
// credentials, then the service parameters (A2A §10.2).
func (t *transport) outgoing(ctx context.Context) (context.Context, error) {
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	if t.cfg.Header != nil {
		h, err := t.cfg.Header(ctx)
		if err != nil {
			return nil, err
		}
		for k, vs := range h {
			md.Append(k, vs...) // Append lower-cases the key
		}
	}
	md.Set(a2a.MetadataVersion, a2a.ProtocolVersion)
	if len(t.cfg.Extensions) > 0 {
		md.Set(a2a.MetadataExtensions, strings.Join(t.cfg.Extensions, ","))
	}
	return metadata.NewOutgoingContext(ctx, md), nil
}

// stream is the [client.EventStream] of one streaming call.
type stream struct {
	method string
	ctx    context.Context // the call's; canceled by Close
	cancel context.CancelFunc
	s      grpc.ServerStreamingClient[grpcpb.StreamResponse]
	first  *grpcpb.StreamResponse // read by Stream, not yet returned
	done   bool
}

// Next returns the next event, io.EOF at the end of the stream.
func (s *stream) Next() (a2a.Event, error) {
	if s.done {
		return nil, io.EOF
	}
	m := s.first
	s.first = nil
	if m == nil {
		var err error
		if m, err = s.s.Recv(); err != nil {
			if err == io.EOF {
				s.done = true
				return nil, io.EOF
			}
			return nil, callError(s.ctx, s.method, err)
		}
	}
	var sr a2a.StreamResponse
	if err := grpcpb.FromProto(m, &sr); err != nil {
		return nil, invalidResponse(err, "%s: malformed stream event: %v", s.method, err)
	}
	if sr.Event == nil {
		return nil, invalidResponse(nil, "%s: a stream event carries no task, message or update", s.method)
	}
	return sr.Event, nil
}

// Close cancels the call, which ends it on the server too.
func (s *stream) Close() error {
	s.cancel()
	s.done = true
	return nil
}

// callError turns the error of a call into the client's kinds: the end
// of ctx stays a context error, a status without details that says the
// connection failed (UNAVAILABLE) stays a transport error, and any other
// status is the A2A error it carries (grpcpb.Error).
func callError(ctx context.Context, method string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("grpcclient: %s: %w", method, err)
	}
	if st.Code() == codes.Canceled || st.Code() == codes.DeadlineExceeded {
		if cerr := ctx.Err(); cerr != nil {
			return fmt.Errorf("grpcclient: %s: %w", method, cerr)
		}
		// The server ends the call at the deadline the call carried
		// (grpc-timeout), and its answer may arrive before ctx's own
		// timer has fired: past the deadline, it is still the caller's.
		if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
			return fmt.Errorf("grpcclient: %s: %w", method, context.DeadlineExceeded)
		}
	}
	if st.Code() == codes.Unavailable && len(st.Proto().GetDetails()) == 0 {
		return fmt.Errorf("grpcclient: %s: %w", method, err)
	}
	return grpcpb.Error(st)
}

// invalidResponse is the error for an answer that breaks the protocol.
func invalidResponse(cause error, format string, args ...any) error {
	e := a2a.NewError(a2a.CodeInvalidAgentResponse, fmt.Sprintf(format, args...))
	if cause != nil {
		e = e.WithCause(cause)
	}
	return e
}
