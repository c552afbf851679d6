package server_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
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
