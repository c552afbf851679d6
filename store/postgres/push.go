package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/internal/pushcode"
)

// PutPushConfig implements [store.Store].
func (s *Store) PutPushConfig(ctx context.Context, scope store.Scope, cfg *a2a.TaskPushNotificationConfig) (err error) {
	defer classifyErr(&err)
	if cfg == nil {
		return errors.New("postgres: PutPushConfig with a nil config")
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("postgres: encoding push config %q of task %q: %w", cfg.ID, cfg.TaskID, err)
	}
	tag, err := s.pool.Exec(ctx, s.q.putPush, cfg.TaskID, scope.Tenant, scope.Owner, cfg.ID, b, pushcode.DueSince(time.Now()))
	if err != nil {
		return fmt.Errorf("postgres: storing push config %q of task %q: %w", cfg.ID, cfg.TaskID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: task %q: %w", cfg.TaskID, store.ErrNotFound)
	}
	return nil
}

// GetPushConfig implements [store.Store].
func (s *Store) GetPushConfig(ctx context.Context, scope store.Scope, taskID, id string) (_ *a2a.TaskPushNotificationConfig, err error) {
	defer classifyErr(&err)
	var b []byte
	err = s.pool.QueryRow(ctx, s.q.getPush, taskID, scope.Tenant, scope.Owner, id).Scan(&b)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("postgres: push config %q of task %q: %w", id, taskID, store.ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("postgres: reading push config %q of task %q: %w", id, taskID, err)
	}
	return decodePushConfig(b)
}

func decodePushConfig(b []byte) (*a2a.TaskPushNotificationConfig, error) {
	var cfg a2a.TaskPushNotificationConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("postgres: decoding stored push config: %w", err)
	}
	return &cfg, nil
}

// ListPushConfigs implements [store.Store].
func (s *Store) ListPushConfigs(ctx context.Context, scope store.Scope, taskID, afterID string, limit int) (_ []*a2a.TaskPushNotificationConfig, err error) {
	defer classifyErr(&err)
	var lim *int // LIMIT NULL is no limit
	if limit > 0 {
		lim = &limit
	}
	rows, err := s.pool.Query(ctx, s.q.listPush, taskID, scope.Tenant, scope.Owner, afterID, lim)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing push configs of task %q: %w", taskID, err)
	}
	defer rows.Close()
	found := false
	var out []*a2a.TaskPushNotificationConfig
	for rows.Next() {
		found = true
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, fmt.Errorf("postgres: listing push configs of task %q: %w", taskID, err)
		}
		if b == nil {
			continue // the task has no configs after afterID
		}
		cfg, err := decodePushConfig(b)
		if err != nil {
			return nil, err
		}
		out = append(out, cfg)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: listing push configs of task %q: %w", taskID, err)
	}
	if !found {
		return nil, fmt.Errorf("postgres: task %q: %w", taskID, store.ErrNotFound)
	}
	return out, nil
}

// DeletePushConfig implements [store.Store].
func (s *Store) DeletePushConfig(ctx context.Context, scope store.Scope, taskID, id string) (err error) {
	defer classifyErr(&err)
	var n int
	if err := s.pool.QueryRow(ctx, s.q.deletePush, taskID, scope.Tenant, scope.Owner, id).Scan(&n); err != nil {
		return fmt.Errorf("postgres: deleting push config %q of task %q: %w", id, taskID, err)
	}
	if n == 0 {
		return fmt.Errorf("postgres: task %q: %w", taskID, store.ErrNotFound)
	}
	return nil
}

// ClaimPush implements [store.PushQueue]. One statement picks and leases
// the configs; rows that concurrent claims hold are skipped, not waited
// for, so that claimers in several processes share the work.
func (s *Store) ClaimPush(ctx context.Context, now time.Time, lease time.Duration, limit int, skip ...store.Scope) (_ []store.PushJob, err error) {
	defer classifyErr(&err)
	if err := ctx.Err(); err != nil || limit < 1 {
		return nil, err
	}
	until := now.Add(lease).UnixMilli()
	tenants, owners := make([]string, len(skip)), make([]string, len(skip))
	for i, sc := range skip {
		tenants[i], owners[i] = sc.Tenant, sc.Owner
	}
	rows, err := s.pool.Query(ctx, s.q.claimPush, now.UnixMilli(), until, limit, tenants, owners)
	if err != nil {
		return nil, fmt.Errorf("postgres: claiming push configs: %w", err)
	}
	defer rows.Close()
	type claimed struct {
		job        store.PushJob
		taskID, id string
		was        int64 // next_attempt before the claim
	}
	var cs []claimed
	for rows.Next() {
		var (
			c claimed
			b []byte
		)
		if err := rows.Scan(&c.taskID, &c.id, &c.job.Scope.Tenant, &c.job.Scope.Owner, &b,
			&c.job.State.Delivered, &c.job.State.Attempts, &c.job.State.LastError, &c.job.Seq, &c.was); err != nil {
			return nil, fmt.Errorf("postgres: claiming push configs: %w", err)
		}
		if c.job.Config, err = decodePushConfig(b); err != nil {
			return nil, err
		}
		c.job.State.NextAttempt = pushcode.Time(until)
		cs = append(cs, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: claiming push configs: %w", err)
	}
	// RETURNING follows no order: put the jobs back in the claim's.
	slices.SortFunc(cs, func(a, b claimed) int {
		return cmp.Or(cmp.Compare(a.was, b.was), cmp.Compare(a.taskID, b.taskID), cmp.Compare(a.id, b.id))
	})
	jobs := make([]store.PushJob, len(cs))
	for i, c := range cs {
		jobs[i] = c.job
	}
	return jobs, nil
}

// PushState implements [store.PushQueue].
func (s *Store) PushState(ctx context.Context, scope store.Scope, taskID, id string) (_ store.PushState, err error) {
	defer classifyErr(&err)
	var (
		st   store.PushState
		next int64
	)
	err = s.pool.QueryRow(ctx, s.q.pushState, taskID, scope.Tenant, scope.Owner, id).
		Scan(&st.Delivered, &st.Attempts, &next, &st.Failing, &st.LastError)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.PushState{}, fmt.Errorf("postgres: push config %q of task %q: %w", id, taskID, store.ErrNotFound)
	case err != nil:
		return store.PushState{}, fmt.Errorf("postgres: reading the state of push config %q of task %q: %w", id, taskID, err)
	}
	pushcode.SetNextAttempt(&st, next)
	return st, nil
}

// SetPushState implements [store.PushQueue].
func (s *Store) SetPushState(ctx context.Context, scope store.Scope, taskID, id string, prev int64, st store.PushState) (err error) {
	defer classifyErr(&err)
	var (
		done bool
		at   *int64
	)
	err = s.pool.QueryRow(ctx, s.q.setPushState, taskID, scope.Tenant, scope.Owner, id, prev,
		st.Delivered, st.Attempts, pushcode.NextAttempt(st), st.Failing, st.LastError).Scan(&done, &at)
	switch {
	case err != nil:
		return fmt.Errorf("postgres: storing the state of push config %q of task %q: %w", id, taskID, err)
	case done:
		return nil
	case at == nil:
		return fmt.Errorf("postgres: push config %q of task %q: %w", id, taskID, store.ErrNotFound)
	}
	return fmt.Errorf("postgres: push config %q of task %q is at seq %d, not %d: %w", id, taskID, *at, prev, store.ErrConflict)
}
