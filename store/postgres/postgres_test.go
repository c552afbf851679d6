package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
	"github.com/goa2a/a2a/store/storetest"
)

// startHint tells how to get a server for the tests.
const startHint = "start the local server with `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`, " +
	"or set A2A_TEST_POSTGRES to the DSN of a reachable server"

// testDSN is the database the tests use: $A2A_TEST_POSTGRES, or the local
// server's socket.
func testDSN() string {
	if dsn := os.Getenv("A2A_TEST_POSTGRES"); dsn != "" {
		return dsn
	}
	return "host=/var/run/postgresql dbname=test"
}

// adminPool connects to the test database, failing the test (never
// skipping it) when the server cannot be reached.
func adminPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, testDSN())
	if err == nil {
		err = pool.Ping(ctx)
		if err != nil {
			pool.Close()
		}
	}
	if err != nil {
		t.Fatalf("cannot reach PostgreSQL at %q: %v\n%s", testDSN(), err, startHint)
	}
	t.Cleanup(pool.Close)
	return pool
}

// newSchema returns the name of a schema no other test uses, and drops it
// with everything in it when the test ends.
func newSchema(t testing.TB) string {
	t.Helper()
	pool := adminPool(t)
	b := make([]byte, 8)
	rand.Read(b)
	name := "a2a_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", name, err)
		}
	})
	return name
}

// openStore opens a store on schema and closes it when the test ends.
func openStore(t testing.TB, schema string, opts postgres.Options) *postgres.Store {
	t.Helper()
	opts.Schema = schema
	s, err := postgres.Open(t.Context(), testDSN(), opts)
	if err != nil {
		t.Fatalf("Open on schema %s: %v\n%s", schema, err, startHint)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openStore(t, newSchema(t), postgres.Options{})
	})
}

func TestCheck(t *testing.T) {
	t.Parallel()
	s := openStore(t, newSchema(t), postgres.Options{})
	if err := s.Check(t.Context()); err != nil {
		t.Errorf("Check: %v", err)
	}
}
