package deployer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

func TestPlan(t *testing.T) {
	tests := []struct {
		text    string
		want    job
		refusal string
	}{
		{"Deploy build 2026.10.06-1 to staging", job{build: "2026.10.06-1"}, ""},
		{"please deploy BUILD v1.2.3 on Staging.", job{build: "v1.2.3"}, ""},
		{"Deploy build 2026.10.06-1 to production", job{}, productionText},
		{"Deploy to prod", job{}, productionText},
		{"Deploy build 7 to qa", job{}, otherEnvText},
		{"Deploy to staging", job{}, helpText},
		{"Deploy build 7", job{}, helpText},
		{"hello", job{}, helpText},
		{"Roll back staging", job{rollback: true}, ""},
		{"rollback please", job{rollback: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, refusal := plan(tt.text)
			if got != tt.want || refusal != tt.refusal {
				t.Errorf("plan(%q) = %+v, %q; want %+v, %q", tt.text, got, refusal, tt.want, tt.refusal)
			}
		})
	}
}

// binding sends a streaming message over one binding and decodes frames.
type binding struct {
	name   string
	stream func(t *testing.T, base, text string) *http.Response
	decode func(t *testing.T, frame []byte) a2a.Event
}

var bindings = []binding{
	{
		name: "JSON-RPC",
		stream: func(t *testing.T, base, text string) *http.Response {
			p, _ := json.Marshal(sendText(text))
			return do(t, http.MethodPost, base+"/a2a/jsonrpc", kitToken, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":%s}`, p))
		},
		decode: func(t *testing.T, frame []byte) a2a.Event {
			t.Helper()
			var env struct {
				Result a2a.StreamResponse `json:"result"`
			}
			if err := json.Unmarshal(frame, &env); err != nil {
				t.Fatalf("frame %s: %v", frame, err)
			}
			return env.Result.Event
		},
	},
	{
		name: "HTTP+JSON",
		stream: func(t *testing.T, base, text string) *http.Response {
			p, _ := json.Marshal(sendText(text))
			return do(t, http.MethodPost, base+"/a2a/rest/message:stream", kitToken, string(p))
		},
		decode: func(t *testing.T, frame []byte) a2a.Event {
			t.Helper()
			var r a2a.StreamResponse
			if err := json.Unmarshal(frame, &r); err != nil {
				t.Fatalf("frame %s: %v", frame, err)
			}
			return r.Event
		},
	},
}

// deployStream starts a staging deploy over b and reads it up to
// auth-required; it returns the stream, the task id and the approval URL.
func deployStream(t *testing.T, s *testServer, b binding, build string) (*frames, string, string) {
	t.Helper()
	resp := b.stream(t, s.URL, "Deploy build "+build+" to staging")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, readBody(t, resp))
	}
	f := readFrames(t, resp.Body)
	task, ok := b.decode(t, f.next(t)).(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("first frame: want a submitted task, got %#v", task)
	}
	expectStatus(t, b.decode(t, f.next(t)), a2a.TaskStateWorking, "Preparing build "+build+" for staging")
	ask := expectStatus(t, b.decode(t, f.next(t)), a2a.TaskStateAuthRequired, "")
	link, ok := strings.CutPrefix(ask, "An operator must approve this deploy at ")
	if !ok {
		t.Fatalf("auth-required message %q", ask)
	}
	if want := s.URL + "/approve/" + task.ID; link != want {
		t.Fatalf("approval link %q, want %q", link, want)
	}
	return f, task.ID, link
}

// expectStatus checks a status update and returns its message text; an
// empty text is not compared.
func expectStatus(t *testing.T, ev a2a.Event, state a2a.TaskState, text string) string {
	t.Helper()
	u, ok := ev.(*a2a.TaskStatusUpdateEvent)
	if !ok {
		t.Fatalf("want a status update, got %#v", ev)
	}
	got := u.Status.Message.Text()
	if u.Status.State != state || (text != "" && got != text) {
		t.Fatalf("status %v %q, want %v %q", u.Status.State, got, state, text)
	}
	return got
}

