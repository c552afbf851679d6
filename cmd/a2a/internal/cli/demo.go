package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/internal/capture"
	"github.com/goa2a/a2a/kit/deployer"
	"github.com/goa2a/a2a/kit/planner"
	"github.com/goa2a/a2a/kit/reviewer"
	"github.com/goa2a/a2a/kit/testrunner"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// kitPort is the port of the A2A 101 kit's first agent, the test-runner;
// the code-reviewer and the deployer follow on the next two.
const kitPort = 41241

// demoToken is the deployer's bearer token in the kit (capture 19).
const demoToken = "dpl_test_7c1e4b"

const demoUsage = `Usage: a2a demo [flags]

Runs the A2A 101 kit on this machine: the test-runner, code-reviewer and
deployer agents on 127.0.0.1, and the planner, which reads their cards and
delegates run-tests, review-diff and deploy over real HTTP. An operator
approves the deploy after a short pause. The exit status is 0 when the plan
completes, 5 when it stops (a failed test, a blocking finding, a task that
did not complete).

With --record DIR the run is written into DIR in the format of the kit's
capture: 19-planner.http, 19-planner.events.json and 19-planner.log. With
--deterministic the agents use the kit's clock and seeded ids and advertise
the kit's http://localhost:41241-41243 URLs, so two runs write the same bytes.

Each agent keeps its tasks in its own SQLite file (test-runner.db,
code-reviewer.db, deployer.db): in a temporary directory removed at the end,
or in --data-dir DIR, kept for a later look (a2a serve --store sqlite:FILE).

Flags:
`

// demoFlags are the flags of a2a demo, besides the plan's --commit and
// --environment.
type demoFlags struct {
	fixedPorts, jsonOut, logOut, deterministic bool
	approveAfter, lineDelay                    time.Duration
	recordDir, dataDir, storeKind              string
	traces                                     otelSettings
}

