// Package a2agrpc is the gRPC binding of A2A (A2A §10): the service
// lf.a2a.v1.A2AService of the normative proto, served over a
// [server.Handler].
//
// The binding translates only: requests and responses go through the
// conversions of the proto to the model, errors become gRPC statuses with a
// google.rpc.ErrorInfo (reason and domain a2a-protocol.org), BadRequest and
// RetryInfo details, and the service parameters come from the metadata
// keys a2a-version and a2a-extensions (A2A §10.2). Every protocol rule is
// in the Handler.
//
// [NewServer] returns a ready *grpc.Server; [Register] adds the service to
// a server built elsewhere. Authentication reuses the HTTP middleware of
// package auth through [WithHTTPAuth] (or [HTTPAuthInterceptors]).
//
// Streams (SendStreamingMessage, SubscribeToTask) send one StreamResponse
// per event. They cannot be resumed: the A2A gRPC binding defines no
// equivalent of the Last-Event-ID of the HTTP bindings, so the event ids
// those bindings send are not sent here, and a client that loses a stream
// calls SubscribeToTask again, which starts with the task as it stands.
//
// A client that goes away, or whose deadline passes, ends its call and
// nothing else: a stream stops, a blocking SendMessage stops waiting, and
// the task carries on. Only CancelTask (or closing the Handler) cancels an
// agent.
package a2agrpc

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/grpcpb"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/internal/wire"
)

// DefaultMaxRecvMsgSize is the largest request message [NewServer]
// accepts unless [WithMaxRecvMsgSize] says otherwise: 10 MiB, the default
// body limit of the HTTP bindings. A larger message is refused by gRPC
// with RESOURCE_EXHAUSTED before it is decoded.
const DefaultMaxRecvMsgSize = 10 << 20

// Metadata keys of the A2A service parameters (A2A §10.2): the lowercase
// forms of the A2A-Version and A2A-Extensions headers.
const (
	MetadataVersion    = a2a.MetadataVersion
	MetadataExtensions = a2a.MetadataExtensions
)

// Option configures [NewServer] and [Register].
type Option func(*config)

type config struct {
	log        *slog.Logger
	maxRecv    int
	auth       []func(http.Handler) http.Handler
	serverOpts []grpc.ServerOption
}

// WithLogger sets the logger for internal errors. The default discards
// logs.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithMaxRecvMsgSize sets the largest request message, in bytes, that
// [NewServer] accepts. The default is [DefaultMaxRecvMsgSize]. [Register]
// ignores it.
func WithMaxRecvMsgSize(n int) Option { return func(c *config) { c.maxRecv = n } }

// WithHTTPAuth authenticates every call with mw, HTTP middleware such as
// those of package auth (see [HTTPAuthInterceptors] for how a call is
// presented to it). Given more than once, the middleware run in the order
// given. [Register] ignores it; install [HTTPAuthInterceptors] yourself.
func WithHTTPAuth(mw func(next http.Handler) http.Handler) Option {
	return func(c *config) { c.auth = append(c.auth, mw) }
}

// WithServerOptions adds options to the *grpc.Server that [NewServer]
// makes, such as grpc.Creds for TLS or more interceptors (which run after
// those of [WithHTTPAuth]). An option given here wins over the binding's
// own (grpc.MaxRecvMsgSize). [Register] ignores it.
func WithServerOptions(opts ...grpc.ServerOption) Option {
	return func(c *config) { c.serverOpts = append(c.serverOpts, opts...) }
}

