package server_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// twoExecutions is a task with two executions of the agent running at
// once: the first asks for input and stays, blocked on first; a client's
// answer starts the second, which reports working and waits on second,
// then completes the task when finish is set, and returns without ending
// it otherwise. Each execution that returns (its settle done) gives back
// its task slot, which sends on released.
type twoExecutions struct {
	h                *server.Handler
	id               string
	first, second    chan struct{}
	working          chan struct{}
	released         chan struct{}
	firstErr, secErr chan error
}

func startTwoExecutions(t *testing.T, finish bool) *twoExecutions {
	t.Helper()
	x := &twoExecutions{
		first:    make(chan struct{}),
		second:   make(chan struct{}),
		working:  make(chan struct{}, 1),
		released: make(chan struct{}, 4),
		firstErr: make(chan error, 1),
		secErr:   make(chan error, 1),
	}
	ids := make(chan string, 1)
	x.h = newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Task == nil {
			if err := w.RequireInput(ctx, "More, please."); err != nil {
				return err
			}
			if err := w.Flush(ctx); err != nil {
				return err
			}
			ids <- req.TaskID
			err := await(ctx, x.first)
			x.firstErr <- err
			return err
		}
		if err := w.Working(ctx, "on it"); err != nil {
			return err
		}
		if err := w.Flush(ctx); err != nil {
			return err
		}
		x.working <- struct{}{}
		if err := await(ctx, x.second); err != nil {
			return err
		}
		if !finish {
			x.secErr <- nil
			return nil
		}
		err := w.Complete(ctx, "done")
		x.secErr <- err
		return err
	})
	// Set before the Handler serves calls. Only the two executions hold
	// task slots (no stream is opened), so a release is an execution that
	// returned and was settled.
	server.OnLimitRelease(x.h, func() {
		select {
		case x.released <- struct{}{}:
		default:
		}
	})
	ctx := testCtx(t)
	if _, err := x.h.SendMessage(ctx, immediate(newRequest("go"))); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	x.id = recv(t, ids) // input-required is stored
	res, err := x.h.SendMessage(ctx, immediate(continueRequest(x.id, "here it is")))
	if err != nil {
		t.Fatalf("continuing the task: %v", err)
	}
	if got := res.Result.(*a2a.Task).Status.State; got != a2a.TaskStateWorking {
		t.Fatalf("continuation answered %v, want working", got)
	}
	recv(t, x.working) // the second execution's working is stored
	return x
}

func (x *twoExecutions) state(t *testing.T) *a2a.Task {
	t.Helper()
	return getTask(t, x.h, testCtx(t), x.id)
}

// An execution that returns while another execution of its task runs
// leaves the task to that one: the first execution, which asked for input,
// returns after a client's answer started a second; the task stays
// working, and the second completes it.
func TestSettleLeavesTaskToRunningExecution(t *testing.T) {
	t.Parallel()
	x := startTwoExecutions(t, true)
	close(x.first)
	if err := recv(t, x.firstErr); err != nil {
		t.Fatalf("first execution: %v", err)
	}
	recv(t, x.released) // the first execution is settled
	if task := x.state(t); task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("after the first execution returned, with the second running, the task is %v (%v), want working",
			task.Status.State, task.Status.Message.Text())
	}
	close(x.second)
	if err := recv(t, x.secErr); err != nil {
		t.Errorf("second execution completing the task: %v", err)
	}
	// The agent's writes do not wait for the store: wait for completed.
	waitState(t, x.h, testCtx(t), x.id, a2a.TaskStateCompleted)
}

// The same from the other side: the second execution returns without
// ending the task while the first still runs, and the task stays working;
// once the first returns too, with no execution left and the task neither
// terminal nor interrupted, it fails as usual.
func TestSettleLastExecutionFails(t *testing.T) {
	t.Parallel()
	x := startTwoExecutions(t, false)
	close(x.second)
	if err := recv(t, x.secErr); err != nil {
		t.Fatalf("second execution: %v", err)
	}
	recv(t, x.released) // the second execution is settled
	if task := x.state(t); task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("after the second execution returned, with the first running, the task is %v (%v), want working",
			task.Status.State, task.Status.Message.Text())
	}
	close(x.first)
	if err := recv(t, x.firstErr); err != nil {
		t.Fatalf("first execution: %v", err)
	}
	recv(t, x.released)
	task := x.state(t)
	if task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("with no execution left, the task is %v, want failed", task.Status.State)
	}
	if got := task.Status.Message.Text(); got != "The agent stopped before the task finished." {
		t.Errorf("status message %q", got)
	}
}

// The normal case stays as it was: an execution that asked for input and
// returns, with no other running, leaves the task input-required.
func TestSettleKeepsInputRequired(t *testing.T) {
	t.Parallel()
	released := make(chan struct{}, 2)
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		return w.RequireInput(ctx, "More, please.")
	})
	server.OnLimitRelease(h, func() { released <- struct{}{} })
	ctx := testCtx(t)
	res, err := h.SendMessage(ctx, immediate(newRequest("go")))
	if err != nil {
		t.Fatal(err)
	}
	recv(t, released)
	id := res.Result.(*a2a.Task).ID
	if task := getTask(t, h, ctx, id); task.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("task %v, want input-required", task.Status.State)
	}
}

