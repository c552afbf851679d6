// Package planner is the client agent of the A2A 101 kit (manual §7.1): it
// delivers one change by delegating to remote agents over A2A. It reads
// every agent's card, files each skill under the agent that offers it, and
// then delegates in turn:
//
//  1. run-tests on the commit; it stops if the task does not complete or
//     the summary data part counts a failed test;
//  2. review-diff with the diff; when the reviewer asks for the base branch
//     (TASK_STATE_INPUT_REQUIRED) the planner answers from its own context
//     on the same task; it stops if the review's data part has a finding
//     of high severity;
//  3. deploy the build; when the deployer waits for an operator
//     (TASK_STATE_AUTH_REQUIRED) the planner subscribes to the task first
//     and only then asks its [Operator], so that no update after the
//     approval can pass unseen (A2A §7.6.2), and follows the task to its
//     end.
//
// Every decision is written to a log, one line each, in the format of the
// kit's recorded run (capture/out/19-planner.log): for the recorded run the
// two logs are the same line for line apart from ids and ports.
//
// Unlike the kit's planner, this one
//
//   - has a branch for every state: a reply still in TASK_STATE_SUBMITTED
//     or TASK_STATE_WORKING (a server that answers a blocking send at
//     once) is followed until it settles; a task that ends failed,
//     rejected or canceled stops the plan with the agent's reason;
//   - reads the card before optional calls (A2A §3.3.4): it subscribes
//     only to agents that declare streaming and polls GetTask otherwise,
//     and it makes no push-notification calls at all (it has no webhook),
//     so the pushNotifications flag never matters to it;
//   - sends a message again, with the same messageId (A2A §3.3.1), when a
//     send got no answer at all (the connection failed or the agent said
//     it is unavailable); a send that got an answer is never repeated. A
//     goa2a server answers the repeat with what the first attempt got (its
//     task, or its reply), so a send whose answer was lost does not start
//     a second task there;
//   - survives a dropped stream: [client.Client.Follow] resumes it, and if
//     following fails for good the planner reads the task with GetTask;
//   - checks every result before it reads it: a review is read only from a
//     completed review task, a summary only from a completed test task.
package planner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/internal/uuid"
)

// The skills the planner delegates, by their ids on the kit's cards.
const (
	SkillRunTests   = "run-tests"
	SkillReviewDiff = "review-diff"
	SkillDeploy     = "deploy"
)

// Plan is the change to deliver and what the planner knows about it.
type Plan struct {
	// Repo names the repository, as the messages to the agents say it.
	Repo string
	// Commit is the commit whose tests must pass.
	Commit string
	// Diff is the unified diff to review, sent as a text/x-diff part.
	Diff string
	// DiffName is the file name of the diff part.
	DiffName string
	// Base is the branch the diff applies to: the planner's answer when
	// the reviewer asks which base branch to compare against.
	Base string
	// Build is the build to deploy.
	Build string
	// Environment is where to deploy it.
	Environment string
}

// DefaultPlan returns the plan of the kit's recorded run (capture 19):
// payments-api at commit a41d7c3, the tests/test_refunds.py diff against
// main, and build 2026.10.06-1 to staging.
func DefaultPlan() Plan {
	return Plan{
		Repo:   "payments-api",
		Commit: "a41d7c3",
		Diff: "--- a/tests/test_refunds.py\n" +
			"+++ b/tests/test_refunds.py\n" +
			"@@ -15,3 +15,7 @@ def test_full_refund():\n" +
			"+def test_partial_refund_keeps_cents():\n" +
			"+    assert partial_refund(charge(1000), 450).net == 450\n",
		DiffName:    "refunds.diff",
		Base:        "main",
		Build:       "2026.10.06-1",
		Environment: "staging",
	}
}

func (p Plan) check() error {
	for _, f := range []struct{ name, v string }{
		{"Repo", p.Repo}, {"Commit", p.Commit}, {"Diff", p.Diff}, {"DiffName", p.DiffName},
		{"Base", p.Base}, {"Build", p.Build}, {"Environment", p.Environment},
	} {
		if f.v == "" {
			return fmt.Errorf("planner: the plan has no %s", f.name)
		}
	}
	return nil
}

