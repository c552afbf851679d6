package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockKey is the pg_advisory_xact_lock key that serializes
// migrations, so that processes starting together do not apply one twice.
// It is the same for every schema: migrations are rare and short.
const migrationLockKey int64 = 0x6132615f6d696772 // "a2a_migr"

// migration is one embedded SQL file.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in order. Their versions must
// be 1, 2, 3, ...: a gap is a packaging mistake.
func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("postgres: reading migrations: %w", err)
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("postgres: migration %s: name must start with a version number", e.Name())
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("postgres: reading migration %s: %w", e.Name(), err)
		}
		if v != len(ms)+1 {
			return nil, fmt.Errorf("postgres: migration %s has version %d, want %d", e.Name(), v, len(ms)+1)
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	if len(ms) != SchemaVersion {
		return nil, fmt.Errorf("postgres: %d migrations embedded, but SchemaVersion is %d", len(ms), SchemaVersion)
	}
	return ms, nil
}

// SchemaVersion is the schema version this package creates and expects:
// the number of embedded migrations. Open refuses a database whose schema
// is newer.
const SchemaVersion = 2

// currentVersion returns the version recorded in the schema, 0 if the
// schema or its schema_migrations table does not exist yet.
func currentVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, schema string) (int, error) {
	var v int
	err := q.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+pgx.Identifier{schema, "schema_migrations"}.Sanitize()).Scan(&v)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000") { // undefined_table, invalid_schema_name
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: reading the schema version: %w", err)
	}
	return v, nil
}

// errNewerSchema reports a database migrated by a newer release.
func errNewerSchema(schema string, found int) error {
	return fmt.Errorf("postgres: schema %q is at version %d, newer than version %d that this build knows; upgrade the program or use another schema", schema, found, SchemaVersion)
}

// migrate brings schema up to SchemaVersion. Each migration runs in its own
// transaction under an advisory lock, after checking the version again, so
// that several processes may start at once.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	return migrateTo(ctx, pool, schema, SchemaVersion)
}

// migrateTo brings schema up to version, at most SchemaVersion (tests stop
// at an older one to check the migrations that follow).
func migrateTo(ctx context.Context, pool *pgxpool.Pool, schema string, version int) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	if version < 1 || version > len(ms) {
		return fmt.Errorf("postgres: no schema version %d: this build knows 1 to %d", version, len(ms))
	}
	// The common case, an up-to-date schema, takes no lock.
	v, err := currentVersion(ctx, pool, schema)
	if err != nil {
		return err
	}
	if v > len(ms) {
		return errNewerSchema(schema, v)
	}
	for v < version {
		if v, err = migrateStep(ctx, pool, schema, ms, version); err != nil {
			return err
		}
	}
	return nil
}

// migrateStep applies the next migration, if the schema is not yet at
// version, and returns the version the schema is at afterwards.
func migrateStep(ctx context.Context, pool *pgxpool.Pool, schema string, ms []migration, version int) (int, error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("postgres: migrating schema %q: %w", schema, err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLockKey); err != nil {
		return 0, fmt.Errorf("postgres: migrating schema %q: taking the migration lock: %w", schema, err)
	}
	// CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when the
	// schema exists: look first, so that a role without it can use a
	// schema made for it.
	ident := pgx.Identifier{schema}.Sanitize()
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1)", schema).Scan(&exists); err != nil {
		return 0, fmt.Errorf("postgres: migrating schema %q: %w", schema, err)
	}
	if !exists {
		if _, err := tx.Exec(ctx, "CREATE SCHEMA "+ident); err != nil {
			return 0, fmt.Errorf("postgres: creating schema %q: %w", schema, err)
		}
	}
	if _, err := tx.Exec(ctx, "SELECT pg_catalog.set_config('search_path', $1, true)", ident); err != nil {
		return 0, fmt.Errorf("postgres: migrating schema %q: %w", schema, err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
	)`); err != nil {
		return 0, fmt.Errorf("postgres: migrating schema %q: creating schema_migrations: %w", schema, err)
	}
	v, err := currentVersion(ctx, tx, schema)
	if err != nil {
		return 0, err
	}
	if v > len(ms) {
		return 0, errNewerSchema(schema, v)
	}
	if v < version {
		m := ms[v]
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return 0, fmt.Errorf("postgres: applying migration %s to schema %q: %w", m.name, schema, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", m.version); err != nil {
			return 0, fmt.Errorf("postgres: recording migration %s in schema %q: %w", m.name, schema, err)
		}
		v = m.version
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("postgres: migrating schema %q: %w", schema, err)
	}
	return v, nil
}
