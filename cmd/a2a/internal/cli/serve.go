package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sort"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/a2aprom"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/agents/execagent"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/kit/reviewer"
	"github.com/goa2a/a2a/kit/testrunner"
	"github.com/goa2a/a2a/serve"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
	"github.com/goa2a/a2a/store"
)

// Agents a2a serve can host besides the plain ones of the agents table.
const (
	agentCommand    = "command"
	agentTestRunner = "test-runner"
)

// agentSpec is an agent a2a serve can host.
type agentSpec struct {
	about string
	make  func(cfg *serveConfig, jsonrpcURL, restURL string) (*a2a.AgentCard, server.Agent, error)
}

// agents is the table of agents served without --exec.
var agents = map[string]agentSpec{
	"echo": {"replies to each message with a task holding the echoed text", func(_ *serveConfig, j, r string) (*a2a.AgentCard, server.Agent, error) {
		return echo.Card(j, r), echo.Agent{}, nil
	}},
	agentTestRunner: {"the A2A 101 test runner (canned test runs; real ones with --exec)", func(cfg *serveConfig, j, r string) (*a2a.AgentCard, server.Agent, error) {
		if len(cfg.exec) == 0 {
			return testrunner.Card(j, r), &testrunner.Agent{LineDelay: 150 * time.Millisecond}, nil
		}
		c := cfg.command()
		if err := c.Check(); err != nil {
			return nil, nil, err
		}
		return testrunner.Card(j, r), &testrunner.Agent{Command: c}, nil
	}},
	"code-reviewer": {"the A2A 101 code reviewer", func(_ *serveConfig, j, r string) (*a2a.AgentCard, server.Agent, error) {
		return reviewer.Card(j, r), reviewer.Agent{}, nil
	}},
}

// commandSpec is the agent of --exec.
var commandSpec = agentSpec{"runs the --exec command for each message", func(cfg *serveConfig, j, r string) (*a2a.AgentCard, server.Agent, error) {
	agent, err := execagent.New(cfg.command())
	if err != nil {
		return nil, nil, err
	}
	return execagent.Card(j, r, cfg.exec), agent, nil
}}

func agentNames() string {
	names := make([]string, 0, len(agents))
	for n := range agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// command is the --exec command with its limits.
func (cfg *serveConfig) command() execagent.Command {
	return execagent.Command{
		Args:      cfg.exec,
		Dir:       cfg.dir,
		Env:       cfg.env,
		Timeout:   cfg.execTimeout,
		MaxOutput: cfg.maxOutput,
	}
}

func serveCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, code := parseServe(args, stdout, stderr)
	if cfg == nil {
		return code
	}
	s, err := newServeRun(cfg, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "a2a serve: %v\n", err)
		return ExitError
	}
	return s.run(ctx)
}

// serveRun is one run of a2a serve: the flags made into a serve.Server,
// and what the banner prints.
type serveRun struct {
	cfg    *serveConfig
	log    *slog.Logger
	stdout io.Writer

	store      store.Store
	srv        *serve.Server
	metrics    *a2aprom.Metrics
	about      string // what the agent does
	principals int    // of --api-key; 0 when the server is open

	tls    *serveTLS // nil without TLS
	tracer *tracer   // nil without trace export
}

