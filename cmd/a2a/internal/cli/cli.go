// Package cli implements the a2a command: flag parsing, wiring and output,
// kept out of package main so it can be tested.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Exit codes of the a2a command.
const (
	ExitOK    = 0
	ExitError = 1 // a failure: could not listen, bad configuration, ...
	ExitUsage = 2 // the command line was wrong
)

const usage = `a2a: the goa2a command line for the Agent2Agent protocol v1.0

Usage:
  a2a card URL [--jwks FILE|URL]     show an agent's card (and verify its signature)
  a2a send URL TEXT|- [flags]        send a message, TEXT or standard input (--stream, --async, --task, --file, --data)
  a2a get URL TASK_ID                show a task
  a2a list URL [flags]               list tasks (--status, --context, --all)
  a2a cancel URL TASK_ID             cancel a task
  a2a watch URL TASK_ID              follow a task to its end
  a2a push create URL TASK_ID WEBHOOK_URL | get URL TASK_ID CONFIG_ID
           list URL TASK_ID | delete URL TASK_ID CONFIG_ID
  a2a push listen [--addr HOST:PORT] [--token T] [--jwks URL] [--task ID] [--json]
                                     receive push notifications on a local webhook and print them
  a2a serve [flags]                  serve an agent (--agent NAME, or --exec CMD) over JSON-RPC and HTTP+JSON
  a2a demo [flags]                   run the A2A 101 kit (three agents and a planner) on this machine
  a2a version [--json]               show this a2a's version and VCS revision (also a2a --version)
  a2a help [COMMAND]                 show this help, or a command's
  a2a completion bash|zsh|fish       print a shell completion script (source <(a2a completion bash))

URL is the agent's base URL (its card is at URL/.well-known/agent-card.json).
Every client command takes --json (exact protocol JSON; one object per line
for streams), --header "Name: value", --token TOKEN (or $A2A_TOKEN),
--api-key KEY (or $A2A_API_KEY), --binding jsonrpc|rest|grpc and --timeout.
Run "a2a COMMAND --help" for a command's flags.

Exit status:
  0  success
  1  an internal or local failure
  2  the command line was wrong
  3  the agent answered with an A2A error (the kind and message are printed)
  4  no answer: connection refused, timed out or cut off
  5  the task ended failed, rejected or canceled
  130  interrupted (Ctrl-C) while following a task; the task goes on
`

// Main runs the command with args (without the program name) and returns
// the exit code. ctx ends on Ctrl-C.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	e := &env{ctx: ctx, stdin: os.Stdin, stdout: stdout, stderr: stderr, term: isTerminal(stdout)}
	switch args[0] {
	case "serve":
		return serveCommand(ctx, args[1:], stdout, stderr)
	case "demo":
		return demo(ctx, args[1:], stdout, stderr)
	case "card":
		return runClientCommand(e, cardCommand, args[1:])
	case "send":
		return runClientCommand(e, sendCommand, args[1:])
	case "get":
		return runClientCommand(e, getCommand, args[1:])
	case "list":
		return runClientCommand(e, listCommand, args[1:])
	case "cancel":
		return runClientCommand(e, cancelCommand, args[1:])
	case "watch":
		return runClientCommand(e, watchCommand, args[1:])
	case "push":
		verbs := subcommands("push")
		switch {
		case len(args) < 2:
			return usageFail(stderr, "push", "missing command: "+orList(verbs))
		case isHelpFlag(args[1]):
			printPushHelp(stdout)
			return ExitOK
		case args[1] == "listen":
			return pushListen(e, args[2:])
		case pushCommands[args[1]] == nil:
			problem := fmt.Sprintf("unknown command %q", args[1])
			if s := didYouMean(args[1], verbs, asTyped); s != "" {
				problem += s
			} else {
				problem += " (want " + orList(verbs) + ")"
			}
			return usageFail(stderr, "push", problem)
		}
		return runClientCommand(e, pushCommands[args[1]], args[2:])
	case "version", "--version":
		return versionCommand(args[1:], stdout, stderr)
	case "completion":
		return completionCommand(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		if args[0] == "help" && len(args) > 1 {
			// a2a help CMD... is a2a CMD... --help: the same help, from
			// the command itself.
			return Main(ctx, append(slices.Clone(args[1:]), "--help"), stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return ExitOK
	}
	return usageFail(stderr, "", fmt.Sprintf("unknown command %q", args[0])+didYouMean(args[0], subcommands(""), asTyped))
}

// printPushHelp writes the help of a2a push, made from its commands'.
func printPushHelp(w io.Writer) {
	fmt.Fprint(w, "Usage: a2a push COMMAND ARGUMENTS... [flags]\n\n")
	var lines [][2]string
	for _, c := range commandTable() {
		switch {
		case c.name == "push":
			fmt.Fprintf(w, "  %s\n\nCommands:\n", c.about)
		case strings.HasPrefix(c.name, "push "):
			synopsis := strings.TrimPrefix(c.name, "push ")
			if cmd := pushCommands[synopsis]; cmd != nil {
				synopsis += " " + cmd.args
			} else {
				synopsis += " [flags]"
			}
			lines = append(lines, [2]string{synopsis, c.about})
		}
	}
	width := 0
	for _, l := range lines {
		width = max(width, len(l[0]))
	}
	for _, l := range lines {
		fmt.Fprintf(w, "  %-*s  %s\n", width, l[0], l[1])
	}
	fmt.Fprint(w, "\nRun 'a2a push COMMAND --help' for a command's flags.\n")
}

// isTerminal reports whether w is a terminal that wants live output and
// colours (not when NO_COLOR is set or TERM is dumb).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
