package store

import (
	"context"
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
	// NextAttempt is when the config may next be worked on: the time of
	// a retry, or the end of a worker's claim. Zero means at once;
	// [PushIdle] means when the task's log grows: Append sets it to zero,
	// atomically with the events it appends, so that a claim never looks
	// at configs with nothing to deliver.
	NextAttempt time.Time
	// Failing reports that the worker gave up on the event after
	// Delivered: the config receives nothing more until it is replaced.
	Failing bool
	// LastError says why the last attempt failed, "" after a success.
	LastError string
}

// PushIdle is the NextAttempt of a config that has delivered all of its
// task's log and waits for more: claims pass over it (it is after any
// now), and Append wakes it. Stores keep it to the millisecond, as every
// NextAttempt.
var PushIdle = time.UnixMilli(253339228800000).UTC() // 9998-01-01T00:00:00Z

// PushParked is the NextAttempt of a config whose task has ended and
// which has received all of it: no claim looks at it again (a task takes
// no event after a terminal state), and Append never wakes it, as it does
// an idle one. Replacing the config (PutPushConfig) resets it.
var PushParked = time.UnixMilli(253370764800000).UTC() // 9999-01-01T00:00:00Z

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
	// another, claims it again before the lease ends.
	ClaimPush(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]PushJob, error)

	// PushState returns the delivery state of a push config; ErrNotFound
	// if the config (or its task) does not exist in scope.
	PushState(ctx context.Context, scope Scope, taskID, id string) (PushState, error)

	// SetPushState replaces the delivery state of a push config whose
	// Delivered is still prev; ErrConflict if it is not (another worker
	// moved it on), ErrNotFound if the config does not exist (it was
	// deleted).
	SetPushState(ctx context.Context, scope Scope, taskID, id string, prev int64, st PushState) error
}
