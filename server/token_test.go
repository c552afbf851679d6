package server_test

import (
	"encoding/base64"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store/memory"
)

// Page tokens are bound to their use: a token altered, forged, minted for
// another principal, another tenant or (for push configs) another task is
// InvalidParams, never a page of someone else's data.
func TestPageTokensAreSealed(t *testing.T) {
	t.Parallel()
	st := memory.New()
	h := newHandler(t, nil, scripted, server.WithStore(st))
	alice := server.WithPrincipal(testCtx(t), "alice")
	bob := server.WithPrincipal(testCtx(t), "bob")
	for range 3 {
		sendTask(t, h, alice, newRequest("complete"))
		sendTask(t, h, bob, newRequest("complete"))
	}
	one := a2a.Ptr[int32](1)
	first, err := h.ListTasks(alice, &a2a.ListTasksRequest{PageSize: one})
	if err != nil || first.NextPageToken == "" {
		t.Fatalf("first page: %v, token %q", err, first.NextPageToken)
	}
	tok := first.NextPageToken
	if _, err := h.ListTasks(alice, &a2a.ListTasksRequest{PageSize: one, PageToken: tok}); err != nil {
		t.Fatalf("alice's own token: %v", err)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	flip := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	cases := []struct {
		name string
		call func() error
	}{
		{"bob with alice's token", func() error {
			_, err := h.ListTasks(bob, &a2a.ListTasksRequest{PageSize: one, PageToken: tok})
			return err
		}},
		{"alice's token in another tenant", func() error {
			_, err := h.ListTasks(alice, &a2a.ListTasksRequest{Tenant: "other", PageSize: one, PageToken: tok})
			return err
		}},
		{"cursor byte altered", func() error {
			_, err := h.ListTasks(alice, &a2a.ListTasksRequest{PageSize: one, PageToken: flip(0)})
			return err
		}},
		{"mac byte altered", func() error {
			_, err := h.ListTasks(alice, &a2a.ListTasksRequest{PageSize: one, PageToken: flip(len(raw) - 1)})
			return err
		}},
		{"truncated", func() error {
			_, err := h.ListTasks(alice, &a2a.ListTasksRequest{PageSize: one, PageToken: tok[:len(tok)-4]})
			return err
		}},
		{"forged unsigned cursor", func() error {
			forged := base64.RawURLEncoding.EncodeToString([]byte(`{"ts":"2030-01-01T00:00:00.000Z","id":"x"}`))
			_, err := h.ListTasks(alice, &a2a.ListTasksRequest{PageSize: one, PageToken: forged})
			return err
		}},
	}
	for _, c := range cases {
		err := c.call()
		wantViolation(t, err, "pageToken")
	}

	// The key lives in the store: another Handler on it (a restart, a
	// replica) accepts the token; one on another store does not.
	h2 := newHandler(t, nil, scripted, server.WithStore(st))
	if _, err := h2.ListTasks(alice, &a2a.ListTasksRequest{PageSize: one, PageToken: tok}); err != nil {
		t.Errorf("a Handler on the same store refused the token: %v", err)
	}
	h3 := newHandler(t, nil, scripted, server.WithStore(memory.New()))
	_, err = h3.ListTasks(alice, &a2a.ListTasksRequest{PageSize: one, PageToken: tok})
	wantViolation(t, err, "pageToken")
}

func TestPushPageTokensAreBoundToTheTask(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := testCtx(t)
	a := sendTask(t, h, ctx, newRequest("input"))
	b := sendTask(t, h, ctx, newRequest("input"))
	for _, task := range []string{a.ID, b.ID} {
		for _, id := range []string{"c1", "c2"} {
			if _, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task, ID: id, URL: "https://example.com/hook"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	page, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: a.ID, PageSize: 1})
	if err != nil || page.NextPageToken == "" {
		t.Fatalf("first page: %v, token %q", err, page.NextPageToken)
	}
	if _, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: a.ID, PageSize: 1, PageToken: page.NextPageToken}); err != nil {
		t.Errorf("the token on its own task: %v", err)
	}
	_, err = h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: b.ID, PageSize: 1, PageToken: page.NextPageToken})
	wantViolation(t, err, "pageToken")
}
