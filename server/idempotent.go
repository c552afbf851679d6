package server

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// Idempotent SendMessage (A2A §3.3.1: "Agents may utilize the messageId to
// detect duplicate messages").
//
// A client that loses the answer to SendMessage (or SendStreamingMessage)
// sends the same message again, with the same messageId. With a store that
// records message ids ([store.Messages]; all three of this module's), the
// Handler answers such a retry as it answered the first attempt, without
// calling the agent again: with the task the message created or continued
// (a blocking send waits until it settles, returnImmediately returns it as
// it is, a stream sends it and follows it as SubscribeToTask does, a
// terminal task being the stream's one frame), or with the direct reply
// the agent gave. A messageId reused for a different message is
// InvalidParams on message.messageId.
//
// The key is the tenant, the principal and the messageId. Before the agent
// runs, the Handler looks the id up in the store (recall). The store
// decides between attempts that run at once, here or in other processes:
// the id is recorded by the Append that stores the message (the creating
// task snapshot, or the message that continues a task; Event.MessageID),
// so that of two first attempts one Append records it and the other fails
// with store.ErrMessageUsed; that attempt cancels its agent, whose task is
// never stored, and answers with the winner's. A direct reply is recorded
// (Messages.PutReply) before it is answered. Within this process, a
// continuing message is also recognised in the task's history, stored or
// queued, so that two attempts never reach the store in one Append.
//
// What must match: the role, parts, metadata, extensions and
// referenceTaskIds, compared by a digest (messageDigest); and a taskId or
// contextId the retry gives must be the one of the first attempt's task
// (or reply). An answer to TASK_STATE_AUTH_REQUIRED is kept with its
// credentials withheld (credentials.go), and so is its digest: a retry of
// it matches on what the history keeps (role, extensions,
// referenceTaskIds and the number of parts), not on the parts' content,
// which is stored nowhere. A retry's push config is not registered again:
// the first attempt's stands.
//
// How long: a record is kept for [DefaultMessageIDRetention] (24 h) after
// it was made, or as WithMessageIDRetention says, but never longer than
// finished tasks are kept (WithRetention), so that no record outlives its
// task; the maintenance pass deletes older ones (ForgetMessages). After
// that the same messageId is a new message. A message that continued a
// task is also recognised for as long as the task keeps it in its
// history.

// DefaultMessageIDRetention is how long a client message id is remembered
// (see [Handler.SendMessage]) unless WithMessageIDRetention says
// otherwise, or finished tasks are kept for less (WithRetention).
const DefaultMessageIDRetention = 24 * time.Hour

// forgetBatch is how many message ids one ForgetMessages call deletes.
const forgetBatch = 1000

// WithMessageIDRetention sets how long a client message id is remembered
// after its first attempt, so that a retry gets what that attempt got
// (see [Handler.SendMessage]): [DefaultMessageIDRetention] (24 h) unless
// set. When finished tasks are kept for less (WithRetention), ids are
// kept for that long only, so that no id outlives its task. The
// maintenance pass deletes older ids. It has no effect with a store that
// records no message ids (not a store.Messages).
func WithMessageIDRetention(d time.Duration) Option {
	return func(h *Handler) error {
		if d <= 0 {
			return fmt.Errorf("server: WithMessageIDRetention: %v is not a positive duration", d)
		}
		h.messageTTL = d
		return nil
	}
}

// messageRetention is how long message ids are remembered.
func (h *Handler) messageRetention() time.Duration {
	d := cmp.Or(h.messageTTL, DefaultMessageIDRetention)
	if h.retention > 0 && h.retention < d {
		return h.retention
	}
	return d
}

// messages returns the store as a store.Messages, nil if it records no
// message ids.
func (h *Handler) messages() store.Messages {
	ms, _ := h.store.(store.Messages)
	return ms
}

// messageDigest returns the digest of what a retry of m must repeat: its
// role, parts, metadata, extensions and referenceTaskIds (its JSON
// without messageId, taskId and contextId; encoding/json writes map keys
// in order), the first 16 bytes of their SHA-256.
func messageDigest(m *a2a.Message) []byte {
	c := *m
	c.MessageID, c.TaskID, c.ContextID = "", "", ""
	b, err := json.Marshal(&c)
	if err != nil {
		b = []byte(err.Error()) // a message that does not encode matches no retry
	}
	sum := sha256.Sum256(b)
	return sum[:16]
}

// sameMessage reports whether m, a retry, repeats the message recorded
// with digest d: as it was sent, or as the log keeps it once its
// credentials are withheld.
func sameMessage(d []byte, m *a2a.Message) bool {
	return bytes.Equal(d, messageDigest(m)) || bytes.Equal(d, messageDigest(withholdCredentials(m)))
}

// reusedID is the error of a messageId used before for another message.
func reusedID(id string) error {
	return a2a.InvalidParam("message.messageId",
		"messageId "+strconv.Quote(id)+" was already used for a different message")
}

// markMessage sets the MessageID and digest of ev, a write to a task's
// log, if it is a client message continuing the task and the store
// records message ids. The digest is of the message as the log keeps it
// (its credentials withheld, if they are).
func (h *Handler) markMessage(ev *store.Event) {
	if m, ok := ev.Payload.(*a2a.Message); ok && m.Role == a2a.RoleUser && h.messages() != nil {
		ev.MessageID, ev.MessageDigest = m.MessageID, messageDigest(m)
	}
}