// approve posts to an approval link and returns the status and body.
func approve(t *testing.T, link string) (int, string) {
	t.Helper()
	status, body, err := post(link, "", "{}")
	if err != nil {
		t.Fatal(err)
	}
	return status, body
}

// post is a POST that is safe in any goroutine: it reports errors instead
// of failing the test.
func post(url, token, body string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", a2a.ProtocolVersion)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestStagingDeployStreamsThroughApproval: the stream stays open in
// auth-required and carries the rest of the deploy after the operator
// approves at the link the agent gave, on both bindings.
func TestStagingDeployStreamsThroughApproval(t *testing.T) {
	s := startServer(t, "", nil)
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			f, taskID, link := deployStream(t, s, b, "2026.10.06-1")
			f.idle(t)
			status, body := approve(t, link)
			if want := `{"approved":true,"taskId":"` + taskID + `"}`; status != http.StatusOK || body != want {
				t.Fatalf("approval: %d %s, want 200 %s", status, body, want)
			}
			expectStatus(t, b.decode(t, f.next(t)), a2a.TaskStateWorking, approvedText)
			art, ok := b.decode(t, f.next(t)).(*a2a.TaskArtifactUpdateEvent)
			if !ok || art.Artifact.ArtifactID != ReportArtifactID || !art.LastChunk || len(art.Artifact.Parts) != 1 {
				t.Fatalf("want the deploy-report artifact, got %#v", art)
			}
			data, _ := art.Artifact.Parts[0].Content.(a2a.Data)
			var rep Report
			if err := json.Unmarshal(data, &rep); err != nil || rep != (Report{"staging", "2026.10.06-1", stagingURL, healthChecks}) {
				t.Fatalf("report %s (%v)", data, err)
			}
			expectStatus(t, b.decode(t, f.next(t)), a2a.TaskStateCompleted, "Build 2026.10.06-1 is live on staging")
			f.end(t)

			if status, _ := approve(t, link); status != http.StatusNotFound {
				t.Errorf("a second approval: %d, want 404", status)
			}
			waitNoPending(t, s.agent)
		})
	}
}

// TestCancelWhileAwaitingApproval: CancelTask ends a deploy waiting for
// approval; the stream ends with canceled, the agent stops waiting, and the
// approval link is gone.
func TestCancelWhileAwaitingApproval(t *testing.T) {
	s := startServer(t, "", nil)
	f, taskID, link := deployStream(t, s, bindings[0], "42")
	var task a2a.Task
	if err := json.Unmarshal(rpc(t, s.URL, "CancelTask", map[string]any{"id": taskID}), &task); err != nil {
		t.Fatal(err)
	}
	if task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask: state %v", task.Status.State)
	}
	expectStatus(t, bindings[0].decode(t, f.next(t)), a2a.TaskStateCanceled, "")
	f.end(t)
	if status, body := approve(t, link); status != http.StatusNotFound {
		t.Errorf("approval after cancel: %d %s, want 404", status, body)
	}
	if s.agent.Approve(taskID) {
		t.Error("Approve after cancel = true")
	}
	waitNoPending(t, s.agent)
	if got := state(t, s, taskID); got != a2a.TaskStateCanceled {
		t.Errorf("final state %v, want canceled", got)
	}
}

