package jsonrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/a2a/v03"
	"github.com/goa2a/a2a/client"
)

// newClient10 is a v1.0 client (package client, A2A-Version 1.0) of srv.
func newClient10(t *testing.T, srv *httptest.Server) *client.Client {
	t.Helper()
	card := &a2a.AgentCard{
		Name: "echo", Description: "echo", Version: "1.0.0",
		SupportedInterfaces: []a2a.AgentInterface{{URL: srv.URL, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}},
		Capabilities:        a2a.AgentCapabilities{Streaming: a2a.Ptr(true)},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "echo", Description: "echo", Tags: []string{"t"}}},
	}
	c, err := client.NewFromCard(t.Context(), card, client.WithHTTPClient(srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// followBoth subscribes to task id as a v1.0 client and as a v0.3 one,
// opens the gate once both have their first frame, and checks that the
// v0.3 client saw exactly the v1.0 client's events, in v0.3's shapes.
func followBoth(t *testing.T, srv *httptest.Server, c *client.Client, id string, gate chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	type result struct {
		events []a2a.Event
		err    error
	}
	first := make(chan struct{})
	done := make(chan result, 1)
	go func() {
		var r result
		for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
			if err != nil {
				r.err = err
				break
			}
			if r.events = append(r.events, ev); len(r.events) == 1 {
				close(first)
			}
		}
		done <- r
	}()
	resp := rpc03(t, srv, "tasks/resubscribe", fmt.Sprintf(`{"id":%q}`, id)) // returns at its first frame
	select {
	case <-first:
	case r := <-done:
		t.Fatalf("v1.0 subscription ended before its first event: %v", r.err)
	case <-ctx.Done():
		t.Fatal("no first event on the v1.0 subscription")
	}
	close(gate)
	frames := stream03(t, resp)
	r := <-done
	if r.err != nil {
		t.Fatalf("v1.0 subscription: %v", r.err)
	}
	if len(frames) != len(r.events) || len(frames) < 3 {
		t.Fatalf("v0.3 frames %q, v1.0 events %d", describe(frames), len(r.events))
	}
	for i, ev := range r.events {
		want, err := v03.FromV1Event(ev)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(want)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		if !reflect.DeepEqual(m, frames[i].result) {
			t.Errorf("frame %d:\n v0.3 %v\n v1.0 %v", i, frames[i].result, m)
		}
	}
	if got := describe(frames); got[len(got)-len("completed/final=true"):] != "completed/final=true" {
		t.Errorf("v0.3 frames %q do not end at completed", got)
	}
}

// TestV03MixedV1Creates: a task a v1.0 client creates is followed by a
// v0.3 client of the same Handler, event for event.
func TestV03MixedV1Creates(t *testing.T) {
	_, srv, agent := newV03(t, true)
	c := newClient10(t, srv)
	res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{
		Message:       &a2a.Message{MessageID: "m-v1", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("gate")}},
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.Result.(*a2a.Task)
	if !ok {
		t.Fatalf("result %T", res.Result)
	}
	followBoth(t, srv, c, task.ID, agent.gate)
	got := result03(t, srv, "tasks/get", fmt.Sprintf(`{"id":%q}`, task.ID))
	if path(got, "status", "state") != "completed" || path(got, "history", 0, "messageId") != "m-v1" {
		t.Errorf("v0.3 tasks/get %v", got)
	}
}

// TestV03MixedV03Creates: the reverse, a v0.3 client's task followed by a
// v1.0 client.
func TestV03MixedV03Creates(t *testing.T) {
	_, srv, agent := newV03(t, true)
	c := newClient10(t, srv)
	task := result03(t, srv, "message/send", send03("gate", `{"blocking":false}`))
	id, _ := task["id"].(string)
	followBoth(t, srv, c, id, agent.gate)
	got, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: id})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 {
		t.Fatalf("v1.0 GetTask: %+v, %v", got, err)
	}
}