// Operator asks a person to approve a task that an agent holds in
// TASK_STATE_AUTH_REQUIRED: an authorization the planner cannot give
// itself, resolved outside A2A (A2A §7.6.1). In the kit, the operator
// approves with POST /approve/{taskId} on the deployer.
//
// The planner calls it once the task's stream is open and its first frame
// has arrived, so that it sees every update the approval causes (A2A
// §7.6.2); without streaming, after the first GetTask. It is called from
// the goroutine running [Planner.Run], which waits for it: it may return
// as soon as the request is on its way, or once the person has answered.
// Either way the planner then follows the task to its end. An error means
// the operator could not be asked: the planner stops following the task,
// and the plan stops.
type Operator func(ctx context.Context, req ApprovalRequest) error

// ApprovalRequest is what the [Operator] is asked to approve.
type ApprovalRequest struct {
	// Agent is the agent's name, from its card.
	Agent string
	// AgentURL is the agent's base URL, as given to [Planner.Run].
	AgentURL string
	// TaskID and ContextID identify the task.
	TaskID    string
	ContextID string
	// Text is what the agent asks for: the text of the task's status
	// message (the deployer's names the approval URL).
	Text string
}

// Result is how a run ended.
type Result struct {
	// Completed reports that every step ran and the deploy completed.
	Completed bool
	// Stopped says why the plan stopped, as the log's last line does
	// without its "stop: " prefix; it is empty when Completed.
	Stopped string
	// Tests is the test summary, once the test task completed with one.
	Tests *TestSummary
	// Review is the review, once the review task completed with one.
	Review *Review
	// Deploy is the deploy task as the planner last saw it, once the
	// deploy was delegated.
	Deploy *a2a.Task
}

// TestSummary is the data part of the test-runner's "summary" artifact.
type TestSummary struct {
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"`
	Failures []TestFailure `json:"failures,omitempty"`
}

// TestFailure is one failed test of a [TestSummary].
type TestFailure struct {
	Test  string `json:"test"`
	Error string `json:"error"`
}

// Review is the data part of the code-reviewer's "review" artifact.
type Review struct {
	Base     string    `json:"base"`
	Findings []Finding `json:"findings"`
}

// Finding is one remark of a [Review].
type Finding struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Severity string `json:"severity"`
	Finding  string `json:"finding"`
}

// Blocking returns the findings that stop a deploy: those of high
// severity.
func (r *Review) Blocking() []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Severity == "high" {
			out = append(out, f)
		}
	}
	return out
}

// Planner delivers [Plan]s through remote agents. Make one with [New]. A
// Planner holds no state between runs and is safe for concurrent use.
type Planner struct {
	cfg config
}

type config struct {
	log        io.Writer
	observe    func(Step)
	operator   Operator
	tokens     map[string]string // by agent name
	httpClient *http.Client
	newID      func() string
	timeout    time.Duration
	attempts   int
	retryWait  time.Duration
	clientOpts []client.Option // WithClientOptions
}

// Option configures a [Planner].
type Option func(*config) error

// ErrInvalidOption is wrapped by the error [New] returns for an option
// given bad input.
var ErrInvalidOption = errors.New("planner: invalid option")

func optionError(option, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidOption, option, fmt.Sprintf(format, args...))
}

// Defaults of the options.
const (
	DefaultAttempts  = 3
	DefaultRetryWait = 250 * time.Millisecond
)

// New returns a Planner.
func New(opts ...Option) (*Planner, error) {
	cfg := config{
		log:       io.Discard,
		observe:   func(Step) {},
		tokens:    map[string]string{},
		newID:     uuid.New,
		attempts:  DefaultAttempts,
		retryWait: DefaultRetryWait,
	}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil Option", ErrInvalidOption)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	return &Planner{cfg: cfg}, nil
}

// WithLog sets where the decision log is written, one line per decision in
// the format of the kit's 19-planner.log. The default discards it. Each
// line is written with one Write call, from the goroutine running
// [Planner.Run]; write errors are ignored.
func WithLog(w io.Writer) Option {
	return func(c *config) error {
		if w == nil {
			return optionError("WithLog", "nil writer")
		}
		c.log = w
		return nil
	}
}

