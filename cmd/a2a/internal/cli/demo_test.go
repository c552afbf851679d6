package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// runDemo calls demo with a short operator pause and no pause between
// test log lines.
func runDemo(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	args = append([]string{"--approve-after", "10ms", "--line-delay", "0s"}, args...)
	code = demo(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// The demo runs the whole plan over real HTTP on 127.0.0.1 and shows each
// delegation, the states, the operator's approval and the verdict.
func TestDemo(t *testing.T) {
	t.Parallel()
	out, errOut, code := runDemo(t)
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"test-runner    http://127.0.0.1:",
		"deployer       http://127.0.0.1:",
		"card test-runner",
		"→ run-tests to test-runner",
		"completed: 13 passed",
		"artifact summary.json: {\"passed\":13,\"failed\":0}",
		"✓ tests: 13 passed",
		"→ review-diff to code-reviewer",
		"input required: Which base branch should I compare this diff against?",
		"the planner answers from its own context: main",
		"✓ review: 1 finding, 0 blocking",
		"→ deploy to deployer",
		"auth required: An operator must approve this deploy at http://127.0.0.1:",
		"the planner subscribes to the task",
		"an operator approved the deploy: POST http://127.0.0.1:",
		"working: Approved by an operator. Rolling out to staging",
		"completed: Build 2026.10.06-1 is live on staging",
		"✓ deploy: TASK_STATE_COMPLETED",
		"Verdict: shipped. Build 2026.10.06-1 of payments-api is live on staging (https://staging.example.com).",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	// Order: the operator is asked after the deploy waits, and approves
	// before the deploy resumes.
	order := []string{"→ run-tests", "→ review-diff", "→ deploy", "auth required", "an operator looks at task", "an operator approved", "working: Approved", "Verdict"}
	at := 0
	for _, s := range order {
		i := strings.Index(out[at:], s)
		if i < 0 {
			t.Errorf("%q missing or out of order in:\n%s", s, out)
			break
		}
		at += i
	}
	if errOut != "" {
		t.Errorf("stderr: %s", errOut)
	}
}

// A plan that stops exits 5 with the reason as the verdict.
func TestDemoStops(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--commit", "9f3c2e1"}, "Verdict: not shipped: 1 test(s) failed."},
		{[]string{"--environment", "production"}, "Verdict: not shipped: the deploy task did not complete (TASK_STATE_REJECTED)."},
	} {
		out, errOut, code := runDemo(t, tc.args...)
		if code != ExitTaskFailed || !strings.Contains(out, tc.want) {
			t.Errorf("demo %q: exit %d, want %d and %q\nstdout:\n%s\nstderr:\n%s", tc.args, code, ExitTaskFailed, tc.want, out, errOut)
		}
	}
}

// --json prints one JSON object per line, ending with the verdict.
func TestDemoJSON(t *testing.T) {
	t.Parallel()
	out, errOut, code := runDemo(t, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	var kinds []string
	var last map[string]any
	for line := range strings.SplitSeq(strings.TrimRight(out, "\n"), "\n") {
		if err := json.Unmarshal([]byte(line), &last); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		kinds = append(kinds, last["kind"].(string))
	}
	joined := strings.Join(kinds, " ")
	for _, want := range []string{"agent agent agent card card card delegate", "approval operator operator", "decision verdict"} {
		if !strings.Contains(joined, want) {
			t.Errorf("kinds %q lack %q", joined, want)
		}
	}
	if last["completed"] != true {
		t.Errorf("verdict %v, want completed", last)
	}
}

// --log prints the planner's decision log, in the kit's format.
func TestDemoLog(t *testing.T) {
	t.Parallel()
	out, errOut, code := runDemo(t, "--log")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 16 || !strings.HasPrefix(lines[0], "card test-runner: skills run-tests; JSONRPC at http://127.0.0.1:") || lines[15] != "deploy: TASK_STATE_COMPLETED" {
		t.Errorf("log:\n%s\nwant the 16 lines of 19-planner.log", out)
	}
}

func TestDemoUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--json", "--log"}, {"extra"}, {"--commit", ""}, {"--nope"}} {
		if _, _, code := runDemo(t, args...); code != ExitUsage {
			t.Errorf("demo %q: exit %d, want %d", args, code, ExitUsage)
		}
	}
}
