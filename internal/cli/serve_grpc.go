package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/goa2a/a2a/a2a"
	a2agrpc "github.com/goa2a/a2a/server/grpc"
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
		// Outermost (grpc.UnaryInterceptor runs before any chained one), so
		// that refused calls are counted too.
		a2agrpc.WithServerOptions(grpc.UnaryInterceptor(s.countUnary), grpc.StreamInterceptor(s.countStream)),
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

// countUnary records a unary gRPC call in /metrics.
func (s *serveRun) countUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	s.metrics.requestStarted()
	res, err := handler(ctx, req)
	s.metrics.grpcDone(path.Base(info.FullMethod), status.Code(err).String(), time.Since(start))
	return res, err
}

// countStream records a streaming gRPC call in /metrics, and counts it
// among the open streams while it runs.
func (s *serveRun) countStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	s.metrics.requestStarted()
	s.metrics.streamOpened(bindingGRPC)
	err := handler(srv, ss)
	s.metrics.streamClosed(bindingGRPC)
	s.metrics.grpcDone(path.Base(info.FullMethod), status.Code(err).String(), time.Since(start))
	return err
}