// heldStore holds its Append number hold until open is closed, then fails
// that Append when fail is set.
type heldStore struct {
	*memory.Store
	hold    int32
	fail    bool
	open    chan struct{}
	appends atomic.Int32
}

func (s *heldStore) Append(ctx context.Context, scope store.Scope, id string, after int64, evs []store.Event, t *a2a.Task) error {
	if s.appends.Add(1) == s.hold {
		<-s.open
		if s.fail {
			return errors.New("held: connection reset")
		}
	}
	return s.Store.Append(ctx, scope, id, after, evs, t)
}

// storedWindow is a task whose agent, its first execution, left it in
// state (input-required or working) with two Appends and waits on first;
// a client's message continuing it is being stored, held by the store.
type storedWindow struct {
	h        *server.Handler
	st       *heldStore
	id       string
	first    chan struct{}
	second   chan struct{}
	working  chan error
	released chan struct{}
	cont     <-chan sendResult
}

func startStoredWindow(t *testing.T, state a2a.TaskState, fail bool) *storedWindow {
	t.Helper()
	x := &storedWindow{
		st:       &heldStore{Store: memory.New(), hold: 3, fail: fail, open: make(chan struct{})},
		first:    make(chan struct{}),
		second:   make(chan struct{}),
		working:  make(chan error, 1),
		released: make(chan struct{}, 4),
	}
	ids := make(chan string, 1)
	x.h = newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Task == nil {
			// The task alone, then its state: two Appends.
			if err := w.Submit(ctx); err != nil {
				return err
			}
			if err := w.Flush(ctx); err != nil {
				return err
			}
			if err := w.Status(ctx, state, w.NewMessage(a2a.TextPart("first"))); err != nil {
				return err
			}
			if err := w.Flush(ctx); err != nil {
				return err
			}
			ids <- req.TaskID
			return await(ctx, x.first)
		}
		err := w.Working(ctx, "on it")
		if err == nil {
			err = w.Flush(ctx)
		}
		x.working <- err
		if err != nil {
			return err
		}
		if err := await(ctx, x.second); err != nil {
			return err
		}
		return w.Complete(ctx, "done")
	}, server.WithStore(x.st))
	// Registered after newHandler, so it runs before the Handler's Close:
	// whatever the test did, the store lets go.
	opened := false
	t.Cleanup(func() {
		if !opened {
			close(x.st.open)
		}
	})
	server.OnLimitRelease(x.h, func() {
		select {
		case x.released <- struct{}{}:
		default:
		}
	})
	ctx := testCtx(t)
	if _, err := x.h.SendMessage(ctx, immediate(newRequest("go"))); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	x.id = recv(t, ids)
	x.cont = sendAsync(x.h, ctx, immediate(continueRequest(x.id, "here it is")))
	events := 1 // the message
	if state != a2a.TaskStateWorking {
		events++ // and working before it
	}
	waitFor(t, "the continuation held by the store", func() bool {
		q, inflight := server.Queued(x.h, x.id)
		return x.st.appends.Load() == 3 && inflight == events && q == 0
	})
	// The first execution returns while the message is stored. It is
	// settled at once, unless it queues a failure behind the message
	// (and waits for the store to have it).
	close(x.first)
	waitFor(t, "the first execution settled, or a failure queued", func() bool {
		q, _ := server.Queued(x.h, x.id)
		return len(x.released) > 0 || q > 0
	})
	if q, _ := server.Queued(x.h, x.id); q > 0 {
		t.Fatalf("the first execution, returning while a message continuing its task was stored, queued %d writes (a failure), want none", q)
	}
	close(x.st.open)
	opened = true
	return x
}

// An execution that returns while a client's message continuing its task
// is being stored leaves the task to the execution that message starts.
func TestSettleLeavesTaskToContinuation(t *testing.T) {
	t.Parallel()
	x := startStoredWindow(t, a2a.TaskStateInputRequired, false)
	r := recv(t, x.cont)
	if r.err != nil {
		t.Fatalf("continuing the task: %v", r.err)
	}
	if got := r.res.Result.(*a2a.Task).Status.State; got != a2a.TaskStateWorking {
		t.Fatalf("continuation answered %v, want working", got)
	}
	if err := recv(t, x.working); err != nil {
		t.Fatalf("second execution: %v", err)
	}
	if task := getTask(t, x.h, testCtx(t), x.id); task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("task %v (%v), want working", task.Status.State, task.Status.Message.Text())
	}
	close(x.second)
	waitState(t, x.h, testCtx(t), x.id, a2a.TaskStateCompleted)
}

// When that message cannot be stored, no execution starts, and the task
// the first execution left working is failed as if nothing had come
// between.
func TestSettleContinuationLostFails(t *testing.T) {
	t.Parallel()
	x := startStoredWindow(t, a2a.TaskStateWorking, true)
	if r := recv(t, x.cont); r.err == nil {
		t.Fatalf("continuation whose message was not stored answered %v, want an error", r.res.Result)
	}
	// The continuation fails the task before it answers.
	task := getTask(t, x.h, testCtx(t), x.id)
	if task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("task %v, want failed", task.Status.State)
	}
	if got := task.Status.Message.Text(); got != "The agent stopped before the task finished." {
		t.Errorf("status message %q", got)
	}
	select {
	case err := <-x.working:
		t.Errorf("an execution ran for the lost message (%v)", err)
	default:
	}
}