// newDemoFlags returns the flag set of a2a demo, which fills d and plan.
// Parse errors and help are printed by demo, not by the flag package.
func newDemoFlags(d *demoFlags, plan *planner.Plan) *flag.FlagSet {
	fs := flag.NewFlagSet("a2a demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&d.fixedPorts, "kit-ports", false, fmt.Sprintf("listen on the kit's ports %d-%d instead of free ones", kitPort, kitPort+2))
	fs.BoolVar(&d.jsonOut, "json", false, "print each step as one JSON object per line")
	fs.BoolVar(&d.logOut, "log", false, "print the planner's decision log, in the format of the kit's 19-planner.log")
	fs.DurationVar(&d.approveAfter, "approve-after", time.Second, "how long the operator takes to approve the deploy")
	fs.DurationVar(&d.lineDelay, "line-delay", 150*time.Millisecond, "pause between two lines of the test log")
	fs.StringVar(&plan.Commit, "commit", plan.Commit, "commit to test (9f3c2e1 has a failing test, deadbee does not exist)")
	fs.StringVar(&plan.Environment, "environment", plan.Environment, "where to deploy (the deployer rejects production)")
	fs.StringVar(&d.recordDir, "record", "", "write every exchange into `DIR` in the kit's format: 19-planner.http, 19-planner.events.json and 19-planner.log")
	fs.BoolVar(&d.deterministic, "deterministic", false, "use the kit's clock (2026-10-06T09:00:00Z, 250 ms per stamp), seeded ids and its http://localhost:41241-41243 URLs, so two runs record the same bytes")
	fs.StringVar(&d.dataDir, "data-dir", "", "keep the agents' SQLite stores in `DIR` (default: a temporary directory, removed at the end)")
	fs.StringVar(&d.storeKind, "store", storeSQLite, "where the agents keep their tasks: sqlite or memory")
	d.traces.register(fs)
	return fs
}

// demo implements "a2a demo".
func demo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	plan := planner.DefaultPlan()
	var d demoFlags
	fs := newDemoFlags(&d, &plan)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, demoUsage)
			printFlags(stdout, fs, nil)
			return ExitOK
		}
		return usageFail(stderr, "demo", flagProblem(fs, err))
	}
	switch {
	case fs.NArg() > 0:
		return usageFail(stderr, "demo", fmt.Sprintf("unexpected argument %q (a2a demo takes flags only)", fs.Arg(0)))
	case d.jsonOut && d.logOut:
		fmt.Fprintln(stderr, "a2a demo: --json and --log exclude each other")
		return ExitUsage
	case d.approveAfter < 0 || d.lineDelay < 0:
		fmt.Fprintln(stderr, "a2a demo: durations must not be negative")
		return ExitUsage
	case plan.Commit == "" || plan.Environment == "":
		fmt.Fprintln(stderr, "a2a demo: --commit and --environment must not be empty")
		return ExitUsage
	case d.storeKind != storeSQLite && d.storeKind != storeMemory:
		fmt.Fprintf(stderr, "a2a demo: --store must be sqlite or memory, got %q\n", d.storeKind)
		return ExitUsage
	case d.dataDir != "" && d.storeKind == storeMemory:
		fmt.Fprintln(stderr, "a2a demo: --data-dir applies to --store sqlite")
		return ExitUsage
	case len(d.traces.validate()) > 0:
		fmt.Fprintf(stderr, "a2a demo: %v\n", d.traces.validate()[0])
		return ExitUsage
	case d.deterministic && (d.traces.otlpEndpoint != "" || otlpFromEnv()):
		fmt.Fprintln(stderr, "a2a demo: --deterministic records the same bytes on every run, and traced requests carry a new traceparent each time: leave out --otlp-endpoint (and OTEL_EXPORTER_OTLP_*)")
		return ExitUsage
	case d.dataDir != "" && d.deterministic:
		fmt.Fprintln(stderr, "a2a demo: --deterministic repeats the same task ids on every run, so it cannot share a --data-dir with earlier runs; leave --data-dir out")
		return ExitUsage
	}

	o := kitOptions{token: demoToken, lineDelay: d.lineDelay}
	tracers, err := newKitTracers(ctx, &d.traces) // one service per agent, and the planner
	if err != nil {
		fmt.Fprintf(stderr, "a2a demo: %v\n", err)
		return ExitError
	}
	defer func() {
		for _, t := range tracers {
			if err := t.shutdown(); err != nil {
				fmt.Fprintf(stderr, "a2a demo: %v\n", err)
			}
		}
	}()
	o.tracers = tracers
	if d.storeKind == storeSQLite {
		o.dataDir = d.dataDir
		if o.dataDir == "" {
			tmp, err := os.MkdirTemp("", "a2a-demo-")
			if err != nil {
				fmt.Fprintf(stderr, "a2a demo: %v\n", err)
				return ExitError
			}
			defer os.RemoveAll(tmp)
			o.dataDir = tmp
		} else if err := os.MkdirAll(o.dataDir, 0o700); err != nil {
			fmt.Fprintf(stderr, "a2a demo: %v\n", err)
			return ExitError
		}
	}
	if d.fixedPorts {
		o.ports = [3]int{kitPort, kitPort + 1, kitPort + 2}
	}
	if d.deterministic {
		o.advertise = [3]string{}
		for i := range o.advertise {
			o.advertise[i] = fmt.Sprintf("http://localhost:%d", kitPort+i)
		}
		o.serverOptions = deterministicServerOptions()
		o.cardSigner = deployer.DemoSigner() // HS256 with a public secret: same bytes every run
	}
	k, err := startKit(o)
	if err != nil {
		fmt.Fprintf(stderr, "a2a demo: %v\n", err)
		return ExitError
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := k.close(closeCtx); err != nil {
			fmt.Fprintf(stderr, "a2a demo: stopping the agents: %v\n", err)
		}
	}()

	var v demoView
	switch {
	case d.jsonOut:
		v = &jsonView{w: stdout}
	case d.logOut:
		v = quietView{}
	default:
		v = &textView{w: stdout, s: style{on: isTerminal(stdout)}}
	}
	v.start(k, plan)

	hc := &http.Client{Transport: k.transport()}
	var rec *capture.Recorder
	if d.recordDir != "" {
		rec = &capture.Recorder{Next: hc.Transport, Title: kitTitle(k)}
		hc.Transport = rec
	}
	op := &demoOperator{hc: hc, after: d.approveAfter, view: v}
	if rec != nil {
		op.note = rec.Note
	}
	opts := []planner.Option{
		planner.WithObserver(v.step),
		planner.WithOperator(op.approve),
		planner.WithToken("deployer", o.token),
		planner.WithHTTPClient(hc),
	}
	if d.deterministic {
		opts = append(opts, planner.WithIDGenerator(seededIDs(plannerSeed)))
	}
	if t := tracers[plannerService]; t != nil {
		// One trace for the run: the planner's span, then each call.
		opts = append(opts, planner.WithClientOptions(client.WithInterceptors(t.tracing.ClientInterceptor())))
		var span trace.Span
		ctx, span = t.tp.Tracer(plannerService).Start(ctx, "a2a demo")
		defer span.End()
	}
	var logBuf bytes.Buffer
	switch {
	case d.logOut && rec != nil:
		opts = append(opts, planner.WithLog(io.MultiWriter(stdout, &logBuf)))
	case d.logOut:
		opts = append(opts, planner.WithLog(stdout))
	case rec != nil:
		opts = append(opts, planner.WithLog(&logBuf))
	}
	p, err := planner.New(opts...)
	if err != nil {
		fmt.Fprintf(stderr, "a2a demo: %v\n", err)
		return ExitError
	}
	res, err := p.Run(ctx, plan, k.urls()...)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "a2a demo: interrupted")
			return ExitConnection
		}
		fmt.Fprintf(stderr, "a2a demo: %v\n", err)
		return ExitError
	}
	v.verdict(plan, res)
	if rec != nil {
		if err := writeRecording(d.recordDir, rec, logBuf.Bytes()); err != nil {
			fmt.Fprintf(stderr, "a2a demo: %v\n", err)
			return ExitError
		}
	}
	if !res.Completed {
		return ExitTaskFailed
	}
	return ExitOK
}

