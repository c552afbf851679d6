package planner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
)

// maxAnswers is how many questions of one task the planner answers before
// it concludes the agent will never be satisfied.
const maxAnswers = 3

// run is the state of one [Planner.Run].
type run struct {
	cfg    *config
	plan   Plan
	agents map[string]*agent // by skill id
	res    *Result
	seen   map[string]*seenTask // what was reported of each task, by id
}

// agent is a remote agent as its card describes it.
type agent struct {
	name string
	url  string // base URL, as given to Run
	c    *client.Client
	info CardInfo
}

// seenTask is what the observer was told of a task.
type seenTask struct {
	state     a2a.TaskState
	text      string
	artifacts map[string]bool
}

// note writes one line of the decision log.
func (r *run) note(format string, args ...any) {
	_, _ = io.WriteString(r.cfg.log, fmt.Sprintf(format, args...)+"\n")
}

func (r *run) observe(s Step) { r.cfg.observe(s) }

// ctxErr is the error Run returns when ctx ended.
func ctxErr(ctx context.Context) error {
	return fmt.Errorf("planner: %w", context.Cause(ctx))
}

// discover reads every card and files each skill under the first agent
// that offers it.
func (r *run) discover(ctx context.Context, urls []string) error {
	for _, u := range urls {
		ag, err := r.connect(ctx, u)
		if err != nil {
			if ctx.Err() != nil {
				return ctxErr(ctx)
			}
			r.note("card at %s: cannot read it: %v", u, err)
			r.observe(Step{Kind: StepError, URL: u, Text: err.Error()})
			continue
		}
		for _, s := range ag.info.Skills {
			if _, taken := r.agents[s]; !taken {
				r.agents[s] = ag
			}
		}
		r.note("card %s: skills %s; %s at %s", ag.name, strings.Join(ag.info.Skills, ", "), ag.info.Binding, ag.info.Interface)
		info := ag.info
		r.observe(Step{Kind: StepCard, Agent: ag.name, URL: u, Card: &info})
	}
	return nil
}

// connect reads the card at baseURL and makes a client for its JSON-RPC
// interface (or its HTTP+JSON one when it has none), with credentials when
// the card asks for them and the planner has a token for the agent.
func (r *run) connect(ctx context.Context, baseURL string) (*agent, error) {
	opts := []client.Option{client.WithBindings(a2a.BindingJSONRPC, a2a.BindingHTTPJSON)}
	if r.cfg.httpClient != nil {
		opts = append(opts, client.WithHTTPClient(r.cfg.httpClient))
	}
	if r.cfg.timeout > 0 {
		opts = append(opts, client.WithTimeout(r.cfg.timeout))
	}
	opts = append(opts, r.cfg.clientOpts...)
	c, err := client.New(ctx, baseURL, opts...)
	if err != nil {
		return nil, err
	}
	card := c.Card()
	if token, ok := r.cfg.tokens[card.Name]; ok && len(card.SecurityRequirements) > 0 {
		if creds := credentials(card, token); len(creds) > 0 {
			if c, err = client.NewFromCard(ctx, card, append(opts, creds...)...); err != nil {
				return nil, err
			}
		}
	}
	info := CardInfo{
		Binding:   c.Binding(),
		Interface: c.Interface().URL,
		Streaming: card.Capabilities.SupportsStreaming(),
		Push:      card.Capabilities.SupportsPush(),
		Auth:      len(card.SecurityRequirements) > 0,
	}
	for _, s := range card.Skills {
		info.Skills = append(info.Skills, s.ID)
	}
	return &agent{name: card.Name, url: baseURL, c: c, info: info}, nil
}

// credentials returns the client options that send token for the first
// security requirement of card whose every scheme can carry a token
// (A2A §7.3: the requirements are alternatives, the schemes of one are all
// needed).
func credentials(card *a2a.AgentCard, token string) []client.Option {
	fn := func(context.Context) (string, error) { return token, nil }
	for _, req := range card.SecurityRequirements {
		names := make([]string, 0, len(req.Schemes))
		for name := range req.Schemes {
			names = append(names, name)
		}
		slices.Sort(names)
		var opts []client.Option
		for _, name := range names {
			s, ok := card.SecuritySchemes[name]
			if !ok || (s.HTTPAuth == nil && s.OAuth2 == nil && s.OpenIDConnect == nil && s.APIKey == nil) {
				opts = nil
				break
			}
			opts = append(opts, client.WithCredentials(name, fn))
		}
		if len(opts) > 0 {
			return opts
		}
	}
	return nil
}

