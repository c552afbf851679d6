package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
	"github.com/goa2a/a2a/store/postgres"
	"github.com/goa2a/a2a/store/sqlite"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// storeSpec is a parsed --store setting.
type storeSpec struct {
	kind string // "memory", "sqlite" or "postgres"
	arg  string // the SQLite file (empty: under the data directory) or the PostgreSQL DSN
	// inDataDir: the SQLite file is the default one, in the data
	// directory, which is created when missing.
	inDataDir bool

	// PostgreSQL: the schema that holds the tables (empty: the
	// connection's current one, known once open), and what chose it, one
	// of the schemaBy constants (see resolve).
	schema, schemaBy string
	// note is what open found worth telling at start (the banner's note
	// line), such as tasks left in the schema an older release used.
	note string
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

// resolve returns sp with the SQLite file or the PostgreSQL schema chosen,
// so that two servers of different agents never share their tasks by
// default, and servers of one agent (its replicas) do:
//
//   - SQLite: when --store names no file, NAME.db in the data directory,
//     NAME being the agent's (fileName);
//   - PostgreSQL: --store-schema if given (sp.schema is already set), else
//     the DSN's search_path (its first entry, or the connection's current
//     schema when that is $user), else a2a_NAME (agentSchema).
func (sp storeSpec) resolve(dataDir, agent string) storeSpec {
	switch {
	case sp.kind == storeSQLite && sp.arg == "":
		sp.arg, sp.inDataDir = filepath.Join(dataDir, fileName(agent)+".db"), true
	case sp.kind == storePostgres && sp.schemaBy == "":
		if schema, ok := dsnSchema(sp.arg); ok {
			sp.schema, sp.schemaBy = schema, schemaBySearchPath
		} else {
			sp.schema, sp.schemaBy = agentSchema(agent), schemaByAgent
		}
	}
	return sp
}

// What chose the PostgreSQL schema; describe shows it.
const (
	schemaByFlag       = "--store-schema"
	schemaBySearchPath = "the DSN's search_path"
	schemaByAgent      = "named after the agent"
)

// maxSchema is the longest schema name the PostgreSQL store takes: its
// notification channel, postgres.NotifyChannel, a dot and the schema,
// must fit in a PostgreSQL identifier (NAMEDATALEN - 1 = 63 bytes).
const maxSchema = 63 - len(postgres.NotifyChannel) - 1

// agentSchema makes the default PostgreSQL schema of an agent's name:
// "a2a_" and the name's lower-case ASCII letters and digits, each run of
// other characters one underscore, such as a2a_test_runner; an identifier
// that needs no quoting in SQL. A name that leaves nothing, or too long
// a result, gets 8 hex digits of the name's SHA-256 instead of (or at the
// end of) what is cut, so that such agents do not share a schema.
func agentSchema(name string) string {
	const prefix = "a2a_"
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range name {
		switch {
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + 'a' - 'A')
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	s := strings.TrimRight(b.String(), "_")
	sum := sha256.Sum256([]byte(name))
	tag := hex.EncodeToString(sum[:4])
	switch {
	case len(s) <= len(prefix):
		return prefix + "agent_" + tag
	case len(s) > maxSchema:
		return strings.TrimRight(s[:maxSchema-len(tag)-1], "_") + "_" + tag
	}
	return s
}

// checkSchema refuses a --store-schema that PostgreSQL could not hold.
// The name is taken as written: it is quoted in every statement, so
// case, spaces and dots are kept.
func checkSchema(s string) error {
	switch {
	case s == "":
		return errors.New("--store-schema must not be empty")
	case len(s) > maxSchema:
		return fmt.Errorf("--store-schema %q is %d bytes long; at most %d fit (the store's notification channel is named %s.SCHEMA)", s, len(s), maxSchema, postgres.NotifyChannel)
	case strings.ContainsRune(s, 0):
		return errors.New("--store-schema must not hold a NUL byte")
	case strings.HasPrefix(s, "pg_"):
		return fmt.Errorf("--store-schema %q: names beginning with pg_ are reserved by PostgreSQL", s)
	}
	return nil
}

// dsnSchema returns the schema the DSN chooses with search_path: its
// first entry, unquoted as PostgreSQL does (a bare name is folded to
// lower case), or "" (the connection's current schema, the first of the
// search_path that exists) when that is $user, or when the search_path is
// set in the options parameter (or PGOPTIONS). ok is false when the DSN
// sets no search_path, or does not parse (open then says why).
func dsnSchema(dsn string) (schema string, ok bool) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return "", false
	}
	if sp, set := cfg.RuntimeParams["search_path"]; set {
		first := firstSearchPath(sp)
		if first == "$user" {
			first = ""
		}
		return first, true
	}
	if strings.Contains(cfg.RuntimeParams["options"], "search_path") {
		return "", true
	}
	return "", false
}

