package server_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// TestPushWithoutPusherWarns: a card that promises push notifications to
// a Handler that has nothing to deliver them is said so, with the fix; a
// Handler with a Pusher, or a card without push, says nothing.
func TestPushWithoutPusherWarns(t *testing.T) {
	for _, tc := range []struct {
		name string
		push bool
		opts []server.Option
		warn bool
	}{
		{"push, no pusher", true, nil, true},
		{"push and a pusher", true, []server.Option{server.WithPusher(nopPusher{})}, false},
		{"no push", false, nil, false},
	} {
		var logs bytes.Buffer
		card := testCard(func(c *a2a.AgentCard) { c.Capabilities.PushNotifications = a2a.Ptr(tc.push) })
		opts := append([]server.Option{server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}, tc.opts...)
		newHandler(t, card, scripted, opts...)
		got := strings.Contains(logs.String(), "declares pushNotifications but nothing delivers them") &&
			strings.Contains(logs.String(), "server.WithPusher")
		if got != tc.warn {
			t.Errorf("%s: warned %v, want %v; logs:\n%s", tc.name, got, tc.warn, logs.String())
		}
	}
}

// TestOptionsGivenTwice: a store or a pusher given twice must be the same
// one: a Handler keeps its tasks in one store and delivers through one
// pusher, and a second, different one is refused rather than silently
// replacing the first.
func TestOptionsGivenTwice(t *testing.T) {
	a, b := memory.New(), memory.New()
	card := testCard()
	if _, err := server.NewHandler(card, server.AgentFunc(scripted), server.WithStore(a), server.WithStore(b)); err == nil ||
		!strings.Contains(err.Error(), "two different stores") {
		t.Errorf("two stores: %v, want an error saying they differ", err)
	}
	h, err := server.NewHandler(card, server.AgentFunc(scripted), server.WithStore(a), server.WithStore(a))
	if err != nil {
		t.Fatalf("one store given twice: %v", err)
	}
	h.Close(t.Context())
	p1, p2 := &countingPusher{}, &countingPusher{}
	if _, err := server.NewHandler(card, server.AgentFunc(scripted), server.WithPusher(p1), server.WithPusher(p2)); err == nil ||
		!strings.Contains(err.Error(), "two different pushers") {
		t.Errorf("two pushers: %v, want an error saying they differ", err)
	}
	if _, err := server.NewHandler(card, server.AgentFunc(scripted), server.WithPusher(nil)); err == nil {
		t.Error("a nil pusher was accepted")
	}
}

// countingPusher is a Pusher whose values are told apart by address.
type countingPusher struct{ n int }

func (p *countingPusher) Appended(store.Scope, string, int64)                  { p.n++ }
func (p *countingPusher) Deleted(context.Context, store.Scope, string, string) {}
