package server_test

import (
	"context"
	"errors"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store/memory"
)

// cancelFailure is a task with two executions of the agent running, on a
// store that can be made to fail: the first asked for input and waits on
// first; a client's answer started the second, which reported working and
// waits on second, then completes the task. Each execution sends what it
// ends with (nil, or its context's error) on firstErr or secErr, and each
// that returns and is settled sends on released.
type cancelFailure struct {
	h                *server.Handler
	st               *flakyStore
	id               string
	first, second    chan struct{}
	firstErr, secErr chan error
	released         chan struct{}
}

func startCancelFailure(t *testing.T) *cancelFailure {
	t.Helper()
	x := &cancelFailure{
		st:       &flakyStore{Store: memory.New()},
		first:    make(chan struct{}),
		second:   make(chan struct{}),
		firstErr: make(chan error, 1),
		secErr:   make(chan error, 1),
		released: make(chan struct{}, 4),
	}
	x.st.fail.Store(-1 << 30) // never fail until armed
	ids := make(chan string, 1)
	working := make(chan struct{}, 1)
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
		working <- struct{}{}
		if err := await(ctx, x.second); err != nil {
			x.secErr <- err
			return err
		}
		err := w.Complete(ctx, "done")
		x.secErr <- err
		return err
	}, server.WithStore(x.st))
	// Only the two executions hold task slots (no stream is opened), so a
	// release is an execution that returned and was settled.
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
	if _, err := x.h.SendMessage(ctx, immediate(continueRequest(x.id, "here it is"))); err != nil {
		t.Fatalf("continuing the task: %v", err)
	}
	recv(t, working) // the second execution's working is stored
	return x
}

// failCancel cancels the task while the store refuses the cancel, and
// checks that the call says so and that the task is as it was.
func (x *cancelFailure) failCancel(t *testing.T) {
	t.Helper()
	ctx := testCtx(t)
	x.st.fail.Store(1) // nothing else writes: the next Append is the cancel's
	task, err := x.h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: x.id})
	if err == nil {
		t.Fatalf("CancelTask with the store failing returned %v, want an error", task.Status.State)
	}
	var e *a2a.Error
	if !errors.As(err, &e) || e.Code != a2a.CodeInternal {
		t.Fatalf("CancelTask with the store failing: %v, want an internal error", err)
	}
	if got := x.st.fail.Load(); got >= 1 {
		t.Fatalf("the store was not asked to append the cancel (%d failures left)", got)
	}
	if got := getTask(t, x.h, ctx, x.id).Status.State; got != a2a.TaskStateWorking {
		t.Fatalf("after a cancel that was not stored, the task is %v, want working", got)
	}
	for _, ch := range []chan error{x.firstErr, x.secErr} {
		select {
		case err := <-ch:
			t.Fatalf("an execution ended when a cancel that was not stored returned (%v)", err)
		default:
		}
	}
}

// A cancel that the store refuses leaves the task's executions tracked:
// when the first returns, the second still runs the task, which stays
// working until the second completes it (it was failed under the second,
// as if none ran, when the failed cancel dropped them).
func TestCancelStoreFailureKeepsExecutions(t *testing.T) {
	t.Parallel()
	x := startCancelFailure(t)
	x.failCancel(t)
	close(x.first)
	if err := recv(t, x.firstErr); err != nil {
		t.Fatalf("first execution: %v", err)
	}
	recv(t, x.released) // the first execution is settled
	if task := x.state(t); task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("after a failed cancel and the first execution's return, with the second running, the task is %v (%v), want working",
			task.Status.State, task.Status.Message.Text())
	}
	close(x.second)
	if err := recv(t, x.secErr); err != nil {
		t.Errorf("second execution completing the task: %v", err)
	}
	waitState(t, x.h, testCtx(t), x.id, a2a.TaskStateCompleted)
}

// A cancel tried again once the store is back cancels every execution of
// the task, the failed attempt before it notwithstanding.
func TestCancelAfterStoreFailureStopsExecutions(t *testing.T) {
	t.Parallel()
	x := startCancelFailure(t)
	x.failCancel(t)
	task, err := x.h.CancelTask(testCtx(t), &a2a.CancelTaskRequest{ID: x.id})
	if err != nil {
		t.Fatalf("CancelTask with the store back: %v", err)
	}
	if task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask returned %v, want canceled", task.Status.State)
	}
	// The contexts of both executions are cancelled: each returns.
	if err := recv(t, x.firstErr); !errors.Is(err, context.Canceled) {
		t.Errorf("first execution ended with %v, want its context canceled", err)
	}
	if err := recv(t, x.secErr); !errors.Is(err, context.Canceled) {
		t.Errorf("second execution ended with %v, want its context canceled", err)
	}
	if got := x.state(t).Status.State; got != a2a.TaskStateCanceled {
		t.Errorf("task %v, want canceled", got)
	}
}

func (x *cancelFailure) state(t *testing.T) *a2a.Task {
	t.Helper()
	return getTask(t, x.h, testCtx(t), x.id)
}

// The last execution of a task returns while a cancel is being stored,
// and is settled as if the task were canceled; the store then refuses the
// cancel. Nothing runs the task any more, so the cancel fails it as
// settle would have, rather than leave it working for ever.
func TestCancelStoreFailureAfterLastExecutionFails(t *testing.T) {
	t.Parallel()
	st := &heldStore{Store: memory.New(), hold: 3, fail: true, open: make(chan struct{})}
	ids := make(chan string, 1)
	stop := make(chan struct{})
	released := make(chan struct{}, 2)
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		// The task alone, then working: two Appends.
		if err := w.Submit(ctx); err != nil {
			return err
		}
		if err := w.Flush(ctx); err != nil {
			return err
		}
		if err := w.Working(ctx, "on it"); err != nil {
			return err
		}
		if err := w.Flush(ctx); err != nil {
			return err
		}
		ids <- req.TaskID
		_ = await(ctx, stop)
		return nil // without ending the task
	}, server.WithStore(st))
	// Registered after newHandler, so it runs before the Handler's Close.
	opened := false
	t.Cleanup(func() {
		if !opened {
			close(st.open)
		}
	})
	server.OnLimitRelease(h, func() {
		select {
		case released <- struct{}{}:
		default:
		}
	})
	ctx := testCtx(t)
	if _, err := h.SendMessage(ctx, immediate(newRequest("go"))); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	id := recv(t, ids)
	type cancelResult struct {
		task *a2a.Task
		err  error
	}
	canceled := make(chan cancelResult, 1)
	go func() {
		task, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id})
		canceled <- cancelResult{task, err}
	}()
	waitFor(t, "the cancel held by the store", func() bool {
		q, inflight := server.Queued(h, id)
		return st.appends.Load() == 3 && inflight == 1 && q == 0
	})
	close(stop)
	recv(t, released) // settled, seeing the cancel queued
	close(st.open)
	opened = true
	if r := recv(t, canceled); r.err == nil {
		t.Fatalf("CancelTask with the store failing returned %v, want an error", r.task.Status.State)
	}
	task := waitState(t, h, ctx, id, a2a.TaskStateFailed)
	if got := task.Status.Message.Text(); got != "The agent stopped before the task finished." {
		t.Errorf("status message %q", got)
	}
}
