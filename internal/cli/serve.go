package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/agents/execagent"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/internal/lease"
	"github.com/goa2a/a2a/kit/reviewer"
	"github.com/goa2a/a2a/kit/testrunner"
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

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, code := parseServeArgs(args, stderr)
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

// serveRun is one run of a2a serve: listeners, handler, HTTP servers.
type serveRun struct {
	cfg    *serveConfig
	log    *slog.Logger
	stdout io.Writer

	store   store.Store // the store itself, without the metrics wrapper
	h       *server.Handler
	agent   *trackedAgent
	metrics *metrics
	ready   atomic.Bool

	ln, opsLn   net.Listener
	srv, opsSrv *http.Server
	base        string // public base URL
	about       string // what the agent does
	principals  int    // of --api-key; 0 when the server is open

	tls *serveTLS // nil without TLS

	push *pushRun // nil with --push=false

	grpcLn  net.Listener // --grpc-addr (serve_grpc.go)
	grpcSrv *grpc.Server
}

// apiKeySchemeName names the --api-key scheme in the agent card.
const apiKeySchemeName = "apiKey"

// newLogger is the logger of a2a serve, at the level of --log-level (and
// -v). Everything logs through it: the handler and its maintenance loop,
// the bindings, the store, the push deliverer, the HTTP servers.
func newLogger(cfg *serveConfig, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.level}
	if cfg.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// newServeRun builds everything and listens; nothing is served until run.
func newServeRun(cfg *serveConfig, stdout, stderr io.Writer) (_ *serveRun, err error) {
	s := &serveRun{cfg: cfg, log: newLogger(cfg, stderr), stdout: stdout}
	defer func() {
		if err != nil {
			s.closeListeners()
		}
	}()
	if s.ln, err = net.Listen("tcp", cfg.addr); err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", cfg.addr, err)
	}
	if cfg.opsAddr != "" {
		if s.opsLn, err = net.Listen("tcp", cfg.opsAddr); err != nil {
			return nil, fmt.Errorf("cannot listen on %s: %w", cfg.opsAddr, err)
		}
	}
	if err = s.listenGRPC(); err != nil {
		return nil, err
	}
	if err = s.setupTLS(); err != nil {
		return nil, err
	}
	s.base = cfg.publicURL
	if s.base == "" {
		s.base = s.scheme() + "://" + s.ln.Addr().String()
	}
	s.base = strings.TrimRight(s.base, "/")

	spec := commandSpec
	if !cfg.execAgent() {
		spec = agents[cfg.agent]
	}
	s.about = spec.about
	card, agent, err := spec.make(cfg, s.base+a2ahttp.JSONRPCPath, s.base+a2ahttp.RESTPath)
	if err != nil {
		return nil, err
	}
	card.SupportedInterfaces = servedInterfaces(card.SupportedInterfaces, cfg.bindings)
	s.declareGRPC(card) // serve_grpc.go
	if cfg.apiKeys != nil {
		// Declare exactly what the middleware checks, and only that.
		card.SecuritySchemes = map[string]a2a.SecurityScheme{apiKeySchemeName: auth.APIKeyScheme()}
		card.SecurityRequirements = []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{apiKeySchemeName: {List: []string{}}}}}
	}
	if err = s.declareJWT(context.Background(), card); err != nil {
		return nil, err
	}
	s.declareMutualTLS(card)
	s.setupPush(card)                             // serve_push.go
	if card, err = s.signCard(card); err != nil { // --sign-key (serve_sign.go), after every change to the card
		return nil, err
	}

	s.metrics = newMetrics(time.Now())
	s.agent = &trackedAgent{agent: agent}
	s.metrics.agents = s.agent.running
	s.metrics.ready = s.ready.Load
	cfg.storeSpec = cfg.storeSpec.resolve(cfg.dataDir, card.Name)
	if s.store, err = cfg.storeSpec.open(context.Background(), storeOptions{durability: cfg.durability, replica: cfg.replica, lease: cfg.lease, log: s.log}); err != nil {
		return nil, err
	}
	opts := []server.Option{
		server.WithLogger(s.log),
		server.WithStore(s.store),
		server.WithStateHook(s.metrics.observeTask),
		server.WithLimits(cfg.limitSettings.limits()),
		server.WithInterceptors(noteCalls{}), // what instrument counts (serve_http.go)
	}
	if s.push, err = s.newDeliverer(); err != nil {
		return nil, err
	}
	if s.push != nil {
		opts = append(opts, server.WithPusher(s.push.d))
	}
	if cfg.retention > 0 {
		opts = append(opts, server.WithRetention(cfg.retention))
	}
	if cfg.maintenance > 0 {
		opts = append(opts, server.WithMaintenanceInterval(cfg.maintenance))
	}
	if s.h, err = server.NewHandler(card, s.agent, opts...); err != nil {
		return nil, err
	}
	app, err := s.a2aMux(card)
	if err != nil {
		return nil, err
	}
	ops := s.opsMux()
	root := http.NewServeMux()
	authn := func(app http.Handler) http.Handler { return s.clientCerts(app, s.authenticate(app)) }
	guarded := withClientKey(s.limitAuthFailures(dispatch(app), authn)) // serve_authlimit.go
	root.Handle("/", s.metrics.instrument(guarded, s.log, cfg.bindings))
	s.newGRPCServer(guarded) // the same authentication for gRPC (serve_grpc.go)
	if s.opsLn == nil {
		root.Handle("/healthz", ops)
		root.Handle("/readyz", ops)
		root.Handle("/metrics", ops)
	} else {
		s.opsSrv = s.httpServer(ops)
	}
	s.srv = s.httpServer(s.guardTransport(root))
	return s, nil
}