func newConfig(opts []Option) *config {
	c := &config{log: slog.New(slog.DiscardHandler), maxRecv: DefaultMaxRecvMsgSize}
	for _, o := range opts {
		o(c)
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c
}

// NewServer returns a gRPC server serving h as lf.a2a.v1.A2AService, with
// the authentication of [WithHTTPAuth] in front of it. Serve it on a
// listener (grpc.Server.Serve), with TLS (A2A §10.1: grpc.Creds through
// [WithServerOptions]) unless something in front terminates it. The
// interface URL of this binding in the agent card is "host:port", with
// protocolBinding [a2a.BindingGRPC].
//
// Stopping the server does not close h.
//
// The authentication of a unary call runs before its message is decoded:
// a call without credentials is refused UNAUTHENTICATED whatever it
// carries, and costs no decoding (a message of 10 MiB of empty parts
// decodes to some 160 MB). It runs in the call's own goroutine, not in
// the connection's reader, so a slow authenticator (a cold JWKS fetch)
// holds up that call alone. Streams are authenticated before their first
// message is read, by a stream interceptor.
func NewServer(h *server.Handler, opts ...Option) *grpc.Server {
	c := newConfig(opts)
	so := []grpc.ServerOption{grpc.MaxRecvMsgSize(c.maxRecv)}
	var chains []http.Handler
	for _, mw := range c.auth {
		_, stream := HTTPAuthInterceptors(mw)
		so = append(so, grpc.ChainStreamInterceptor(stream))
		chains = append(chains, mw(http.HandlerFunc(passed)))
	}
	so = append(so, c.serverOpts...)
	s := grpc.NewServer(so...)
	desc := authenticateFirst(grpcpb.A2AService_ServiceDesc, chains)
	s.RegisterService(&desc, &service{h: h, log: c.log})
	return s
}

// Register adds the A2A service over h to s. Of the options only
// [WithLogger] applies: the other ones configure the server, which the
// caller built. Authentication installed as interceptors
// ([HTTPAuthInterceptors]) runs after gRPC has decoded a unary call's
// message; [NewServer] with [WithHTTPAuth] authenticates before.
func Register(s grpc.ServiceRegistrar, h *server.Handler, opts ...Option) {
	c := newConfig(opts)
	grpcpb.RegisterA2AServiceServer(s, &service{h: h, log: c.log})
}

// authenticateFirst returns desc with each unary method's handler behind
// chains, the authentication middleware in order: a method handler gets
// the message's decoder (dec) and decodes before it calls the
// interceptors, so authenticating there, before the generated handler
// runs, is the one place that comes before decoding.
func authenticateFirst(desc grpc.ServiceDesc, chains []http.Handler) grpc.ServiceDesc {
	if len(chains) == 0 {
		return desc
	}
	methods := make([]grpc.MethodDesc, len(desc.Methods))
	for i, m := range desc.Methods {
		handler, full := m.Handler, "/"+desc.ServiceName+"/"+m.MethodName
		m.Handler = func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			return authenticated(chains, ctx, full, func(ctx context.Context) (any, error) {
				return handler(srv, ctx, dec, interceptor)
			})
		}
		methods[i] = m
	}
	desc.Methods = methods
	return desc
}

// authenticated runs call if every chain, in order, passes it on.
func authenticated(chains []http.Handler, ctx context.Context, method string, call func(context.Context) (any, error)) (any, error) {
	if len(chains) == 0 {
		return call(ctx)
	}
	var (
		res any
		err error
	)
	refused, hdr := authenticate(chains[0], ctx, method, func(ctx context.Context) {
		res, err = authenticated(chains[1:], ctx, method, call)
	})
	if refused != nil {
		if hdr != nil {
			_ = grpc.SetHeader(ctx, hdr)
		}
		return nil, refused.Err()
	}
	return res, err
}

// service implements grpcpb.A2AServiceServer over a Handler.
type service struct {
	grpcpb.UnimplementedA2AServiceServer
	h   *server.Handler
	log *slog.Logger
}

// serviceParams reads the A2A service parameters from the incoming
// metadata: the first a2a-version, as HTTP reads the first header, and
// every a2a-extensions entry, each comma-separated (A2A §10.2). A missing
// version is passed on as missing: the Handler decides what it means.
func serviceParams(ctx context.Context) server.ServiceParams {
	md, _ := metadata.FromIncomingContext(ctx)
	p := server.ServiceParams{Binding: a2a.BindingGRPC, Metadata: md}
	if v := md.Get(MetadataVersion); len(v) > 0 {
		p.Version = strings.TrimSpace(v[0])
	}
	p.Extensions = server.ParseList(md.Get(MetadataExtensions))
	return p
}

// decode checks the nesting of in against the Handler's limit, as the
// JSON bindings check their bodies, then converts it to the model.
func (s *service) decode(in proto.Message, v any) error {
	if max := s.h.Limits().MaxDepth; tooDeep(in.ProtoReflect(), max) {
		return depthError(max)
	}
	if err := grpcpb.FromProto(in, v); err != nil {
		// A message valid as protobuf that breaks a rule of the model,
		// such as an enum number it does not know.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return wire.DecodeError(err)
	}
	return nil
}

