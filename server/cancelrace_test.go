package server_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store/memory"
)

// A message continuing an interrupted task waits for the store with the
// task's lock let go, so a cancel can be queued behind it. When the cancel
// is stored in the same Append as the message, the task is canceled by the
// time the message's writer looks again: the continuation answers
// UnsupportedOperation and no agent runs for it (commit 1485947).
//
// The interleaving is fixed by a store that holds the Append of the
// task's input-required state: the continuation's events and then the
// cancel queue behind it, and the next flush stores them together.
func TestContinuationCanceledWhileStored(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	st := &gatedStore{Store: memory.New(), free: 1, open: make(chan struct{})}
	ids := make(chan string, 1)
	ask := make(chan struct{})
	var continued atomic.Int32 // calls of the agent for a continuation
	h, err := server.NewHandler(testCard(), server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Task != nil {
			continued.Add(1)
			return w.Complete(ctx, "continued")
		}
		// Store the task alone (the free Append), so that clients know it.
		if err := w.Submit(ctx); err != nil {
			return err
		}
		if err := w.Flush(ctx); err != nil {
			return err
		}
		ids <- req.TaskID
		if err := await(ctx, ask); err != nil {
			return err
		}
		// Held by the store. The agent stays until the cancel stops it, so
		// that nothing but the test's calls writes to the task.
		if err := w.RequireInput(ctx, "More, please."); err != nil {
			return err
		}
		<-ctx.Done()
		return ctx.Err()
	}), server.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			close(st.open)
		}
		cctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := h.Close(cctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})

	first := sendAsync(h, ctx, immediate(newRequest("go")))
	id := recv(t, ids)
	if r := recv(t, first); r.err != nil {
		t.Fatalf("SendMessage: %v", r.err)
	}
	close(ask)
	waitFor(t, "the input-required state held by the store", func() bool {
		q, inflight := server.Queued(h, id)
		return st.appends.Load() == 2 && inflight == 1 && q == 0
	})

	// The continuation queues working and its message, and waits.
	cont := sendAsync(h, ctx, continueRequest(id, "here it is"))
	waitFor(t, "the continuation queued", func() bool {
		q, _ := server.Queued(h, id)
		return q == 2
	})
	// The cancel queues behind it and waits too.
	type cancelResult struct {
		task *a2a.Task
		err  error
	}
	canceled := make(chan cancelResult, 1)
	go func() {
		task, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id})
		canceled <- cancelResult{task, err}
	}()
	waitFor(t, "the cancel queued behind the continuation", func() bool {
		q, _ := server.Queued(h, id)
		return q == 3
	})
	// The input-required state is stored, then the continuation and the
	// cancel in one Append.
	close(st.open)
	closed = true

	c := recv(t, canceled)
	if c.err != nil {
		t.Fatalf("CancelTask: %v", c.err)
	}
	if c.task.Status.State != a2a.TaskStateCanceled {
		t.Errorf("CancelTask returned %v, want canceled", c.task.Status.State)
	}
	r := recv(t, cont)
	if r.err == nil {
		var got any = r.res.Result
		if task, ok := got.(*a2a.Task); ok {
			got = task.Status.State
		}
		t.Errorf("continuation of a task canceled meanwhile answered %v, want UnsupportedOperation", got)
	} else {
		e := wantErr(t, r.err, a2a.ErrUnsupportedOperation)
		if e.Metadata["taskId"] != id || e.Metadata["state"] != a2a.TaskStateCanceled.String() {
			t.Errorf("metadata %v, want the task and its canceled state", e.Metadata)
		}
	}
	if got := getTask(t, h, ctx, id); got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("task %v, want canceled", got.Status.State)
	}
	// Close waits for every agent the Handler started.
	cctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := h.Close(cctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := continued.Load(); n != 0 {
		t.Errorf("the agent ran %d times for the continuation of a canceled task, want never", n)
	}
}