// kitOptions say how to run the kit's agents. Later options (a fixed clock
// and seeded ids for a deterministic recording) go through serverOptions.
type kitOptions struct {
	ports         [3]int    // 0: a free port
	advertise     [3]string // base URLs the cards advertise; "": the listener's
	token         string    // the deployer's bearer token
	lineDelay     time.Duration
	serverOptions func(agent string) []server.Option // nil: none
	// dataDir, when set, holds a SQLite store per agent (AGENT.db);
	// otherwise each agent keeps its tasks in memory.
	dataDir string
	// pace, when set, is the test-runner's Pace hook (tests hold a task
	// at a log line with it); nil waits lineDelay.
	pace func(ctx context.Context, taskID string, line int) error
	// cardSigner signs the deployer's card; nil: a new ES256 key.
	cardSigner *auth.CardSigner
	// tracers trace each agent, by name; nil without trace export.
	tracers map[string]*tracer
}

// plannerService names the planner's traces.
const plannerService = "planner"

// newKitTracers makes a trace export for each agent of the kit and the
// planner, each its own service; nil when nothing is traced.
func newKitTracers(ctx context.Context, o *otelSettings) (map[string]*tracer, error) {
	out := make(map[string]*tracer)
	for _, name := range []string{"test-runner", "code-reviewer", "deployer", plannerService} {
		t, err := newTracer(ctx, o, name)
		if err != nil || t == nil {
			return nil, err
		}
		out[name] = t
	}
	return out, nil
}

// kitServer is one running agent.
type kitServer struct {
	name string
	url  string // base URL, as the card advertises it
	addr string // the listener's host:port
	auth bool   // guarded by a bearer token
	srv  *http.Server
	h    *server.Handler
	// stopPush stops the agent's webhook deliverer; nil when its card
	// declares no push notifications.
	stopPush context.CancelFunc
}

// kitPushHosts are the webhook hosts the kit's agents may call: the demo
// runs everything on this machine, so loopback by these names only; any
// other loopback, private or internal address is refused (push.Guard).
var kitPushHosts = []string{"127.0.0.1", "localhost"}

// runningKit is the three agents, serving.
type runningKit struct {
	servers []*kitServer
	stores  map[string]store.Store // by agent; nil: in memory
	wg      sync.WaitGroup
	errs    chan error // of Serve, one per server
}

func (k *runningKit) urls() []string {
	out := make([]string, len(k.servers))
	for i, s := range k.servers {
		out[i] = s.url
	}
	return out
}

