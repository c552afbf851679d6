package planner_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/capture"
	"github.com/goa2a/a2a/kit/planner"
	"github.com/goa2a/a2a/kit/reviewer"
	"github.com/goa2a/a2a/kit/testrunner"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// The planner's log of the recorded run is the kit's 19-planner.log, line
// for line, apart from ids and ports.
func TestRecordedRunLog(t *testing.T) {
	t.Parallel()
	urls := startKit(t, testRunner())
	var steps []planner.Step
	res, log := runPlan(t, urls, planner.DefaultPlan(), planner.WithObserver(func(s planner.Step) { steps = append(steps, s) }))
	compareLines(t, normalise(log, urls), recordedLog(t))

	if !res.Completed || res.Stopped != "" {
		t.Errorf("result: completed %v, stopped %q; want completed", res.Completed, res.Stopped)
	}
	if res.Tests == nil || res.Tests.Passed != 13 || res.Tests.Failed != 0 {
		t.Errorf("tests: %+v, want 13 passed", res.Tests)
	}
	if res.Review == nil || len(res.Review.Findings) != 1 || res.Review.Base != "main" {
		t.Errorf("review: %+v, want one finding against main", res.Review)
	}
	if res.Deploy == nil || res.Deploy.Status.State != a2a.TaskStateCompleted || len(res.Deploy.Artifacts) != 1 {
		t.Errorf("deploy: %+v, want a completed task with its report", res.Deploy)
	}

	// The observer saw the same run: three cards, three delegations, the
	// approval asked once, after the task needed it, and the states that
	// followed it.
	var kinds []string
	for _, s := range steps {
		if s.Kind == planner.StepState {
			kinds = append(kinds, string(s.Kind)+":"+s.Agent+":"+s.State.String())
		} else if s.Kind != planner.StepArtifact {
			kinds = append(kinds, string(s.Kind)+":"+s.Agent)
		}
	}
	want := []string{
		"card:test-runner", "card:code-reviewer", "card:deployer",
		"delegate:test-runner", "state:test-runner:TASK_STATE_COMPLETED", "decision:",
		"delegate:code-reviewer", "state:code-reviewer:TASK_STATE_INPUT_REQUIRED", "answer:code-reviewer",
		"state:code-reviewer:TASK_STATE_COMPLETED", "decision:",
		"delegate:deployer", "state:deployer:TASK_STATE_AUTH_REQUIRED", "follow:deployer", "approval:deployer",
		"state:deployer:TASK_STATE_WORKING", "state:deployer:TASK_STATE_COMPLETED", "decision:",
	}
	if !slices.Equal(kinds, want) {
		t.Errorf("steps:\n got %q\nwant %q", kinds, want)
	}
}

// uuidRE matches the ids of the kit's and our messages and tasks.
var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// normaliseRequest returns a comparable form of a request: the path and
// the body with each UUID replaced by its order of first appearance in ids,
// and the JSON-RPC id dropped (the kit numbers requests across agents, our
// client per agent).
func normaliseRequest(t *testing.T, ids map[string]string, path, body string) (string, string) {
	t.Helper()
	sub := func(s string) string {
		return uuidRE.ReplaceAllStringFunc(s, func(id string) string {
			if ids[id] == "" {
				ids[id] = "<uuid" + string(rune('A'+len(ids))) + ">"
			}
			return ids[id]
		})
	}
	path = sub(path)
	if strings.TrimSpace(body) == "" {
		return path, ""
	}
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("request body %q: %v", body, err)
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "id")
	}
	b, err := json.Marshal(v) // sorted keys
	if err != nil {
		t.Fatal(err)
	}
	return path, sub(string(b))
}

// The planner's requests for the recorded run are the kit's (capture 19),
// in the same order, apart from ids: same paths, same JSON-RPC methods and
// params, the bearer token only to the deployer, and SubscribeToTask
// before the operator's approval.
func TestRecordedRunRequests(t *testing.T) {
	t.Parallel()
	exchanges, err := capture.Load("19-planner.http")
	if err != nil {
		t.Skip(err)
	}
	urls := startKit(t, testRunner())
	rt := &recordingTransport{}
	hc := &http.Client{Transport: rt}
	runPlan(t, urls, planner.DefaultPlan(), planner.WithHTTPClient(hc), planner.WithOperator(approver(hc)))

	got := rt.requests()
	if len(got) != len(exchanges) {
		t.Errorf("%d requests, want %d as recorded", len(got), len(exchanges))
	}
	wantIDs, gotIDs := map[string]string{}, map[string]string{}
	for i := range min(len(got), len(exchanges)) {
		ex, r := exchanges[i], got[i]
		wp, wb := normaliseRequest(t, wantIDs, ex.Path, ex.Body)
		gp, gb := normaliseRequest(t, gotIDs, r.path, string(r.body))
		if r.method != ex.Method || gp != wp {
			t.Errorf("request %d (%s): %s %s, want %s %s", i+1, ex.Title, r.method, gp, ex.Method, wp)
		}
		if r.auth != ex.Header.Get("Authorization") {
			t.Errorf("request %d (%s): Authorization %q, want %q", i+1, ex.Title, r.auth, ex.Header.Get("Authorization"))
		}
		if gb != wb {
			t.Errorf("request %d (%s) body:\n got %s\nwant %s", i+1, ex.Title, gb, wb)
		}
	}
}

