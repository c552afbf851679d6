package execagent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

// OutputArtifactID is the id of the artifact an [Agent] streams the
// program's output into.
const OutputArtifactID = "output"

// Agent runs its Command for each message (A2A §3.1.1): it starts a task,
// reports working, writes the message's text parts to the program's
// standard input (with a final newline added when missing), streams standard output as the artifact "output" (the
// first chunk names it, later ones append, the last has lastChunk), and
// ends the task:
//
//   - completed, with a summary, when the program exits with status 0;
//   - failed, when it exits with another status, is killed by a signal or
//     times out: the status message gives the exit status and the tail of
//     standard error as text, and the same as a data part (exitCode,
//     signal, timedOut, stderr);
//   - canceled, when the client cancels the task: the server sets the
//     state, and the agent kills the program and returns at once.
//
// Use [New] to make one.
type Agent struct {
	cmd Command
}

// New returns an Agent running c, after checking that c can run (see
// [Command.Check]).
func New(c Command) (*Agent, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	c.Args, c.Env = slices.Clone(c.Args), slices.Clone(c.Env)
	return &Agent{cmd: c}, nil
}

// Command returns (a copy of) the command the agent runs.
func (a *Agent) Command() Command {
	c := a.cmd
	c.Args, c.Env = slices.Clone(c.Args), slices.Clone(c.Env)
	return c
}

// Execute implements [server.Agent].
func (a *Agent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	prog := filepath.Base(a.cmd.Args[0])
	if err := w.Working(ctx, "Running "+prog); err != nil {
		return err
	}
	input := req.Message.Text()
	if input != "" && !strings.HasSuffix(input, "\n") {
		input += "\n" // text on a Unix pipe ends with a newline
	}
	res, err := a.cmd.Stream(ctx, w, strings.NewReader(input), Output{ArtifactID: OutputArtifactID, Name: "output.txt"})
	if ctx.Err() != nil {
		// Canceled (the server has set the state) or shutting down (the
		// server fails the task): nothing more to report.
		return ctx.Err()
	}
	if res == nil {
		if cause := errors.Unwrap(err); cause != nil {
			err = cause
		}
		return w.Fail(ctx, "Could not start "+prog+": "+err.Error())
	}
	if err != nil {
		return err // the task could not be written to
	}
	if !res.Success() {
		return w.Status(ctx, a2a.TaskStateFailed, res.FailureMessage(prog))
	}
	return w.Complete(ctx, res.Summary(prog))
}

// Output says where [Command.Stream] sends a program's output.
type Output struct {
	// ArtifactID is the id of the artifact the chunks belong to.
	ArtifactID string
	// Name is the artifact's name, sent with the first chunk.
	Name string
}

// Stream runs c like [Command.Run] and sends its output to w as chunks of
// one artifact (A2A §4.1.7): the first chunk creates the artifact, each
// later one appends to it, and the last one has lastChunk set.
func (c Command) Stream(ctx context.Context, w *server.Writer, stdin io.Reader, out Output) (*Result, error) {
	first := true
	return c.Run(ctx, stdin, func(text string, last bool) error {
		art := a2a.Artifact{ArtifactID: out.ArtifactID, Parts: []a2a.Part{a2a.TextPart(text)}}
		if first {
			art.Name = out.Name
		}
		err := w.ArtifactChunk(ctx, art, !first, last)
		first = false
		return err
	})
}

// FailureMessage is the status message of a task whose program failed:
// a text part saying how it ended with the tail of standard error, and a
// data part with the same facts for programs.
func (r *Result) FailureMessage(prog string) *a2a.Message {
	text := prog + " failed: " + r.Status() + "."
	if r.Stderr != "" {
		text += "\n" + r.Stderr
	}
	parts := []a2a.Part{a2a.TextPart(text)}
	data := map[string]any{"exitCode": r.ExitCode, "timedOut": r.TimedOut, "stderr": r.Stderr}
	if r.Signal != "" {
		data["signal"] = r.Signal
	}
	if p, err := a2a.DataPart(data); err == nil {
		parts = append(parts, p)
	}
	return &a2a.Message{Parts: parts}
}

// Summary is the completion text of a successful run.
func (r *Result) Summary(prog string) string {
	lines := "lines"
	if r.OutputLines == 1 {
		lines = "line"
	}
	s := fmt.Sprintf("%s finished in %s: %d %s of output", prog, r.Duration.Round(time.Millisecond), r.OutputLines, lines)
	if r.Truncated {
		s += " (truncated)"
	}
	return s + "."
}

// Card returns the card of an agent running args, for a server whose
// interfaces are at jsonrpcURL and restURL.
func Card(jsonrpcURL, restURL string, args []string) *a2a.AgentCard {
	prog := "a command"
	if len(args) > 0 {
		prog = filepath.Base(args[0])
	}
	return &a2a.AgentCard{
		Name:        "command",
		Description: "Runs " + prog + " for each message: the message text is its standard input, and its standard output streams back as the artifact \"output\".",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: jsonrpcURL, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
			{URL: restURL, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		},
		Version:            "1.0.0",
		Capabilities:       a2a.AgentCapabilities{Streaming: a2a.Ptr(true)},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{{
			ID: "run-command", Name: "Run " + prog,
			Description: "Run " + prog + " with the message text as its input and stream its output.",
			Tags:        []string{"command"},
		}},
	}
}
