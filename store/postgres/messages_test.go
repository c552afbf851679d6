package postgres_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/idemtest"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
)

// SendMessage is idempotent on PostgreSQL, on one Handler and across two
// stores of one schema, as two replicas.
func TestIdempotentSend(t *testing.T) {
	t.Parallel()
	idemtest.Run(t, func(t *testing.T) (store.Store, store.Store) {
		schema := newSchema(t)
		return openStore(t, schema, postgres.Options{}), openStore(t, schema, postgres.Options{})
	})
}

// Two stores on one schema (two replicas) create tasks with one message
// id at once, among other appends of their batches: one task is created,
// the others are told which, and the other appends of the batches go in.
func TestMessageIDTwoStores(t *testing.T) {
	t.Parallel()
	schema := newSchema(t)
	stores := []*postgres.Store{openStore(t, schema, postgres.Options{}), openStore(t, schema, postgres.Options{})}
	for round := range 20 {
		msgID := fmt.Sprintf("m%d", round)
		var (
			wg     sync.WaitGroup
			errs   [4]error
			others [8]error
		)
		for i := range errs {
			wg.Go(func() {
				task := newTask(fmt.Sprintf("task-%d-%d", round, i), a2a.TaskStateSubmitted, round)
				ev := store.Event{Seq: 1, Payload: task, MessageID: msgID, MessageDigest: []byte("d")}
				errs[i] = stores[i%2].Append(t.Context(), scopeA, task.ID, 0, []store.Event{ev}, task)
			})
		}
		for i := range others {
			wg.Go(func() {
				task := newTask(fmt.Sprintf("other-%d-%d", round, i), a2a.TaskStateSubmitted, round)
				ev := store.Event{Seq: 1, Payload: task, MessageID: fmt.Sprintf("o%d-%d", round, i), MessageDigest: []byte("d")}
				others[i] = stores[i%2].Append(t.Context(), scopeA, task.ID, 0, []store.Event{ev}, task)
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
				if !strings.HasPrefix(used.Record.TaskID, fmt.Sprintf("task-%d-", round)) || used.Record.ID != msgID {
					t.Errorf("round %d, writer %d: refused for %+v", round, i, used.Record)
				}
			default:
				t.Errorf("round %d, writer %d: %v", round, i, err)
			}
		}
		if won != 1 {
			t.Errorf("round %d: %d tasks created with one message id, want 1", round, won)
		}
		for _, err := range others {
			if err != nil {
				t.Errorf("round %d: another append of the batch: %v", round, err)
			}
		}
	}
}