// TestCancelRacesApproval: whichever of cancel and approval comes first,
// the operator's answer tells the truth and the task ends.
func TestCancelRacesApproval(t *testing.T) {
	s := startServer(t, "", nil)
	for i := range 20 {
		f, taskID, link := deployStream(t, s, bindings[0], fmt.Sprint(i))
		var wg sync.WaitGroup
		var status int
		wg.Go(func() {
			var err error
			if status, _, err = post(link, "", "{}"); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if _, _, err := post(s.URL+"/a2a/jsonrpc", kitToken,
				fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":%q}}`, taskID)); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		// Drain the stream to its end.
		var last a2a.TaskState
		for {
			b, ok := <-f.ch
			if !ok {
				break
			}
			if u, ok := bindings[0].decode(t, b).(*a2a.TaskStatusUpdateEvent); ok {
				last = u.Status.State
			}
		}
		if !last.Terminal() {
			t.Fatalf("round %d: the stream ended in %v", i, last)
		}
		final := state(t, s, taskID)
		if status == http.StatusNotFound && final != a2a.TaskStateCanceled {
			t.Errorf("round %d: approval refused but the task is %v", i, final)
		}
		if status != http.StatusOK && status != http.StatusNotFound {
			t.Errorf("round %d: approval answered %d", i, status)
		}
		waitNoPending(t, s.agent)
	}
}

// TestMessageWhileAwaitingApproval: a client message cannot approve; the
// task goes back to auth-required with the same link, and the operator's
// approval still completes it.
func TestMessageWhileAwaitingApproval(t *testing.T) {
	s := startServer(t, "", nil)
	var task a2a.Task
	decodeResult(t, rpc(t, s.URL, "SendMessage", sendText("Deploy build 9 to staging")), &task)
	if task.Status.State != a2a.TaskStateAuthRequired {
		t.Fatalf("SendMessage returned %v, want auth-required", task.Status.State)
	}
	ask := task.Status.Message.Text()

	again := sendText("Is it approved yet?")
	msg := again["message"].(map[string]any)
	msg["taskId"], msg["contextId"] = task.ID, task.ContextID
	var task2 a2a.Task
	decodeResult(t, rpc(t, s.URL, "SendMessage", again), &task2)
	if task2.Status.State != a2a.TaskStateAuthRequired || task2.Status.Message.Text() != ask {
		t.Fatalf("after a message: %v %q, want auth-required %q", task2.Status.State, task2.Status.Message.Text(), ask)
	}

	if status, body := approve(t, s.URL+"/approve/"+task.ID); status != http.StatusOK {
		t.Fatalf("approval: %d %s", status, body)
	}
	waitState(t, s, task.ID, a2a.TaskStateCompleted)
	waitNoPending(t, s.agent)
}

// TestConcurrentApprovals: one deploy, many operators: exactly one wins.
func TestConcurrentApprovals(t *testing.T) {
	s := startServer(t, "", nil)
	_, taskID, link := deployStream(t, s, bindings[0], "7")
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			status, _, err := post(link, "", "{}")
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			counts[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts[http.StatusOK] != 1 || counts[http.StatusNotFound] != 7 {
		t.Errorf("answers %v, want one 200 and seven 404", counts)
	}
	waitState(t, s, taskID, a2a.TaskStateCompleted)
}

func TestApprovalEndpoint(t *testing.T) {
	s := startServer(t, "", nil)
	tests := []struct {
		method, path string
		status       int
	}{
		{http.MethodPost, "/approve/no-such-task", http.StatusNotFound},
		{http.MethodPost, "/approve/", http.StatusNotFound},
		{http.MethodPost, "/approve/a/b", http.StatusNotFound},
		{http.MethodGet, "/approve/some-task", http.StatusMethodNotAllowed},
		{http.MethodPut, "/approve/some-task", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		resp := do(t, tt.method, s.URL+tt.path, "", "")
		body := readBody(t, resp)
		if resp.StatusCode != tt.status {
			t.Errorf("%s %s: %d %s, want %d", tt.method, tt.path, resp.StatusCode, body, tt.status)
		}
		if tt.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != http.MethodPost {
			t.Errorf("%s %s: Allow %q", tt.method, tt.path, resp.Header.Get("Allow"))
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q", tt.method, tt.path, ct)
		}
	}
}

// TestProductionRejectedREST: 08 over the HTTP+JSON binding.
func TestProductionRejectedREST(t *testing.T) {
	s := startServer(t, "", nil)
	p, _ := json.Marshal(sendText("Deploy build 2026.10.06-1 to production"))
	resp := do(t, http.MethodPost, s.URL+"/a2a/rest/message:send", kitToken, string(p))
	body := readBody(t, resp)
	var res a2a.SendMessageResponse
	if err := json.Unmarshal(body, &res); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%d %s (%v)", resp.StatusCode, body, err)
	}
	task, ok := res.Result.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateRejected || task.Status.Message.Text() != productionText {
		t.Fatalf("want a rejected task, got %s", body)
	}
	if len(task.History) != 1 {
		t.Errorf("history has %d messages, want only the request", len(task.History))
	}
}

// TestRollback: the rollback skill of the extended card returns staging to
// the build before the live one, after approval; with no earlier build it
// is rejected.
func TestRollback(t *testing.T) {
	s := startServer(t, "", nil)
	run := func(text string) a2a.Task {
		t.Helper()
		var task a2a.Task
		decodeResult(t, rpc(t, s.URL, "SendMessage", sendText(text)), &task)
		if task.Status.State == a2a.TaskStateAuthRequired {
			if !s.agent.Approve(task.ID) { // an operator in the same process
				t.Fatalf("Approve(%s) = false", task.ID)
			}
			waitState(t, s, task.ID, a2a.TaskStateCompleted)
			decodeResult(t, rpc(t, s.URL, "GetTask", map[string]any{"id": task.ID}), &task)
		}
		return task
	}
	if task := run("Roll back staging"); task.Status.State != a2a.TaskStateRejected || task.Status.Message.Text() != noRollbackText {
		t.Fatalf("rollback with nothing deployed: %v %q", task.Status.State, task.Status.Message.Text())
	}
	run("Deploy build A1 to staging")
	run("Deploy build B2 to staging")
	task := run("Roll back staging")
	if got := task.Status.Message.Text(); task.Status.State != a2a.TaskStateCompleted || got != "Staging is back on build A1" {
		t.Fatalf("rollback: %v %q", task.Status.State, got)
	}
	if task := run("Roll back staging"); task.Status.State != a2a.TaskStateRejected {
		t.Fatalf("a second rollback: %v, want rejected", task.Status.State)
	}
}

// TestCloseWhileAwaitingApproval: closing the Handler ends the wait; the
// task stays in auth-required, as the server leaves interrupted tasks.
func TestCloseWhileAwaitingApproval(t *testing.T) {
	s := startServer(t, "", nil)
	var task a2a.Task
	decodeResult(t, rpc(t, s.URL, "SendMessage", sendText("Deploy build 5 to staging")), &task)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.h.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitNoPending(t, s.agent)
	if got := state(t, s, task.ID); got != a2a.TaskStateAuthRequired {
		t.Errorf("state after Close: %v", got)
	}
	if status, _ := approve(t, s.URL+"/approve/"+task.ID); status != http.StatusNotFound {
		t.Errorf("approval after Close: %d, want 404", status)
	}
}

func decodeResult(t *testing.T, raw json.RawMessage, v any) {
	t.Helper()
	var res a2a.SendMessageResponse
	if err := json.Unmarshal(raw, &res); err == nil {
		if task, ok := res.Result.(*a2a.Task); ok {
			if p, ok := v.(*a2a.Task); ok {
				*p = *task
				return
			}
		}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
}

// state reads a task's state as the kit's principal.
func state(t *testing.T, s *testServer, id string) a2a.TaskState {
	t.Helper()
	task, err := s.h.GetTask(server.WithPrincipal(context.Background(), Principal), &a2a.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return task.Status.State
}

func waitState(t *testing.T, s *testServer, id string, want a2a.TaskState) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for state(t, s, id) != want {
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %v, want %v", id, state(t, s, id), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitNoPending waits until no execution waits for an approval.
func waitNoPending(t *testing.T, a *Agent) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		a.mu.Lock()
		n := len(a.pending)
		a.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d executions still wait for approval", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
