package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Client message ids, so that SendMessage is idempotent.
//
// A client that sends a message and loses the response retries with the
// same messageId. The server must then answer with what the first attempt
// produced (the task it created or continued, or its direct reply) and
// not run the agent again, even when the retry reaches another process
// sharing the store at the same moment as the first attempt. So the store
// records, per scope, each client message id with what it led to, and the
// record is made atomically with the Append that stores the message: of
// two concurrent first attempts, one Append registers the id and the
// other fails with [ErrMessageUsed], which names the winner.
//
// An event carries the id of a client message in [Event.MessageID] (the
// task snapshot that a message creates, or the message that continues a
// task) and the server's digest of its content in [Event.MessageDigest];
// an Append to a store that implements [Messages] records both with the
// task's id. A direct reply, which has no task and so no Append, is
// recorded by [Messages.PutReply]. What the digest covers, and how long
// records are kept, is the server's rule; the store keeps the bytes and
// deletes what [Messages.ForgetMessages] is told to.

// ErrMessageUsed is returned (as a *[MessageUsedError]) when a client
// message id is already recorded in the scope: by an Append that carries
// it in an event's MessageID, or by PutReply. Nothing was written. It is
// not [ErrConflict]: appending again cannot succeed.
var ErrMessageUsed = errors.New("store: message id already used")

// MessageRecord is what a store remembers of one client message id in a
// scope.
type MessageRecord struct {
	// ID is the client's message id.
	ID string
	// Digest is the server's digest of the message's content, as given.
	Digest []byte
	// TaskID is the task whose log holds the message (the one it created
	// or continued); empty when the message was answered by Reply.
	TaskID string
	// Reply is the direct reply to the message, the JSON of an
	// a2a.Message, when TaskID is empty.
	Reply []byte
	// Created is when the record was made, to the millisecond.
	Created time.Time
}

// MessageUsedError is the error of an Append or PutReply that brought a
// message id the scope already has a record of. It matches
// [ErrMessageUsed] with errors.Is.
type MessageUsedError struct {
	// Record is the existing record. Its ID is always set; the rest may
	// be empty if the record was deleted since (ForgetMessages) and could
	// not be read.
	Record MessageRecord
}

func (e *MessageUsedError) Error() string {
	holder := "a direct reply"
	if e.Record.TaskID != "" {
		holder = "task " + strconv.Quote(e.Record.TaskID)
	} else if e.Record.Reply == nil {
		holder = "a record since deleted"
	}
	return fmt.Sprintf("store: message id %q already used, by %s", e.Record.ID, holder)
}

// Is reports whether target is ErrMessageUsed.
func (e *MessageUsedError) Is(target error) bool { return target == ErrMessageUsed }

// Messages is implemented by stores that record client message ids (all
// three of this module's). Their Append records the MessageID of each
// event that has one, in the Append's scope, with the task's id, and
// fails with a *MessageUsedError, writing nothing, if the scope already
// has a record of one of them. A failed Append records nothing.
// Events returned by Events need not carry MessageID.
type Messages interface {
	// Message returns the record of message id in scope, ErrNotFound if
	// there is none.
	Message(ctx context.Context, scope Scope, id string) (MessageRecord, error)

	// PutReply records rec (ID, Digest and Reply set, TaskID empty), a
	// message answered with a direct reply, in scope; Created is set by
	// the store. If the scope has a record of rec.ID already, it writes
	// nothing and returns a *MessageUsedError with that record.
	PutReply(ctx context.Context, scope Scope, rec MessageRecord) error

	// ForgetMessages deletes up to limit records, in any scope, made
	// before cutoff, oldest first, and returns how many it deleted.
	// Tasks are not touched.
	ForgetMessages(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

// CheckMessageIDs checks the message ids of an Append's events: an id may
// appear once. Stores call it before writing anything; the error is not
// ErrMessageUsed, so that a caller does not take its own events for
// another's.
func CheckMessageIDs(events []Event) error {
	var seen map[string]struct{}
	first := ""
	for _, ev := range events {
		switch {
		case ev.MessageID == "":
			continue
		case first == "":
			first = ev.MessageID
			continue
		case seen == nil:
			seen = map[string]struct{}{first: {}}
		}
		if _, dup := seen[ev.MessageID]; dup {
			return fmt.Errorf("store: message id %q appears twice among the events of one Append", ev.MessageID)
		}
		seen[ev.MessageID] = struct{}{}
	}
	return nil
}

// CheckReply checks the record PutReply is given.
func CheckReply(rec MessageRecord) error {
	switch {
	case rec.ID == "":
		return errors.New("store: PutReply with no message id")
	case rec.TaskID != "":
		return fmt.Errorf("store: PutReply of message %q with a task id; tasks record their messages by Append", rec.ID)
	case rec.Reply == nil:
		return fmt.Errorf("store: PutReply of message %q with no reply", rec.ID)
	}
	return nil
}