// firstSearchPath returns the first entry of a search_path value: a
// double-quoted identifier as written (with "" for a quote), or a bare one
// in lower case; "$user" as such.
func firstSearchPath(v string) string {
	v = strings.TrimLeft(v, " \t")
	if strings.HasPrefix(v, `"`) {
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			if v[i] == '"' {
				if i+1 < len(v) && v[i+1] == '"' {
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			b.WriteByte(v[i])
		}
		return b.String()
	}
	first, _, _ := strings.Cut(v, ",")
	return strings.ToLower(strings.TrimRight(first, " \t"))
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
		where := "PostgreSQL " + redactDSN(sp.arg)
		if sp.schema == "" {
			return where + ", the connection's current schema (" + sp.schemaBy + ")"
		}
		return fmt.Sprintf("%s, schema %s (%s)", where, pgx.Identifier{sp.schema}.Sanitize(), sp.schemaBy)
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
	durability string        // "process" or "power"
	replica    string        // the name of this process among those sharing the store
	lease      time.Duration // see lease.Runner; 0 for the default
	log        *slog.Logger
}

// openStore opens the store sp names; the caller closes it (closeStore).
func openStore(ctx context.Context, sp storeSpec, o storeOptions) (store.Store, error) {
	return sp.open(ctx, o)
}

// open opens the store sp names, and records in sp what it found: the
// PostgreSQL schema in use, and a note for the banner. The caller closes
// the store (closeStore).
func (sp *storeSpec) open(ctx context.Context, o storeOptions) (store.Store, error) {
	switch sp.kind {
	case storeSQLite:
		path := sp.arg
		if sp.inDataDir {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				if at := existingAncestor(filepath.Dir(path)); denied(err) && at != "" {
					return nil, fmt.Errorf("not writable: %s (%s): cannot create the data directory %s in it; give --data-dir a directory this user may write",
						at, reason(err), filepath.Dir(path))
				}
				return nil, fmt.Errorf("creating the data directory: %w", err)
			}
		}
		if err := checkWritableDir(path, sp.inDataDir); err != nil {
			return nil, err
		}
		d := sqlite.ProcessCrash
		if o.durability == "power" {
			d = sqlite.PowerLoss
		}
		st, err := sqlite.Open(ctx, path, sqlite.Options{Durability: d, Replica: o.replica, LeaseTTL: o.lease, Logger: o.log})
		if err != nil {
			return nil, fmt.Errorf("opening the SQLite store %s: %w", path, err)
		}
		return st, nil
	case storePostgres:
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		st, err := postgres.Open(ctx, sp.arg, postgres.Options{Schema: sp.schema, Replica: o.replica, LeaseTTL: o.lease, Logger: o.log})
		if err != nil {
			return nil, fmt.Errorf("opening the PostgreSQL store %s: %w%s", redactDSN(sp.arg), err, sp.openHint(ctx, err))
		}
		sp.schema = st.Schema()
		if sp.schemaBy == schemaByAgent {
			sp.note = sp.olderSchemaNote(ctx)
			if sp.note != "" && o.log != nil {
				o.log.Warn("tasks left in the schema of an older release", "note", sp.note)
			}
		}
		return st, nil
	}
	return memory.New(), nil
}

