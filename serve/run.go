package serve

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/goa2a/a2a/server"
)

// Run serves until ctx ends, then shuts down gracefully (see
// [Server.Shutdown]'s steps) and returns; push delivery and the Handler's
// maintenance run meanwhile. It returns an error when a listener fails
// (everything is stopped at once then) or when the shutdown did not go
// cleanly. Run once; the store stays open, for its opener to close.
func (s *Server) Run(ctx context.Context) error {
	first := false
	s.once.Do(func() { first = true })
	if !first {
		return errors.New("serve: Run called twice, or after Close")
	}
	errc := make(chan error, 1)
	go func() { errc <- s.httpSrv.Serve(s.ln) }()
	opsErrc := make(chan error, 1)
	if s.opsSrv != nil {
		go func() { opsErrc <- s.opsSrv.Serve(s.opsLn) }()
	}
	grpcErrc := make(chan error, 1)
	if s.grpcSrv != nil {
		go func() {
			if err := s.grpcSrv.Serve(s.grpcLn); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				grpcErrc <- fmt.Errorf("grpc: %w", err)
			}
		}()
	}
	stopPush := s.startPush()
	s.ready.Store(true)
	for _, fn := range s.cfg.onStart {
		fn()
	}
	var bindings []string
	for _, in := range s.card.SupportedInterfaces {
		bindings = append(bindings, in.ProtocolBinding)
	}
	authn := s.Authentication()
	if authn == "none" {
		s.log.Warn("serving without authentication", "who", "anyone who can reach the server can use it",
			"hint", "require credentials (serve.WithAPIKeys, WithJWT, WithMutualTLS, WithAuth; a2a serve --api-key, --jwks, --client-ca)")
	}
	attrs := []any{"agent", s.card.Name, "addr", s.ln.Addr().String(), "url", s.base, "bindings", strings.Join(bindings, ","), "auth", authn}
	if s.grpcLn != nil {
		attrs = append(attrs, "grpc_addr", s.grpcLn.Addr().String())
	}
	s.log.Info("serving", attrs...)

	var serveErr error
	select {
	case serveErr = <-errc:
	case serveErr = <-opsErrc:
	case serveErr = <-grpcErrc:
	case <-ctx.Done():
	}
	if serveErr != nil {
		// A listener failed: stop everything at once.
		s.log.Error("serving failed", "err", serveErr)
		s.ready.Store(false)
		s.httpSrv.Close()
		if s.opsSrv != nil {
			s.opsSrv.Close()
		}
		if s.grpcSrv != nil {
			s.grpcSrv.Stop()
		}
		closeCtx, cancel := context.WithTimeout(context.Background(), s.cfg.grace)
		defer cancel()
		_ = s.h.Close(closeCtx)
		stopPush()
		return fmt.Errorf("serve: %w", serveErr)
	}
	err := s.shutdown(errc, stopPush)
	if s.opsSrv != nil {
		// Last, so that probes see 503 until the end.
		opsCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if serr := s.opsSrv.Shutdown(opsCtx); serr != nil {
			s.opsSrv.Close()
		}
		if oerr := <-opsErrc; oerr != nil && !errors.Is(oerr, http.ErrServerClosed) {
			err = errors.Join(err, oerr)
		}
	}
	if err != nil {
		s.log.Error("stopped with errors", "err", err)
		return err
	}
	s.log.Info("stopped")
	return nil
}

// startPush runs the deliverer until the returned function is called,
// which ends deliveries in flight and waits for it; what is not delivered
// stays in the store, for the next start.
func (s *Server) startPush() (stop func()) {
	if s.deliverer == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.deliverer.Run(ctx) // returns ctx's error, at stop
	}()
	return func() {
		cancel()
		<-done
	}
}