// newLogger is the logger of a2a serve, at the level of --log-level (and
// -v). Everything logs through it: the handler and its maintenance loop,
// the bindings, the store, the push deliverer, the HTTP servers.
func newLogger(cfg *serveConfig, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.level}
	if cfg.logFormat == "json" {
		opts.ReplaceAttr = durationText
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// durationText writes a time.Duration as Go prints it, "1.5s", as the text
// handler does. slog's JSON handler writes integer nanoseconds
// ("grace":10000000000), a unit the key does not name; here, in the one
// handler, every duration logged by serve, server, push, the stores and
// the request log is caught, whoever adds one next.
func durationText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

// newServeRun makes the flags into a serve.Server, which listens; nothing
// is served until run. It wires nothing of its own: each flag is an option
// of package serve.
func newServeRun(cfg *serveConfig, stdout, stderr io.Writer) (_ *serveRun, err error) {
	s := &serveRun{cfg: cfg, log: newLogger(cfg, stderr), stdout: stdout}
	var listeners []net.Listener // closed on failure, until the server holds them
	defer func() {
		if err != nil {
			for _, ln := range listeners {
				ln.Close()
			}
			if s.store != nil {
				closeStore(s.store)
			}
			s.tracer.shutdown()
		}
	}()
	listen := func(addr, flag string) (net.Listener, error) {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("cannot listen on %s%s: %w", addr, flag, err)
		}
		listeners = append(listeners, ln)
		return ln, nil
	}
	ln, err := listen(cfg.addr, "")
	if err != nil {
		return nil, err
	}
	opts := []serve.Option{serve.WithListener(ln)}
	if cfg.opsAddr != "" {
		opsLn, err := listen(cfg.opsAddr, "")
		if err != nil {
			return nil, err
		}
		opts = append(opts, serve.WithOpsListener(opsLn))
	}
	if cfg.grpcAddr != "" {
		grpcLn, err := listen(cfg.grpcAddr, " (--grpc-addr)")
		if err != nil {
			return nil, err
		}
		opts = append(opts, serve.WithGRPCListener(grpcLn))
	}
	if cfg.publicURL != "" {
		opts = append(opts, serve.WithPublicURL(cfg.publicURL))
	}

	spec := commandSpec
	if !cfg.execAgent() {
		spec = agents[cfg.agent]
	}
	s.about = spec.about
	// The server lists the interfaces it serves.
	card, agent, err := spec.make(cfg, "", "")
	if err != nil {
		return nil, err
	}
	card.SupportedInterfaces = nil
	if !cfg.pushSettings.push {
		card.Capabilities.PushNotifications = nil
	}
	tlsOpts, err := s.setupTLS(ln.Addr()) // serve_tls.go
	if err != nil {
		return nil, err
	}
	opts = append(opts, tlsOpts...)
	if keys := cfg.apiKeys; keys != nil {
		// The middleware keeps the keys' digests only: drop them here.
		cfg.apiKey, cfg.apiKeys = nil, nil
		s.principals = principals(keys)
		opts = append(opts, serve.WithAPIKeys(keys))
	}
	jwtOpts, err := s.setupJWT(context.Background()) // serve_jwt.go
	if err != nil {
		return nil, err
	}
	opts = append(opts, jwtOpts...)
	opts = append(opts, s.cardSigning()...) // serve_sign.go

	s.metrics = a2aprom.New(a2aprom.WithRequestLog(s.log)) // the request lines of --log-level debug
	cfg.storeSpec = cfg.storeSpec.resolve(cfg.dataDir, card.Name)
	if s.store, err = cfg.storeSpec.open(context.Background(), storeOptions{durability: cfg.durability, replica: cfg.replica, lease: cfg.lease, log: s.log}); err != nil {
		return nil, err
	}
	var hopts []server.Option
	if s.tracer, err = newTracer(context.Background(), &cfg.otelSettings, card.Name); err != nil { // serve_otel.go
		return nil, err
	}
	if s.tracer != nil {
		opts = append(opts, s.tracer.tracing.ServeOptions()...)
	}
	if cfg.retention > 0 {
		hopts = append(hopts, server.WithRetention(cfg.retention))
	}
	if cfg.maintenance > 0 {
		hopts = append(hopts, server.WithMaintenanceInterval(cfg.maintenance))
	}
	opts = append(opts,
		serve.WithLogger(s.log),
		serve.WithStore(s.store),
		serve.WithBindings(cfg.bindings.a2a()...),
		serve.WithLimits(cfg.limitSettings.limits()),
		serve.WithAuthFailureLimit(cfg.authFailures),
		serve.WithMaxBodyBytes(cfg.maxBody),
		serve.WithTimeouts(serve.Timeouts{Header: cfg.headerTimeout, Body: cfg.bodyTimeout, Idle: cfg.idleTimeout}),
		serve.WithGrace(cfg.grace),
		serve.WithHandlerOptions(hopts...),
		serve.WithOptions(s.metrics.ServeOptions()...), // /metrics
		serve.WithOnShutdown(func(running int) {
			fmt.Fprintf(s.stdout, "stopping: letting %d running task(s) finish (up to %v)\n", running, cfg.grace)
		}),
	)
	opts = append(opts, s.pushOptions()...) // serve_push.go
	if cfg.v03 {
		opts = append(opts, serve.WithV03())
	}
	if s.srv, err = serve.New(card, agent, opts...); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "serve: "))
	}
	listeners = nil // the server's now
	return s, nil
}

