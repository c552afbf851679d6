// Package cli implements the a2a command: flag parsing, wiring and output,
// kept out of package main so it can be tested.
package cli

import (
	"context"
	"fmt"
	"io"
)

// Exit codes of the a2a command.
const (
	ExitOK    = 0
	ExitError = 1 // a failure: could not listen, bad configuration, ...
	ExitUsage = 2 // the command line was wrong
)

const usage = `a2a: the goa2a command line for the Agent2Agent protocol v1.0

Usage:
  a2a serve [flags]     serve an agent over JSON-RPC and HTTP+JSON
  a2a help              show this help

Run "a2a serve -h" for the flags of serve.
`

// Main runs the command with args (without the program name) and returns
// the exit code. ctx ends on Ctrl-C.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return ExitOK
	}
	fmt.Fprintf(stderr, "a2a: unknown command %q\n\n%s", args[0], usage)
	return ExitUsage
}
