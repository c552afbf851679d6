package server

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// Crash recovery and retention.
//
// A task is run by the process that last wrote it. When that process dies
// (kill -9, a power cut), its submitted and working tasks would stay
// unfinished for ever: nobody will ever move them on, and a client waiting
// on one would wait for ever. With a store that outlives the process (a
// store.Maintainer), the Handler finds such orphans when it starts and
// then every maintenance interval, and finishes each one as failed with a
// status message saying why, or hands it back to the agent when the agent
// can resume (a Resumer). Interrupted tasks (input-required,
// auth-required) are waiting for their client, not for a process: they
// survive a restart untouched and are continued as usual.
//
// Retention deletes finished tasks whose last status is older than the
// retention period, in bounded batches, so that a server that runs for
// months does not grow without limit.

// Resumer is implemented by agents that can pick up a task whose process
// died before it finished. Resume is called, in its own goroutine, with the
// task as it was stored (req.Task) and req.Message set to the last message
// from the client; the task is already back in working. What the agent
// does then is as for Execute. Agents that are not Resumers have such
// tasks failed.
//
// The stored message is what the log keeps: when it answered
// TASK_STATE_AUTH_REQUIRED, its credentials were withheld (see
// [WithheldText]), and req.Message holds the placeholder, marked by
// [WithheldMetadataKey] in its metadata. An agent that needs the
// credentials to resume must have kept them itself, or ask again.
type Resumer interface {
	Resume(ctx context.Context, req *Request, w *Writer) error
}

// stoppedRunner is the status message of a task whose process stopped
// before it finished (runner names the process, when the store knows it):
// failed, or resumed by the agent.
func stoppedRunner(runner string, resumed bool) string {
	who := "The server process that ran the task"
	if runner != "" {
		who = "The replica that ran the task, " + strconv.Quote(runner) + ","
	}
	if resumed {
		return who + " stopped before the task finished; the agent resumed the task."
	}
	return who + " stopped before the task finished; the task was not resumed."
}

// Defaults of the maintenance loop.
const (
	DefaultMaintenanceInterval = 15 * time.Second
	maintainBatch              = 100
)

// unfinished are the states of a task that a process is working on; they
// are the states an orphan can be left in.
var unfinished = []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking}

// finished are the terminal states, the ones retention may expire.
var finished = []a2a.TaskState{a2a.TaskStateCompleted, a2a.TaskStateFailed, a2a.TaskStateCanceled, a2a.TaskStateRejected}

// WithRetention keeps finished tasks (completed, failed, canceled,
// rejected) for ttl after their last status change, then deletes them with
// their events and push configs. Zero, the default, keeps them for ever.
// The store must be a store.Maintainer.
func WithRetention(ttl time.Duration) Option {
	return func(h *Handler) error {
		if ttl < 0 {
			return fmt.Errorf("server: WithRetention: negative duration %v", ttl)
		}
		h.retention = ttl
		return nil
	}
}

// WithMaintenanceInterval sets how often the Handler looks for orphaned
// tasks and expired ones (DefaultMaintenanceInterval). A negative interval
// turns the background pass off; Maintain can still be called.
func WithMaintenanceInterval(d time.Duration) Option {
	return func(h *Handler) error {
		if d == 0 {
			return errors.New("server: WithMaintenanceInterval: zero interval")
		}
		h.maintainEvery = d
		return nil
	}
}

// MaintenanceReport says what one maintenance pass did.
type MaintenanceReport struct {
	Failed  int // orphaned tasks finished as failed
	Resumed int // orphaned tasks handed back to a Resumer
	Expired int // finished tasks deleted by retention
	// Forgotten counts the client message ids deleted because they were
	// recorded longer ago than they are kept for (idempotent.go).
	Forgotten int
}

// Maintain runs one pass of crash recovery and retention and reports what
// it did. The Handler runs it when it starts and every maintenance interval
// on its own; calling it is only needed to force a pass. With a store that
// is not a store.Maintainer it does nothing.
func (h *Handler) Maintain(ctx context.Context) (MaintenanceReport, error) {
	var rep MaintenanceReport
	m, ok := h.store.(store.Maintainer)
	if !ok {
		return rep, nil
	}
	var errs []error
	// This process's own tasks first: those its agents left unfinished
	// that the store would not take the failure of (failSettled).
	n, err := h.retryUnsettled()
	rep.Failed += n
	if err != nil {
		errs = append(errs, err)
	}
	for {
		refs, err := m.Orphans(ctx, unfinished, maintainBatch)
		if err != nil {
			errs = append(errs, fmt.Errorf("server: looking for orphaned tasks: %w", err))
			break
		}
		progress := 0
		for _, ref := range refs {
			did, err := h.recoverOrphan(ctx, ref)
			if err != nil {
				errs = append(errs, err)
			}
			switch did {
			case resumed:
				rep.Resumed++
				progress++
			case failed:
				rep.Failed++
				progress++
			}
		}
		// A batch with no progress would come back the same: stop.
		if len(refs) < maintainBatch || progress == 0 {
			break
		}
	}
	// Message ids first: none then names a task that retention deletes
	// below (they are kept no longer than finished tasks). The store
	// dates them by its clock, the real one, not the Handler's.
	if ms := h.messages(); ms != nil {
		cutoff := time.Now().Add(-h.messageRetention())
		for {
			n, err := ms.ForgetMessages(ctx, cutoff, forgetBatch)
			rep.Forgotten += n
			if err != nil {
				errs = append(errs, fmt.Errorf("server: forgetting message ids: %w", err))
				break
			}
			if n < forgetBatch {
				break
			}
		}
	}
	if h.retention > 0 {
		cutoff := h.now().Add(-h.retention)
		for {
			n, err := m.Expire(ctx, finished, cutoff, maintainBatch)
			rep.Expired += n
			if err != nil {
				errs = append(errs, fmt.Errorf("server: expiring finished tasks: %w", err))
				break
			}
			if n < maintainBatch {
				break
			}
		}
	}
	return rep, errors.Join(errs...)
}

