package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/kit/reviewer"
	"github.com/goa2a/a2a/kit/testrunner"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// binary is the a2a command built once for these tests.
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "a2a-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "a2a")
	if out, err := exec.Command("go", "build", "-o", binary, "github.com/goa2a/a2a/cmd/a2a").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building a2a: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startAgent serves agent with deterministic ids and clock on 127.0.0.1.
func startAgent(t *testing.T, card func(string, string) *a2a.AgentCard, agent server.Agent) string {
	t.Helper()
	return startAgentWith(t, agentSetup{card: card, agent: agent})
}

// agentSetup is what startAgentWith serves.
type agentSetup struct {
	card  func(jsonrpcURL, restURL string) *a2a.AgentCard
	agent server.Agent
	edit  func(*a2a.AgentCard)            // changes the card before use
	wrap  func(http.Handler) http.Handler // middleware around the mux
	opts  []server.Option                 // more Handler options (a store, a pusher)
}

// startAgentWith serves s with deterministic ids and clock on 127.0.0.1,
// as startAgent does, with its middleware, card edit and options.
func startAgentWith(t *testing.T, s agentSetup) string {
	t.Helper()
	var mu sync.Mutex
	n := 0
	clock := time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	card := s.card(base+a2ahttp.JSONRPCPath, base+a2ahttp.RESTPath)
	if s.edit != nil {
		s.edit(card)
	}
	h, err := server.NewHandler(card, s.agent, append([]server.Option{
		server.WithIDGenerator(func() string { mu.Lock(); defer mu.Unlock(); n++; return fmt.Sprintf("id-%d", n) }),
		server.WithClock(func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			clock = clock.Add(250 * time.Millisecond)
			return clock
		})}, s.opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var handler http.Handler = mux
	if s.wrap != nil {
		handler = s.wrap(mux)
	}
	srv.Config.Handler = handler
	srv.Start()
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); _ = h.Close(context.Background()) })
	return base
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs the built binary, with base replaced by "URL" in its output.
func run(t *testing.T, base string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("a2a %v: %v", args, err)
	}
	clean := func(s string) string { return strings.ReplaceAll(s, base, "URL") }
	return result{clean(stdout.String()), clean(stderr.String()), code}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func wantExit(t *testing.T, r result, code int) {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
}

// TestHumanOutput runs a session against the test runner and checks what a
// person reads against golden files, and the exit statuses.
func TestHumanOutput(t *testing.T) {
	base := startAgent(t, testrunner.Card, &testrunner.Agent{})
	steps := []struct {
		name string
		args []string
		code int
	}{
		{"card", []string{"card", base}, 0},
		{"send", []string{"send", base, "Run the unit tests for payments-api at commit 9f3c2e1"}, 0},
		{"send-stream-failed", []string{"send", "--stream", base, "Run the unit tests for payments-api at commit deadbee"}, 5},
		{"send-stream", []string{"send", base, "Run the unit tests for payments-api at commit a41d7c3", "--stream", "--binding", "rest"}, 0},
		{"list", []string{"list", base}, 0},
		{"list-failed", []string{"list", base, "--status", "failed"}, 0},
		{"get", []string{"get", base, "id-1", "--history", "1"}, 0},
		{"watch-finished", []string{"watch", base, "id-1"}, 0},
		{"push-create", []string{"push", "create", base, "id-1", "http://127.0.0.1:9/hook", "--id", "hook-1", "--push-token", "secret"}, 0},
		{"push-get", []string{"push", "get", base, "id-1", "hook-1", "--binding", "rest"}, 0},
		{"push-list", []string{"push", "list", base, "id-1"}, 0},
		{"push-delete", []string{"push", "delete", base, "id-1", "hook-1"}, 0},
		{"push-get-deleted", []string{"push", "get", base, "id-1", "hook-1"}, 3},
		{"cancel-finished", []string{"cancel", base, "id-1"}, 3},
		{"get-missing", []string{"get", base, "no-such-task"}, 3},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			r := run(t, base, s.args...)
			wantExit(t, r, s.code)
			golden(t, s.name, r.stdout+r.stderr)
		})
	}
}

