package jsonrpc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/capture"
	"github.com/goa2a/a2a/kit/reviewer"
	"github.com/goa2a/a2a/kit/testrunner"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/jsonrpc"
)

// gate holds the test-runner at one log line so a scenario can look at a
// task mid-run, as the kit's recording did.
type gate struct {
	mu      sync.Mutex
	at      int // line index to hold at; 0 = off
	reached chan struct{}
	release chan struct{}
}

func (g *gate) arm(line int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.at, g.reached, g.release = line, make(chan struct{}), make(chan struct{})
}

func (g *gate) pace(ctx context.Context, _ string, line int) error {
	g.mu.Lock()
	hold := g.at != 0 && g.at == line
	var reached, release chan struct{}
	if hold {
		g.at = 0
		reached, release = g.reached, g.release
	}
	g.mu.Unlock()
	if !hold {
		return nil
	}
	close(reached)
	select {
	case <-release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fakeClock starts where the kit's clock starts and moves 250 ms per reading,
// so tasks sort as they did in the recording.
func fakeClock() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(250 * time.Millisecond)
		return t
	}
}

type kitServers struct {
	runner, reviewer *server.Handler
	urls             map[string]string // capture Host -> our base URL
	gate             *gate
}

func startKit(t *testing.T) *kitServers {
	t.Helper()
	k := &kitServers{gate: &gate{}, urls: map[string]string{}}
	start := func(host string, card func(string, string) *a2a.AgentCard, agent server.Agent) *server.Handler {
		mux := http.NewServeMux()
		srv := httptest.NewServer(mux) // binds 127.0.0.1
		t.Cleanup(srv.Close)
		h, err := server.NewHandler(card(srv.URL+"/a2a/jsonrpc", srv.URL+"/a2a/rest"), agent, server.WithClock(fakeClock()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = h.Close(context.Background()) })
		mux.Handle("/a2a/jsonrpc", jsonrpc.NewHandler(h))
		k.urls[host] = srv.URL
		return h
	}
	k.runner = start("localhost:41241", testrunner.Card, &testrunner.Agent{Pace: k.gate.pace})
	k.reviewer = start("localhost:41242", reviewer.Card, reviewer.Agent{})
	return k
}

// idMap pairs the recording's generated ids with ours.
type idMap struct {
	// exactTime compares timestamps exactly instead of only checking
	// their form; our fake clock stamps as the kit's clock did.
	exactTime bool
	ours      map[string]string // recorded -> ours
	theirs    map[string]string // ours -> recorded
}

func (m *idMap) pair(recorded, ours string) error {
	if o, ok := m.ours[recorded]; ok {
		if o != ours {
			return fmt.Errorf("id %q was %q before, now %q", recorded, o, ours)
		}
		return nil
	}
	if r, ok := m.theirs[ours]; ok && r != recorded {
		return fmt.Errorf("our id %q stands for both %q and %q", ours, r, recorded)
	}
	m.ours[recorded], m.theirs[ours] = ours, recorded
	return nil
}

// translate rewrites recorded ids in a request into ours.
func (m *idMap) translate(s string) string {
	for r, o := range m.ours {
		if r != o && r != "" {
			s = strings.ReplaceAll(s, r, o)
		}
	}
	return s
}

var idKeys = map[string]bool{"id": true, "contextId": true, "taskId": true, "messageId": true, "nextPageToken": true}

// compare walks the recorded and our JSON values together. Generated ids
// must correspond one to one; timestamps must be valid; all else is equal.
func (m *idMap) compare(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", path, got)}
		}
		var diffs []string
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			wv, wok := w[k]
			gv, gok := g[k]
			p := path + "." + k
			switch {
			case !wok:
				diffs = append(diffs, fmt.Sprintf("%s: unexpected member %v", p, gv))
			case !gok:
				diffs = append(diffs, fmt.Sprintf("%s: missing (want %v)", p, wv))
			case k == "timestamp" && !m.exactTime:
				s, _ := gv.(string)
				if _, err := a2a.ParseTimestamp(s); err != nil || !strings.HasSuffix(s, "Z") {
					diffs = append(diffs, fmt.Sprintf("%s: bad timestamp %v", p, gv))
				}
			case idKeys[k] && isString(wv) && isString(gv):
				if err := m.pair(wv.(string), gv.(string)); err != nil {
					diffs = append(diffs, p+": "+err.Error())
				}
			default:
				diffs = append(diffs, m.compare(p, wv, gv)...)
			}
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %d items %v, got %v", path, len(w), want, got)}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, m.compare(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return diffs
	}
	if !reflect.DeepEqual(want, got) {
		return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
	}
	return nil
}

func isString(v any) bool { _, ok := v.(string); return ok }

func parseJSON(t *testing.T, what, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", what, err, s)
	}
	return v
}

// replay sends one recorded request to our server and compares the answer.
func (k *kitServers) replay(t *testing.T, ids *idMap, file string, ex capture.Exchange) {
	t.Helper()
	base, ok := k.urls[ex.Host]
	if !ok {
		t.Fatalf("%s %q: no server for host %s", file, ex.Title, ex.Host)
	}
	req, err := http.NewRequest(ex.Method, base+ids.translate(ex.Path), strings.NewReader(ids.translate(ex.Body)))
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
			diffs = append(diffs, ids.compare(fmt.Sprintf("frame[%d]", i), parseJSON(t, "recorded frame", want[i]), parseJSON(t, "our frame", got[i]))...)
		}
	} else {
		diffs = ids.compare("body", parseJSON(t, "recorded body", ex.RBody), parseJSON(t, "our body", string(body)))
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
	ids := &idMap{ours: map[string]string{}, theirs: map[string]string{}, exactTime: true}
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
	k.gate.arm(1)
	k.replay(t, ids, "04", exs[0])
	<-k.gate.reached
	k.replay(t, ids, "04", exs[1])
	close(k.gate.release)
	taskID := ids.ours["d0c28826-28b8-4b15-8b53-4e01ae7a5a3c"]
	waitTerminal(t, k.runner, taskID)
	k.replay(t, ids, "04", exs[2])

	run("05-streaming.http")
	run("06-input-required.http")
	run("09-failed.http")

	// 10: cancel the full suite after two log lines.
	exs = load("10-cancel.http")
	k.gate.arm(2)
	k.replay(t, ids, "10", exs[0])
	<-k.gate.reached
	for _, ex := range exs[1:] {
		k.replay(t, ids, "10", ex)
	}

	run("11-errors.http")
	run("12-list-tasks.http")
	run("13-history.http")
}
