package testrunner

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/execagent"
	"github.com/goa2a/a2a/server"
)

// runCommand is the real mode: run a.Command, stream its output as the
// test-log artifact, then a summary artifact, then complete.
func (a *Agent) runCommand(ctx context.Context, w *server.Writer) error {
	c := a.Command
	c.MergeStderr = true // compile errors belong in the log
	var p goTestParser
	c.Observe = p.feed
	prog := filepath.Base(c.Args[0])
	shown := strings.Join(append([]string{prog}, c.Args[1:]...), " ")
	if err := w.Working(ctx, "Running "+shown); err != nil {
		return err
	}
	res, err := c.Stream(ctx, w, nil, execagent.Output{ArtifactID: "test-log", Name: "test-log.txt"})
	if ctx.Err() != nil {
		return ctx.Err() // canceled, or the server is shutting down
	}
	if res == nil {
		if cause := errors.Unwrap(err); cause != nil {
			err = cause
		}
		return w.Fail(ctx, "Could not start "+prog+": "+err.Error())
	}
	if err != nil {
		return err
	}
	p.end()
	sum := p.summary(res)
	if res.TimedOut || res.Signal != "" || (!res.Success() && sum.Passed+sum.Failed == 0) {
		return w.Status(ctx, a2a.TaskStateFailed, res.FailureMessage(prog))
	}
	data, err := a2a.DataPart(sum)
	if err != nil {
		return err
	}
	if err := w.Artifact(ctx, a2a.Artifact{ArtifactID: "summary", Name: "summary.json", Parts: []a2a.Part{data}}); err != nil {
		return err
	}
	return w.Complete(ctx, sum.text())
}

// Summary is the data part of the summary artifact in real mode. Passed,
// Failed and Failures match the canned mode's summary.
type Summary struct {
	Passed   int       `json:"passed"`
	Failed   int       `json:"failed"`
	Skipped  int       `json:"skipped,omitempty"`
	Failures []Failure `json:"failures"`
	// Unit is "test" when the counts are of tests (go test -v prints a
	// line for each), "package" when they are of packages (without -v
	// only failed tests are named).
	Unit string `json:"unit"`
	// ExitCode is the command's exit status.
	ExitCode int `json:"exitCode"`
	// Truncated reports that the log was cut at the output limit; the
	// counts still cover all of the output.
	Truncated bool `json:"truncated,omitempty"`
}

// Failure is one failed test, or one package that failed to build.
type Failure struct {
	Test    string `json:"test,omitempty"`
	Package string `json:"package,omitempty"`
	Error   string `json:"error,omitempty"`
}

func (s *Summary) text() string {
	if s.Unit == "package" {
		n := s.Passed + s.Failed
		noun := "packages"
		if n == 1 {
			noun = "package"
		}
		if s.Failed > 0 {
			return fmt.Sprintf("%d of %d %s failed", s.Failed, n, noun)
		}
		return fmt.Sprintf("%d %s passed", n, noun)
	}
	if s.Failed > 0 {
		return fmt.Sprintf("%d failed, %d passed", s.Failed, s.Passed)
	}
	return fmt.Sprintf("%d passed", s.Passed)
}

// Bounds of what the summary keeps.
const (
	maxFailures   = 50
	maxErrorBytes = 500
)

var (
	testResultRE = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+)`)
	packageRE    = regexp.MustCompile(`^(ok|FAIL)\s+(\S+)(?:\s+\[([^\]]+)\])?`)
	logLineRE    = regexp.MustCompile(`^\s{4,}(\S.*)$`)
)

// goTestParser reads the text output of `go test` (with or without -v)
// piece by piece.
type goTestParser struct {
	rest     string // a line not yet ended
	verbose  bool   // "=== RUN" lines seen: logs come before results
	lastLog  string // the latest log line of the running test (-v)
	pending  int    // index+1 of a failure whose log lines follow (no -v)
	passed   int
	failed   int
	skipped  int
	pkgOK    int
	pkgFail  int
	failures []Failure
}

func (p *goTestParser) feed(b []byte) {
	text := p.rest + string(b)
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			break
		}
		p.line(strings.TrimRight(text[:i], "\r"))
		text = text[i+1:]
	}
	p.rest = text
	if len(p.rest) > 64<<10 {
		p.rest = "" // not a line go test writes
	}
}

func (p *goTestParser) end() {
	if p.rest != "" {
		p.line(p.rest)
		p.rest = ""
	}
}

func (p *goTestParser) line(l string) {
	if strings.HasPrefix(l, "=== ") {
		p.verbose = true
		p.lastLog = ""
		return
	}
	if m := testResultRE.FindStringSubmatch(l); m != nil {
		p.pending = 0
		switch m[1] {
		case "PASS":
			p.passed++
		case "SKIP":
			p.skipped++
		case "FAIL":
			p.failed++
			if len(p.failures) < maxFailures {
				f := Failure{Test: m[2]}
				if p.verbose {
					f.Error = p.lastLog // with -v, a test's log comes before its result
				}
				p.failures = append(p.failures, f)
				if !p.verbose {
					p.pending = len(p.failures) // without -v, after it
				}
			}
		}
		p.lastLog = ""
		return
	}
	if m := packageRE.FindStringSubmatch(l); m != nil {
		p.pending = 0
		if m[1] == "ok" {
			p.pkgOK++
			return
		}
		p.pkgFail++
		attributed := false
		for i := range p.failures {
			if p.failures[i].Package == "" && p.failures[i].Test != "" {
				p.failures[i].Package = m[2]
				attributed = true
			}
		}
		if !attributed && len(p.failures) < maxFailures {
			reason := m[3]
			if reason == "" {
				reason = "the package failed"
			}
			p.failures = append(p.failures, Failure{Package: m[2], Error: reason})
		}
		return
	}
	m := logLineRE.FindStringSubmatch(l)
	if m == nil {
		p.pending = 0
		return
	}
	// The last log line of a failed test is usually what failed it.
	msg := m[1]
	if len(msg) > maxErrorBytes {
		msg = strings.ToValidUTF8(msg[:maxErrorBytes], "")
	}
	if p.pending > 0 {
		p.failures[p.pending-1].Error = msg
	}
	p.lastLog = msg
}

// summary counts tests when go test printed a line for each (-v),
// packages otherwise: without -v it names failed tests only.
func (p *goTestParser) summary(res *execagent.Result) Summary {
	s := Summary{Passed: p.passed, Failed: p.failed, Skipped: p.skipped, Unit: "test",
		Failures: p.failures, ExitCode: res.ExitCode, Truncated: res.Truncated}
	if !p.verbose && p.passed == 0 {
		s.Passed, s.Failed, s.Unit = p.pkgOK, p.pkgFail, "package"
	}
	if s.Failures == nil {
		s.Failures = []Failure{}
	}
	return s
}
