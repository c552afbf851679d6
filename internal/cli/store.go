package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
	"github.com/goa2a/a2a/store/postgres"
	"github.com/goa2a/a2a/store/sqlite"
	"github.com/jackc/pgx/v5/pgconn"
)

// storeSpec is a parsed --store setting.
type storeSpec struct {
	kind string // "memory", "sqlite" or "postgres"
	arg  string // the SQLite file (empty: under the data directory) or the PostgreSQL DSN
	// inDataDir: the SQLite file is the default one, in the data
	// directory, which is created when missing.
	inDataDir bool
}

// Kinds of store.
const (
	storeMemory   = "memory"
	storeSQLite   = "sqlite"
	storePostgres = "postgres"
)

const storeUsage = "memory, sqlite, sqlite:PATH or postgres:DSN"

// parseStoreSpec reads "memory", "sqlite", "sqlite:PATH", "postgres:DSN"
// or a postgres:// or postgresql:// URL.
func parseStoreSpec(s string) (storeSpec, error) {
	switch {
	case s == storeMemory:
		return storeSpec{kind: storeMemory}, nil
	case s == storeSQLite:
		return storeSpec{kind: storeSQLite}, nil
	case strings.HasPrefix(s, "sqlite:"):
		p := strings.TrimPrefix(s, "sqlite:")
		if p == "" {
			return storeSpec{}, errors.New("sqlite: needs a file path after the colon (or write just sqlite for the data directory's)")
		}
		return storeSpec{kind: storeSQLite, arg: p}, nil
	case strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://"):
		return storeSpec{kind: storePostgres, arg: s}, nil
	case strings.HasPrefix(s, "postgres:"):
		dsn := strings.TrimPrefix(s, "postgres:")
		if dsn == "" {
			return storeSpec{}, errors.New("postgres: needs a connection string after the colon, such as postgres:host=/var/run/postgresql dbname=a2a")
		}
		return storeSpec{kind: storePostgres, arg: dsn}, nil
	}
	return storeSpec{}, fmt.Errorf("unknown store %q (want %s)", s, storeUsage)
}

// resolve returns sp with the SQLite file chosen: when --store names none,
// NAME.db in the data directory, NAME being the agent's (so that two
// servers of different agents never share their tasks by default).
func (sp storeSpec) resolve(dataDir, agent string) storeSpec {
	if sp.kind == storeSQLite && sp.arg == "" {
		sp.arg, sp.inDataDir = filepath.Join(dataDir, fileName(agent)+".db"), true
	}
	return sp
}

// fileName makes a file name of an agent's name: lower-case letters,
// digits, dots and dashes.
func fileName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-.")
	if out == "" {
		return "tasks"
	}
	return out
}

// describe says where tasks are kept, without a password.
func (sp storeSpec) describe() string {
	switch sp.kind {
	case storeSQLite:
		return "SQLite " + sp.arg
	case storePostgres:
		return "PostgreSQL " + redactDSN(sp.arg)
	}
	return "memory (gone at exit)"
}

// redactDSN shows where a DSN points, user@host:port/database, and
// nothing else: no password, whatever form the DSN takes.
func redactDSN(dsn string) string {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "(a DSN that does not parse)"
	}
	where := fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
	if strings.HasPrefix(cfg.Host, "/") {
		where = cfg.Host // a socket directory
	}
	return fmt.Sprintf("%s@%s/%s", cfg.User, where, cfg.Database)
}

// defaultDataDir is where a2a keeps its files unless told otherwise:
// $A2A_DATA_DIR, else $XDG_DATA_HOME/a2a, else ~/.local/share/a2a, else
// ./a2a-data.
func defaultDataDir() string {
	if d := os.Getenv("A2A_DATA_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "a2a")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "a2a")
	}
	return "a2a-data"
}

// storeOptions are the settings of the durable stores.
type storeOptions struct {
	durability string // "process" or "power"
	log        *slog.Logger
}

// openStore opens the store sp names; the caller closes it (closeStore).
func openStore(ctx context.Context, sp storeSpec, o storeOptions) (store.Store, error) {
	switch sp.kind {
	case storeSQLite:
		path := sp.arg
		if sp.inDataDir {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return nil, fmt.Errorf("creating the data directory: %w", err)
			}
		}
		d := sqlite.ProcessCrash
		if o.durability == "power" {
			d = sqlite.PowerLoss
		}
		st, err := sqlite.Open(ctx, path, sqlite.Options{Durability: d, Logger: o.log})
		if err != nil {
			return nil, fmt.Errorf("opening the SQLite store %s: %w", path, err)
		}
		return st, nil
	case storePostgres:
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		st, err := postgres.Open(ctx, sp.arg, postgres.Options{Logger: o.log})
		if err != nil {
			return nil, fmt.Errorf("opening the PostgreSQL store %s: %w", redactDSN(sp.arg), err)
		}
		return st, nil
	}
	return memory.New(), nil
}

// closeStore closes a store that holds resources.
func closeStore(st store.Store) error {
	if c, ok := st.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}