// recovery is what recoverOrphan did with a task.
type recovery int

const (
	skipped recovery = iota // moved on, or another process took it
	failed
	resumed
)

// recoverOrphan finishes or resumes one orphaned task. It appends after
// exactly the seq at which the store found the task orphaned, once: a
// conflict means another process (a replica recovering it too, or a
// client continuing it) wrote first, and the task is theirs.
func (h *Handler) recoverOrphan(ctx context.Context, ref store.TaskRef) (recovery, error) {
	lt, err := h.getLive(ctx, ref.Scope, ref.ID)
	if err != nil {
		if errors.Is(err, a2a.ErrTaskNotFound) {
			return skipped, nil // expired or deleted meanwhile
		}
		return skipped, fmt.Errorf("server: loading orphaned task %s: %w", ref.ID, err)
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	// This process may hold an older copy of the task: bring it up to date.
	if err := h.catchUpLocked(ctx, lt); err != nil {
		return skipped, err
	}
	t := lt.task
	if lt.seq != ref.Seq || len(lt.execs) > 0 || (t.Status.State != a2a.TaskStateSubmitted && t.Status.State != a2a.TaskStateWorking) {
		return skipped, nil // moved on since the store named it
	}
	status := func(state a2a.TaskState, text string) *a2a.TaskStatusUpdateEvent {
		msg := &a2a.Message{MessageID: h.newID(), ContextID: t.ContextID, TaskID: t.ID, Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart(text)}}
		return &a2a.TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Status: a2a.TaskStatus{State: state, Message: msg, Timestamp: h.stamp()}}
	}
	taken := func(err error) bool { return errors.Is(err, store.ErrConflict) || errors.Is(err, ErrTaskClosed) }
	r, canResume := h.agent.(Resumer)
	if canResume && !h.isClosed() {
		if err := h.tryAppendLocked(ctx, lt, []a2a.Event{status(a2a.TaskStateWorking, stoppedRunner(ref.Runner, true))}); err != nil {
			if taken(err) {
				return skipped, nil
			}
			return skipped, fmt.Errorf("server: resuming orphaned task %s: %w", t.ID, err)
		}
		req := &Request{Message: lastClientMessage(t), Task: t, TaskID: t.ID, ContextID: t.ContextID, Tenant: ref.Scope.Tenant}
		exec := h.newExecution(h.baseCtx)
		w := &Writer{h: h, req: req, exec: exec, lt: lt}
		if err := h.run(req, w, r.Resume); err == nil {
			if lt.execs == nil {
				lt.execs = make(map[*execution]struct{})
			}
			lt.execs[exec] = struct{}{}
			h.log.Info("resumed a task whose process stopped", "task", t.ID, "replica", ref.Runner)
			return resumed, nil
		}
		// Closed meanwhile: fail it as below.
	}
	if err := h.tryAppendLocked(ctx, lt, []a2a.Event{status(a2a.TaskStateFailed, stoppedRunner(ref.Runner, false))}); err != nil {
		if taken(err) {
			return skipped, nil
		}
		return skipped, fmt.Errorf("server: failing orphaned task %s: %w", t.ID, err)
	}
	h.log.Warn("failed a task whose process stopped", "task", t.ID, "was", t.Status.State, "replica", ref.Runner)
	return failed, nil
}

// lastClientMessage returns the last message from the client in a task's
// history, or nil.
func lastClientMessage(t *a2a.Task) *a2a.Message {
	for i := len(t.History) - 1; i >= 0; i-- {
		if t.History[i].Role == a2a.RoleUser {
			m := t.History[i]
			return &m
		}
	}
	return nil
}

// maintainLoop runs Maintain at start and every interval until Close.
func (h *Handler) maintainLoop() {
	defer h.maintenance.Done()
	tick := time.NewTicker(h.maintainEvery)
	defer tick.Stop()
	for {
		rep, err := h.Maintain(h.baseCtx)
		if err != nil && h.baseCtx.Err() == nil {
			h.log.Error("maintenance pass", "err", err)
		}
		if rep != (MaintenanceReport{}) {
			h.log.Info("maintenance pass", "failed_orphans", rep.Failed, "resumed_orphans", rep.Resumed, "expired", rep.Expired, "forgotten_message_ids", rep.Forgotten)
		}
		select {
		case <-h.baseCtx.Done():
			return
		case <-tick.C:
		}
	}
}
