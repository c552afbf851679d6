package server_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// An agent's events written while the store is down are kept and stored
// once it is back, in order, none lost; a client's cancel meanwhile is
// answered at once with the store's unavailability, and changes nothing.
func TestOutageKeepsAgentEvents(t *testing.T) {
	t.Parallel()
	st := &unavailable{Store: memory.New()}
	const n = 40
	outage := make(chan struct{})
	back := make(chan struct{})
	var once sync.Once
	agent := func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.Working(ctx, "on it"); err != nil {
			return err
		}
		for i := range n {
			if i == 10 {
				if err := w.Flush(ctx); err != nil {
					return err
				}
				once.Do(func() { st.down.Store(true); close(outage) })
			}
			art := a2a.Artifact{ArtifactID: "out", Parts: []a2a.Part{a2a.TextPart(strconv.Itoa(i) + " ")}}
			if err := w.ArtifactChunk(ctx, art, i > 0, i == n-1); err != nil {
				return err
			}
		}
		<-back
		return w.Complete(ctx, "done")
	}
	h := newHandler(t, nil, agent, server.WithStore(st))
	server.SetRetryBase(h, time.Millisecond)
	ctx := testCtx(t)
	res, err := h.SendMessage(ctx, immediate(newRequest("go")))
	if err != nil {
		t.Fatal(err)
	}
	task := res.Result.(*a2a.Task)
	recv(t, outage)
	waitFor(t, "appends refused while the store is down", func() bool { return st.refused.Load() >= 3 })

	_, err = h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("CancelTask while the store is down: %v, want one that wraps store.ErrUnavailable", err)
	}
	st.down.Store(false)
	close(back)
	final := waitState(t, h, ctx, task.ID, a2a.TaskStateCompleted)
	want := ""
	for i := range n {
		want += strconv.Itoa(i) + " "
	}
	if len(final.Artifacts) != 1 || final.Artifacts[0].Text() != want {
		t.Errorf("artifacts after the outage: %+v, want one with %q", final.Artifacts, want)
	}
	evs, err := st.Events(ctx, scopeOf(""), task.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if su, ok := ev.Payload.(*a2a.TaskStatusUpdateEvent); ok && su.Status.State == a2a.TaskStateCanceled {
			t.Error("the refused cancel was stored")
		}
	}
}

// A task its agent leaves unfinished while the store is down is failed
// once the store is back, however long the outage: settle keeps trying
// while the store is unavailable.
func TestOutageFailsAbandonedTaskAfterwards(t *testing.T) {
	t.Parallel()
	st := &unavailable{Store: memory.New()}
	agent := func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.Working(ctx, "on it"); err != nil {
			return err
		}
		if err := w.Flush(ctx); err != nil {
			return err
		}
		st.down.Store(true)
		return errors.New("the model went away")
	}
	h := newHandler(t, nil, agent, server.WithStore(st))
	server.SetRetryBase(h, time.Millisecond)
	ctx := testCtx(t)
	res, err := h.SendMessage(ctx, immediate(newRequest("go")))
	if err != nil {
		t.Fatal(err)
	}
	task := res.Result.(*a2a.Task)
	// Far more failed attempts than settle makes on other errors.
	waitFor(t, "many refused appends", func() bool { return st.refused.Load() >= 30 })
	st.down.Store(false)
	final := waitState(t, h, ctx, task.ID, a2a.TaskStateFailed)
	if m := final.Status.Message; m == nil || m.Text() != "the model went away" {
		t.Errorf("failed with %v, want the agent's error", m)
	}
}

// unavailable is a store whose Appends fail, wrapping
// store.ErrUnavailable, while down is set.
type unavailable struct {
	store.Store
	down    atomic.Bool
	refused atomic.Int64
}

func (s *unavailable) Append(ctx context.Context, scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task) error {
	if s.down.Load() {
		s.refused.Add(1)
		return errors.Join(errors.New("connection refused"), store.ErrUnavailable)
	}
	return s.Store.Append(ctx, scope, taskID, after, events, task)
}