// shutdown stops the server gracefully within the grace period:
//
//  1. /readyz answers 503, and the server stops accepting: its listeners
//     and idle connections close, requests in flight go on (their
//     connections close after them).
//  2. Running tasks may finish: the agent's executions are awaited until
//     none runs or most of the grace period has passed (a fifth of it, at
//     most 2s, is kept for the next steps). When they all finished, the
//     calls following them get up to a second to deliver their last
//     events (a stream on a task waiting for authorization never ends by
//     itself).
//  3. The Handler closes: executions still running are canceled and
//     their tasks fail with a message saying the server shut down; open
//     streams end with an error frame; blocking sends waiting for a task
//     return an "unavailable" error.
//  4. The HTTP and gRPC servers wait for those requests to end (forcibly
//     closing connections at the deadline), and for the streams that went
//     on on connections of their own ([server.StreamWatcher]); then push
//     delivery stops.
//
// errc receives the result of the HTTP server's Serve. Step 4 uses
// http.Server.Shutdown, which polls for idle connections every 1ms at
// first, so it returns promptly once the Handler has closed; calling it
// at step 1 instead would leave it polling every 500ms by then.
func (s *Server) shutdown(errc <-chan error, stopPush func()) error {
	grace := s.cfg.grace
	deadline := time.Now().Add(grace)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()

	s.ready.Store(false)
	running := s.agent.running()
	s.log.Info("shutting down", "grace", grace, "running_tasks", running)
	for _, fn := range s.cfg.onStop {
		fn(running)
	}

	// 1. Stop accepting: no new connection; idle ones close now, busy ones
	// after their request.
	var errs []error
	s.httpSrv.SetKeepAlivesEnabled(false)
	s.ln.Close()
	waitGRPC := s.stopGRPC()
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		errs = append(errs, err)
	}

	// 2. Let running tasks reach a state, and their calls end.
	reserve := min(grace/5, 2*time.Second)
	drainCtx, cancelDrain := context.WithDeadline(ctx, deadline.Add(-reserve))
	if s.agent.wait(drainCtx) {
		s.log.Info("running tasks finished")
		// Let the streams and blocking sends of those tasks deliver the
		// final events before the Handler closes, which would end them
		// with an error instead. Streams that would never end (a task
		// waiting for authorization) are cut after a short while.
		settleCtx, cancelSettle := context.WithTimeout(drainCtx, time.Second)
		if !s.calls.wait(settleCtx) {
			s.log.Info("closing streams still open")
		}
		cancelSettle()
	} else {
		s.log.Warn("grace period over: canceling running tasks", "running_tasks", s.agent.running())
	}
	cancelDrain()

	// 3. Cancel what is left and end the streams.
	if err := s.h.Close(ctx); err != nil {
		errs = append(errs, err)
	}

	// 4. Wait for the requests in flight to end.
	waitGRPC(ctx)
	if err := s.httpSrv.Shutdown(ctx); err != nil {
		s.log.Warn("closing connections still open at the deadline", "err", err)
		s.httpSrv.Close()
		errs = append(errs, fmt.Errorf("http shutdown: %w", err))
	}
	// Streams served on connections of their own (server.StreamWatcher)
	// are no requests of the HTTP server's any more: wait for them too.
	if !s.calls.wait(ctx) {
		s.log.Warn("streams still open at the deadline")
	}
	stopPush()
	return errors.Join(errs...)
}

// stopGRPC stops accepting gRPC calls at once and lets those in flight
// end; the returned function waits for them until ctx ends, then cuts the
// rest.
func (s *Server) stopGRPC() (wait func(ctx context.Context)) {
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

// trackedAgent counts the executions of an agent, so that shutdown can
// wait for running tasks without canceling them.
type trackedAgent struct {
	agent server.Agent
	count
}

func (t *trackedAgent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	t.add()
	defer t.done()
	return t.agent.Execute(ctx, req, w)
}

// inflight is an interceptor that counts the Handler's calls in progress
// on every binding: a unary call until it returns, a stream until its last
// event, wherever it is served (a detached stream outlives its HTTP
// request).
type inflight struct{ count }

func (c *inflight) WrapUnary(next server.UnaryFunc) server.UnaryFunc {
	return func(ctx context.Context, call *server.Call) (any, error) {
		c.add()
		defer c.done()
		return next(ctx, call)
	}
}

func (c *inflight) WrapStream(next server.StreamFunc) server.StreamFunc {
	return func(ctx context.Context, call *server.Call) iter.Seq2[server.StreamEvent, error] {
		return func(yield func(server.StreamEvent, error) bool) {
			c.add()
			defer c.done()
			next(ctx, call)(yield)
		}
	}
}

// count is a number of things in progress that can be waited to reach 0.
// It is an atomic counter, so that counting every call costs no lock or
// allocation; waiting polls it, which only a shutdown does.
type count struct{ n atomic.Int64 }

func (c *count) add()         { c.n.Add(1) }
func (c *count) done()        { c.n.Add(-1) }
func (c *count) running() int { return int(c.n.Load()) }

// waitPoll is how often wait looks at the count.
const waitPoll = 5 * time.Millisecond

// wait waits until nothing is in progress, and reports whether that
// happened before ctx ended.
func (c *count) wait(ctx context.Context) bool {
	if c.n.Load() == 0 {
		return true
	}
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if c.n.Load() == 0 {
				return true
			}
		case <-ctx.Done():
			return c.n.Load() == 0
		}
	}
}
