// Package deployer is the deployer agent of the A2A 101 kit: it deploys a
// tagged build to staging once an operator approves, and refuses
// production (capture 01, 07, 08, 18, 19).
//
// A staging deploy goes working, then auth-required with a link where an
// operator approves it, outside A2A: POST <base>/approve/<taskId>, served by
// [Agent.ApprovalHandler]. Streams stay open through auth-required, so the
// client that asked sees the deploy resume on the same stream: working, a
// deploy-report data artifact, completed. A production deploy is rejected.
//
// The agent guards its A2A endpoints with a bearer token ([NewServer] puts
// [auth.Bearer] in front of both bindings) and serves an extended card with
// a rollback skill to authenticated callers.
//
// Differences from the kit that stay: the card's security requirement names
// the bearer scheme with no scopes, which our ProtoJSON encoding writes as
// {} where the kit writes {"list": []}; the card is signed for real (see
// [NewServer] and [DemoSigner]), and the kit's HS256 secret is not
// recorded, so our signature value is not the kit's; and the card response
// carries caching headers.
package deployer

import (
	"context"
	"regexp"
	"strings"
	"sync"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

// ApprovePath is the path prefix of approvals: an operator approves the
// deploy of task id with POST ApprovePath+id.
const ApprovePath = "/approve/"

// Texts of the agent, as the kit wrote them.
const (
	productionText = "Production deploys are outside this agent's policy. Use the release train."
	helpText       = "Name the build and the environment, for example: Deploy build 2026.10.06-1 to staging"
	otherEnvText   = "This agent deploys to staging only. Name the build, for example: Deploy build 2026.10.06-1 to staging"
	noRollbackText = "Staging has no earlier build to return to."
	approvedText   = "Approved by an operator. Rolling out to staging"
	stagingURL     = "https://staging.example.com"
	healthChecks   = "3 of 3 passing"
)

// ReportArtifactID is the id of the artifact a finished deploy reports.
const ReportArtifactID = "deploy-report"

// Report is the data part of the deploy-report artifact.
type Report struct {
	Environment  string `json:"environment"`
	Build        string `json:"build"`
	URL          string `json:"url"`
	HealthChecks string `json:"healthChecks"`
}

// Agent is the deployer agent. Its zero value is ready to use, with
// relative approval links; set BaseURL so that they are absolute. An Agent
// must not be copied after first use.
type Agent struct {
	// BaseURL is the base of the approval links the agent hands out, such
	// as "http://localhost:41243": the operator approves at
	// BaseURL/approve/<taskId>. It is usually the base of the card's
	// interface URLs, where [Agent.ApprovalHandler] is mounted.
	BaseURL string

	mu      sync.Mutex
	pending map[string]*approval // by task id: deploys waiting for, or rolling out after, an approval
	staging []string             // builds that went live on staging, oldest first
}

var (
	buildRE    = regexp.MustCompile(`(?i)\bbuild\s+([0-9A-Za-z](?:[0-9A-Za-z._-]*[0-9A-Za-z])?)`)
	envRE      = regexp.MustCompile(`(?i)\b(?:to|on|in)\s+([A-Za-z][A-Za-z0-9_-]*)`)
	rollbackRE = regexp.MustCompile(`(?i)\broll\s*-?\s*back\b`)
)

// job is what a message asks for.
type job struct {
	rollback bool
	build    string // the build to deploy; for a rollback, resolved at rollout
}

// plan reads a message: the job it asks for, or why it is refused.
func plan(text string) (job, string) {
	if rollbackRE.MatchString(text) {
		return job{rollback: true}, ""
	}
	env := ""
	if m := envRE.FindStringSubmatch(text); m != nil {
		env = strings.ToLower(m[1])
	}
	switch env {
	case "production", "prod":
		return job{}, productionText
	case "staging":
	case "":
		return job{}, helpText
	default:
		return job{}, otherEnvText
	}
	m := buildRE.FindStringSubmatch(text)
	if m == nil {
		return job{}, helpText
	}
	return job{build: m[1]}, ""
}

// Execute implements [server.Agent].
func (a *Agent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	if req.Task != nil {
		return a.resume(ctx, req, w)
	}
	j, refusal := plan(req.Message.Text())
	if refusal != "" {
		return w.Reject(ctx, refusal)
	}
	if j.rollback && a.rollbackTarget() == "" {
		return w.Reject(ctx, noRollbackText)
	}
	// Register before asking, so that an approval arriving the moment the
	// link is out finds the deploy waiting.
	ap, err := a.register(w.TaskID())
	if err != nil {
		return err
	}
	defer a.unregister(w.TaskID(), ap)
	if err := w.Working(ctx, preparingText(j)); err != nil {
		return err
	}
	if err := w.RequireAuth(ctx, a.askText(w.TaskID())); err != nil {
		return err
	}
	return a.await(ctx, w, ap, j)
}

func preparingText(j job) string {
	if j.rollback {
		return "Preparing to return staging to the previous build"
	}
	return "Preparing build " + j.build + " for staging"
}

func (a *Agent) askText(taskID string) string {
	return "An operator must approve this deploy at " + a.approvalURL(taskID)
}

func (a *Agent) approvalURL(taskID string) string {
	return strings.TrimRight(a.BaseURL, "/") + ApprovePath + taskID
}

// await waits in auth-required until an operator approves or ctx ends
// (CancelTask, shutdown), then rolls out. The approval is answered with the
// outcome of moving the task back to working, so an operator who approves a
// task that was canceled meanwhile learns that nothing was deployed.
func (a *Agent) await(ctx context.Context, w *server.Writer, ap *approval, j job) error {
	var answer chan<- error
	select {
	case answer = <-ap.approve:
	case <-ctx.Done():
		return ctx.Err()
	}
	err := w.Working(ctx, approvedText)
	answer <- err
	if err != nil {
		return err
	}
	return a.rollOut(ctx, w, j)
}

// rollOut puts the build live (for a rollback, the build before the live
// one) and reports it: the deploy-report artifact, then completed.
func (a *Agent) rollOut(ctx context.Context, w *server.Writer, j job) error {
	build, done := j.build, "Build "+j.build+" is live on staging"
	a.mu.Lock()
	if j.rollback {
		n := len(a.staging)
		if n < 2 {
			a.mu.Unlock()
			return w.Fail(ctx, noRollbackText)
		}
		build, done = a.staging[n-2], "Staging is back on build "+a.staging[n-2]
		a.staging = a.staging[:n-1]
	} else {
		a.staging = append(a.staging, build)
	}
	a.mu.Unlock()
	p, err := a2a.DataPart(Report{Environment: "staging", Build: build, URL: stagingURL, HealthChecks: healthChecks})
	if err != nil {
		return err
	}
	if err := w.Artifact(ctx, a2a.Artifact{ArtifactID: ReportArtifactID, Name: ReportArtifactID + ".json", Parts: []a2a.Part{p}}); err != nil {
		return err
	}
	return w.Complete(ctx, done)
}

// rollbackTarget is the build before the one live on staging, or "".
func (a *Agent) rollbackTarget() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.staging); n >= 2 {
		return a.staging[n-2]
	}
	return ""
}

