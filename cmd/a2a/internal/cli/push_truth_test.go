package cli_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/kit/testrunner"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store/memory"
)

// startPushAgent serves the test runner on 127.0.0.1, with deterministic
// ids and a push deliverer whose guard admits 127.0.0.1 when allow is
// set. A message "ask" leaves its task waiting for input.
func startPushAgent(t *testing.T, allow bool) string {
	t.Helper()
	var gopts []push.GuardOption
	if allow {
		gopts = append(gopts, push.WithAllow("127.0.0.1"))
	}
	guard, err := push.NewGuard(gopts...)
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New()
	// Retries wait an hour, so that a failing webhook stays "retrying"
	// for as long as the test looks.
	d, err := push.NewDeliverer(st, push.WithGuard(guard), push.WithBackoff(time.Hour, time.Hour), push.WithPollInterval(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Message.Text() == "ask" {
			return w.RequireInput(ctx, "Which branch?")
		}
		return (&testrunner.Agent{}).Execute(ctx, req, w)
	})
	base := startAgentWith(t, agentSetup{card: testrunner.Card, agent: agent, opts: []server.Option{server.WithStore(st), server.WithPusher(d)}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return base
}

// startHook is a webhook on 127.0.0.1 answering every call with status.
func startHook(t *testing.T, status int) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
	t.Cleanup(s.Close)
	return s.URL + "/hook"
}

var (
	configIDPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	nextAtPattern   = regexp.MustCompile(`next at [^)]+\)`)
)

// TestPushTruthfulOutput: what a2a push get says follows what the server
// did for the webhook (delivered, waiting, retrying, refused, nothing to
// deliver), a2a send --webhook names the config it registered, and a
// config that is not there is said to be not there, by get and delete.
func TestPushTruthfulOutput(t *testing.T) {
	base := startPushAgent(t, true)
	ok, busy := startHook(t, http.StatusOK), startHook(t, http.StatusServiceUnavailable)
	clean := func(r result, hooks ...string) result {
		for i, h := range hooks {
			r.stdout = regexp.MustCompile(regexp.QuoteMeta(h)).ReplaceAllString(r.stdout, fmt.Sprintf("HOOK%d", i+1))
		}
		r.stdout = configIDPattern.ReplaceAllString(r.stdout, "CONFIG")
		r.stderr = configIDPattern.ReplaceAllString(r.stderr, "CONFIG")
		r.stdout = nextAtPattern.ReplaceAllString(r.stdout, "next at TIME)")
		return r
	}
	configOf := func(r result) string {
		id := configIDPattern.FindString(r.stdout + r.stderr)
		if id == "" {
			t.Fatalf("no config id in:\n%s%s", r.stdout, r.stderr)
		}
		return id
	}

	// A task that ran with a webhook: every update went out. The id
	// generator makes the task id-1 (its context id-2, ...).
	r := run(t, base, "send", base, "Run the unit tests for payments-api at commit 9f3c2e1", "--webhook", ok)
	wantExit(t, r, 0)
	goldenRun(t, "send-webhook", clean(r, ok))
	cfg := configOf(r)
	r = runUntil(t, base, "delivery  done", "push", "get", base, "id-1", cfg)
	wantExit(t, r, 0)
	goldenRun(t, "push-get-done", clean(r, ok))

	// --json keeps stdout the protocol's; the config id goes to stderr.
	r = run(t, base, "send", "--json", base, "Run the unit tests for payments-api at commit 9f3c2e1", "--webhook", ok)
	wantExit(t, r, 0)
	if strings.Contains(r.stdout, "webhook config") || !strings.HasPrefix(r.stderr, "webhook config ") {
		t.Errorf("send --json --webhook: the config id belongs on stderr\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}

	// With --stream, the line comes after the stream.
	r = run(t, base, "send", "--stream", base, "Run the unit tests for payments-api at commit 9f3c2e1", "--webhook", ok)
	wantExit(t, r, 0)
	if !regexp.MustCompile(`\nwebhook config ` + configIDPattern.String() + ` registered for task id-\d+\n$`).MatchString(r.stdout) {
		t.Errorf("send --stream --webhook does not end with the config's id:\n%s", r.stdout)
	}

	// A config registered on the finished task: nothing will be sent.
	wantExit(t, run(t, base, "push", "create", base, "id-1", ok, "--id", "late"), 0)
	r = run(t, base, "push", "get", base, "id-1", "late")
	wantExit(t, r, 0)
	goldenRun(t, "push-get-ended", clean(r, ok))

	// A task waiting for input: up to date, waiting for more.
	r = run(t, base, "send", base, "ask", "--webhook", ok)
	wantExit(t, r, 0)
	waiting := r
	r = runUntil(t, base, "delivery  up to date", "push", "get", base, taskOf(t, waiting), configOf(waiting))
	goldenRun(t, "push-get-waiting", clean(r, ok))

	// A webhook that answers 503: retrying.
	r = run(t, base, "send", base, "Run the unit tests for payments-api at commit a41d7c3", "--webhook", busy)
	wantExit(t, r, 0)
	retrying := r
	r = runUntil(t, base, "delivery  retrying", "push", "get", base, taskOf(t, retrying), configOf(retrying))
	goldenRun(t, "push-get-retrying", clean(r, busy))

	// Not there: an unknown config of a task that exists, a second
	// delete, an unknown task.
	goldenRun(t, "push-get-unknown-config", clean(run(t, base, "push", "get", base, "id-1", "no-such-config")))
	wantExit(t, run(t, base, "push", "delete", base, "id-1", "late"), 0)
	goldenRun(t, "push-delete-again", clean(run(t, base, "push", "delete", base, "id-1", "late")))
	goldenRun(t, "push-get-unknown-task", clean(run(t, base, "push", "get", base, "no-such-task", "late")))
	goldenRun(t, "push-delete-unknown-task", clean(run(t, base, "push", "delete", base, "no-such-task", "late")))
}

// TestPushRefusedOutput: a webhook the server's SSRF guard refuses is
// said to be refused, and why, not delivered or failing.
func TestPushRefusedOutput(t *testing.T) {
	base := startPushAgent(t, false)
	hook := startHook(t, http.StatusOK)
	r := run(t, base, "send", base, "Run the unit tests for payments-api at commit 9f3c2e1", "--webhook", hook)
	wantExit(t, r, 0)
	id := configIDPattern.FindString(r.stdout)
	r = runUntil(t, base, "delivery  REFUSED", "push", "get", base, "id-1", id)
	r.stdout = configIDPattern.ReplaceAllString(regexp.MustCompile(regexp.QuoteMeta(hook)).ReplaceAllString(r.stdout, "HOOK"), "CONFIG")
	goldenRun(t, "push-get-refused", r)
}

// taskOf is the task id a2a send printed in "webhook config ... registered
// for task ID".
func taskOf(t *testing.T, r result) string {
	t.Helper()
	m := regexp.MustCompile(`registered for task (\S+)`).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("a2a send named no task:\n%s", r.stdout)
	}
	return m[1]
}
