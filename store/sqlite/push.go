package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/internal/pushcode"
)

// PutPushConfig implements [store.Store]. The config is stored only if
// its task exists in scope, and with that scope.
func (s *Store) PutPushConfig(ctx context.Context, scope store.Scope, cfg *a2a.TaskPushNotificationConfig) error {
	if cfg == nil {
		return errors.New("sqlite: PutPushConfig with a nil config")
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("sqlite: encoding push config %q of task %q: %w", cfg.ID, cfg.TaskID, err)
	}
	return s.write(ctx, false, func(w *wtx) error {
		n, err := affected(w.exec(s.ws.putPush, cfg.ID, b, pushcode.DueSince(time.Now()), cfg.TaskID, scope.Tenant, scope.Owner))
		if err != nil {
			return fmt.Errorf("sqlite: storing push config %q of task %q: %w", cfg.ID, cfg.TaskID, err)
		}
		if n == 0 {
			return fmt.Errorf("sqlite: task %q: %w", cfg.TaskID, store.ErrNotFound)
		}
		return nil
	})
}

// GetPushConfig implements [store.Store].
func (s *Store) GetPushConfig(ctx context.Context, scope store.Scope, taskID, id string) (*a2a.TaskPushNotificationConfig, error) {
	var b []byte
	err := s.rs.getPush.QueryRowContext(ctx, taskID, scope.Tenant, scope.Owner, id).Scan(&b)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("sqlite: push config %q of task %q: %w", id, taskID, store.ErrNotFound)
	case err != nil:
		return nil, s.readErr(fmt.Errorf("sqlite: reading push config %q of task %q: %w", id, taskID, err))
	}
	return decodePush(b, taskID)
}

// ListPushConfigs implements [store.Store].
func (s *Store) ListPushConfigs(ctx context.Context, scope store.Scope, taskID, afterID string, limit int) ([]*a2a.TaskPushNotificationConfig, error) {
	if limit <= 0 {
		limit = -1 // no limit
	}
	rows, err := s.rs.listPush.QueryContext(ctx, afterID, taskID, scope.Tenant, scope.Owner, limit)
	if err != nil {
		return nil, s.readErr(fmt.Errorf("sqlite: reading push configs of task %q: %w", taskID, err))
	}
	defer rows.Close()
	var (
		out   = []*a2a.TaskPushNotificationConfig{}
		found bool
	)
	for rows.Next() {
		found = true
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("sqlite: reading push configs of task %q: %w", taskID, err)
		}
		if b == nil {
			continue // the task exists, with no configs to return
		}
		cfg, err := decodePush(b, taskID)
		if err != nil {
			return nil, err
		}
		out = append(out, cfg)
	}
	if err := rows.Err(); err != nil {
		return nil, s.readErr(fmt.Errorf("sqlite: reading push configs of task %q: %w", taskID, err))
	}
	if !found {
		return nil, fmt.Errorf("sqlite: task %q: %w", taskID, store.ErrNotFound)
	}
	return out, nil
}

// DeletePushConfig implements [store.Store].
func (s *Store) DeletePushConfig(ctx context.Context, scope store.Scope, taskID, id string) error {
	return s.write(ctx, false, func(w *wtx) error {
		var n int
		if err := w.queryRow(s.ws.taskInScope, taskID, scope.Tenant, scope.Owner).Scan(&n); err != nil {
			return fmt.Errorf("sqlite: deleting push config %q of task %q: %w", id, taskID, err)
		}
		if n == 0 {
			return fmt.Errorf("sqlite: task %q: %w", taskID, store.ErrNotFound)
		}
		if _, err := w.exec(s.ws.deletePush, taskID, scope.Tenant, scope.Owner, id); err != nil {
			return fmt.Errorf("sqlite: deleting push config %q of task %q: %w", id, taskID, err)
		}
		return nil
	})
}

func decodePush(b []byte, taskID string) (*a2a.TaskPushNotificationConfig, error) {
	var cfg a2a.TaskPushNotificationConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("sqlite: decoding a push config of task %q: %w", taskID, err)
	}
	return &cfg, nil
}

// claimPushSQL selects the configs ClaimPush may claim, due first: the
// partial index push_configs_due yields them in that order, and each
// one's task is a lookup by id. Its arguments are now (unix ms) and the
// limit.
var claimPushSQL = claimPushQuery(0)

// claimPushQuery is claimPushSQL leaving out the configs of skip scopes:
// its arguments are now, a tenant and an owner for each of them, and the
// limit. Few scopes are skipped (those that hold a share of a delivery
// worker's pool), so a condition per scope is the simplest plan.
func claimPushQuery(skip int) string {
	var b strings.Builder
	b.WriteString(`SELECT p.task_id, p.id, p.tenant, p.owner, p.config, p.delivered, p.attempts, p.next_attempt, p.last_error, t.seq
	FROM push_configs p CROSS JOIN tasks t ON t.id = p.task_id
	WHERE p.failing = 0 AND p.next_attempt <= ? AND p.delivered < t.seq`)
	for range skip {
		b.WriteString(" AND NOT (p.tenant = ? AND p.owner = ?)")
	}
	b.WriteString(`
	ORDER BY p.next_attempt, p.task_id, p.id
	LIMIT ?`)
	return b.String()
}

