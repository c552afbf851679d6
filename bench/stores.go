package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
	"github.com/goa2a/a2a/store/sqlite"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The durable targets: goa2a as above, with the SQLite store in a fresh
// temporary file (the default durability: every stored update survives a
// crash of the process), or the PostgreSQL store in a fresh schema of the
// database -postgres names. Both are removed when the target stops.

// postgresDSN is the database of the goa2a-postgres target (-postgres).
var postgresDSN = "host=/var/run/postgresql dbname=test"

func startGoa2aSQLite() (*testServer, error) {
	dir, err := os.MkdirTemp("", "a2a-bench-")
	if err != nil {
		return nil, err
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "tasks.db"), sqlite.Options{})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return startDurable("goa2a-sqlite", st, func() error {
		return errors.Join(st.Close(), os.RemoveAll(dir))
	})
}

func startGoa2aPostgres() (*testServer, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	schema := fmt.Sprintf("bench_%d_%d", os.Getpid(), time.Now().UnixNano())
	st, err := postgres.Open(ctx, postgresDSN, postgres.Options{Schema: schema})
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL at %q (-postgres): %w", postgresDSN, err)
	}
	return startDurable("goa2a-postgres", st, func() error {
		err := st.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// A pool, not a bare connection: the DSN may hold pool_* settings,
		// which a bare connection would send to the server and be refused.
		pool, cerr := pgxpool.New(ctx, postgresDSN)
		if cerr != nil {
			return errors.Join(err, cerr)
		}
		defer pool.Close()
		_, derr := pool.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		return errors.Join(err, derr)
	})
}

// startDurable serves the echo agent on st; release runs after the server
// and the Handler are closed.
func startDurable(name string, st store.Store, release func() error) (*testServer, error) {
	ts, err := startStack(name, echo.Agent{}, server.WithStore(st))
	if err != nil {
		release()
		return nil, err
	}
	closeStack := ts.close
	ts.close = func(ctx context.Context) error {
		return errors.Join(closeStack(ctx), release())
	}
	return ts, nil
}
