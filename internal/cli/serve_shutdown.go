package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/goa2a/a2a/server"
)

// shutdown stops a2a serve gracefully within the grace period:
//
//  1. /readyz answers 503, and the server stops accepting: its listener
//     and idle connections close, requests in flight go on (their
//     connections close after them).
//  2. Running tasks may finish: the agents' executions are awaited until
//     none runs or most of the grace period has passed (a fifth of it, at
//     most 2s, is kept for the next steps). When they all finished, the
//     requests following them get up to a second to deliver their last
//     events (a stream on a task waiting for authorization never ends by
//     itself).
//  3. The handler closes: agents still running are canceled and their
//     tasks fail with a message saying the server shut down; open streams
//     end with an error frame; blocking sends waiting for a task return an
//     "unavailable" error.
//  4. The HTTP server waits for those requests to end (forcibly closing
//     connections at the deadline), and for the streams that went on on
//     connections of their own (server.StreamWatcher), then the store is
//     flushed and closed if it can be.
//
// errc receives the result of the HTTP server's Serve. Step 4 uses
// http.Server.Shutdown, which polls for idle connections every 1ms at
// first, so it returns promptly once the handler has closed; calling it
// at step 1 instead would leave it polling every 500ms by then.
func (s *serveRun) shutdown(errc <-chan error) error {
	grace := s.cfg.grace
	deadline := time.Now().Add(grace)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()

	s.ready.Store(false)
	running := s.agent.running()
	s.log.Info("shutting down", "grace", grace, "running_tasks", running)
	fmt.Fprintf(s.stdout, "stopping: letting %d running task(s) finish (up to %v)\n", running, grace)

	// 1. Stop accepting: no new connection; idle ones close now, busy ones
	// after their request.
	var errs []error
	s.srv.SetKeepAlivesEnabled(false)
	s.ln.Close()
	waitGRPC := s.stopGRPC() // serve_grpc.go
	if err := <-errc; !errors.Is(err, net.ErrClosed) {
		errs = append(errs, err)
	}

	// 2. Let running tasks reach a state, and their requests end.
	reserve := min(grace/5, 2*time.Second)
	drainCtx, cancelDrain := context.WithDeadline(ctx, deadline.Add(-reserve))
	if s.agent.wait(drainCtx) {
		s.log.Info("running tasks finished")
		// Let the streams and blocking sends of those tasks deliver the
		// final events before the handler closes, which would end them
		// with an error instead. Streams that would never end (a task
		// waiting for authorization) are cut after a short while.
		settleCtx, cancelSettle := context.WithTimeout(drainCtx, time.Second)
		if !s.metrics.waitIdle(settleCtx) {
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
	if err := s.srv.Shutdown(ctx); err != nil {
		s.log.Warn("closing connections still open at the deadline", "err", err)
		s.srv.Close()
		errs = append(errs, fmt.Errorf("http shutdown: %w", err))
	}
	// Streams served on connections of their own (server.StreamWatcher)
	// are no requests of the HTTP server's any more: wait for them too.
	if !s.metrics.waitIdle(ctx) {
		s.log.Warn("streams still open at the deadline")
	}
	s.push.stop() // what is not delivered yet stays in the store
	if err := closeStore(s.store); err != nil {
		errs = append(errs, fmt.Errorf("closing the store: %w", err))
	}
	return errors.Join(errs...)
}

// trackedAgent counts the executions of an agent, so that shutdown can
// wait for running tasks without canceling them, and /metrics can show
// how many run.
type trackedAgent struct {
	agent server.Agent

	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil while n is 0
}

func (t *trackedAgent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	t.mu.Lock()
	if t.n == 0 {
		t.idle = make(chan struct{})
	}
	t.n++
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.n--
		if t.n == 0 {
			close(t.idle)
			t.idle = nil
		}
		t.mu.Unlock()
	}()
	return t.agent.Execute(ctx, req, w)
}

func (t *trackedAgent) running() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n
}

// wait waits until no execution runs, and reports whether that happened
// before ctx ended.
func (t *trackedAgent) wait(ctx context.Context) bool {
	for {
		t.mu.Lock()
		idle := t.idle
		t.mu.Unlock()
		if idle == nil {
			return true
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return false
		}
	}
}
