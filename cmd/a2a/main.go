// Command a2a is the goa2a command line: it serves A2A agents (a2a serve)
// and, in later versions, calls them.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/goa2a/a2a/cmd/a2a/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
