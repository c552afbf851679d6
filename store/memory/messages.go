package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/goa2a/a2a/store"
)

var _ store.Messages = (*Store)(nil)

// messages holds the records of client message ids (store.Messages),
// guarded by the Store's mu.
type messages struct {
	byKey map[messageKey]*store.MessageRecord
	// order lists the records in the order they were made, from
	// order[first] on, for ForgetMessages: the oldest come first.
	order []*orderedMessage
	first int
}

type messageKey struct {
	scope store.Scope
	id    string
}

type orderedMessage struct {
	key messageKey
	rec *store.MessageRecord
}

// check returns a *store.MessageUsedError if the scope has a record of the
// id of one of events. Callers hold s.mu.
func (ms *messages) check(scope store.Scope, events []store.Event) error {
	for _, ev := range events {
		if ev.MessageID == "" {
			continue
		}
		if rec, ok := ms.byKey[messageKey{scope, ev.MessageID}]; ok {
			return &store.MessageUsedError{Record: *rec}
		}
	}
	return nil
}

// add records rec in scope. Callers hold s.mu and have checked that the
// scope has no record of rec.ID.
func (ms *messages) add(scope store.Scope, rec store.MessageRecord) {
	if ms.byKey == nil {
		ms.byKey = make(map[messageKey]*store.MessageRecord)
	}
	rec.Created = time.UnixMilli(time.Now().UnixMilli())
	k := messageKey{scope, rec.ID}
	ms.byKey[k] = &rec
	ms.order = append(ms.order, &orderedMessage{key: k, rec: &rec})
}

// register records the message ids of an Append's events for task taskID,
// or returns a *store.MessageUsedError and records none. It is the last
// check of an Append: callers hold s.mu and add the events once it
// returns nil.
func (s *Store) register(scope store.Scope, taskID string, events []store.Event) error {
	if err := store.CheckMessageIDs(events); err != nil {
		return err
	}
	if err := s.msgs.check(scope, events); err != nil {
		return err
	}
	for _, ev := range events {
		if ev.MessageID != "" {
			s.msgs.add(scope, store.MessageRecord{ID: ev.MessageID, Digest: ev.MessageDigest, TaskID: taskID})
		}
	}
	return nil
}

// Message implements [store.Messages].
func (s *Store) Message(ctx context.Context, scope store.Scope, id string) (store.MessageRecord, error) {
	if err := ctx.Err(); err != nil {
		return store.MessageRecord{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if rec, ok := s.msgs.byKey[messageKey{scope, id}]; ok {
		return *rec, nil
	}
	return store.MessageRecord{}, fmt.Errorf("message %q: %w", id, store.ErrNotFound)
}

// PutReply implements [store.Messages].
func (s *Store) PutReply(ctx context.Context, scope store.Scope, rec store.MessageRecord) error {
	if err := store.CheckReply(rec); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.msgs.check(scope, []store.Event{{MessageID: rec.ID}}); err != nil {
		return err
	}
	s.msgs.add(scope, rec)
	return nil
}

// ForgetMessages implements [store.Messages].
func (s *Store) ForgetMessages(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if err := ctx.Err(); err != nil || limit < 1 {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := &s.msgs
	n := 0
	for n < limit && ms.first < len(ms.order) {
		o := ms.order[ms.first]
		if !o.rec.Created.Before(cutoff) {
			break
		}
		if ms.byKey[o.key] == o.rec {
			delete(ms.byKey, o.key)
		}
		ms.order[ms.first] = nil
		ms.first++
		n++
	}
	if ms.first > 1024 && ms.first >= len(ms.order)/2 {
		// Move the rest to the front rather than let the slice grow.
		k := copy(ms.order, ms.order[ms.first:])
		clear(ms.order[k:])
		ms.order, ms.first = ms.order[:k], 0
	}
	return n, nil
}