// baseLog is the log of the three card lines of startKit's agents,
// normalised.
var baseLog = []string{
	"card test-runner: skills run-tests; JSONRPC at http://localhost:41241/a2a/jsonrpc",
	"card code-reviewer: skills review-diff, answer-question; JSONRPC at http://localhost:41242/a2a/jsonrpc",
	"card deployer: skills deploy; JSONRPC at http://localhost:41243/a2a/jsonrpc",
}

func lines(extra ...string) []string { return append(slices.Clone(baseLog), extra...) }

// Commit 9f3c2e1 has a failing test: the planner stops before the review.
func TestFailingTestsStopBeforeReview(t *testing.T) {
	t.Parallel()
	urls := startKit(t, testRunner())
	plan := planner.DefaultPlan()
	plan.Commit = "9f3c2e1"
	res, log := runPlan(t, urls, plan)
	compareLines(t, normalise(log, urls), lines(
		"delegate run-tests to test-runner",
		"  task <id1> is TASK_STATE_COMPLETED",
		"stop: 1 test(s) failed",
	))
	if res.Completed || res.Stopped != "1 test(s) failed" || res.Tests == nil || res.Tests.Failed != 1 || len(res.Tests.Failures) != 1 || res.Review != nil {
		t.Errorf("result %+v, want stopped on one failed test before the review", res)
	}
}

// A commit that does not exist fails the test task: the planner says why
// and stops.
func TestFailedTestTask(t *testing.T) {
	t.Parallel()
	urls := startKit(t, testRunner())
	plan := planner.DefaultPlan()
	plan.Commit = "deadbee"
	res, log := runPlan(t, urls, plan)
	compareLines(t, normalise(log, urls), lines(
		"delegate run-tests to test-runner",
		"  task <id1> is TASK_STATE_FAILED",
		"  it says: Commit deadbee does not exist in payments-api.",
		"stop: the test task did not complete (TASK_STATE_FAILED)",
	))
	if res.Completed || res.Tests != nil {
		t.Errorf("result %+v, want stopped without a summary", res)
	}
}

// highSeverityDiff touches payments/refunds.py, whose review has a finding
// of high severity (capture 06).
const highSeverityDiff = "--- a/payments/refunds.py\n+++ b/payments/refunds.py\n@@ -40,3 +40,4 @@ def partial_refund(charge, amount):\n-    net = amount - fee(charge)\n+    net = int(amount) - fee(charge)\n"

// A high-severity finding stops the plan before the deploy.
func TestHighSeverityFindingStopsBeforeDeploy(t *testing.T) {
	t.Parallel()
	urls := startKit(t, testRunner())
	plan := planner.DefaultPlan()
	plan.Diff = highSeverityDiff
	res, log := runPlan(t, urls, plan)
	compareLines(t, normalise(log, urls), lines(
		"delegate run-tests to test-runner",
		"  task <id1> is TASK_STATE_COMPLETED",
		"tests: 13 passed",
		"delegate review-diff to code-reviewer",
		"  task <id2> is TASK_STATE_INPUT_REQUIRED",
		"  it asks: Which base branch should I compare this diff against? The planner answers from its own context: main",
		"  task <id2> is TASK_STATE_COMPLETED",
		"review: 2 findings, 1 blocking",
		"stop: a high-severity finding blocks the deploy",
	))
	if res.Completed || res.Review == nil || len(res.Review.Blocking()) != 1 || res.Deploy != nil {
		t.Errorf("result %+v, want stopped on one blocking finding before the deploy", res)
	}
}

// The deployer rejects production: the planner stops with its reason and
// never calls the operator.
func TestRejectedDeploy(t *testing.T) {
	t.Parallel()
	urls := startKit(t, testRunner())
	plan := planner.DefaultPlan()
	plan.Environment = "production"
	asked := false
	res, log := runPlan(t, urls, plan, planner.WithOperator(func(context.Context, planner.ApprovalRequest) error {
		asked = true
		return nil
	}))
	want := append(slices.Clone(recordedLog(t)[:12]), // through "delegate deploy to deployer"
		"  task <id3> is TASK_STATE_REJECTED",
		"  it says: Production deploys are outside this agent's policy. Use the release train.",
		"stop: the deploy task did not complete (TASK_STATE_REJECTED)",
	)
	compareLines(t, normalise(log, urls), want)
	if asked {
		t.Error("the operator was asked to approve a rejected deploy")
	}
	if res.Completed || res.Deploy == nil || res.Deploy.Status.State != a2a.TaskStateRejected {
		t.Errorf("result %+v, want a rejected deploy", res)
	}
}