// TestReviewerConversation answers an input-required task with --task.
func TestReviewerConversation(t *testing.T) {
	base := startAgent(t, reviewer.Card, reviewer.Agent{})
	diff := filepath.Join(t.TempDir(), "refunds.diff")
	if err := os.WriteFile(diff, []byte("--- a/payments/refunds.py\n+++ b/payments/refunds.py\n@@ -40 +40 @@\n-x\n+y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, base, "send", base, "Review this diff of payments-api.", "--file", diff)
	wantExit(t, r, 0)
	golden(t, "review-ask", r.stdout)
	r = run(t, base, "send", base, "main", "--task", "id-1")
	wantExit(t, r, 0)
	golden(t, "review-answer", r.stdout)
	r = run(t, base, "send", base, "What languages can you review?")
	wantExit(t, r, 0)
	golden(t, "review-question", r.stdout)
	r = run(t, base, "send", base, "x", "--file", filepath.Join(t.TempDir(), "missing.png"))
	wantExit(t, r, 2)
}

// TestJSONOutput checks --json: exact protocol JSON, one object per line.
func TestJSONOutput(t *testing.T) {
	base := startAgent(t, testrunner.Card, &testrunner.Agent{})
	r := run(t, base, "send", "--json", base, "Run the unit tests for payments-api at commit 9f3c2e1")
	wantExit(t, r, 0)
	var res a2a.SendMessageResponse
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if task, ok := res.Result.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 2 {
		t.Fatalf("result %s", r.stdout)
	}

	r = run(t, base, "send", "--json", "--stream", base, "Run the unit tests for payments-api at commit 9f3c2e1")
	wantExit(t, r, 0)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var kinds []string
	for _, l := range lines {
		var ev a2a.StreamResponse
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		kinds = append(kinds, fmt.Sprintf("%T", ev.Event))
	}
	if len(kinds) != 9 || kinds[0] != "*a2a.Task" || kinds[8] != "*a2a.TaskStatusUpdateEvent" {
		t.Fatalf("stream lines %v", kinds)
	}

	r = run(t, base, "list", "--json", base, "--page-size", "1")
	wantExit(t, r, 0)
	var list a2a.ListTasksResponse
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list.Tasks) != 1 || list.TotalSize != 2 || list.NextPageToken == "" {
		t.Fatalf("list %s: %v", r.stdout, err)
	}
	r = run(t, base, "list", "--json", "--all", base, "--page-size", "1")
	wantExit(t, r, 0)
	if n := len(strings.Split(strings.TrimSpace(r.stdout), "\n")); n != 2 {
		t.Fatalf("--all printed %d tasks, want 2:\n%s", n, r.stdout)
	}
}

// TestExitCodes: usage mistakes, protocol errors and connection failures
// have their own statuses, and errors never print a Go stack.
func TestExitCodes(t *testing.T) {
	base := startAgent(t, testrunner.Card, &testrunner.Agent{})
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no command", nil, 2, "Usage"},
		{"unknown command", []string{"frob"}, 2, "unknown command"},
		{"missing argument", []string{"get", base}, 2, "missing argument TASK_ID"},
		{"bad URL", []string{"card", "not a url"}, 2, "not an agent URL"},
		{"bad binding", []string{"card", base, "--binding", "soap"}, 2, "--binding"},
		{"bad header", []string{"card", base, "--header", "nocolon"}, 2, "--header"},
		{"bad status", []string{"list", base, "--status", "sleeping"}, 2, "not a task state"},
		{"bad data", []string{"send", base, "x", "--data", "{"}, 2, "--data"},
		{"stream and async", []string{"send", base, "x", "--stream", "--async"}, 2, "do not go together"},
		{"bad push verb", []string{"push", "frob"}, 2, "want create"},
		{"protocol error", []string{"list", base, "--page-size", "500"}, 3, "InvalidParams"},
		{"no agent there", []string{"card", "http://127.0.0.1:1"}, 4, "no answer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, base, c.args...)
			wantExit(t, r, c.code)
			if !strings.Contains(r.stderr+r.stdout, c.want) || strings.Contains(r.stderr, "goroutine ") {
				t.Fatalf("output lacks %q or shows a stack:\n%s%s", c.want, r.stdout, r.stderr)
			}
		})
	}
}
