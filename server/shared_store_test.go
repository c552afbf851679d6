package server_test

import (
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// Two Handlers on one store, as two replicas on one database: what one
// appends, the other catches up with when it next writes the task, and no
// update is lost or applied after the task ended.
func TestHandlersSharingAStore(t *testing.T) {
	t.Parallel()
	st := memory.New()
	h1 := newHandler(t, nil, scripted, server.WithStore(st))
	h2 := newHandler(t, nil, scripted, server.WithStore(st))
	ctx := testCtx(t)

	t.Run("cancel elsewhere, then continue here", func(t *testing.T) {
		task := sendTask(t, h1, ctx, newRequest("input")) // h1 now follows it
		if _, err := h2.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
			t.Fatalf("cancel on the other handler: %v", err)
		}
		_, err := h1.SendMessage(ctx, continueRequest(task.ID, "complete"))
		wantErr(t, err, a2a.ErrUnsupportedOperation)
		_, err = h1.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		wantErr(t, err, a2a.ErrTaskNotCancelable)
		if got := getTask(t, h1, ctx, task.ID).Status.State; got != a2a.TaskStateCanceled {
			t.Errorf("task is %v, want canceled", got)
		}
	})

	t.Run("continue elsewhere, then continue here", func(t *testing.T) {
		task := sendTask(t, h1, ctx, newRequest("input"))
		if got := sendTask(t, h2, ctx, continueRequest(task.ID, "input")); got.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("first answer on h2: %v", got.Status.State)
		}
		// h1's view is two updates behind; its write lands after them.
		got := sendTask(t, h1, ctx, continueRequest(task.ID, "complete"))
		if got.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("second answer on h1: %v", got.Status.State)
		}
		final := getTask(t, h2, ctx, task.ID)
		var users int
		for _, m := range final.History {
			if m.Role == a2a.RoleUser {
				users++
			}
		}
		if users != 3 {
			t.Errorf("history has %d client messages, want all 3", users)
		}
		evs, err := st.Events(ctx, scopeOf(""), task.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i, ev := range evs {
			if ev.Seq != int64(i+1) {
				t.Fatalf("event %d has seq %d", i, ev.Seq)
			}
		}
	})
}

func scopeOf(owner string) store.Scope { return store.Scope{Owner: owner} }