// checkWritableDir makes sure that the directory of the SQLite file at
// path takes new files, as the store's -wal and -shm files (and the file
// itself, when new) need: else SQLite fails with "unable to open database
// file (14)" or "attempt to write a readonly database", naming neither the
// path nor the cause. It creates and removes a file there, which answers
// for root (whom permission bits do not stop), immutable directories and
// read-only file systems alike. A directory that does not exist is left
// to sqlite.Open, which says so.
func checkWritableDir(path string, inDataDir bool) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil
	}
	f, err := os.CreateTemp(dir, ".a2a-write-check-*")
	if err != nil {
		fix := "give --store sqlite:PATH in a directory this user may write"
		if inDataDir {
			fix = "give --data-dir a directory this user may write"
		}
		return fmt.Errorf("not writable: %s (%s): the SQLite store keeps %s and its -wal and -shm files there; %s",
			dir, reason(err), filepath.Base(path), fix)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// existingAncestor is the nearest directory of dir, or dir itself, that
// exists: where creating dir failed; "" if none does.
func existingAncestor(dir string) string {
	for {
		if fi, err := os.Stat(dir); err == nil {
			if fi.IsDir() {
				return dir
			}
			return ""
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// denied reports whether err is a refusal to write: permissions, an
// immutable file or a read-only file system.
func denied(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}

// reason is the system's word for err, without the path it names.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// closeStore closes a store that holds resources.
func closeStore(st store.Store) error {
	if c, ok := st.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// sideConn opens a connection of the DSN's own, beside the store's pool,
// for the questions open asks about the database. It drops pgxpool's
// parameters (pool_max_conns, ...) as the store's pool does, and waits at
// most 10 s for the server when the DSN sets no connect_timeout.
func sideConn(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	return pgx.ConnectConfig(ctx, cfg.ConnConfig)
}

// insufficientPrivilege is PostgreSQL's SQLSTATE 42501.
const insufficientPrivilege = "42501"

// openHint explains, on a line of its own, a failure to open the
// PostgreSQL store that a setting or a grant fixes: a role without the
// CREATE privilege that making the schema or its tables needs, or a
// search_path none of whose schemas exists. It asks the database which
// (one more connection, on this failure only), and returns "" for any
// other failure, or when it cannot tell.
func (sp *storeSpec) openHint(ctx context.Context, err error) string {
	var pgErr *pgconn.PgError
	var connErr *pgconn.ConnectError
	switch {
	case errors.As(err, &connErr):
		return "" // the DSN, the server or the password: the error says which
	case errors.As(err, &pgErr) && pgErr.Code == insufficientPrivilege:
	case pgErr == nil && sp.schema == "":
		// Perhaps no schema of the search_path exists.
	default:
		return ""
	}
	conn, cerr := sideConn(ctx, sp.arg)
	if cerr != nil {
		return ""
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var (
		role, db                                        string
		name                                            *string
		dbCreate, exists, usage, schemaCreate, migrated bool
	)
	if qerr := conn.QueryRow(ctx, `SELECT current_user, current_database(), s.name,
		has_database_privilege(current_database(), 'CREATE'), n.oid IS NOT NULL,
		coalesce(has_schema_privilege(n.oid, 'USAGE'), false), coalesce(has_schema_privilege(n.oid, 'CREATE'), false),
		EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.relnamespace = n.oid AND c.relname = 'schema_migrations')
		FROM (SELECT coalesce(nullif($1::text, ''), current_schema()) AS name) s
		LEFT JOIN pg_catalog.pg_namespace n ON n.nspname = s.name`, sp.schema).
		Scan(&role, &db, &name, &dbCreate, &exists, &usage, &schemaCreate, &migrated); qerr != nil {
		return ""
	}
	ident := func(s string) string { return pgx.Identifier{s}.Sanitize() }
	if name == nil {
		return fmt.Sprintf("\n  no schema of the search_path exists in database %s: create one, or pass --store-schema NAME to have one made", ident(db))
	}
	schema, grantTables := ident(*name), fmt.Sprintf("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %s TO %s", ident(*name), ident(role))
	switch {
	case !exists && !dbCreate:
		return fmt.Sprintf("\n  role %s has no CREATE privilege on database %s, which creating schema %s needs. "+
			"Pass --store-schema NAME to use a schema the role may create tables in, have an administrator create this one for it "+
			"(CREATE SCHEMA %s AUTHORIZATION %s), or grant the privilege (GRANT CREATE ON DATABASE %s TO %s)",
			ident(role), ident(db), schema, schema, ident(role), ident(db), ident(role))
	case exists && !migrated && (!usage || !schemaCreate):
		lacks, grant, noun := "CREATE", "CREATE", "privilege"
		switch {
		case !usage && schemaCreate:
			lacks, grant = "USAGE", "USAGE"
		case !usage:
			lacks, grant, noun = "USAGE and CREATE", "USAGE, CREATE", "privileges"
		}
		other := "a schema the role may create tables in"
		if dbCreate {
			other = "a new schema (the role may create schemas) or one it may create tables in"
		}
		return fmt.Sprintf("\n  role %s has no %s %s on schema %s, which creating the store's tables needs. "+
			"Pass --store-schema NAME to use %s, or grant the %s (GRANT %s ON SCHEMA %s TO %s)",
			ident(role), lacks, noun, schema, other, noun, grant, schema, ident(role))
	case exists && !usage:
		return fmt.Sprintf("\n  role %s has no USAGE privilege on schema %s, which the store there needs. "+
			"Pass --store-schema NAME to use a schema of the role's own, or grant the privileges (GRANT USAGE ON SCHEMA %s TO %s; %s)",
			ident(role), schema, schema, ident(role), grantTables)
	}
	return fmt.Sprintf("\n  role %s lacks a privilege on the store's tables in schema %s, made by another role: "+
		"grant it (%s), or pass --store-schema NAME to use a schema of the role's own",
		ident(role), schema, grantTables)
}

// olderSchemaNote looks, beside a store opened in its agent's default
// schema, for the tasks that a2a serve kept in the connection's current
// schema (usually public) before each agent had a schema of its own:
// when that schema holds the store's tables with tasks and this one
// holds none, the note says how to go on serving them. It costs a
// connection and two queries at start; any failure is no note.
func (sp *storeSpec) olderSchemaNote(ctx context.Context) string {
	conn, err := sideConn(ctx, sp.arg)
	if err != nil {
		return ""
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var cur *string
	var isStore bool
	if err := conn.QueryRow(ctx, `SELECT current_schema(),
		to_regclass(format('%I.tasks', current_schema())) IS NOT NULL AND
		to_regclass(format('%I.schema_migrations', current_schema())) IS NOT NULL`).Scan(&cur, &isStore); err != nil ||
		cur == nil || *cur == sp.schema || !isStore {
		return ""
	}
	const most = 1000
	var n int
	var mine bool
	if err := conn.QueryRow(ctx, "SELECT (SELECT count(*) FROM (SELECT FROM "+pgx.Identifier{*cur, "tasks"}.Sanitize()+" LIMIT $1) t), "+
		"EXISTS (SELECT FROM "+pgx.Identifier{sp.schema, "tasks"}.Sanitize()+")", most).Scan(&n, &mine); err != nil || n == 0 || mine {
		return ""
	}
	count := plural(n, "task")
	if n == most {
		count = fmt.Sprintf("%d or more tasks", most)
	}
	return fmt.Sprintf("schema %s holds %s of an older a2a serve, which kept every agent's tasks there; this agent's schema %s holds none. "+
		"To go on serving them, pass --store-schema %s (see docs/serve.md)",
		pgx.Identifier{*cur}.Sanitize(), count, pgx.Identifier{sp.schema}.Sanitize(), *cur)
}
