package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
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
		n, err := affected(w.exec(s.ws.putPush, cfg.ID, b, cfg.TaskID, scope.Tenant, scope.Owner))
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