// statusErr turns an error of the Handler into the gRPC status the client
// receives. A call that ended because the client cancelled it or its
// deadline passed gets the usual gRPC code for that; the client has gone
// or is about to.
func (s *service) statusErr(ctx context.Context, err error) error {
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return status.FromContextError(ctx.Err()).Err()
	}
	e := a2a.AsError(err)
	if e.Code == a2a.CodeInternal || e.Code == a2a.CodeUnknown {
		s.log.Error("internal error", "err", err)
	}
	return grpcpb.Status(e).Err()
}

// encodeFailed is the answer when a result cannot be converted to its
// proto message, which would be a bug.
func (s *service) encodeFailed(op string, err error) error {
	s.log.Error("encoding gRPC result", "method", op, "err", err)
	return grpcpb.Status(a2a.NewError(a2a.CodeInternal, "")).Err()
}

// mdResponse is server.ResponseMetadata kept as gRPC header metadata.
type mdResponse metadata.MD

func (m mdResponse) ActivateExtension(uri string) { metadata.MD(m).Append(MetadataExtensions, uri) }
func (m mdResponse) Set(key, value string)        { metadata.MD(m).Set(key, value) }

// unary runs one unary call: in is decoded into a Req, call runs with the
// service parameters in its context, and its result is encoded into a new
// Out. What the Handler adds to the answer (see
// [server.ServiceParams].Response) is sent as header metadata.
func unary[Req, Res, Out any, PO interface {
	*Out
	proto.Message
}](s *service, ctx context.Context, op string, in proto.Message, call func(context.Context, *Req) (Res, error)) (*Out, error) {
	var req Req
	if err := s.decode(in, &req); err != nil {
		return nil, s.statusErr(ctx, err)
	}
	p := serviceParams(ctx)
	md := make(metadata.MD)
	p.Response = mdResponse(md)
	res, err := call(server.WithServiceParams(ctx, p), &req)
	if len(md) > 0 {
		if herr := grpc.SetHeader(ctx, md); herr != nil {
			s.log.Debug("setting gRPC header", "method", op, "err", herr)
		}
	}
	if err != nil {
		return nil, s.statusErr(ctx, err)
	}
	out := PO(new(Out))
	if err := grpcpb.ToProto(res, out); err != nil {
		return nil, s.encodeFailed(op, err)
	}
	return out, nil
}

// stream runs one streaming call: in is decoded into a Req, and each event
// of the stream open returns is sent as a StreamResponse. An error ends
// the call with its status, whether it came before the first frame or
// after; the client's going away ends it too, and stops the Handler's
// stream (the task is not affected).
func stream[Req any](s *service, ss grpc.ServerStream, op string, in proto.Message, open func(context.Context, *Req) iter.Seq2[server.StreamEvent, error]) error {
	ctx := ss.Context()
	var req Req
	if err := s.decode(in, &req); err != nil {
		return s.statusErr(ctx, err)
	}
	for ev, err := range open(server.WithServiceParams(ctx, serviceParams(ctx)), &req) {
		if err != nil {
			return s.statusErr(ctx, err)
		}
		var out grpcpb.StreamResponse
		if err := grpcpb.ToProto(a2a.StreamResponse{Event: ev.Event}, &out); err != nil {
			return s.encodeFailed(op, err)
		}
		if err := ss.SendMsg(&out); err != nil {
			// The client is gone (or the transport failed): leaving the
			// loop stops the Handler's stream.
			return err
		}
	}
	return nil
}

// SendMessage implements A2AService.SendMessage.
func (s *service) SendMessage(ctx context.Context, in *grpcpb.SendMessageRequest) (*grpcpb.SendMessageResponse, error) {
	return unary[a2a.SendMessageRequest, *a2a.SendMessageResponse, grpcpb.SendMessageResponse](s, ctx, a2a.MethodSendMessage, in, s.h.SendMessage)
}

// SendStreamingMessage implements A2AService.SendStreamingMessage.
func (s *service) SendStreamingMessage(in *grpcpb.SendMessageRequest, ss grpc.ServerStreamingServer[grpcpb.StreamResponse]) error {
	return stream(s, ss, a2a.MethodSendStreamingMessage, in, s.h.SendStreamingMessage)
}

