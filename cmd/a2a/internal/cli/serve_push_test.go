package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"fmt"
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
	// The receiver has the last event a moment before the server records
	// the delivery: wait for the record.
	const done = "delivery  done: the task ended, and every update since the config was created went out (through event"
	waitFor(t, "a2a push get to say done", func() bool { return strings.Contains(pushGet(t, ts, task.ID), done) })
	// And the metrics count a delivery once it is recorded.
	waitFor(t, fmt.Sprintf("the metrics to count %d deliveries", len(states)+artifacts), func() bool {
		return ts.metrics(t)[`a2a_push_deliveries_total{outcome="ok"}`] == float64(len(states)+artifacts)
	})
}

// TestServePushRefusesLoopbackByDefault: without --push-allow-hosts a
// webhook on 127.0.0.1 is never called; the config is marked failing at
// once and the metrics say so.
func TestServePushRefusesLoopbackByDefault(t *testing.T) {
	ts := startServe(t, "--agent", "test-runner", "--store", "memory")
	hookURL, out, _, _ := startListen(t, "--token", "t")
	// a2a send --webhook registers the config with the message.
	var sent, sendErr syncBuffer
	if code := Main(t.Context(), []string{"send", "--json", "--binding", "rest", "--webhook", hookURL, "--webhook-token", "t",
		ts.base, "Run the unit tests for payments-api at commit a41d7c3"}, &sent, &sendErr); code != ExitOK {
		t.Fatalf("a2a send: exit %d: %s", code, sendErr.String())
	}
	var res a2a.SendMessageResponse
	if err := json.Unmarshal([]byte(sent.String()), &res); err != nil {
		t.Fatalf("a2a send --json printed %q: %v", sent.String(), err)
	}
	waitFor(t, "the failing config in the metrics", func() bool {
		return ts.metrics(t)[`a2a_push_deliveries_total{outcome="failing"}`] == 1
	})
	// a2a push get shows why.
	taskID := res.Result.(*a2a.Task).ID
	got := pushGet(t, ts, taskID)
	if !strings.Contains(got, "delivery  REFUSED at event 2: the server will not call this webhook: webhook address 127.0.0.1 is loopback") ||
		strings.Contains(got, "register the config again") {
		t.Errorf("a2a push get:\n%s", got)
	}
	if strings.Contains(out.String(), "push for task") {
		t.Errorf("the refused webhook was called:\n%s", out.String())
	}
	if e := ts.stderr.String(); !strings.Contains(e, "is loopback") {
		t.Errorf("the log does not say why:\n%s", e)
	}
}

// pushGet runs a2a push get on the only config of a task and returns what
// it printed.
func pushGet(t *testing.T, ts *testServe, taskID string) string {
	t.Helper()
	c := ts.client(t, a2a.BindingJSONRPC)
	list, err := c.ListTaskPushNotificationConfigs(t.Context(), &a2a.ListTaskPushNotificationConfigsRequest{TaskID: taskID})
	if err != nil || len(list.Configs) != 1 {
		t.Fatalf("listing the configs of %s: %v %+v", taskID, err, list)
	}
	var out, errOut syncBuffer
	if code := Main(t.Context(), []string{"push", "get", ts.base, taskID, list.Configs[0].ID}, &out, &errOut); code != ExitOK {
		t.Fatalf("a2a push get: exit %d: %s", code, errOut.String())
	}
	return out.String()
}

func TestDescribeDelivery(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		// A server that does not send last= yet.
		{"delivered=7; attempts=0", "done through event 7 of the task's log"},
		{"delivered=9; attempts=0; last=9; ended; nothing-to-send", "nothing to deliver: the task had ended when the config was created"},
		{"delivered=9; attempts=0; last=9; ended",
			"done: the task ended, and every update since the config was created went out (through event 9, its last)"},
		{"delivered=4; attempts=0; last=4",
			"up to date: every update since the config was created went out (through event 4); waiting for the next"},
		{"delivered=3; attempts=0; last=7", "catching up: updates went out through event 3 of the task's 7"},
		{"delivered=3; attempts=0; last=7; ended", "catching up: updates went out through event 3 of the task's 7"},
		{`delivered=1; attempts=1; failing; last=9; ended; error="refused: webhook address 127.0.0.1 is loopback; only an allow-list entry admits it (a2a serve --push-allow-hosts)"`,
			"REFUSED at event 2: the server will not call this webhook: webhook address 127.0.0.1 is loopback; only an allow-list entry admits it (a2a serve --push-allow-hosts)"},
		// Unknown items are passed over.
		{"delivered=4; attempts=0; last=4; someday=1", "up to date: every update since the config was created went out (through event 4); waiting for the next"},
		{`delivered=3; attempts=2; next=2026-12-01T10:00:00Z; error="webhook answered 503 Service Unavailable; busy"`,
			"retrying event 4 (2 failed attempts, next at 2026-12-01T10:00:00Z): webhook answered 503 Service Unavailable; busy"},
		{`delivered=3; attempts=10; failing; error="webhook answered 404 Not Found"`,
			"FAILING at event 4 after 10 attempts: webhook answered 404 Not Found; register the config again with the same id to resume"},
	} {
		if got := describeDelivery(tc.header); got != tc.want {
			t.Errorf("describeDelivery(%q)\n got %q\nwant %q", tc.header, got, tc.want)
		}
	}
}

// TestServePushKeyWarning: on a shared (PostgreSQL) store, a server that
// makes its own push signing key warns that replicas need one key; with
// --push-sign-key, or on SQLite, it does not.
func TestServePushKeyWarning(t *testing.T) {
	t.Parallel()
	const warning = "replicas sharing this store sign push notifications with keys of their own"
	_, dsn := freshDatabase(t)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := writeKeyPEM(t, "PRIVATE KEY", der)
	for _, tc := range []struct {
		args []string
		warn bool
	}{
		{[]string{"--store", "postgres:" + dsn}, true},
		{[]string{"--store", "postgres:" + dsn, "--push-sign-key", keyFile}, false},
		{[]string{"--store", "postgres:" + dsn, "--push=false"}, false},
		{[]string{"--store", "memory"}, false},
	} {
		ts := startServe(t, tc.args...)
		ts.stop(t)
		if got := strings.Contains(ts.stderr.String(), warning); got != tc.warn {
			t.Errorf("%q: warned %v, want %v:\n%s", tc.args, got, tc.warn, ts.stderr.String())
		}
	}
}
