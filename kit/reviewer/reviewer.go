// Package reviewer is the code-reviewer agent of the A2A 101 kit: it answers
// questions with a direct message, asks for the base branch when a diff
// arrives without one (input-required), and then returns a review artifact
// of findings (capture 02, 06, 13).
package reviewer

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

// DiffMediaType is the media type of a unified diff part.
const DiffMediaType = "text/x-diff"

// Agent is the code-reviewer agent.
type Agent struct{}

const (
	helpText    = "I review unified diffs in Python, TypeScript and Go. Send the diff as a text/x-diff part and name the base branch."
	askBaseText = "Which base branch should I compare this diff against?"
)

var baseRE = regexp.MustCompile(`(?i)\bbase(?: branch)?\s*[:=]\s*([A-Za-z0-9_./-]+)`)

// Finding is one remark of a review.
type Finding struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Severity string `json:"severity"`
	Finding  string `json:"finding"`
}

// knownFindings are the canned reviews of the files the kit's diffs touch.
var knownFindings = map[string][]Finding{
	"payments/refunds.py": {
		{File: "payments/refunds.py", Line: 42, Severity: "high", Finding: "Partial refunds round the amount down before the fee is subtracted."},
		{File: "payments/refunds.py", Line: 57, Severity: "low", Finding: "The new branch has no test."},
	},
	"tests/test_refunds.py": {
		{File: "tests/test_refunds.py", Line: 18, Severity: "low", Finding: "The test name does not say which rounding rule it checks."},
	},
}

// Execute implements [server.Agent].
func (Agent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	if req.Task != nil {
		// The client answered our question: the message names the base.
		diff, _ := findDiff(req.Task.History)
		base := strings.TrimSpace(req.Message.Text())
		if m := baseRE.FindStringSubmatch(base); m != nil {
			base = m[1]
		}
		if base == "" {
			return w.RequireInput(ctx, askBaseText)
		}
		return review(ctx, w, diff, base)
	}
	diff, ok := findDiff([]a2a.Message{*req.Message})
	text := strings.TrimSpace(req.Message.Text())
	if !ok {
		return w.Reply(ctx, a2a.TextPart(helpText))
	}
	if m := baseRE.FindStringSubmatch(text); m != nil {
		return review(ctx, w, diff, m[1])
	}
	return w.RequireInput(ctx, askBaseText)
}

func review(ctx context.Context, w *server.Writer, diff, base string) error {
	if err := w.Working(ctx, "Comparing the diff against "+base); err != nil {
		return err
	}
	var findings []Finding
	var files []string
	for _, f := range diffFiles(diff) {
		files = append(files, f)
		findings = append(findings, knownFindings[f]...)
	}
	noun := "findings"
	if len(findings) == 1 {
		noun = "finding"
	}
	count := fmt.Sprintf("%d %s", len(findings), noun)
	summary := count
	if len(files) > 0 {
		summary += " in " + strings.Join(files, ", ")
	}
	if findings == nil {
		findings = []Finding{}
	}
	data, err := a2a.DataPart(map[string]any{"base": base, "findings": findings})
	if err != nil {
		return err
	}
	art := a2a.Artifact{ArtifactID: "review", Name: "review.json", Parts: []a2a.Part{a2a.TextPart(summary), data}}
	if err := w.Artifact(ctx, art); err != nil {
		return err
	}
	return w.Complete(ctx, count)
}

// findDiff returns the first text/x-diff part of the messages.
func findDiff(msgs []a2a.Message) (string, bool) {
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.MediaType != DiffMediaType {
				continue
			}
			switch c := p.Content.(type) {
			case a2a.Raw:
				return string(c), true
			case a2a.Text:
				return string(c), true
			}
		}
	}
	return "", false
}

// diffFiles lists the files a unified diff changes ("+++ b/<path>").
func diffFiles(diff string) []string {
	var files []string
	for line := range strings.SplitSeq(diff, "\n") {
		if name, ok := strings.CutPrefix(line, "+++ "); ok {
			name = strings.TrimPrefix(strings.TrimSpace(name), "b/")
			if name != "/dev/null" {
				files = append(files, name)
			}
		}
	}
	return files
}

// Card returns the code-reviewer's agent card (capture 01).
func Card(jsonrpcURL, restURL string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "code-reviewer",
		Description: "Reviews a unified diff against a base branch and returns findings with file and line.",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: jsonrpcURL, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
			{URL: restURL, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		},
		Provider:           &a2a.AgentProvider{URL: "https://review.example.com", Organization: "Developer Tools"},
		Version:            "0.9.4",
		Capabilities:       a2a.AgentCapabilities{Streaming: a2a.Ptr(true)},
		DefaultInputModes:  []string{"text/plain", DiffMediaType},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{
			{
				ID: "review-diff", Name: "Review a diff",
				Description: "Compare a diff with its base branch and report risky changes.",
				Tags:        []string{"review", "diff"},
				Examples:    []string{"Review this diff of payments-api"},
				InputModes:  []string{DiffMediaType, "text/plain"},
			},
			{
				ID: "answer-question", Name: "Answer a review question",
				Description: "Answer a short question about what this reviewer checks.",
				Tags:        []string{"review", "faq"},
			},
		},
	}
}