// claimArgs are the arguments of claimPushQuery(len(skip)).
func claimArgs(now int64, skip []store.Scope, limit int) []any {
	args := make([]any, 0, 2+2*len(skip))
	args = append(args, now)
	for _, sc := range skip {
		args = append(args, sc.Tenant, sc.Owner)
	}
	return append(args, limit)
}

// ClaimPush implements [store.PushQueue]. The configs are read and leased
// in one write transaction, which no other writer, in this process or
// another, can interleave with. A read first checks that there is
// something to claim, so that idle polling costs the writer nothing.
func (s *Store) ClaimPush(ctx context.Context, now time.Time, lease time.Duration, limit int, skip ...store.Scope) ([]store.PushJob, error) {
	if err := ctx.Err(); err != nil || limit < 1 {
		return nil, err
	}
	nowMS, until := now.UnixMilli(), now.Add(lease).UnixMilli()
	var n int
	var err error
	if len(skip) == 0 {
		err = s.rs.pushDue.QueryRowContext(ctx, nowMS, 1).Scan(&n)
	} else {
		err = s.rdb.QueryRowContext(ctx, "SELECT count(*) FROM ("+claimPushQuery(len(skip))+")", claimArgs(nowMS, skip, 1)...).Scan(&n)
	}
	if err != nil {
		return nil, s.readErr(fmt.Errorf("sqlite: looking for push configs to claim: %w", err))
	}
	if n == 0 {
		return nil, nil
	}
	var jobs []store.PushJob
	err = s.write(ctx, false, func(w *wtx) error {
		jobs = jobs[:0]
		type key struct{ taskID, id string }
		var keys []key
		var rows *sql.Rows
		var err error
		if len(skip) == 0 {
			rows, err = w.stmt(s.ws.claimPush).QueryContext(w.ctx, nowMS, limit)
		} else {
			rows, err = w.query(claimPushQuery(len(skip)), claimArgs(nowMS, skip, limit)...)
		}
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				j    store.PushJob
				k    key
				b    []byte
				next int64
			)
			if err := rows.Scan(&k.taskID, &k.id, &j.Scope.Tenant, &j.Scope.Owner, &b,
				&j.State.Delivered, &j.State.Attempts, &next, &j.State.LastError, &j.Seq); err != nil {
				rows.Close()
				return err
			}
			if j.Config, err = decodePush(b, k.taskID); err != nil {
				rows.Close()
				return err
			}
			j.State.NextAttempt = pushcode.Time(until)
			jobs = append(jobs, j)
			keys = append(keys, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, k := range keys {
			if _, err := w.exec(s.ws.leasePush, until, k.taskID, k.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: claiming push configs: %w", err)
	}
	return jobs, nil
}

// PushState implements [store.PushQueue].
func (s *Store) PushState(ctx context.Context, scope store.Scope, taskID, id string) (store.PushState, error) {
	var (
		st   store.PushState
		next int64
	)
	err := s.rs.pushState.QueryRowContext(ctx, taskID, scope.Tenant, scope.Owner, id).
		Scan(&st.Delivered, &st.Attempts, &next, &st.Failing, &st.LastError)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.PushState{}, fmt.Errorf("sqlite: push config %q of task %q: %w", id, taskID, store.ErrNotFound)
	case err != nil:
		return store.PushState{}, s.readErr(fmt.Errorf("sqlite: reading the state of push config %q of task %q: %w", id, taskID, err))
	}
	pushcode.SetNextAttempt(&st, next)
	return st, nil
}

// SetPushState implements [store.PushQueue].
func (s *Store) SetPushState(ctx context.Context, scope store.Scope, taskID, id string, prev int64, st store.PushState) error {
	return s.write(ctx, false, func(w *wtx) error {
		n, err := affected(w.exec(s.ws.setPush, st.Delivered, st.Attempts, pushcode.NextAttempt(st), st.Failing, st.LastError,
			taskID, scope.Tenant, scope.Owner, id, prev))
		if err != nil {
			return fmt.Errorf("sqlite: storing the state of push config %q of task %q: %w", id, taskID, err)
		}
		if n == 1 {
			return nil
		}
		var at int64
		err = w.queryRow(s.ws.pushDelivered, taskID, scope.Tenant, scope.Owner, id).Scan(&at)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("sqlite: push config %q of task %q: %w", id, taskID, store.ErrNotFound)
		case err != nil:
			return fmt.Errorf("sqlite: storing the state of push config %q of task %q: %w", id, taskID, err)
		}
		return fmt.Errorf("sqlite: push config %q of task %q is at seq %d, not %d: %w", id, taskID, at, prev, store.ErrConflict)
	})
}
