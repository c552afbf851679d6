package planner

import (
	"context"
	"errors"
	"slices"

	"github.com/goa2a/a2a/a2a"
)

// follow follows a task that has not settled until it does: a terminal
// state or TASK_STATE_INPUT_REQUIRED. It asks the operator each time the
// task comes to need approval, after the first frame of the stream (or
// the first poll) has shown the task; announced says the log already says
// so for the state the task is in now. It returns the task as last seen
// and whether it settled; the error is only for ctx ending.
func (r *run) follow(ctx context.Context, ag *agent, t *a2a.Task, announced bool) (*a2a.Task, bool, error) {
	how := "poll"
	if ag.info.Streaming {
		how = "stream"
	}
	r.observe(Step{Kind: StepFollow, Agent: ag.name, TaskID: t.ID, Text: how})
	cur := t
	first, prev := true, t.Status.State
	var ferr error
	for ev, err := range ag.c.Follow(ctx, t.ID) {
		if err != nil {
			ferr = err
			break
		}
		cur = fold(cur, ev)
		r.report(ag, cur, ev)
		st := cur.Status.State
		if st == a2a.TaskStateAuthRequired && (first || prev != a2a.TaskStateAuthRequired) {
			if !first || !announced {
				r.note("  it needs approval: %s The planner cannot approve, so it asks the operator and keeps following the task.", statusText(cur))
			}
			if err := r.askOperator(ctx, ag, cur); err != nil {
				if ctx.Err() != nil {
					return cur, false, ctxErr(ctx)
				}
				r.note("  the operator could not be asked: %v", err)
				return cur, false, nil
			}
		}
		first, prev = false, st
	}
	if ferr == nil {
		if how == "stream" {
			r.note("  the stream ends at %s", cur.Status.State)
		} else {
			r.note("  polling ends at %s", cur.Status.State)
		}
		return cur, true, nil
	}
	if ctx.Err() != nil {
		return cur, false, ctxErr(ctx)
	}
	// Following failed for good (Follow already resumed dropped streams
	// and retried): read the task as it stands.
	r.note("  following the task failed (%v); the planner reads it with GetTask", ferr)
	got, err := ag.c.GetTask(ctx, &a2a.GetTaskRequest{ID: t.ID})
	if err != nil {
		if ctx.Err() != nil {
			return cur, false, ctxErr(ctx)
		}
		r.failed(ag, t.ID, err)
		return cur, false, nil
	}
	cur = got
	r.note("  task %s is %s", short(cur.ID), cur.Status.State)
	r.report(ag, cur, cur)
	if st := cur.Status.State; !st.Terminal() && st != a2a.TaskStateInputRequired {
		r.note("  it has still not settled; the planner gives up on it")
		return cur, false, nil
	}
	return cur, true, nil
}

// askOperator asks the operator to approve the task.
func (r *run) askOperator(ctx context.Context, ag *agent, t *a2a.Task) error {
	if r.cfg.operator == nil {
		return errors.New("the planner has no operator")
	}
	text := statusText(t)
	r.observe(Step{Kind: StepApproval, Agent: ag.name, TaskID: t.ID, Text: text})
	return r.cfg.operator(ctx, ApprovalRequest{Agent: ag.name, AgentURL: ag.url, TaskID: t.ID, ContextID: t.ContextID, Text: text})
}

// fold applies one event of a followed task to what is known of it.
func fold(t *a2a.Task, ev a2a.Event) *a2a.Task {
	switch e := ev.(type) {
	case *a2a.Task:
		return e
	case *a2a.TaskStatusUpdateEvent:
		n := *t
		n.Status = e.Status
		return &n
	case *a2a.TaskArtifactUpdateEvent:
		n := *t
		n.Artifacts = slices.Clone(t.Artifacts)
		a := e.Artifact
		i := slices.IndexFunc(n.Artifacts, func(x a2a.Artifact) bool { return x.ArtifactID == a.ArtifactID })
		switch {
		case i < 0:
			n.Artifacts = append(n.Artifacts, a)
		case e.Append:
			n.Artifacts[i].Parts = append(slices.Clone(n.Artifacts[i].Parts), a.Parts...)
		default:
			n.Artifacts[i] = a
		}
		return &n
	}
	return t
}

// report tells the observer what is new about task t after event ev: its
// state (or status message), then new artifacts; or the artifact (or
// chunk) an artifact update brings.
func (r *run) report(ag *agent, t *a2a.Task, ev a2a.Event) {
	if r.seen == nil {
		r.seen = map[string]*seenTask{}
	}
	s := r.seen[t.ID]
	if s == nil {
		s = &seenTask{artifacts: map[string]bool{}}
		r.seen[t.ID] = s
	}
	if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
		art := a.Artifact
		s.artifacts[art.ArtifactID] = true
		r.observe(Step{Kind: StepArtifact, Agent: ag.name, TaskID: t.ID, Artifact: &art, Append: a.Append})
		return
	}
	if text := statusText(t); t.Status.State != s.state || text != s.text {
		s.state, s.text = t.Status.State, text
		r.observe(Step{Kind: StepState, Agent: ag.name, TaskID: t.ID, State: t.Status.State, Text: text})
	}
	for i := range t.Artifacts {
		if art := t.Artifacts[i]; !s.artifacts[art.ArtifactID] {
			s.artifacts[art.ArtifactID] = true
			r.observe(Step{Kind: StepArtifact, Agent: ag.name, TaskID: t.ID, Artifact: &art})
		}
	}
}