// recall returns the store's record of the client message msg, if the
// store records message ids and has one.
func (h *Handler) recall(ctx context.Context, scope store.Scope, msg *a2a.Message) (store.MessageRecord, bool, error) {
	ms := h.messages()
	if ms == nil {
		return store.MessageRecord{}, false, nil
	}
	rec, err := ms.Message(ctx, scope, msg.MessageID)
	switch {
	case err == nil:
		return rec, true, nil
	case errors.Is(err, store.ErrNotFound):
		return store.MessageRecord{}, false, nil
	}
	return store.MessageRecord{}, false, a2a.AsError(err)
}

// usedError returns the *store.MessageUsedError in err's chain, or nil.
func usedError(err error) *store.MessageUsedError {
	var used *store.MessageUsedError
	if errors.As(err, &used) {
		return used
	}
	return nil
}

// seenInHistory returns the error continueTask answers a message with
// when the task's history (stored or queued) already has a client
// message with its id: a retry that came while the first attempt was
// being stored, or after the store forgot the id.
func (h *Handler) seenInHistory(t *a2a.Task, id string) error {
	if h.messages() == nil {
		return nil
	}
	for i := len(t.History) - 1; i >= 0; i-- {
		if m := &t.History[i]; m.MessageID == id && m.Role == a2a.RoleUser {
			return &store.MessageUsedError{Record: store.MessageRecord{ID: id, TaskID: t.ID, Digest: messageDigest(m)}}
		}
	}
	return nil
}

// replay answers msg, the client's message as sent, as the first attempt
// with its id was answered, from rec: the reply, or the task with a
// subscription from its current seq.
func (h *Handler) replay(ctx context.Context, scope store.Scope, msg *a2a.Message, rec store.MessageRecord, buffer int) (exchangeResult, error) {
	if rec.TaskID == "" && rec.Reply == nil {
		// The record was deleted after it refused this attempt.
		return exchangeResult{}, a2a.NewError(a2a.CodeUnavailable, "the first attempt with this messageId is being forgotten; send it again")
	}
	if !sameMessage(rec.Digest, msg) {
		return exchangeResult{}, reusedID(msg.MessageID)
	}
	if rec.TaskID == "" {
		var reply a2a.Message
		if err := json.Unmarshal(rec.Reply, &reply); err != nil {
			return exchangeResult{}, a2a.AsError(err)
		}
		if msg.TaskID != "" || (msg.ContextID != "" && msg.ContextID != reply.ContextID) {
			return exchangeResult{}, reusedID(msg.MessageID)
		}
		return exchangeResult{reply: &reply}, nil
	}
	if msg.TaskID != "" && msg.TaskID != rec.TaskID {
		return exchangeResult{}, reusedID(msg.MessageID)
	}
	lt, err := h.recordedTask(ctx, scope, rec.TaskID)
	if err != nil {
		return exchangeResult{}, err
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if msg.ContextID != "" && msg.ContextID != lt.task.ContextID {
		return exchangeResult{}, reusedID(msg.MessageID)
	}
	sub := newSubscriber(buffer)
	lt.subscribe(sub)
	return exchangeResult{lt: lt, task: lt.task, seq: lt.seq, sub: sub}, nil
}

// recordedTask returns the live task id, which a record of the store
// names: it exists, although this process may not have taken in yet that
// the Append that created it has committed (getLive does not hand out a
// task before), which replay then waits for.
func (h *Handler) recordedTask(ctx context.Context, scope store.Scope, id string) (*liveTask, error) {
	for {
		lt, err := h.getLive(ctx, scope, id)
		if err == nil || !errors.Is(err, a2a.ErrTaskNotFound) {
			return lt, err
		}
		h.mu.Lock()
		lt = h.live[id]
		h.mu.Unlock()
		if lt == nil || lt.scope != scope {
			return nil, err
		}
		lt.mu.Lock()
		creating, drained := !lt.broken && lt.seq == 0, lt.drained
		lt.mu.Unlock()
		if !creating {
			if lt.broken {
				return nil, err
			}
			continue // stored meanwhile
		}
		select {
		case <-drained:
		case <-ctx.Done():
			return nil, a2a.AsError(ctx.Err())
		}
	}
}

// recordReply records the reply of the agent to ex's message, when the
// store records message ids, and returns what the exchange resolves to:
// the reply, or, if another attempt with the id was recorded first, the
// store's refusal, which startExchange answers with that attempt's
// result. A reply that cannot be recorded is still given (and logged):
// a retry of it would run the agent again.
func (h *Handler) recordReply(ctx context.Context, ex *exchange, reply *a2a.Message) exchangeResult {
	ms := h.messages()
	if ms == nil || ex.msgID == "" {
		return exchangeResult{reply: reply}
	}
	b, err := json.Marshal(reply)
	if err == nil {
		err = ms.PutReply(context.WithoutCancel(ctx), ex.scope, store.MessageRecord{ID: ex.msgID, Digest: ex.digest, Reply: b})
	}
	if used := usedError(err); used != nil {
		return exchangeResult{err: used}
	}
	if err != nil {
		h.log.Warn("recording a direct reply; a retry of its message would run the agent again", "message", ex.msgID, "err", err)
	}
	return exchangeResult{reply: reply}
}