// ship delegates the three skills in turn, deciding after each from its
// data part whether to go on.
func (r *run) ship(ctx context.Context) error {
	p := r.plan

	tests, ok, err := r.delegate(ctx, SkillRunTests, a2a.TextPart(fmt.Sprintf("Run the unit tests for %s at commit %s", p.Repo, p.Commit)))
	if err != nil || !ok {
		return err
	}
	if !completed(tests) {
		r.stop("the test task did not complete" + stateNote(tests))
		return nil
	}
	var sum TestSummary
	if !dataPart(tests, "summary", &sum) {
		r.stop("the test task has no summary data")
		return nil
	}
	r.res.Tests = &sum
	if sum.Failed > 0 {
		r.stop(fmt.Sprintf("%d test(s) failed", sum.Failed))
		return nil
	}
	r.decide("tests: %d passed", sum.Passed)

	diff := a2a.Part{Content: a2a.Raw(p.Diff), Filename: p.DiffName, MediaType: "text/x-diff"}
	review, ok, err := r.delegate(ctx, SkillReviewDiff, a2a.TextPart(fmt.Sprintf("Review this diff of %s.", p.Repo)), diff)
	if err != nil || !ok {
		return err
	}
	if !completed(review) {
		r.stop("the review task did not complete" + stateNote(review))
		return nil
	}
	var rev Review
	if !dataPart(review, "review", &rev) {
		r.stop("the review task has no findings data")
		return nil
	}
	r.res.Review = &rev
	blocking := rev.Blocking()
	noun := "findings"
	if len(rev.Findings) == 1 {
		noun = "finding"
	}
	r.decide("review: %d %s, %d blocking", len(rev.Findings), noun, len(blocking))
	if len(blocking) > 0 {
		r.stop("a high-severity finding blocks the deploy")
		return nil
	}

	deploy, ok, err := r.delegate(ctx, SkillDeploy, a2a.TextPart(fmt.Sprintf("Deploy build %s to %s", p.Build, p.Environment)))
	if err != nil || !ok {
		return err
	}
	r.res.Deploy = deploy
	if !completed(deploy) {
		r.stop("the deploy task did not complete" + stateNote(deploy))
		return nil
	}
	r.decide("deploy: %s", deploy.Status.State)
	r.res.Completed = true
	return nil
}

// decide logs a decision to go on.
func (r *run) decide(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	r.note("%s", line)
	r.observe(Step{Kind: StepDecision, Text: line})
}

// stop logs why the plan stops and records it in the result.
func (r *run) stop(why string) {
	r.note("stop: %s", why)
	r.res.Stopped = why
	r.observe(Step{Kind: StepStop, Text: why})
}

func completed(t *a2a.Task) bool { return t != nil && t.Status.State == a2a.TaskStateCompleted }

// stateNote names the state a task ended in, for a stop line.
func stateNote(t *a2a.Task) string {
	if t == nil {
		return ""
	}
	return " (" + t.Status.State.String() + ")"
}

// dataPart decodes the first data part of the task's artifact id into v.
func dataPart(t *a2a.Task, id string, v any) bool {
	for _, a := range t.Artifacts {
		if a.ArtifactID != id {
			continue
		}
		for _, p := range a.Parts {
			if d, ok := p.Content.(a2a.Data); ok {
				return d.Decode(v) == nil
			}
		}
	}
	return false
}

