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

// flakyStore fails the next `fail` appends, then works again, as a
// database does through a short outage.
type flakyStore struct {
	*memory.Store
	fail atomic.Int32
}

func (s *flakyStore) Append(ctx context.Context, scope store.Scope, id string, after int64, evs []store.Event, t *a2a.Task) error {
	if s.fail.Add(-1) >= 0 {
		return errors.New("flaky: connection reset")
	}
	return s.Store.Append(ctx, scope, id, after, evs, t)
}

// An agent that stops early leaves its task to be failed; a store that
// refuses that update for a moment must not leave the task working for
// ever.
func TestSettleSurvivesAStoreOutage(t *testing.T) {
	t.Parallel()
	st := &flakyStore{Store: memory.New()}
	st.fail.Store(-1 << 30) // never fail until armed
	agent := func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.Working(ctx, "started"); err != nil {
			return err
		}
		if err := w.Flush(ctx); err != nil {
			return err
		}
		st.fail.Store(2) // the next two appends fail: the agent's last update is lost
		return nil
	}
	h := newHandler(t, nil, agent, server.WithStore(st))
	ctx := testCtx(t)
	res, err := h.SendMessage(ctx, immediate(newRequest("go")))
	if err != nil {
		t.Fatal(err)
	}
	task := waitState(t, h, ctx, res.Result.(*a2a.Task).ID, a2a.TaskStateFailed)
	if task.Status.Message == nil || task.Status.Message.Text() != "The agent stopped before the task finished." {
		t.Errorf("status message %v", task.Status.Message)
	}
}
