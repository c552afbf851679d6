package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/grpcpb"
	"github.com/goa2a/a2a/server/a2agrpc"
)

// The gRPC binding of a2a serve (--grpc-addr): its own listener, the same
// Handler, the same authenticators and the same TLS as the HTTP bindings.

// listenGRPC opens the gRPC listener, when --grpc-addr is set.
func (s *serveRun) listenGRPC() error {
	if s.cfg.grpcAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.grpcAddr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s (--grpc-addr): %w", s.cfg.grpcAddr, err)
	}
	s.grpcLn = ln
	return nil
}

// declareGRPC lists the gRPC binding in the card, after the JSON
// bindings: host:port, the host being the public one (--public-url, or
// the HTTP listener's) and the port the gRPC listener's. Clients use TLS
// for it when they fetched the card over https.
func (s *serveRun) declareGRPC(card *a2a.AgentCard) {
	if s.grpcLn == nil {
		return
	}
	addr := s.grpcLn.Addr().String()
	if u, err := url.Parse(s.base); err == nil && u.Hostname() != "" {
		if _, port, err := net.SplitHostPort(addr); err == nil {
			addr = net.JoinHostPort(u.Hostname(), port)
		}
	}
	card.SupportedInterfaces = append(card.SupportedInterfaces, a2a.AgentInterface{
		URL: addr, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion,
	})
}

// grpcNextKey marks a request that the gRPC binding presents to the HTTP
// authentication chain: once admitted, it goes to the gRPC call, not to
// the HTTP mux.
type grpcNextKey struct{}

// dispatch is the end of the HTTP authentication chain: the A2A mux for
// HTTP requests, the gRPC call for the ones the gRPC binding presents.
func dispatch(app http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if next, ok := r.Context().Value(grpcNextKey{}).(http.Handler); ok {
			next.ServeHTTP(w, r)
			return
		}
		app.ServeHTTP(w, r)
	})
}

// newGRPCServer builds the gRPC server behind guarded, the HTTP chain of
// client key, authentication-failure limit and authenticators.
func (s *serveRun) newGRPCServer(guarded http.Handler) {
	if s.grpcLn == nil {
		return
	}
	auth := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			guarded.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grpcNextKey{}, next)))
		})
	}
	opts := []a2agrpc.Option{a2agrpc.WithLogger(s.log), a2agrpc.WithHTTPAuth(auth),
		// A stats handler sees every call, those refused before any
		// interceptor runs (authentication, before decoding) too.
		a2agrpc.WithServerOptions(grpc.StatsHandler(grpcStats{s.metrics})),
		// The connection limits of the HTTP server: calls at once per
		// connection (as net/http's HTTP/2), the time to set a connection
		// up (--header-timeout), and idle connections closed
		// (--idle-timeout).
		a2agrpc.WithServerOptions(grpc.MaxConcurrentStreams(grpcMaxStreamsPerConn), grpc.ConnectionTimeout(s.cfg.headerTimeout),
			grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: s.cfg.idleTimeout}))}
	if s.cfg.maxBody > 0 {
		opts = append(opts, a2agrpc.WithMaxRecvMsgSize(int(s.cfg.maxBody)))
	}
	if s.tls != nil {
		opts = append(opts, a2agrpc.WithServerOptions(grpc.Creds(credentials.NewTLS(s.tls.config))))
	}
	s.grpcSrv = a2agrpc.NewServer(s.h, opts...)
}

// serveGRPC serves until stopGRPC; a failure of the listener is sent on
// the returned channel.
func (s *serveRun) serveGRPC() <-chan error {
	errc := make(chan error, 1)
	if s.grpcSrv == nil {
		return errc
	}
	go func() {
		if err := s.grpcSrv.Serve(s.grpcLn); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			errc <- fmt.Errorf("grpc: %w", err)
		}
	}()
	return errc
}

// stopGRPC stops accepting gRPC calls at once and lets those in flight
// end; the returned function waits for them until ctx ends, then cuts the
// rest.
func (s *serveRun) stopGRPC() (wait func(ctx context.Context)) {
	if s.grpcSrv == nil {
		return func(context.Context) {}
	}
	done := make(chan struct{})
	go func() {
		s.grpcSrv.GracefulStop()
		close(done)
	}()
	return func(ctx context.Context) {
		select {
		case <-done:
		case <-ctx.Done():
			s.grpcSrv.Stop()
			<-done
		}
	}
}

// printGRPC shows the gRPC interface in the banner.
func (s *serveRun) printGRPC() {
	if s.grpcLn != nil {
		fmt.Fprintf(s.stdout, "  gRPC        %s\n", s.grpcLn.Addr())
	}
}

// grpcMaxStreamsPerConn bounds the calls one gRPC connection may have at
// once, as net/http does for HTTP/2.
const grpcMaxStreamsPerConn = 250

// bindingGRPC labels gRPC streams in /metrics.
const bindingGRPC = "grpc"

// grpcStats records the gRPC calls in /metrics, as a gRPC stats handler:
// each call's method, code and duration, and the streams while they are
// open. Names outside the A2A service count as "unknown", so that a
// client cannot grow the label set.
type grpcStats struct{ m *metrics }

type grpcCallKey struct{}

// grpcCall is what TagRPC learns of a call for HandleRPC.
type grpcCall struct {
	method string
	stream bool
}

func (g grpcStats) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	method := path.Base(info.FullMethodName)
	if path.Dir(info.FullMethodName) != "/"+grpcpb.A2AService_ServiceDesc.ServiceName || !slices.Contains(a2a.Methods(), method) {
		method = methodUnknown
	}
	return context.WithValue(ctx, grpcCallKey{}, &grpcCall{method: method})
}

func (g grpcStats) HandleRPC(ctx context.Context, st stats.RPCStats) {
	c, ok := ctx.Value(grpcCallKey{}).(*grpcCall)
	if !ok {
		return
	}
	switch st := st.(type) {
	case *stats.Begin:
		c.stream = st.IsServerStream
		g.m.requestStarted()
		if c.stream {
			g.m.streamOpened(bindingGRPC)
		}
	case *stats.End:
		if c.stream {
			g.m.streamClosed(bindingGRPC)
		}
		g.m.grpcDone(c.method, status.Code(st.Error).String(), st.EndTime.Sub(st.BeginTime))
	}
}

func (grpcStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (grpcStats) HandleConn(context.Context, stats.ConnStats)                       {}
