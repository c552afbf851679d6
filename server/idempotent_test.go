package server_test

import (
	"testing"
	"time"

	"github.com/goa2a/a2a/internal/idemtest"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// SendMessage is idempotent on the memory store, on one Handler and on two
// that share the store (store/sqlite and store/postgres run the same).
func TestIdempotentSend(t *testing.T) {
	t.Parallel()
	idemtest.Run(t, func(t *testing.T) (store.Store, store.Store) {
		st := memory.New()
		return st, st
	})
}

// How long message ids are remembered: WithMessageIDRetention, or the
// retention of finished tasks when that is shorter; the maintenance pass
// forgets them after that.
func TestMessageIDRetention(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		opts []server.Option
		want time.Duration
	}{
		{"default", nil, server.DefaultMessageIDRetention},
		{"an hour", []server.Option{server.WithMessageIDRetention(time.Hour)}, time.Hour},
		{"a week", []server.Option{server.WithMessageIDRetention(7 * 24 * time.Hour)}, 7 * 24 * time.Hour},
		{"tasks kept 10 minutes", []server.Option{server.WithRetention(10 * time.Minute)}, 10 * time.Minute},
		{"tasks kept a month", []server.Option{server.WithRetention(720 * time.Hour)}, server.DefaultMessageIDRetention},
		{"tasks kept less", []server.Option{server.WithMessageIDRetention(time.Hour), server.WithRetention(time.Minute)}, time.Minute},
		{"tasks kept longer", []server.Option{server.WithMessageIDRetention(time.Hour), server.WithRetention(2 * time.Hour)}, time.Hour},
	} {
		h := newHandler(t, nil, scripted, append([]server.Option{server.WithMaintenanceInterval(-1)}, c.opts...)...)
		if got := server.MessageRetention(h); got != c.want {
			t.Errorf("%s: message ids kept %v, want %v", c.name, got, c.want)
		}
	}
	for _, d := range []time.Duration{0, -time.Second} {
		if _, err := server.NewHandler(testCard(), server.AgentFunc(scripted), server.WithMessageIDRetention(d)); err == nil {
			t.Errorf("WithMessageIDRetention(%v) accepted", d)
		}
	}

	// Remembered within the period, forgotten after it.
	ctx := testCtx(t)
	keep := newHandler(t, nil, scripted, server.WithMaintenanceInterval(-1))
	req := newRequest("complete")
	first := sendTask(t, keep, ctx, req)
	if rep, err := keep.Maintain(ctx); err != nil || rep.Forgotten != 0 {
		t.Errorf("Maintain within the period: %+v, %v; want nothing forgotten", rep, err)
	}
	if got := sendTask(t, keep, ctx, req); got.ID != first.ID {
		t.Errorf("a retry within the period got %s, want %s", got.ID, first.ID)
	}
	for _, opt := range []server.Option{server.WithMessageIDRetention(time.Millisecond), server.WithRetention(time.Millisecond)} {
		h := newHandler(t, nil, scripted, server.WithMaintenanceInterval(-1), opt)
		req := newRequest("complete")
		first := sendTask(t, h, ctx, req)
		time.Sleep(5 * time.Millisecond) // more than the period: the id is then forgotten, however slow the machine
		if rep, err := h.Maintain(ctx); err != nil || rep.Forgotten != 1 {
			t.Fatalf("Maintain after the period: %+v, %v; want 1 forgotten", rep, err)
		}
		if got := sendTask(t, h, ctx, req); got.ID == first.ID {
			t.Errorf("a send after the period got the first task %s, want a new one", got.ID)
		}
	}
}