// GetTask implements A2AService.GetTask.
func (s *service) GetTask(ctx context.Context, in *grpcpb.GetTaskRequest) (*grpcpb.Task, error) {
	return unary[a2a.GetTaskRequest, *a2a.Task, grpcpb.Task](s, ctx, a2a.MethodGetTask, in, s.h.GetTask)
}

// ListTasks implements A2AService.ListTasks.
func (s *service) ListTasks(ctx context.Context, in *grpcpb.ListTasksRequest) (*grpcpb.ListTasksResponse, error) {
	return unary[a2a.ListTasksRequest, *a2a.ListTasksResponse, grpcpb.ListTasksResponse](s, ctx, a2a.MethodListTasks, in, s.h.ListTasks)
}

// CancelTask implements A2AService.CancelTask.
func (s *service) CancelTask(ctx context.Context, in *grpcpb.CancelTaskRequest) (*grpcpb.Task, error) {
	return unary[a2a.CancelTaskRequest, *a2a.Task, grpcpb.Task](s, ctx, a2a.MethodCancelTask, in, s.h.CancelTask)
}

// SubscribeToTask implements A2AService.SubscribeToTask.
func (s *service) SubscribeToTask(in *grpcpb.SubscribeToTaskRequest, ss grpc.ServerStreamingServer[grpcpb.StreamResponse]) error {
	return stream(s, ss, a2a.MethodSubscribeToTask, in, s.h.SubscribeToTask)
}

// CreateTaskPushNotificationConfig implements
// A2AService.CreateTaskPushNotificationConfig.
func (s *service) CreateTaskPushNotificationConfig(ctx context.Context, in *grpcpb.TaskPushNotificationConfig) (*grpcpb.TaskPushNotificationConfig, error) {
	return unary[a2a.TaskPushNotificationConfig, *a2a.TaskPushNotificationConfig, grpcpb.TaskPushNotificationConfig](s, ctx, a2a.MethodCreateTaskPushNotificationConfig, in, s.h.CreateTaskPushNotificationConfig)
}

// GetTaskPushNotificationConfig implements
// A2AService.GetTaskPushNotificationConfig.
func (s *service) GetTaskPushNotificationConfig(ctx context.Context, in *grpcpb.GetTaskPushNotificationConfigRequest) (*grpcpb.TaskPushNotificationConfig, error) {
	return unary[a2a.GetTaskPushNotificationConfigRequest, *a2a.TaskPushNotificationConfig, grpcpb.TaskPushNotificationConfig](s, ctx, a2a.MethodGetTaskPushNotificationConfig, in, s.h.GetTaskPushNotificationConfig)
}

// ListTaskPushNotificationConfigs implements
// A2AService.ListTaskPushNotificationConfigs.
func (s *service) ListTaskPushNotificationConfigs(ctx context.Context, in *grpcpb.ListTaskPushNotificationConfigsRequest) (*grpcpb.ListTaskPushNotificationConfigsResponse, error) {
	return unary[a2a.ListTaskPushNotificationConfigsRequest, *a2a.ListTaskPushNotificationConfigsResponse, grpcpb.ListTaskPushNotificationConfigsResponse](s, ctx, a2a.MethodListTaskPushNotificationConfigs, in, s.h.ListTaskPushNotificationConfigs)
}

// GetExtendedAgentCard implements A2AService.GetExtendedAgentCard.
func (s *service) GetExtendedAgentCard(ctx context.Context, in *grpcpb.GetExtendedAgentCardRequest) (*grpcpb.AgentCard, error) {
	return unary[a2a.GetExtendedAgentCardRequest, *a2a.AgentCard, grpcpb.AgentCard](s, ctx, a2a.MethodGetExtendedAgentCard, in, s.h.GetExtendedAgentCard)
}

// DeleteTaskPushNotificationConfig implements
// A2AService.DeleteTaskPushNotificationConfig.
func (s *service) DeleteTaskPushNotificationConfig(ctx context.Context, in *grpcpb.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	del := func(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest) (struct{}, error) {
		return struct{}{}, s.h.DeleteTaskPushNotificationConfig(ctx, req)
	}
	return unary[a2a.DeleteTaskPushNotificationConfigRequest, struct{}, emptypb.Empty](s, ctx, a2a.MethodDeleteTaskPushNotificationConfig, in, del)
}
