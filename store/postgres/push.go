package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// PutPushConfig implements [store.Store].
func (s *Store) PutPushConfig(ctx context.Context, scope store.Scope, cfg *a2a.TaskPushNotificationConfig) error {
	if cfg == nil {
		return errors.New("postgres: PutPushConfig with a nil config")
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("postgres: encoding push config %q of task %q: %w", cfg.ID, cfg.TaskID, err)
	}
	tag, err := s.pool.Exec(ctx, s.q.putPush, cfg.TaskID, scope.Tenant, scope.Owner, cfg.ID, b)
	if err != nil {
		return fmt.Errorf("postgres: storing push config %q of task %q: %w", cfg.ID, cfg.TaskID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: task %q: %w", cfg.TaskID, store.ErrNotFound)
	}
	return nil
}

// GetPushConfig implements [store.Store].
func (s *Store) GetPushConfig(ctx context.Context, scope store.Scope, taskID, id string) (*a2a.TaskPushNotificationConfig, error) {
	var b []byte
	err := s.pool.QueryRow(ctx, s.q.getPush, taskID, scope.Tenant, scope.Owner, id).Scan(&b)
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
func (s *Store) ListPushConfigs(ctx context.Context, scope store.Scope, taskID, afterID string, limit int) ([]*a2a.TaskPushNotificationConfig, error) {
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
func (s *Store) DeletePushConfig(ctx context.Context, scope store.Scope, taskID, id string) error {
	var n int
	if err := s.pool.QueryRow(ctx, s.q.deletePush, taskID, scope.Tenant, scope.Owner, id).Scan(&n); err != nil {
		return fmt.Errorf("postgres: deleting push config %q of task %q: %w", id, taskID, err)
	}
	if n == 0 {
		return fmt.Errorf("postgres: task %q: %w", taskID, store.ErrNotFound)
	}
	return nil
}