// WithObserver sets a function that receives each [Step] of a run as it
// happens, for a live view. It is called from the goroutine running
// [Planner.Run], which waits for it, so it should return quickly. The
// default ignores steps.
func WithObserver(fn func(Step)) Option {
	return func(c *config) error {
		if fn == nil {
			return optionError("WithObserver", "nil function")
		}
		c.observe = fn
		return nil
	}
}

// WithOperator sets who approves tasks in TASK_STATE_AUTH_REQUIRED. Without
// one, such a task stops the plan.
func WithOperator(op Operator) Option {
	return func(c *config) error {
		if op == nil {
			return optionError("WithOperator", "nil operator")
		}
		c.operator = op
		return nil
	}
}

// WithToken gives the planner a token for the agent whose card is named
// agent. The token is sent only if that agent's card asks for credentials
// (securityRequirements), as the credential of each security scheme the
// requirement names: as "Authorization: Bearer" for an HTTP bearer,
// OAuth 2 or OpenID Connect scheme, as the named header, query parameter
// or cookie for an API key scheme (A2A §7.3).
func WithToken(agent, token string) Option {
	return func(c *config) error {
		if agent == "" || token == "" {
			return optionError("WithToken", "empty agent name or token")
		}
		c.tokens[agent] = token
		return nil
	}
}

// WithHTTPClient sets the HTTP client of every request the planner makes,
// card fetches included. The default is a new http.Client.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) error {
		if hc == nil {
			return optionError("WithHTTPClient", "nil *http.Client")
		}
		c.httpClient = hc
		return nil
	}
}

// WithClientOptions adds options to the client of every agent, after the
// planner's own (interceptors, such as a2aotel's, say).
func WithClientOptions(opts ...client.Option) Option {
	return func(c *config) error {
		c.clientOpts = append(c.clientOpts, opts...)
		return nil
	}
}

// WithIDGenerator sets how the planner makes the messageId of each message
// it sends. The default makes random UUIDs.
func WithIDGenerator(newID func() string) Option {
	return func(c *config) error {
		if newID == nil {
			return optionError("WithIDGenerator", "nil generator")
		}
		c.newID = newID
		return nil
	}
}

// WithTimeout bounds each request other than a stream (a blocking send
// included, which waits until the task settles) when the run's context has
// no deadline. By default requests are bounded by the context only.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return optionError("WithTimeout", "timeout must be positive, got %v", d)
		}
		c.timeout = d
		return nil
	}
}

// WithRetry sets how often a message is sent when sends get no answer
// (attempts, at least 1; the default is [DefaultAttempts]) and the first
// wait between two sends (doubled each time; the default is
// [DefaultRetryWait]). Every attempt carries the same messageId.
func WithRetry(attempts int, wait time.Duration) Option {
	return func(c *config) error {
		if attempts < 1 || wait < 0 {
			return optionError("WithRetry", "want attempts >= 1 and wait >= 0, got %d and %v", attempts, wait)
		}
		c.attempts, c.retryWait = attempts, wait
		return nil
	}
}

// Run delivers plan through the agents whose base URLs are given (each
// serves its card at /.well-known/agent-card.json): it reads their cards,
// then delegates run-tests, review-diff and deploy in turn, deciding after
// each whether to go on. A plan that stops (a failed test, a blocking
// finding, a task that did not complete, an agent that could not be
// reached) is a Result with Completed false, not an error. Run returns an
// error only when it cannot run: a plan with an empty field, no agent
// URL, or ctx ended (the error then wraps ctx's cause).
func (p *Planner) Run(ctx context.Context, plan Plan, agentURLs ...string) (*Result, error) {
	if err := plan.check(); err != nil {
		return nil, err
	}
	if len(agentURLs) == 0 {
		return nil, errors.New("planner: no agent URL")
	}
	r := &run{cfg: &p.cfg, plan: plan, agents: map[string]*agent{}, res: &Result{}}
	if err := r.discover(ctx, agentURLs); err != nil {
		return nil, err
	}
	if err := r.ship(ctx); err != nil {
		return nil, err
	}
	return r.res, nil
}