// delegate sends parts to the agent offering skill and handles the reply
// until the task ends or the planner can do no more. It returns the task
// as last seen (nil when there is none: a direct reply or an error, both
// logged), ok false when no agent offers the skill (the plan stopped), and
// an error only when ctx ended.
func (r *run) delegate(ctx context.Context, skill string, parts ...a2a.Part) (*a2a.Task, bool, error) {
	ag := r.agents[skill]
	if ag == nil {
		r.stop("no agent offers the skill " + skill)
		return nil, false, nil
	}
	r.note("delegate %s to %s", skill, ag.name)
	r.observe(Step{Kind: StepDelegate, Skill: skill, Agent: ag.name})

	resp, err := r.send(ctx, ag, &a2a.Message{MessageID: r.cfg.newID(), Role: a2a.RoleUser, Parts: parts})
	answers := 0
	for {
		if err != nil {
			if ctx.Err() != nil {
				return nil, true, ctxErr(ctx)
			}
			r.failed(ag, "", err)
			return nil, true, nil
		}
		var task *a2a.Task
		switch res := resp.Result.(type) {
		case *a2a.Message:
			r.note("  direct reply, no task to follow")
			return nil, true, nil
		case *a2a.Task:
			task = res
		}
		if task == nil || task.ID == "" {
			r.failed(ag, "", a2a.NewError(a2a.CodeInvalidAgentResponse, "SendMessage answered without a task or a message"))
			return nil, true, nil
		}
		r.note("  task %s is %s", short(task.ID), task.Status.State)
		r.report(ag, task, task)

		// Settle the task: follow it while it runs or waits for an
		// operator; stop at a terminal state or a question.
	settle:
		for {
			var settled bool
			switch st := task.Status.State; {
			case st.Terminal():
				if st != a2a.TaskStateCompleted {
					if text := statusText(task); text != "" {
						r.note("  it says: %s", text)
					}
				}
				return task, true, nil
			case st == a2a.TaskStateInputRequired:
				break settle
			case st == a2a.TaskStateAuthRequired:
				r.note("  it needs approval: %s The planner cannot approve, so it asks the operator and %s.", statusText(task), followVerb(ag))
				if task, settled, err = r.follow(ctx, ag, task, true); err != nil || !settled {
					return task, true, err
				}
			default: // submitted, working, or a state this planner does not know
				r.note("  it has not settled, so the planner %s", followWhat(ag))
				if task, settled, err = r.follow(ctx, ag, task, false); err != nil || !settled {
					return task, true, err
				}
			}
		}

		// The task asks a question: answer it on the same task.
		question := statusText(task)
		answer, ok := r.answer(question)
		if !ok {
			r.note("  it asks: %s The planner cannot answer that from its own context.", question)
			return task, true, nil
		}
		if answers == maxAnswers {
			r.note("  it asks again: %s The planner has answered %d times and gives up.", question, answers)
			return task, true, nil
		}
		answers++
		r.note("  it asks: %s The planner answers from its own context: %s", question, answer)
		r.observe(Step{Kind: StepAnswer, Agent: ag.name, TaskID: task.ID, Text: answer})
		msg := &a2a.Message{MessageID: r.cfg.newID(), ContextID: task.ContextID, TaskID: task.ID, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(answer)}}
		resp, err = r.send(ctx, ag, msg)
	}
}

// answer answers a question from the planner's own context.
func (r *run) answer(question string) (string, bool) {
	if strings.Contains(strings.ToLower(question), "base branch") {
		return r.plan.Base, true
	}
	return "", false
}

func followVerb(ag *agent) string {
	if ag.info.Streaming {
		return "subscribes"
	}
	return "polls the task"
}

func followWhat(ag *agent) string {
	if ag.info.Streaming {
		return "subscribes to it"
	}
	return "polls it"
}

// send sends a message with SendMessage, blocking until the task settles
// (A2A §3.2.2). A send that got no answer at all is made again, with the
// same request and so the same messageId (A2A §3.3.1), up to the
// configured number of attempts. A send that got an answer, even an
// error, is never repeated: a second send could start a second task. The
// repeat of one that got none is safe against a goa2a server, which
// answers it with the first attempt's task or reply (server/idempotent.go),
// even when the first attempt did reach it.
func (r *run) send(ctx context.Context, ag *agent, msg *a2a.Message) (*a2a.SendMessageResponse, error) {
	req := &a2a.SendMessageRequest{Message: msg}
	wait := r.cfg.retryWait
	for attempt := 1; ; attempt++ {
		resp, err := ag.c.SendMessage(ctx, req)
		if err == nil || attempt >= r.cfg.attempts || !retryable(ctx, err) {
			return resp, err
		}
		r.note("  no answer from %s (%v); the planner sends the same message again", ag.name, err)
		r.observe(Step{Kind: StepRetry, Agent: ag.name, Text: err.Error()})
		if !sleep(ctx, wait) {
			return nil, ctx.Err()
		}
		wait *= 2
	}
}

// retryable reports whether a failed send got no answer: a transport
// failure, or an agent saying it is unavailable.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var e *a2a.Error
	return !errors.As(err, &e) || e.Code == a2a.CodeUnavailable
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// failed logs a call that failed: "error CODE: MESSAGE" (the JSON-RPC
// code, as the kit prints it) for an error the agent answered with, "no
// answer from AGENT" otherwise.
func (r *run) failed(ag *agent, taskID string, err error) {
	var e *a2a.Error
	if errors.As(err, &e) {
		r.note("  error %d: %s", e.Code.JSONRPCCode(), e.Text())
	} else {
		r.note("  no answer from %s: %v", ag.name, err)
	}
	r.observe(Step{Kind: StepError, Agent: ag.name, TaskID: taskID, Text: err.Error()})
}

// statusText is the text of the task's status message.
func statusText(t *a2a.Task) string { return t.Status.Message.Text() }

// short is a task id as the log prints it: its first eight characters.
func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
