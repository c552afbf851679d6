// Package testrunner is the test-runner agent of the A2A 101 kit: it reads a
// commit from the message, "runs" the test suite, streams the log as an
// artifact line by line, then reports a summary artifact and completes.
//
// This is the canned mode that reproduces the kit's recorded traffic
// (capture 03–05, 09, 10, 14): commit deadbee does not exist, a41d7c3
// passes, any other commit has one failure, and a message asking for the
// "full suite" streams a longer log.
package testrunner

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/execagent"
	"github.com/goa2a/a2a/server"
)

// Agent is the test-runner agent.
type Agent struct {
	// Command, when its Args are set, switches to the real mode: each
	// message runs the command (for example go test ./... in a
	// directory) and streams its real output as the test-log artifact,
	// then a summary artifact.
	Command execagent.Command
	// Pace is called before each log line after the first, with the
	// line's index; it paces the stream. Nil waits LineDelay.
	Pace func(ctx context.Context, taskID string, line int) error
	// LineDelay is the default pause between log lines.
	LineDelay time.Duration
}

var (
	commitRE = regexp.MustCompile(`\b([0-9a-f]{7,40})\b`)
	repoRE   = regexp.MustCompile(`\bfor ([A-Za-z0-9_.-]+) at\b`)
)

type run struct {
	log     []string
	summary *cannedSummary // nil: no summary artifact
	result  string
}

// cannedSummary is the summary data part, its members in the kit's order.
type cannedSummary struct {
	Passed   int             `json:"passed"`
	Failed   int             `json:"failed"`
	Failures []cannedFailure `json:"failures,omitempty"`
}

type cannedFailure struct {
	Test  string `json:"test"`
	Error string `json:"error"`
}

func canned(commit string, full bool) run {
	if full {
		var log []string
		for i := 1; i <= 8; i++ {
			log = append(log, fmt.Sprintf("tests/test_suite_%02d.py ........\n", i))
		}
		return run{log: log, result: "96 passed"}
	}
	if commit == "a41d7c3" {
		return run{
			log:     []string{"collected 13 items\n", "tests/test_charges.py ........  [ 61%]\n", "tests/test_refunds.py .....  [100%]\n", "13 passed in 4.38s\n"},
			summary: &cannedSummary{Passed: 13},
			result:  "13 passed",
		}
	}
	const failure = "tests/test_refunds.py::test_partial_refund"
	return run{
		log: []string{"collected 12 items\n", "tests/test_charges.py ........  [ 66%]\n", "tests/test_refunds.py ..F.  [100%]\n",
			"FAILED " + failure + " - AssertionError: 450 != 500\n", "1 failed, 11 passed in 4.21s\n"},
		summary: &cannedSummary{Passed: 11, Failed: 1, Failures: []cannedFailure{{Test: failure, Error: "AssertionError: 450 != 500"}}},
		result:  "1 failed, 11 passed",
	}
}

// Execute implements [server.Agent].
func (a *Agent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	if len(a.Command.Args) > 0 {
		return a.runCommand(ctx, w)
	}
	text := req.Message.Text()
	commit := ""
	if m := commitRE.FindStringSubmatch(text); m != nil {
		commit = m[1]
	}
	repo := "payments-api"
	if m := repoRE.FindStringSubmatch(text); m != nil {
		repo = m[1]
	}
	if commit == "" {
		return w.Reject(ctx, "Name the commit to test, for example: Run the unit tests for payments-api at commit 9f3c2e1")
	}
	if commit == "deadbee" {
		if err := w.Working(ctx, "Checking out "+commit); err != nil {
			return err
		}
		return w.Fail(ctx, fmt.Sprintf("Commit %s does not exist in %s.", commit, repo))
	}
	r := canned(commit, strings.Contains(strings.ToLower(text), "full suite"))
	if err := w.Working(ctx, "Checking out "+commit+" and starting the suite"); err != nil {
		return err
	}
	for i, line := range r.log {
		if i > 0 {
			if err := a.pace(ctx, req.TaskID, i); err != nil {
				return err
			}
		}
		art := a2a.Artifact{ArtifactID: "test-log", Parts: []a2a.Part{a2a.TextPart(line)}}
		if i == 0 {
			art.Name = "test-log.txt"
		}
		if err := w.ArtifactChunk(ctx, art, i > 0, i == len(r.log)-1); err != nil {
			return err
		}
	}
	if r.summary != nil {
		p, err := a2a.DataPart(r.summary)
		if err != nil {
			return err
		}
		if err := w.Artifact(ctx, a2a.Artifact{ArtifactID: "summary", Name: "summary.json", Parts: []a2a.Part{p}}); err != nil {
			return err
		}
	}
	return w.Complete(ctx, r.result)
}

func (a *Agent) pace(ctx context.Context, taskID string, line int) error {
	if a.Pace != nil {
		return a.Pace(ctx, taskID, line)
	}
	t := time.NewTimer(a.LineDelay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Card returns the test-runner's agent card for a server whose interfaces
// are at jsonrpcURL and restURL (capture 01).
func Card(jsonrpcURL, restURL string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "test-runner",
		Description: "Checks out a commit, runs its test suite in a clean container, and streams the log.",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: jsonrpcURL, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
			{URL: restURL, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		},
		Provider:           &a2a.AgentProvider{URL: "https://ci.example.com", Organization: "Platform Team"},
		Version:            "2.3.0",
		Capabilities:       a2a.AgentCapabilities{Streaming: a2a.Ptr(true), PushNotifications: a2a.Ptr(true)},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{{
			ID: "run-tests", Name: "Run tests",
			Description: "Run the test suite of a repository at one commit and report each failure with its log.",
			Tags:        []string{"ci", "tests"},
			Examples:    []string{"Run the unit tests for payments-api at commit 9f3c2e1"},
		}},
	}
}