// startKit starts the test-runner, code-reviewer and deployer, in that
// order, each on its own port of 127.0.0.1.
func startKit(o kitOptions) (*runningKit, error) {
	k := &runningKit{errs: make(chan error, 3)}
	opts := func(name string) []server.Option {
		var opts []server.Option
		if o.serverOptions != nil {
			opts = o.serverOptions(name)
		}
		if st := k.stores[name]; st != nil {
			opts = append(opts, server.WithStore(st))
		}
		if t := o.tracers[name]; t != nil {
			opts = append(opts, t.tracing.ServerOptions()...)
		}
		return opts
	}
	pushOpts := func(name string) []push.DelivererOption {
		if t := o.tracers[name]; t != nil {
			return []push.DelivererOption{push.WithCallHook(t.tracing.PushHook())}
		}
		return nil
	}
	if o.dataDir != "" {
		k.stores = make(map[string]store.Store)
		for _, name := range []string{"test-runner", "code-reviewer", "deployer"} {
			st, err := openStore(context.Background(), storeSpec{kind: storeSQLite}.resolve(o.dataDir, name), storeOptions{})
			if err != nil {
				_ = k.close(context.Background())
				return nil, fmt.Errorf("cannot start the %s: %w", name, err)
			}
			k.stores[name] = st
		}
	}
	makers := []struct {
		name string
		auth bool
		make func(base string) (http.Handler, *server.Handler, *push.Deliverer, error)
	}{
		{"test-runner", false, func(base string) (http.Handler, *server.Handler, *push.Deliverer, error) {
			return serveKitAgent(base, testrunner.Card, &testrunner.Agent{LineDelay: o.lineDelay, Pace: o.pace}, k.stores["test-runner"], opts("test-runner"), pushOpts("test-runner"))
		}},
		{"code-reviewer", false, func(base string) (http.Handler, *server.Handler, *push.Deliverer, error) {
			return serveKitAgent(base, reviewer.Card, reviewer.Agent{}, k.stores["code-reviewer"], opts("code-reviewer"), pushOpts("code-reviewer"))
		}},
		{"deployer", true, func(base string) (http.Handler, *server.Handler, *push.Deliverer, error) {
			// The deployer's card declares no push notifications.
			handler, h, err := deployer.NewServerWithSigner(base, o.token, o.cardSigner, opts("deployer")...)
			return handler, h, nil, err
		}},
	}
	for i, m := range makers {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", o.ports[i]))
		if err != nil {
			_ = k.close(context.Background())
			return nil, fmt.Errorf("cannot start the %s: %w", m.name, err)
		}
		base := "http://" + ln.Addr().String()
		if o.advertise[i] != "" {
			base = o.advertise[i]
		}
		handler, h, d, err := m.make(base)
		if err != nil {
			ln.Close()
			_ = k.close(context.Background())
			return nil, fmt.Errorf("cannot start the %s: %w", m.name, err)
		}
		s := &kitServer{name: m.name, url: base, addr: ln.Addr().String(), auth: m.auth, h: h, srv: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(slog.DiscardHandler, slog.LevelError),
		}}
		k.servers = append(k.servers, s)
		if d != nil {
			ctx, cancel := context.WithCancel(context.Background())
			s.stopPush = cancel
			k.wg.Go(func() { _ = d.Run(ctx) }) // returns ctx's error, at close
		}
		k.wg.Go(func() {
			if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				k.errs <- fmt.Errorf("%s: %w", s.name, err)
			}
		})
	}
	return k, nil
}

// serveKitAgent wires an agent of package kit/... on the conventional
// paths of a server at base. st is the agent's store, nil for one in
// memory; opts already name it. When the card declares push
// notifications, the agent delivers webhooks: it returns the deliverer,
// which the caller runs for as long as the agent serves.
func serveKitAgent(base string, card func(jsonrpcURL, restURL string) *a2a.AgentCard, agent server.Agent, st store.Store, opts []server.Option, pushOpts []push.DelivererOption) (http.Handler, *server.Handler, *push.Deliverer, error) {
	in := a2ahttp.Interfaces(base)
	c := card(in[0].URL, in[1].URL)
	var d *push.Deliverer
	if p := c.Capabilities.PushNotifications; p != nil && *p {
		if st == nil {
			st = memory.New()
			opts = append(opts, server.WithStore(st))
		}
		g, err := push.NewGuard(push.WithAllow(kitPushHosts...))
		if err != nil {
			return nil, nil, nil, err
		}
		if d, err = push.NewDeliverer(st, append(pushOpts, push.WithGuard(g))...); err != nil {
			return nil, nil, nil, err
		}
		opts = append(opts, server.WithPusher(d))
	}
	h, err := server.NewHandler(c, agent, opts...)
	if err != nil {
		return nil, nil, nil, err
	}
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		h.Close(context.Background())
		return nil, nil, nil, err
	}
	return mux, h, d, nil
}