// authenticate puts --api-key and --jwks in front of the A2A bindings (and of any
// unknown path, which answers 401 rather than 404 to strangers). The public
// agent card stays readable: clients need it to learn how to authenticate
// (A2A §8.2). The ops endpoints are not behind app at all.
//
// The keys are dropped from the config once the middleware holds their
// digests.
func (s *serveRun) authenticate(app http.Handler) http.Handler {
	keys := s.cfg.apiKeys
	s.cfg.apiKey, s.cfg.apiKeys = nil, nil
	var keyed http.Handler
	if keys != nil {
		s.principals = principals(keys)
		keyed = auth.APIKey(keys, app)
	}
	guarded := s.guardJWT(app, keyed) // --jwks (serve_jwt.go)
	if guarded == nil {
		return app
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == server.WellKnownCardPath || s.isCardJWKS(r.URL.Path) || s.isPushJWKS(r.URL.Path) {
			app.ServeHTTP(w, r)
			return
		}
		guarded.ServeHTTP(w, r)
	})
}

// servedInterfaces keeps the card's interfaces of the served bindings.
func servedInterfaces(all []a2a.AgentInterface, bindings bindingsFlag) []a2a.AgentInterface {
	var out []a2a.AgentInterface
	for _, in := range all {
		if in.ProtocolBinding == a2a.BindingJSONRPC && bindings.has(bindingJSONRPC) ||
			in.ProtocolBinding == a2a.BindingHTTPJSON && bindings.has(bindingREST) {
			out = append(out, in)
		}
	}
	return out
}

func (s *serveRun) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.cfg.headerTimeout,
		IdleTimeout:       s.cfg.idleTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// closeListeners releases what newServeRun took when it fails half-way.
func (s *serveRun) closeListeners() {
	for _, ln := range []net.Listener{s.ln, s.opsLn, s.grpcLn} {
		if ln != nil {
			ln.Close()
		}
	}
	if s.h != nil {
		s.h.Close(context.Background())
	}
	if s.store != nil {
		closeStore(s.store)
	}
}