// run serves until ctx ends (SIGTERM or SIGINT), then shuts down
// gracefully; it returns the exit code.
func (s *serveRun) run(ctx context.Context) int {
	card := s.srv.Card()
	base := s.srv.URL()
	fmt.Fprintf(s.stdout, "serving agent %q (%s)\n", card.Name, s.about)
	if len(s.cfg.exec) > 0 {
		fmt.Fprintf(s.stdout, "  command     %s\n", quoteWords(s.cfg.exec))
	}
	fmt.Fprintf(s.stdout, "  agent card  %s%s\n", base, server.WellKnownCardPath)
	if s.cfg.bindings.has(bindingJSONRPC) {
		fmt.Fprintf(s.stdout, "  JSON-RPC    %s%s\n", base, a2ahttp.JSONRPCPath)
		if s.cfg.v03 {
			fmt.Fprintf(s.stdout, "  A2A v0.3    %s%s (JSON-RPC)\n", base, a2ahttp.JSONRPCPath)
		}
	}
	if s.cfg.bindings.has(bindingREST) {
		fmt.Fprintf(s.stdout, "  HTTP+JSON   %s%s\n", base, a2ahttp.RESTPath)
	}
	if a := s.srv.GRPCAddr(); a != nil {
		fmt.Fprintf(s.stdout, "  gRPC        %s\n", a)
	}
	opsBase := base
	if a := s.srv.OpsAddr(); a != nil {
		opsBase = "http://" + a.String()
	}
	fmt.Fprintf(s.stdout, "  health      %s/healthz %s/readyz %s/metrics\n", opsBase, opsBase, opsBase)
	if s.principals > 0 {
		fmt.Fprintf(s.stdout, "  auth        API key (%s), %s\n", auth.APIKeyHeader, plural(s.principals, "principal"))
	} else if !s.mutualTLSOn() && !s.jwtOn() {
		fmt.Fprintf(s.stdout, "  auth        none: anyone who can reach the server can use it\n")
	}
	s.printJWT()
	s.printTLS()
	s.printCardSigning()
	s.printPush()
	if s.tracer != nil {
		fmt.Fprintf(s.stdout, "  traces      OTLP/HTTP to %s\n", s.tracer.endpoint)
	}
	fmt.Fprintf(s.stdout, "  limits      %s\n", s.cfg.limitSettings.describe())
	fmt.Fprintf(s.stdout, "  tasks in    %s\n", s.cfg.storeSpec.describe())
	if s.cfg.storeSpec.kind == storePostgres {
		fmt.Fprintf(s.stdout, "  replica     %q of the servers on this schema: they follow each other's tasks, and fail those one leaves running when it stops (a lost host's after --lease %v)\n",
			replicaName(s.store, s.cfg.replica), s.cfg.lease)
	}
	if note := s.cfg.storeSpec.note; note != "" {
		fmt.Fprintf(s.stdout, "  note        %s\n", note)
	}
	fmt.Fprintf(s.stdout, "press Ctrl-C to stop\n")

	err := s.srv.Run(ctx)
	if cerr := closeStore(s.store); cerr != nil {
		err = errors.Join(err, fmt.Errorf("closing the store: %w", cerr))
	}
	err = errors.Join(err, s.tracer.shutdown())
	if err != nil {
		fmt.Fprintf(s.stdout, "stopped with errors: %v\n", err)
		return ExitError
	}
	fmt.Fprintln(s.stdout, "stopped")
	return ExitOK
}

// close releases a run that was never started: the server's listeners and
// Handler, and the store.
func (s *serveRun) close() {
	s.srv.Close()
	closeStore(s.store)
	s.tracer.shutdown()
}

// replicaName is the name the store gives this process among its replicas.
func replicaName(st store.Store, given string) string {
	if r, ok := st.(interface{ Replica() string }); ok {
		return r.Replica()
	}
	return given
}
