package memory_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
	"github.com/goa2a/a2a/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return memory.New() })
}

// foldChecked is a memory store that checks the contract callers of Append
// keep: the snapshot given is the fold of the log (store.Fold). Run under
// the conformance suite, it checks the suite itself, so that stores which
// keep older snapshots and fold on read (SQLite, PostgreSQL) are tested
// against snapshots they can rebuild.
type foldChecked struct {
	*memory.Store
	t *testing.T
}

func (s foldChecked) Append(ctx context.Context, scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task) error {
	var prev *a2a.Task
	if after > 0 {
		prev, _, _ = s.Store.Get(ctx, scope, taskID)
	}
	if err := s.Store.Append(ctx, scope, taskID, after, events, task); err != nil {
		return err
	}
	var want *a2a.Task
	if after == 0 {
		first, ok := events[0].Payload.(*a2a.Task)
		if !ok {
			s.t.Errorf("task %s created with a %T first", taskID, events[0].Payload)
			return nil
		}
		want = store.Fold(first, events[1:])
	} else {
		want = store.Fold(prev, events)
	}
	w, _ := json.Marshal(want)
	g, _ := json.Marshal(task)
	if !bytes.Equal(w, g) {
		s.t.Errorf("Append to %s after %d: the snapshot is not the fold of the log\n got: %s\nwant: %s", taskID, after, g, w)
	}
	return nil
}

func TestConformanceSnapshotsAreFolds(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return foldChecked{memory.New(), t} })
}
