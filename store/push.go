package store

import (
	"context"
	"strconv"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// PushState is where delivery to one push config stands: the delivery
// worker (package push) reads a task's log from Delivered on and calls
// the config's webhook for each event after it.
//
// PutPushConfig sets the state: a new config starts with Delivered at the
// task's last seq (it receives what happens after it was registered) and
// nothing else set; replacing a config keeps its Delivered and clears the
// rest (a client re-registering a failing webhook resumes it from where
// it stopped). DeletePushConfig removes the state with the config.
type PushState struct {
	// Delivered is the seq of the last event of the task's log that this
	// config is done with: delivered, or not meant for webhooks.
	Delivered int64
	// Attempts counts the failed attempts at the event after Delivered.
	Attempts int
	// Phase says whether the config waits for a time (PushDue, with
	// NextAttempt), for its task's log to grow (PushIdle), or for nothing
	// (PushParked).
	Phase PushPhase
	// NextAttempt is, in the PushDue phase, when the config may next be
	// worked on: the time of a retry, or the end of a worker's claim. Zero
	// means at once. It is zero in the other phases.
	NextAttempt time.Time
	// Failing reports that the worker gave up on the event after
	// Delivered: the config receives nothing more until it is replaced.
	Failing bool
	// LastError says why the last attempt failed, "" after a success.
	LastError string
}

// PushPhase is what a push config waits for.
type PushPhase uint8

const (
	// PushDue: the config is worked on at its NextAttempt (at once when
	// zero). Stores keep NextAttempt to the millisecond.
	PushDue PushPhase = iota
	// PushIdle: the config has delivered all of its task's log and waits
	// for more. Claims pass over it, and Append moves it back to PushDue
	// at once, atomically with the events it appends, so that a claim
	// never looks at configs with nothing to deliver.
	PushIdle
	// PushParked: the config's task has ended and the config has
	// received all of it. No claim looks at it again (a task takes no
	// event after a terminal state), and Append does not wake it.
	// Replacing the config (PutPushConfig) moves it back to PushDue.
	PushParked
)

func (p PushPhase) String() string {
	switch p {
	case PushDue:
		return "due"
	case PushIdle:
		return "idle"
	case PushParked:
		return "parked"
	}
	return "PushPhase(" + strconv.Itoa(int(p)) + ")"
}

// PushJob is a push config with work to do, as [PushQueue.ClaimPush]
// returns it.
type PushJob struct {
	Scope  Scope
	Config *a2a.TaskPushNotificationConfig
	State  PushState
	// Seq is the last seq of the task's log when the job was claimed.
	Seq int64
}

// PushQueue is implemented by stores that keep the delivery state of push
// configs, so that webhook delivery survives a restart and processes
// sharing a store do not deliver the same event twice at once. All three
// stores of this module implement it.
type PushQueue interface {
	// ClaimPush returns up to limit push configs, in any scope, that have
	// work: not failing, Delivered below their task's last seq, and
	// NextAttempt zero or not after now; the ones due longest go first.
	// Each returned config's NextAttempt becomes now+lease in the store
	// (and in the returned State), so that no caller, in this process or
	// another, claims it again before the lease ends. The configs of the
	// scopes in skip are left out, claimed by nobody: the delivery worker
	// passes the principals that have their share of its workers, so
	// that what is claimed is work it can start.
	ClaimPush(ctx context.Context, now time.Time, lease time.Duration, limit int, skip ...Scope) ([]PushJob, error)

	// PushState returns the delivery state of a push config; ErrNotFound
	// if the config (or its task) does not exist in scope.
	PushState(ctx context.Context, scope Scope, taskID, id string) (PushState, error)

	// SetPushState replaces the delivery state of a push config whose
	// Delivered is still prev; ErrConflict if it is not (another worker
	// moved it on), ErrNotFound if the config does not exist (it was
	// deleted).
	SetPushState(ctx context.Context, scope Scope, taskID, id string, prev int64, st PushState) error
}