// close stops the agents: first the handlers, which cancel running agents
// and end open streams, then their webhook deliverers, then the HTTP
// servers.
func (k *runningKit) close(ctx context.Context) error {
	var errs []error
	for _, s := range k.servers {
		if err := s.h.Close(ctx); err != nil {
			errs = append(errs, err)
		}
		if s.stopPush != nil {
			s.stopPush()
		}
		if err := s.srv.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	k.wg.Wait()
	close(k.errs)
	for err := range k.errs {
		errs = append(errs, err)
	}
	for name, st := range k.stores {
		if err := closeStore(st); err != nil {
			errs = append(errs, fmt.Errorf("%s: closing its store: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// demoOperator stands for a person who approves deploys: after a pause, it
// POSTs the approval link the deployer serves, outside A2A.
type demoOperator struct {
	hc    *http.Client
	after time.Duration
	view  demoView
	note  func(string) // nil: no recording
}

func (o *demoOperator) approve(ctx context.Context, req planner.ApprovalRequest) error {
	link := strings.TrimRight(req.AgentURL, "/") + deployer.ApprovePath + req.TaskID
	o.view.operator(req, link, "asked", o.after)
	t := time.NewTimer(o.after)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	if o.note != nil {
		o.note("The operator approves the deploy, outside A2A.")
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, link, strings.NewReader("{}"))
	if err != nil {
		return err
	}
	r.Header.Set("Content-Type", "application/json")
	resp, err := o.hc.Do(r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %s", link, resp.Status, strings.TrimSpace(string(body)))
	}
	o.view.operator(req, link, "approved", o.after)
	return nil
}

// demoView shows a run. Every method is called from the goroutine running
// the demo (the planner calls its observer and operator from Run's
// goroutine), so views need no locking.
type demoView interface {
	start(k *runningKit, plan planner.Plan)
	step(s planner.Step)
	operator(req planner.ApprovalRequest, link, what string, after time.Duration)
	verdict(plan planner.Plan, res *planner.Result)
}

// quietView shows nothing: with --log the decision log is the output.
type quietView struct{}

func (quietView) start(*runningKit, planner.Plan)                                 {}
func (quietView) step(planner.Step)                                               {}
func (quietView) operator(planner.ApprovalRequest, string, string, time.Duration) {}
func (quietView) verdict(planner.Plan, *planner.Result)                           {}

// jsonView prints one JSON object per line: the agents, each planner
// step, the operator's actions, and the verdict.
type jsonView struct{ w io.Writer }

func (v *jsonView) print(x any) {
	b, err := json.Marshal(x)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"kind": "error", "text": err.Error()})
	}
	_, _ = v.w.Write(append(b, '\n'))
}

func (v *jsonView) start(k *runningKit, _ planner.Plan) {
	for _, s := range k.servers {
		v.print(map[string]any{"kind": "agent", "agent": s.name, "url": s.url})
	}
}

func (v *jsonView) step(s planner.Step) { v.print(s) }

func (v *jsonView) operator(req planner.ApprovalRequest, link, what string, _ time.Duration) {
	v.print(map[string]any{"kind": "operator", "agent": req.Agent, "taskId": req.TaskID, "url": link, "text": what})
}

func (v *jsonView) verdict(_ planner.Plan, res *planner.Result) {
	out := map[string]any{"kind": "verdict", "completed": res.Completed}
	if res.Stopped != "" {
		out["stopped"] = res.Stopped
	}
	v.print(out)
}

// textView prints the run as a person wants to read it.
type textView struct {
	w io.Writer
	s style
}

func (v *textView) printf(format string, args ...any) { fmt.Fprintf(v.w, format, args...) }

func (v *textView) start(k *runningKit, plan planner.Plan) {
	v.printf("%s\n", v.s.bold("The A2A 101 kit, on this machine"))
	for _, s := range k.servers {
		note := ""
		if s.auth {
			note = v.s.dim("  (bearer token)")
		}
		v.printf("  %-14s %s%s\n", s.name, s.url, note)
	}
	v.printf("\n%s deliver %s: test commit %s, review %s against %s, deploy build %s to %s\n\n",
		v.s.bold("Plan:"), plan.Repo, plan.Commit, plan.DiffName, plan.Base, plan.Build, plan.Environment)
}

func (v *textView) step(st planner.Step) {
	s := v.s
	switch st.Kind {
	case planner.StepCard:
		c := st.Card
		if c == nil {
			return
		}
		about := []string{c.Binding}
		if c.Streaming {
			about = append(about, "streaming")
		}
		if c.Push {
			about = append(about, "push")
		}
		if c.Auth {
			about = append(about, "needs a token")
		}
		v.printf("  card %-14s skills %-29s %s\n", st.Agent, strings.Join(c.Skills, ", "), s.dim(strings.Join(about, ", ")))
	case planner.StepDelegate:
		v.printf("\n%s %s to %s\n", s.cyan("→"), s.bold(st.Skill), st.Agent)
	case planner.StepState:
		text := ""
		if st.Text != "" {
			text = ": " + st.Text
		}
		v.printf("    task %s %s%s\n", short(st.TaskID), s.state(st.State), text)
	case planner.StepArtifact:
		if st.Artifact != nil {
			v.printf("    %s %s\n", s.dim("artifact"), artifactLine(st.Artifact, st.Append))
		}
	case planner.StepAnswer:
		v.printf("    the planner answers from its own context: %s\n", s.bold(st.Text))
	case planner.StepFollow:
		how := "subscribes to the task"
		if st.Text == "poll" {
			how = "polls the task"
		}
		v.printf("    %s\n", s.dim("the planner "+how))
	case planner.StepApproval:
		v.printf("    %s the planner is subscribed and asks an operator to approve\n", s.yellow("●"))
	case planner.StepRetry:
		v.printf("    %s no answer (%s); sending the same message again\n", s.yellow("!"), st.Text)
	case planner.StepError:
		where := st.Agent
		if where == "" {
			where = st.URL
		}
		v.printf("    %s %s: %s\n", s.red("error"), where, st.Text)
	case planner.StepDecision:
		v.printf("  %s %s\n", s.green("✓"), st.Text)
	case planner.StepStop:
		v.printf("  %s stop: %s\n", s.red("✗"), st.Text)
	}
}

func (v *textView) operator(req planner.ApprovalRequest, link, what string, after time.Duration) {
	switch what {
	case "asked":
		v.printf("    %s an operator looks at task %s (approves in %s)\n", v.s.yellow("●"), short(req.TaskID), after)
	case "approved":
		v.printf("    %s an operator approved the deploy: POST %s\n", v.s.green("●"), link)
	}
}

func (v *textView) verdict(plan planner.Plan, res *planner.Result) {
	s := v.s
	if res.Completed {
		where := plan.Environment
		if res.Deploy != nil {
			for _, a := range res.Deploy.Artifacts {
				var rep deployer.Report
				if a.ArtifactID == deployer.ReportArtifactID && decodeData(a, &rep) && rep.URL != "" {
					where += " (" + rep.URL + ")"
				}
			}
		}
		v.printf("\n%s Build %s of %s is live on %s.\n", s.green(s.bold("Verdict: shipped.")), plan.Build, plan.Repo, where)
		return
	}
	v.printf("\n%s %s.\n", s.red(s.bold("Verdict: not shipped:")), res.Stopped)
}

// decodeData decodes the first data part of a into v.
func decodeData(a a2a.Artifact, v any) bool {
	for _, p := range a.Parts {
		if d, ok := p.Content.(a2a.Data); ok {
			return d.Decode(v) == nil
		}
	}
	return false
}

// artifactLine sums up an artifact (or a chunk of one) on one line: its
// text, or the last line of a longer text, or else its data as JSON.
func artifactLine(a *a2a.Artifact, appended bool) string {
	name := a.Name
	if name == "" {
		name = a.ArtifactID
	}
	if appended {
		name += " (more)"
	}
	text := strings.TrimRight(a.Text(), "\n")
	if lines := strings.Split(text, "\n"); len(lines) > 1 {
		text = fmt.Sprintf("%d lines, the last: %s", len(lines), lines[len(lines)-1])
	}
	if text == "" {
		text = strings.TrimRight(partsText(a.Parts), "\n")
	}
	const limit = 100
	if r := []rune(text); len(r) > limit {
		text = string(r[:limit-1]) + "…"
	}
	return name + ": " + text
}
