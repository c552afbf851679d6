package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/goa2a/a2a/store"
)

// Client message ids (store.Messages), in the messages table
// (migrations/0005_messages.sql).

var _ store.Messages = (*Store)(nil)

// messageReg is a message id that an Append records.
type messageReg struct {
	id     string
	digest []byte
}

// messageRegs returns the message ids that events carry, nil if none.
func messageRegs(events []store.Event) ([]messageReg, error) {
	if err := store.CheckMessageIDs(events); err != nil {
		return nil, err
	}
	var regs []messageReg
	for _, ev := range events {
		if ev.MessageID != "" {
			regs = append(regs, messageReg{ev.MessageID, nonNil(ev.MessageDigest)})
		}
	}
	return regs, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// messageStmts are the prepared statements of message ids: insert and
// read on the writer's connection, get on the readers'.
type messageStmts struct {
	insert, read, forget *sql.Stmt
	get                  *sql.Stmt
}

const readMessageSQL = `SELECT task_id, digest, reply, created FROM messages WHERE tenant = ? AND owner = ? AND id = ?`

func (ms *messageStmts) prepare(ctx context.Context, wdb, rdb *sql.DB) error {
	if err := prepareAll(ctx, wdb, []stmtDef{
		// No row changed: the scope has a record of the id.
		{&ms.insert, `INSERT INTO messages (tenant, owner, id, task_id, digest, reply, created) VALUES (?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (tenant, owner, id) DO NOTHING`},
		{&ms.read, readMessageSQL},
		// The oldest first, along messages_created.
		{&ms.forget, `DELETE FROM messages WHERE (tenant, owner, id) IN (
	SELECT tenant, owner, id FROM messages WHERE created < ? ORDER BY created LIMIT ?)`},
	}); err != nil {
		return err
	}
	return prepareAll(ctx, rdb, []stmtDef{{&ms.get, readMessageSQL}})
}

// registerTx records the message ids of a, an Append, in the writer's
// transaction, or returns a *store.MessageUsedError if the scope has a
// record of one. The first insert that finds a record has written
// nothing; a later one leaves the inserts before it, which the writer
// undoes with the request (runRequests).
func (s *Store) registerTx(w *wtx, a *appendReq) error {
	if len(a.msgs) == 0 {
		return nil
	}
	now := time.Now().UnixMilli()
	for _, m := range a.msgs {
		n, err := affected(w.exec(s.ms.insert, a.scope.Tenant, a.scope.Owner, m.id, a.taskID, m.digest, nil, now))
		if err != nil {
			return fmt.Errorf("sqlite: recording message %q of task %q: %w", m.id, a.taskID, err)
		}
		if n == 0 {
			return s.usedTx(w, a.scope, m.id)
		}
	}
	return nil
}

// usedTx returns the *store.MessageUsedError of message id, with the
// record the writer's transaction sees.
func (s *Store) usedTx(w *wtx, scope store.Scope, id string) error {
	rec, err := scanMessage(w.queryRow(s.ms.read, scope.Tenant, scope.Owner, id), id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("sqlite: reading the record of message %q: %w", id, err)
	}
	rec.ID = id
	return &store.MessageUsedError{Record: rec}
}

// scanMessage reads the record of message id from row.
func scanMessage(row *sql.Row, id string) (store.MessageRecord, error) {
	rec := store.MessageRecord{ID: id}
	var created int64
	err := row.Scan(&rec.TaskID, &rec.Digest, &rec.Reply, &created)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return rec, fmt.Errorf("sqlite: message %q: %w", id, store.ErrNotFound)
	case err != nil:
		return rec, err
	}
	rec.Created = time.UnixMilli(created).UTC()
	return rec, nil
}

// Message implements [store.Messages].
func (s *Store) Message(ctx context.Context, scope store.Scope, id string) (store.MessageRecord, error) {
	rec, err := scanMessage(s.ms.get.QueryRowContext(ctx, scope.Tenant, scope.Owner, id), id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.MessageRecord{}, s.readErr(fmt.Errorf("sqlite: reading message %q: %w", id, err))
	}
	return rec, err
}

// PutReply implements [store.Messages].
func (s *Store) PutReply(ctx context.Context, scope store.Scope, rec store.MessageRecord) error {
	if err := store.CheckReply(rec); err != nil {
		return err
	}
	return s.write(ctx, false, func(w *wtx) error {
		n, err := affected(w.exec(s.ms.insert, scope.Tenant, scope.Owner, rec.ID, "", nonNil(rec.Digest), rec.Reply, time.Now().UnixMilli()))
		switch {
		case err != nil:
			return fmt.Errorf("sqlite: recording the reply to message %q: %w", rec.ID, err)
		case n == 0:
			return s.usedTx(w, scope, rec.ID)
		}
		return nil
	})
}

// ForgetMessages implements [store.Messages].
func (s *Store) ForgetMessages(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	if limit < 1 {
		return 0, ctx.Err()
	}
	var n int64
	err := s.write(ctx, false, func(w *wtx) error {
		var err error
		n, err = affected(w.exec(s.ms.forget, ceilMilli(cutoff), limit))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: forgetting message ids: %w", err)
	}
	return int(n), nil
}
