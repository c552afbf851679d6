package sqlite_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/idemtest"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

// SendMessage is idempotent on SQLite, on one Handler and on two that
// share the store.
func TestIdempotentSend(t *testing.T) {
	t.Parallel()
	idemtest.Run(t, func(t *testing.T) (store.Store, store.Store) {
		st := openStore(t, filepath.Join(t.TempDir(), "tasks.db"), sqlite.Options{})
		return st, st
	})
}

// Two stores on one file (two processes) create a task each with one
// message id at once: one is created, and the other is told which.
func TestMessageIDTwoStores(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tasks.db")
	stores := []*sqlite.Store{openStore(t, path, sqlite.Options{}), openStore(t, path, sqlite.Options{})}
	scope := store.Scope{Tenant: "t", Owner: "alice"}
	for round := range 20 {
		msgID := fmt.Sprintf("m%d", round)
		var (
			wg   sync.WaitGroup
			errs [4]error
		)
		for i := range errs {
			wg.Go(func() {
				task := &a2a.Task{ID: fmt.Sprintf("task-%d-%d", round, i), ContextID: "c",
					Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: a2a.TimestampOf(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))}}
				ev := store.Event{Seq: 1, Payload: task, MessageID: msgID, MessageDigest: []byte("d")}
				errs[i] = stores[i%2].Append(t.Context(), scope, task.ID, 0, []store.Event{ev}, task)
			})
		}
		wg.Wait()
		won := 0
		for i, err := range errs {
			var used *store.MessageUsedError
			switch {
			case err == nil:
				won++
			case errors.As(err, &used):
				if want := fmt.Sprintf("task-%d-", round); len(used.Record.TaskID) <= len(want) || used.Record.TaskID[:len(want)] != want {
					t.Errorf("round %d, writer %d: refused for %q", round, i, used.Record.TaskID)
				}
			default:
				t.Errorf("round %d, writer %d: %v", round, i, err)
			}
		}
		if won != 1 {
			t.Errorf("round %d: %d tasks created with one message id, want 1", round, won)
		}
	}
}
