package jsonrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/capture"
	"github.com/goa2a/a2a/kit/reviewer"
	"github.com/goa2a/a2a/kit/testrunner"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/jsonrpc"
)

type kitServers struct {
	runner, reviewer *server.Handler
	urls             map[string]string // capture Host -> our base URL
	gate             *capture.Gate
}

func startKit(t *testing.T) *kitServers {
	t.Helper()
	k := &kitServers{gate: &capture.Gate{}, urls: map[string]string{}}
	start := func(host string, card func(string, string) *a2a.AgentCard, agent server.Agent) *server.Handler {
		mux := http.NewServeMux()
		srv := httptest.NewServer(mux) // binds 127.0.0.1
		t.Cleanup(srv.Close)
		h, err := server.NewHandler(card(srv.URL+"/a2a/jsonrpc", srv.URL+"/a2a/rest"), agent, server.WithClock(capture.KitClock()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close(context.Background()) })
		mux.Handle("/a2a/jsonrpc", jsonrpc.NewHandler(h))
		k.urls[host] = srv.URL
		return h
	}
	k.runner = start("localhost:41241", testrunner.Card, &testrunner.Agent{Pace: k.gate.Pace})
	k.reviewer = start("localhost:41242", reviewer.Card, reviewer.Agent{})
	return k
}

func parseJSON(t *testing.T, what, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, s)
	}
	return v
}

// replay sends one recorded request to our server and compares the answer.
func (k *kitServers) replay(t *testing.T, ids *capture.IDs, file string, ex capture.Exchange) {
	t.Helper()
	base, ok := k.urls[ex.Host]
	if !ok {
		t.Fatalf("%s %q: no server for host %s", file, ex.Title, ex.Host)
	}
	req, err := http.NewRequest(ex.Method, base+ids.Translate(ex.Path), strings.NewReader(ids.Translate(ex.Body)))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range ex.Header {
		if k == "Host" {
			continue
		}
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %q: %v", file, ex.Title, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != ex.Status {
		t.Errorf("%s %q: status %d, recorded %d\n%s", file, ex.Title, resp.StatusCode, ex.Status, body)
	}
	wantCT, gotCT := ex.RHeader.Get("Content-Type"), resp.Header.Get("Content-Type")
	if !strings.HasPrefix(gotCT, wantCT) {
		t.Errorf("%s %q: Content-Type %q, recorded %q", file, ex.Title, gotCT, wantCT)
	}
	var diffs []string
	if wantCT == "text/event-stream" {
		got := (&capture.Exchange{RBody: string(body)}).Frames()
		want := ex.Frames()
		if len(got) != len(want) {
			t.Errorf("%s %q: %d frames, recorded %d:\n%s", file, ex.Title, len(got), len(want), body)
			return
		}
		for i := range want {
			diffs = append(diffs, ids.Compare(fmt.Sprintf("frame[%d]", i), parseJSON(t, "recorded frame", want[i]), parseJSON(t, "our frame", got[i]))...)
		}
	} else {
		diffs = ids.Compare("body", parseJSON(t, "recorded body", ex.RBody), parseJSON(t, "our body", string(body)))
	}
	if len(diffs) > 0 {
		t.Errorf("%s %q differs from the recording:\n  %s\nour body:\n%s", file, ex.Title, strings.Join(diffs, "\n  "), body)
	}
}

func waitTerminal(t *testing.T, h *server.Handler, taskID string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		task, err := h.GetTask(context.Background(), &a2a.GetTaskRequest{ID: taskID})
		if err != nil {
			t.Fatal(err)
		}
		if task.Status.State.Terminal() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("task %s did not finish", taskID)
}

// TestCapturedScenarios replays the JSON-RPC requests of the A2A 101 kit's
// recorded scenarios against our server running agents that behave as the
// kit's do, and compares every response with the recorded one as JSON
// values, ids and timestamps normalised. Scenarios 05 and 09 run too: the
// ListTasks pages of 12 list the tasks they create.
func TestCapturedScenarios(t *testing.T) {
	k := startKit(t)
	ids := capture.NewIDs() // timestamps compare exactly: the fake clock stamps as the kit's did
	load := func(name string) []capture.Exchange {
		exs, err := capture.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		return exs
	}
	run := func(name string) {
		for _, ex := range load(name) {
			k.replay(t, ids, name, ex)
		}
	}
	run("02-message-reply.http")
	run("03-blocking-task.http")

	// 04: return immediately, look while the log is half written, then
	// look again once the task completed.
	exs := load("04-polling.http")
	k.gate.Arm(1)
	k.replay(t, ids, "04", exs[0])
	if !k.gate.Reached(10 * time.Second) {
		t.Fatal("the test-runner did not reach the gate")
	}
	k.replay(t, ids, "04", exs[1])
	k.gate.Open()
	taskID := ids.Ours("d0c28826-28b8-4b15-8b53-4e01ae7a5a3c")
	waitTerminal(t, k.runner, taskID)
	k.replay(t, ids, "04", exs[2])

	run("05-streaming.http")
	run("06-input-required.http")
	run("09-failed.http")

	// 10: cancel the full suite after two log lines.
	exs = load("10-cancel.http")
	k.gate.Arm(2)
	k.replay(t, ids, "10", exs[0])
	if !k.gate.Reached(10 * time.Second) {
		t.Fatal("the test-runner did not reach the gate")
	}
	for _, ex := range exs[1:] {
		k.replay(t, ids, "10", ex)
	}

	run("11-errors.http")
	run("12-list-tasks.http")
	run("13-history.http")
}