// resume handles a client message on a task that is not finished: the
// server moved the task back to working and calls the agent again. A
// message cannot approve a deploy, so:
//
//   - while the first execution still waits for an operator, the task goes
//     back to auth-required with the same link;
//   - while it rolls out after an approval, this call waits for it to end
//     (returning earlier would make the server fail the working task);
//   - when nothing waits for the task (the server restarted since it asked),
//     this call takes over: it asks again and waits for the approval.
func (a *Agent) resume(ctx context.Context, req *server.Request, w *server.Writer) error {
	id := w.TaskID()
	var first *a2a.Message
	if len(req.Task.History) > 0 {
		first = &req.Task.History[0]
	}
	j, refusal := plan(first.Text())

	a.mu.Lock()
	ap := a.pending[id]
	switch {
	case ap != nil && !ap.claimed:
		// Under a.mu, so that an approval lands after this status.
		err := w.RequireAuth(ctx, a.askText(id))
		a.mu.Unlock()
		return err
	case ap != nil:
		a.mu.Unlock()
		select {
		case <-ap.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	case refusal != "":
		a.mu.Unlock()
		return w.Reject(ctx, refusal)
	}
	ap = a.registerLocked(id)
	a.mu.Unlock()
	defer a.unregister(id, ap)
	if err := w.RequireAuth(ctx, a.askText(id)); err != nil {
		return err
	}
	return a.await(ctx, w, ap, j)
}