// Without an operator, a deploy waiting for approval stops the plan.
func TestNoOperator(t *testing.T) {
	t.Parallel()
	urls := startKit(t, testRunner())
	var log strings.Builder
	p, err := planner.New(planner.WithToken("deployer", deployToken), planner.WithLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background(), planner.DefaultPlan(), urls...)
	if err != nil {
		t.Fatal(err)
	}
	got := normalise(log.String(), urls)
	want := append(slices.Clone(recordedLog(t)[:14]), // through "it needs approval: ..."
		"  the operator could not be asked: the planner has no operator",
		"stop: the deploy task did not complete (TASK_STATE_AUTH_REQUIRED)",
	)
	compareLines(t, got, want)
	if res.Completed {
		t.Error("completed without an operator")
	}
}

// hastyRunner is a test-runner behind a server that answers a blocking
// SendMessage at once, with the task in TASK_STATE_WORKING (manual §7.1,
// conflict D2). The agent reports working, then waits until the planner
// follows the task (SubscribeToTask or GetTask) before it runs the tests.
func hastyRunner(streaming bool) kitAgent {
	working := make(chan struct{})
	release := make(chan struct{})
	var workingOnce, releaseOnce sync.Once
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.Working(ctx, "Waiting for a free runner"); err != nil {
			return err
		}
		workingOnce.Do(func() { close(working) })
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return (&testrunner.Agent{}).Execute(ctx, req, w)
	})
	card := func(j, r string) *a2a.AgentCard {
		c := testrunner.Card(j, r)
		c.Capabilities.Streaming = a2a.Ptr(streaming)
		return c
	}
	wrap := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != a2ahttp.JSONRPCPath {
				next.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			var env map[string]any
			_ = json.Unmarshal(body, &env)
			switch env["method"] {
			case "SubscribeToTask", "GetTask":
				releaseOnce.Do(func() { close(release) })
			case "SendMessage":
				answerAtOnce(w, r, next, env, working)
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			next.ServeHTTP(w, r)
		})
	}
	return kitAgent{card: card, agent: agent, wrap: wrap}
}

