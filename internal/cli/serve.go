package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/kit/reviewer"
	"github.com/goa2a/a2a/kit/testrunner"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// agentSpec is an agent a2a serve can host.
type agentSpec struct {
	about string
	make  func(jsonrpcURL, restURL string) (*a2a.AgentCard, server.Agent)
}

var agents = map[string]agentSpec{
	"echo": {"replies to each message with a task holding the echoed text", func(j, r string) (*a2a.AgentCard, server.Agent) {
		return echo.Card(j, r), echo.Agent{}
	}},
	"test-runner": {"the A2A 101 test runner (canned test runs)", func(j, r string) (*a2a.AgentCard, server.Agent) {
		return testrunner.Card(j, r), &testrunner.Agent{LineDelay: 150 * time.Millisecond}
	}},
	"code-reviewer": {"the A2A 101 code reviewer", func(j, r string) (*a2a.AgentCard, server.Agent) {
		return reviewer.Card(j, r), reviewer.Agent{}
	}},
}

func agentNames() string {
	names := make([]string, 0, len(agents))
	for n := range agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("a2a serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	agentName := fs.String("agent", "echo", "the agent to serve: "+agentNames())
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	publicURL := fs.String("public-url", "", "base URL clients use to reach this server, as written in the agent card (default: http://<addr>)")
	maxBody := fs.Int64("max-body", 10<<20, "largest request body accepted, in bytes")
	verbose := fs.Bool("v", false, "log every agent failure in detail")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "a2a serve: unexpected argument %q\n", fs.Arg(0))
		return ExitUsage
	}
	spec, ok := agents[*agentName]
	if !ok {
		fmt.Fprintf(stderr, "a2a serve: unknown agent %q (choose one of: %s)\n", *agentName, agentNames())
		return ExitUsage
	}
	if *maxBody < 1 {
		fmt.Fprintf(stderr, "a2a serve: -max-body must be positive, got %d\n", *maxBody)
		return ExitUsage
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "a2a serve: cannot listen on %s: %v\n", *addr, err)
		return ExitError
	}
	base := *publicURL
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	base = strings.TrimRight(base, "/")
	card, agent := spec.make(base+a2ahttp.JSONRPCPath, base+a2ahttp.RESTPath)
	h, err := server.NewHandler(card, agent, server.WithLogger(log))
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "a2a serve: %v\n", err)
		return ExitError
	}
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{MaxBodyBytes: *maxBody})
	if err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "a2a serve: %v\n", err)
		return ExitError
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	fmt.Fprintf(stdout, "serving agent %q (%s)\n", card.Name, spec.about)
	fmt.Fprintf(stdout, "  agent card  %s%s\n", base, server.WellKnownCardPath)
	fmt.Fprintf(stdout, "  JSON-RPC    %s%s\n", base, a2ahttp.JSONRPCPath)
	fmt.Fprintf(stdout, "  HTTP+JSON   %s%s\n", base, a2ahttp.RESTPath)
	fmt.Fprintf(stdout, "press Ctrl-C to stop\n")

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		fmt.Fprintf(stderr, "a2a serve: %v\n", err)
		return ExitError
	case <-ctx.Done():
	}
	fmt.Fprintln(stdout, "stopping: finishing open requests (up to 10s)")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Close the handler first: it ends open streams and cancels agents, so
	// Shutdown does not wait on streams that would never end by themselves.
	herr := h.Close(shutdownCtx)
	serr := srv.Shutdown(shutdownCtx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "a2a serve: %v\n", err)
	}
	if herr != nil || serr != nil {
		fmt.Fprintf(stderr, "a2a serve: stopped with errors: %v\n", errors.Join(herr, serr))
		return ExitError
	}
	fmt.Fprintln(stdout, "stopped")
	return ExitOK
}
