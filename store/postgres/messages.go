package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/goa2a/a2a/store"
)

// Client message ids (store.Messages), in the messages table
// (migrations/0005_messages.sql). An Append's statement inserts the ids
// its events carry (the m CTE of the create and append statements); the
// primary key refuses an id the scope has, with a unique violation that
// aborts the batch's transaction, after which each Append of the batch
// runs again alone (writer.go) and the one that brought the id fails
// with a *store.MessageUsedError, the record read once the batch is over.

var _ store.Messages = (*Store)(nil)

const (
	getMessageSQL = `SELECT task_id, digest, reply, created FROM {messages} WHERE tenant = $1 AND owner = $2 AND id = $3`
	// No row: the scope has a record of the id. A concurrent insert of
	// the id is waited for.
	putReplySQL = `INSERT INTO {messages} (tenant, owner, id, task_id, digest, reply, created)
	VALUES ($1, $2, $3, '', $4, $5, $6)
	ON CONFLICT (tenant, owner, id) DO NOTHING
	RETURNING 1`
	// The oldest first, along messages_created; rows another
	// ForgetMessages is deleting are left to it.
	forgetMessagesSQL = `WITH d AS (
	DELETE FROM {messages} WHERE (tenant, owner, id) IN (
		SELECT tenant, owner, id FROM {messages} WHERE created < $1
		ORDER BY created
		LIMIT $2
		FOR UPDATE SKIP LOCKED)
	RETURNING 1
)
SELECT count(*) FROM d`
)

// messagesPKey is the constraint that refuses an id a scope has.
const messagesPKey = "messages_pkey"

// messageArgs returns the message ids that events carry and their
// digests, the arguments of an append's m CTE.
func messageArgs(events []store.Event) ([]string, [][]byte, error) {
	if err := store.CheckMessageIDs(events); err != nil {
		return nil, nil, err
	}
	var (
		ids     []string
		digests [][]byte
	)
	for _, ev := range events {
		if ev.MessageID != "" {
			d := ev.MessageDigest
			if d == nil {
				d = []byte{}
			}
			ids, digests = append(ids, ev.MessageID), append(digests, d)
		}
	}
	return ids, digests, nil
}

// unresolvedUsed is the error of an append refused for one of ids: the
// writer knows that the primary key of messages refused the statement,
// not which id; Append reads the record (withUsedRecord).
type unresolvedUsed struct{ ids []string }

func (e *unresolvedUsed) Error() string {
	return fmt.Sprintf("postgres: one of message ids %q is already used", e.ids)
}

func (e *unresolvedUsed) Is(target error) bool { return target == store.ErrMessageUsed }

// messageUsed returns the error of an append alone in its transaction
// that failed with err, if the primary key of messages refused it, and
// nil otherwise.
func messageUsed(err error, ids []string) error {
	var pgErr *pgconn.PgError
	if len(ids) == 0 || !errors.As(err, &pgErr) || pgErr.Code != "23505" || pgErr.ConstraintName != messagesPKey {
		return nil
	}
	return &unresolvedUsed{ids: ids}
}

// withUsedRecord turns err, the error of an Append in scope, into a
// *store.MessageUsedError with the record that refused it, if the
// primary key of messages did; other errors are returned as they are.
func (s *Store) withUsedRecord(ctx context.Context, scope store.Scope, err error) error {
	var u *unresolvedUsed
	if !errors.As(err, &u) {
		return err
	}
	for _, id := range u.ids {
		rec, rerr := s.Message(ctx, scope, id)
		if rerr == nil {
			return &store.MessageUsedError{Record: rec}
		}
	}
	// Deleted since (ForgetMessages), or unreadable: the id alone.
	return &store.MessageUsedError{Record: store.MessageRecord{ID: u.ids[0]}}
}

// Message implements [store.Messages].
func (s *Store) Message(ctx context.Context, scope store.Scope, id string) (_ store.MessageRecord, err error) {
	defer classifyErr(&err)
	rec := store.MessageRecord{ID: id}
	var created int64
	err = s.pool.QueryRow(ctx, s.q.getMessage, scope.Tenant, scope.Owner, id).Scan(&rec.TaskID, &rec.Digest, &rec.Reply, &created)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.MessageRecord{}, fmt.Errorf("postgres: message %q: %w", id, store.ErrNotFound)
	case err != nil:
		return store.MessageRecord{}, fmt.Errorf("postgres: reading message %q: %w", id, err)
	}
	rec.Created = time.UnixMilli(created).UTC()
	return rec, nil
}

// PutReply implements [store.Messages].
func (s *Store) PutReply(ctx context.Context, scope store.Scope, rec store.MessageRecord) (err error) {
	defer classifyErr(&err)
	if err := store.CheckReply(rec); err != nil {
		return err
	}
	digest := rec.Digest
	if digest == nil {
		digest = []byte{}
	}
	var one int
	err = s.pool.QueryRow(ctx, s.q.putReply, scope.Tenant, scope.Owner, rec.ID, digest, rec.Reply, time.Now().UnixMilli()).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return s.withUsedRecord(ctx, scope, &unresolvedUsed{ids: []string{rec.ID}})
	case err != nil:
		return fmt.Errorf("postgres: recording the reply to message %q: %w", rec.ID, err)
	}
	return nil
}

// ForgetMessages implements [store.Messages].
func (s *Store) ForgetMessages(ctx context.Context, cutoff time.Time, limit int) (_ int, err error) {
	defer classifyErr(&err)
	if limit < 1 {
		return 0, ctx.Err()
	}
	var n int
	if err := s.pool.QueryRow(ctx, s.q.forgetMessages, ceilMilli(cutoff), limit).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: forgetting message ids: %w", err)
	}
	return n, nil
}
