package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/push"
)

// TestServePushToListen runs a2a serve (test-runner, webhooks on
// 127.0.0.1 allowed) and a2a push listen verifying the server's signature
// with the JWK set a2a serve publishes: every update of the task arrives,
// in order, and /metrics counts the deliveries.
func TestServePushToListen(t *testing.T) {
	ts := startServe(t, "--agent", "test-runner", "--store", "memory", "--push-allow-hosts", "127.0.0.1")
	if !strings.Contains(ts.stdout.String(), "push        webhooks signed ES256") {
		t.Errorf("banner has no push line:\n%s", ts.stdout.String())
	}
	hookURL, out, errOut, stop := startListen(t, "--jwks", ts.base+push.JWKSPath, "--json")
	c := ts.client(t, a2a.BindingJSONRPC)
	if !c.Card().Capabilities.SupportsPush() {
		t.Fatal("the card does not declare pushNotifications")
	}
	req := textRequest("Run the unit tests for payments-api at commit 9f3c2e1")
	req.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: hookURL}}
	res, err := c.SendMessage(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.Result.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("SendMessage = %+v, want a completed task", res.Result)
	}
	waitFor(t, "the completed notification", func() bool { return strings.Contains(out.String(), "TASK_STATE_COMPLETED") })
	stop()
	var states []string
	artifacts := 0
	for line := range strings.Lines(strings.TrimSpace(out.String())) {
		var sr a2a.StreamResponse
		if err := json.Unmarshal([]byte(line), &sr); err != nil {
			t.Fatalf("push listen printed %q: %v", line, err)
		}
		switch ev := sr.Event.(type) {
		case *a2a.TaskStatusUpdateEvent:
			if ev.TaskID != task.ID {
				t.Errorf("notification for task %s, want %s", ev.TaskID, task.ID)
			}
			states = append(states, ev.Status.State.String())
		case *a2a.TaskArtifactUpdateEvent:
			artifacts++
		default:
			t.Errorf("unexpected notification %T", ev)
		}
	}
	if want := []string{"TASK_STATE_WORKING", "TASK_STATE_COMPLETED"}; strings.Join(states, ",") != strings.Join(want, ",") {
		t.Errorf("states %v, want %v", states, want)
	}
	if want := len(task.Artifacts); artifacts < want || want == 0 {
		t.Errorf("%d artifact notifications for %d artifacts", artifacts, want)
	}
	if e := errOut.String(); strings.Contains(e, "refused") {
		t.Errorf("push listen refused notifications:\n%s", e)
	}
	if m := ts.metrics(t); m[`a2a_push_deliveries_total{outcome="ok"}`] != float64(len(states)+artifacts) {
		t.Errorf("metrics count %v deliveries, want %d", m[`a2a_push_deliveries_total{outcome="ok"}`], len(states)+artifacts)
	}
}

// TestServePushRefusesLoopbackByDefault: without --push-allow-hosts a
// webhook on 127.0.0.1 is never called; the config is marked failing at
// once and the metrics say so.
func TestServePushRefusesLoopbackByDefault(t *testing.T) {
	ts := startServe(t, "--agent", "test-runner", "--store", "memory")
	hookURL, out, _, _ := startListen(t, "--token", "t")
	c := ts.client(t, a2a.BindingHTTPJSON)
	req := textRequest("Run the unit tests for payments-api at commit a41d7c3")
	req.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: hookURL, Token: "t"}}
	if _, err := c.SendMessage(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the failing config in the metrics", func() bool {
		return ts.metrics(t)[`a2a_push_deliveries_total{outcome="failing"}`] == 1
	})
	if strings.Contains(out.String(), "push for task") {
		t.Errorf("the refused webhook was called:\n%s", out.String())
	}
	if e := ts.stderr.String(); !strings.Contains(e, "is loopback") {
		t.Errorf("the log does not say why:\n%s", e)
	}
}

