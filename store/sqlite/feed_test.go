package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/goa2a/a2a/internal/replicatest"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

// Two Handlers on one SQLite store follow each other through its change
// feed, which hears the Appends made through the store value.
func TestReplicas(t *testing.T) {
	t.Parallel()
	replicatest.Run(t, func(t *testing.T) (store.Store, store.Store) {
		st := openStore(t, filepath.Join(t.TempDir(), "tasks.db"), sqlite.Options{})
		return st, st
	})
}
