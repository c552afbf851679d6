package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/goa2a/a2a/store/internal/migrations"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockKey is the pg_advisory_xact_lock key that serializes
// migrations, so that processes starting together do not apply one twice.
// It is the same for every schema: migrations are rare and short.
const migrationLockKey int64 = 0x6132615f6d696772 // "a2a_migr"

// loadMigrations returns the embedded migrations in order.
func loadMigrations() ([]migrations.Migration, error) {
	ms, err := migrations.Load(migrationFiles, SchemaVersion)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return ms, nil
}

// SchemaVersion is the schema version this package creates and expects:
// the number of embedded migrations. Open refuses a database whose schema
// is newer.
const SchemaVersion = 5

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
	ms, err := loadMigrations()
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
func migrateStep(ctx context.Context, pool *pgxpool.Pool, schema string, ms []migrations.Migration, version int) (int, error) {
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
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return 0, fmt.Errorf("postgres: applying migration %s to schema %q: %w", m.Name, schema, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", m.Version); err != nil {
			return 0, fmt.Errorf("postgres: recording migration %s in schema %q: %w", m.Name, schema, err)
		}
		v = m.Version
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, fmt.Errorf("postgres: migrating schema %q: %w", schema, err)
	}
	return v, nil
}