// answerAtOnce serves a JSON-RPC SendMessage with returnImmediately set,
// waits until the agent is working, and answers with the task as GetTask
// then shows it.
func answerAtOnce(w http.ResponseWriter, r *http.Request, next http.Handler, env map[string]any, working <-chan struct{}) {
	serve := func(req map[string]any) []byte {
		b, _ := json.Marshal(req)
		r2 := r.Clone(r.Context())
		r2.Body = io.NopCloser(strings.NewReader(string(b)))
		r2.ContentLength = int64(len(b))
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r2)
		return rec.Body.Bytes()
	}
	params, _ := env["params"].(map[string]any)
	params["configuration"] = map[string]any{"returnImmediately": true}
	var sent struct {
		Result struct {
			Task *struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
	}
	out := serve(env)
	if err := json.Unmarshal(out, &sent); err != nil || sent.Result.Task == nil {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
		return
	}
	select {
	case <-working:
	case <-r.Context().Done():
		return
	}
	var got struct {
		Result json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(serve(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": map[string]any{"id": sent.Result.Task.ID}}), &got)
	reply, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": env["id"], "result": map[string]any{"task": got.Result}})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(reply)
}

// An early TASK_STATE_WORKING reply is followed until the task settles,
// over a stream when the card declares streaming, by polling otherwise.
func TestEarlyWorkingReply(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		streaming bool
		follow    string
		end       string
	}{
		{"streaming", true, "  it has not settled, so the planner subscribes to it", "  the stream ends at TASK_STATE_COMPLETED"},
		{"polling", false, "  it has not settled, so the planner polls it", "  polling ends at TASK_STATE_COMPLETED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			urls := startKit(t, hastyRunner(tc.streaming))
			res, log := runPlan(t, urls, planner.DefaultPlan())
			want := slices.Clone(recordedLog(t))
			// The reply is working, not completed: the planner follows it.
			want = slices.Replace(want, 4, 5, "  task <id1> is TASK_STATE_WORKING", tc.follow, tc.end)
			compareLines(t, normalise(log, urls), want)
			if !res.Completed || res.Tests == nil || res.Tests.Passed != 13 {
				t.Errorf("result %+v, want a completed plan with the followed task's summary", res)
			}
		})
	}
}

// A send that gets no answer is made again with the same messageId; the
// plan goes on.
func TestRetrySameMessageID(t *testing.T) {
	t.Parallel()
	urls := startKit(t, testRunner())
	failed := false
	rt := &recordingTransport{fail: func(method, path string, body []byte) bool {
		if !failed && rpcMethod(body) == "SendMessage" {
			failed = true
			return true
		}
		return false
	}}
	res, log := runPlan(t, urls, planner.DefaultPlan(), planner.WithHTTPClient(&http.Client{Transport: rt}), planner.WithRetry(3, 0))
	if !res.Completed {
		t.Fatalf("plan did not complete:\n%s", log)
	}
	got := normalise(log, urls)
	if len(got) < 5 || !strings.HasPrefix(got[4], "  no answer from test-runner (") || !strings.HasSuffix(got[4], "; the planner sends the same message again") {
		t.Errorf("log line 5 is %q, want the retry", got[4:5])
	}
	var sends []string
	for _, r := range rt.requests() {
		if rpcMethod(r.body) != "SendMessage" {
			continue
		}
		var env struct {
			Params struct {
				Message struct {
					MessageID string `json:"messageId"`
				} `json:"message"`
			} `json:"params"`
		}
		_ = json.Unmarshal(r.body, &env)
		sends = append(sends, env.Params.Message.MessageID)
	}
	if len(sends) < 2 || sends[0] != sends[1] || sends[0] == "" {
		t.Errorf("messageIds of the sends %q: want the first two equal", sends)
	}
}

// An error the agent answers with is logged in the kit's form and never
// retried; a skill no agent offers stops the plan.
func TestErrorsAndMissingSkill(t *testing.T) {
	t.Parallel()
	t.Run("unauthenticated", func(t *testing.T) {
		t.Parallel()
		urls := startKit(t, testRunner())
		var log strings.Builder
		p, err := planner.New(planner.WithLog(&log), planner.WithOperator(approver(http.DefaultClient)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Run(context.Background(), planner.DefaultPlan(), urls...)
		if err != nil {
			t.Fatal(err)
		}
		got := normalise(log.String(), urls)
		want := append(slices.Clone(recordedLog(t)[:12]), "", "stop: the deploy task did not complete")
		if len(got) == len(want) && strings.HasPrefix(got[12], "  error -") && strings.Contains(got[12], ": ") {
			want[12] = got[12] // the server's wording is its own
		}
		compareLines(t, got, want)
		if res.Completed || res.Stopped != "the deploy task did not complete" {
			t.Errorf("result %+v", res)
		}
	})
	t.Run("missing skill", func(t *testing.T) {
		t.Parallel()
		urls := startKit(t, testRunner())
		res, log := runPlan(t, urls[:2], planner.DefaultPlan())
		got := normalise(log, urls)
		if last := got[len(got)-1]; last != "stop: no agent offers the skill deploy" {
			t.Errorf("last log line %q, want the missing skill", last)
		}
		if res.Completed {
			t.Error("completed without a deployer")
		}
	})
}

func TestRunChecks(t *testing.T) {
	t.Parallel()
	p, err := planner.New()
	if err != nil {
		t.Fatal(err)
	}
	plan := planner.DefaultPlan()
	plan.Build = ""
	if _, err := p.Run(context.Background(), plan, "http://127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "Build") {
		t.Errorf("Run with no build: %v", err)
	}
	if _, err := p.Run(context.Background(), planner.DefaultPlan()); err == nil {
		t.Error("Run with no agent: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Run(ctx, planner.DefaultPlan(), "http://127.0.0.1:1"); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a canceled context: %v, want context.Canceled", err)
	}
	if _, err := planner.New(planner.WithRetry(0, 0)); !errors.Is(err, planner.ErrInvalidOption) {
		t.Errorf("WithRetry(0): %v", err)
	}
}

// A question the planner cannot answer from its own context stops the
// plan; the planner does not make up an answer.
func TestUnansweredQuestion(t *testing.T) {
	t.Parallel()
	asker := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		return w.RequireInput(ctx, "Which ticket does this change fix?")
	})
	urls := []string{
		serveAgent(t, testRunner()),
		serveAgent(t, kitAgent{card: reviewer.Card, agent: asker}),
		serveDeployer(t),
	}
	res, log := runPlan(t, urls, planner.DefaultPlan())
	want := append(slices.Clone(recordedLog(t)[:8]), // through the input-required reply
		"  it asks: Which ticket does this change fix? The planner cannot answer that from its own context.",
		"stop: the review task did not complete (TASK_STATE_INPUT_REQUIRED)",
	)
	compareLines(t, normalise(log, urls), want)
	if res.Completed || res.Review != nil {
		t.Errorf("result %+v, want stopped before reading a review", res)
	}
}
