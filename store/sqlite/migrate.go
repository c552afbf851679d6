package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"time"

	"github.com/goa2a/a2a/store/internal/migrations"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// SchemaVersion is the schema version this package creates and expects:
// the number of embedded migrations. Open refuses a database whose schema
// is newer.
const SchemaVersion = 5

// loadMigrations returns the embedded migrations in order.
func loadMigrations() ([]migrations.Migration, error) {
	ms, err := migrations.Load(migrationFiles, SchemaVersion)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	return ms, nil
}

// migrate brings the database of db, the writer pool, up to SchemaVersion.
// Each migration runs in its own BEGIN IMMEDIATE transaction, which waits
// (up to the busy timeout) for any other process migrating the same file,
// and reads the version again inside it, so that processes starting
// together apply each migration once.
func migrate(ctx context.Context, db *sql.DB, file string) error {
	return migrateTo(ctx, db, file, SchemaVersion)
}

// migrateTo brings the database up to version target (at most
// SchemaVersion), as migrate does; tests use it to make a database of an
// older schema.
func migrateTo(ctx context.Context, db *sql.DB, file string, target int) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	if target < 1 || target > len(ms) {
		return fmt.Errorf("sqlite: no schema version %d to migrate %s to", target, file)
	}
	for {
		v, err := migrateStep(ctx, db, file, ms, target)
		if err != nil {
			return err
		}
		if v >= target {
			return nil
		}
	}
}

// migrateStep applies the next migration, if the database is below version
// target, and returns the version the database is at afterwards.
func migrateStep(ctx context.Context, db *sql.DB, file string, ms []migrations.Migration, target int) (int, error) {
	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the writer DSN sets _txlock
	if err != nil {
		return 0, fmt.Errorf("sqlite: migrating %s: %w", file, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER NOT NULL PRIMARY KEY,
		applied_at INTEGER NOT NULL -- unix milliseconds
	) STRICT`); err != nil {
		return 0, fmt.Errorf("sqlite: migrating %s: creating schema_migrations: %w", file, err)
	}
	var v int
	if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&v); err != nil {
		return 0, fmt.Errorf("sqlite: migrating %s: reading the schema version: %w", file, err)
	}
	if v > len(ms) {
		return 0, fmt.Errorf("sqlite: %s has schema version %d, newer than version %d that this build knows; upgrade the program or use another file", file, v, SchemaVersion)
	}
	if v >= target {
		return v, nil // nothing to do; the rollback ends the transaction
	}
	m := ms[v]
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return 0, fmt.Errorf("sqlite: applying migration %s to %s: %w", m.Name, file, err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", m.Version, time.Now().UnixMilli()); err != nil {
		return 0, fmt.Errorf("sqlite: recording migration %s in %s: %w", m.Name, file, err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("sqlite: migrating %s: %w", file, err)
	}
	return m.Version, nil
}