// run serves until ctx ends (SIGTERM or SIGINT), then shuts down
// gracefully; it returns the exit code.
func (s *serveRun) run(ctx context.Context) int {
	card := s.h.Card()
	fmt.Fprintf(s.stdout, "serving agent %q (%s)\n", card.Name, s.about)
	if len(s.cfg.exec) > 0 {
		fmt.Fprintf(s.stdout, "  command     %s\n", quoteWords(s.cfg.exec))
	}
	fmt.Fprintf(s.stdout, "  agent card  %s%s\n", s.base, server.WellKnownCardPath)
	if s.cfg.bindings.has(bindingJSONRPC) {
		fmt.Fprintf(s.stdout, "  JSON-RPC    %s%s\n", s.base, a2ahttp.JSONRPCPath)
	}
	if s.cfg.bindings.has(bindingREST) {
		fmt.Fprintf(s.stdout, "  HTTP+JSON   %s%s\n", s.base, a2ahttp.RESTPath)
	}
	s.printGRPC()
	opsBase := s.base
	if s.opsLn != nil {
		opsBase = "http://" + s.opsLn.Addr().String()
	}
	fmt.Fprintf(s.stdout, "  health      %s/healthz %s/readyz %s/metrics\n", opsBase, opsBase, opsBase)
	authMode := "none"
	if s.principals > 0 {
		authMode = "api-key"
		fmt.Fprintf(s.stdout, "  auth        API key (%s), %s\n", auth.APIKeyHeader, plural(s.principals, "principal"))
	} else if !s.mutualTLSOn() && !s.jwtOn() {
		fmt.Fprintf(s.stdout, "  auth        none: anyone who can reach the server can use it\n")
	}
	authMode = s.withJWT(authMode)
	authMode = s.withMutualTLS(authMode)
	s.printTLS()
	s.printCardSigning()
	s.printPush()
	fmt.Fprintf(s.stdout, "  limits      %s\n", s.cfg.limitSettings.describe())
	fmt.Fprintf(s.stdout, "  tasks in    %s\n", s.cfg.storeSpec.describe())
	if s.cfg.storeSpec.kind == storePostgres {
		fmt.Fprintf(s.stdout, "  replica     %q of the servers on this schema: they follow each other's tasks, and fail those one leaves running when it stops (a lost host's after --lease %v)\n",
			lease.NameOrDefault(s.cfg.replica), s.cfg.lease)
	}
	if note := s.cfg.storeSpec.note; note != "" {
		fmt.Fprintf(s.stdout, "  note        %s\n", note)
	}
	fmt.Fprintf(s.stdout, "press Ctrl-C to stop\n")

	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	opsErrc := make(chan error, 1)
	if s.opsSrv != nil {
		go func() { opsErrc <- s.opsSrv.Serve(s.opsLn) }()
	}
	grpcErrc := s.serveGRPC()
	s.push.start()
	s.ready.Store(true)
	if authMode == "none" {
		s.log.Warn("serving without authentication", "hint", "set --api-key PRINCIPAL=KEY to require an API key")
	}
	s.log.Info("serving", "agent", card.Name, "addr", s.ln.Addr().String(), "bindings", s.cfg.bindings.String(), "auth", authMode)
	var serveErr error
	select {
	case serveErr = <-errc:
	case serveErr = <-opsErrc:
	case serveErr = <-grpcErrc:
	case <-ctx.Done():
	}
	if serveErr != nil {
		// A listener failed: stop everything at once.
		s.log.Error("serving failed", "err", serveErr)
		s.ready.Store(false)
		s.srv.Close()
		if s.opsSrv != nil {
			s.opsSrv.Close()
		}
		if s.grpcSrv != nil {
			s.grpcSrv.Stop()
		}
		closeCtx, cancel := context.WithTimeout(context.Background(), s.cfg.grace)
		defer cancel()
		_ = s.h.Close(closeCtx)
		s.push.stop()
		_ = closeStore(s.store)
		fmt.Fprintf(s.stdout, "stopped: %v\n", serveErr)
		return ExitError
	}
	err := s.shutdown(errc)
	if s.opsSrv != nil {
		// Last, so that probes see 503 until the end.
		opsCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if serr := s.opsSrv.Shutdown(opsCtx); serr != nil {
			s.opsSrv.Close()
		}
		if oerr := <-opsErrc; oerr != nil && !errors.Is(oerr, http.ErrServerClosed) {
			err = errors.Join(err, oerr)
		}
	}
	if err != nil {
		s.log.Error("stopped with errors", "err", err)
		fmt.Fprintf(s.stdout, "stopped with errors: %v\n", err)
		return ExitError
	}
	s.log.Info("stopped")
	fmt.Fprintln(s.stdout, "stopped")
	return ExitOK
}
