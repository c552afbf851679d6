package server_test

import (
	"testing"

	"github.com/goa2a/a2a/internal/replicatest"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// Two Handlers on one memory store follow each other through its change
// feed, as replicas on one database do (store/postgres runs the same).
func TestReplicas(t *testing.T) {
	t.Parallel()
	replicatest.Run(t, func(t *testing.T) (store.Store, store.Store) {
		st := memory.New()
		return st, st
	})
}
