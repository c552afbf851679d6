package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/internal/lease"
)

// NotifyChannel starts the name of the channel every Append notifies: it
// is NotifyChannel, a dot and the store's schema (given in Options.Schema
// or found on the search_path), for example "a2a_task_events.public";
// [Store.Channel] returns it. Stores in different schemas of one database
// never hear each other.
const NotifyChannel = "a2a_task_events"

// maxIdentifier is the longest PostgreSQL identifier (NAMEDATALEN - 1),
// which bounds schema and channel names.
const maxIdentifier = 63

// defaultConnectTimeout bounds each connection attempt that Open makes
// when the DSN sets no connect_timeout.
const defaultConnectTimeout = 10 * time.Second

// Options configure a Store. The zero value is usable.
type Options struct {
	// Schema is the PostgreSQL schema that holds the store's tables; it is
	// created if missing. Several stores (test runs, deployments) can share
	// a database under different schemas without seeing each other's
	// tasks or notifications (the channel is named after the schema,
	// whichever way it was chosen). Empty means the connection's current schema
	// (the first existing one of its search_path, usually "public"), looked
	// up once when the store opens.
	Schema string
	// LeaseTTL is how long a heartbeat stays valid (see Orphans); the
	// store renews its own every LeaseTTL/3, and judges other processes'
	// by it, so every process sharing a schema should use the same value.
	// Zero means lease.DefaultTTL (30 s).
	LeaseTTL time.Duration
	// Replica names this process among those that share the schema: in
	// the runners table, and in the status message of the tasks it
	// leaves unfinished when it stops, which another replica fails or
	// resumes. Empty means the host name and the process id.
	Replica string
	// Logger receives the failures of background work (heartbeats). Nil
	// discards them.
	Logger *slog.Logger
}

// Store is a [store.Store], [store.Maintainer] and [store.Secrets] on
// PostgreSQL. It is safe for concurrent use; call Close when done.
type Store struct {
	pool     *pgxpool.Pool
	ownsPool bool
	schema   string
	channel  string
	q        queries
	self     lease.Runner
	ttl      time.Duration
	log      *slog.Logger

	stop      context.CancelFunc // stops the heartbeat
	done      chan struct{}      // closed when the heartbeat has stopped
	closeOnce sync.Once
	closeErr  error

	secretsMu sync.Mutex
	secrets   map[string][]byte // secrets never change once made

	// Group commit (writer.go).
	queue   *appendQueue
	writers sync.WaitGroup
	sizes   sizeCache
	// Counters: transactions committed by the writers, appends they
	// committed, and batches whose appends were tried again alone.
	commits, appended, retries atomic.Int64

	// The change feed (listen.go).
	feed       store.Followers
	listenOnce sync.Once
	stopListen context.CancelFunc
	listenDone chan struct{}
	listening  atomic.Bool
}

var (
	_ store.Store      = (*Store)(nil)
	_ store.Maintainer = (*Store)(nil)
	_ store.Secrets    = (*Store)(nil)
	_ store.PushQueue  = (*Store)(nil)
	_ store.Feed       = (*Store)(nil)
)

// Open connects to the database named by dsn (a libpq keyword/value string
// or a postgres:// URL, as [pgxpool.ParseConfig] accepts), creates or
// migrates the schema, and registers the store as a runner. The store owns
// its connection pool and closes it in Close. A DSN without
// connect_timeout gets one of 10 s. The pool has pgxpool's default size,
// max(4, runtime.NumCPU()), unless the DSN sets pool_max_conns; Appends
// are committed in groups by two writer goroutines, a connection each
// while they commit, and the other connections serve reads. Each
// connection is a server process: mind the server's max_connections when
// many stores share it.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: parsing the DSN: %w", err)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: creating the connection pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connecting to database %q at %s:%d: %w", cfg.ConnConfig.Database, cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	s, err := open(ctx, pool, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownsPool = true
	return s, nil
}

// New is like Open on a pool the caller made and keeps: Close leaves it
// open. The store qualifies every table with its schema, so once the store
// is open the pool's search_path does not matter; with Options.Schema
// empty, it decides the schema when the store opens.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	if pool == nil {
		return nil, errors.New("postgres: New with a nil pool")
	}
	return open(ctx, pool, opts)
}

func open(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	schema, channel := opts.Schema, NotifyChannel
	if schema == "" {
		var cur *string
		if err := pool.QueryRow(ctx, "SELECT current_schema()").Scan(&cur); err != nil {
			return nil, fmt.Errorf("postgres: looking up the current schema: %w", err)
		}
		if cur == nil {
			return nil, errors.New("postgres: no schema of the search_path exists; set Options.Schema")
		}
		schema = *cur
	}
	channel += "." + schema
	if len(schema) > maxIdentifier || len(channel) > maxIdentifier {
		return nil, fmt.Errorf("postgres: schema name %q is too long: at most %d bytes", schema, maxIdentifier-len(NotifyChannel)-1)
	}
	if err := migrate(ctx, pool, schema); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ttl := opts.LeaseTTL
	if ttl <= 0 {
		ttl = lease.DefaultTTL
	}
	s := &Store{
		pool:    pool,
		schema:  schema,
		channel: channel,
		q:       newQueries(pgx.Identifier{schema}.Sanitize()),
		self:    lease.Self(opts.Replica),
		ttl:     ttl,
		log:     log.With("store", "postgres", "schema", schema),
		done:    make(chan struct{}),

		listenDone: make(chan struct{}),
	}
	if err := s.heartbeat(ctx); err != nil {
		return nil, err
	}
	if err := s.compact(ctx); err != nil {
		return nil, err
	}
	hctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go s.renew(hctx)
	s.startWriters()
	return s, nil
}

// Channel returns the name of the channel that Append notifies. To follow
// tasks from another connection, LISTEN to it quoted as an identifier
// (pgx.Identifier{ch}.Sanitize()). Each notification's payload has one
// line per task that a commit appended to: the task id, a colon and the
// seq of the last event appended, for example "task-1:3"; lines are
// separated by "\n" (task ids may contain colons: split each line at its
// last one). A commit whose lines exceed 7999 bytes sends several
// notifications. Notifications are sent when the Appends commit. Read
// Events to get what was appended.
func (s *Store) Channel() string { return s.channel }

// Schema returns the schema that holds the store's tables.
func (s *Store) Schema() string { return s.schema }

// Close refuses further Appends and waits for those already queued to
// commit, stops the heartbeat, removes the store's runner registration (its
// tasks become orphans for other processes at once) and closes the pool if
// Open made it. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.listenOnce.Do(func() { close(s.listenDone) }) // never followed: never will be
		if s.stopListen != nil {
			s.stopListen()
			<-s.listenDone
		}
		s.stopWriters()
		s.stop()
		<-s.done
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := s.pool.Exec(ctx, s.q.deleteRunner, s.self.ID); err != nil {
			s.closeErr = fmt.Errorf("postgres: removing runner %s: %w", s.self.ID, err)
		}
		if s.ownsPool {
			s.pool.Close()
		}
	})
	return s.closeErr
}

// Check reports whether the database answers and holds the schema version
// this package expects. It is cheap enough for a health check.
func (s *Store) Check(ctx context.Context) error {
	v, err := currentVersion(ctx, s.pool, s.schema)
	if err != nil {
		return classify(err)
	}
	if v != SchemaVersion {
		return fmt.Errorf("postgres: schema %q is at version %d, want %d", s.schema, v, SchemaVersion)
	}
	return nil
}

// queries are the store's SQL statements, with table names qualified by
// the schema.
type queries struct {
	tasks string // the qualified name of the tasks table, for List
	log   string // the qualified name of the events table, for List
	// The qualified names of the counters' tables, for List.
	counts, deltas string

	create, append, get, events                      string
	putPush, getPush, listPush, deletePush           string
	claimPush, pushState, setPushState               string
	upsertRunner, deleteRunner, runnersNow, reapDead string
	orphans, expire, getSecret, insertSecret         string
	insertDeltas, compact                            string
	getMessage, putReply, forgetMessages             string // messages.go
	lockTask                                         string
}

func newQueries(schema string) queries {
	r := strings.NewReplacer(
		"{tasks}", schema+".tasks",
		"{events}", schema+".events",
		"{push_configs}", schema+".push_configs",
		"{runners}", schema+".runners",
		"{secrets}", schema+".secrets",
		"{task_counts}", schema+".task_counts",
		"{task_count_deltas}", schema+".task_count_deltas",
		"{messages}", schema+".messages",
	)
	return queries{
		tasks:  schema + ".tasks",
		log:    schema + ".events",
		counts: schema + ".task_counts",
		deltas: schema + ".task_count_deltas",

		// Creation: the task row if its id is free anywhere, with its
		// snapshot at the last seq, then its events, its count and the
		// message ids its events carry ($12, $13, made at $14; see
		// messages.go), in one statement. It returns one row, the
		// snapshot's size, if it created the task, and none if the id
		// exists.
		create: r.Replace(`WITH t AS (
	INSERT INTO {tasks} (id, tenant, owner, context_id, state, status_ts, seq, runner, snapshot, snap_seq, snap_bytes, tail_bytes)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::bytea, $7, octet_length($9::bytea), 0)
	ON CONFLICT (id) DO NOTHING
	RETURNING id, snap_bytes
), e AS (
	INSERT INTO {events} (task_id, seq, payload)
	SELECT t.id, x.seq, x.payload FROM t CROSS JOIN unnest($10::bigint[], $11::bytea[]) AS x(seq, payload)
), d AS (
	INSERT INTO {task_count_deltas} (tenant, owner, state, delta)
	SELECT $2, $3, $5, 1 FROM t
), m AS (
	INSERT INTO {messages} (tenant, owner, id, task_id, digest, created)
	SELECT $2, $3, x.id, t.id, x.digest, $14 FROM t CROSS JOIN unnest($12::text[], $13::bytea[]) AS x(id, digest)
)
SELECT snap_bytes FROM t`),

		// Append: the task row moves from seq $4 to $8 only if it is in
		// scope and still at $4 (a concurrent writer that committed
		// first makes it match nothing), then the events and the counts
		// if the state changed. o locks the row and reads the state it
		// moves from: an UPDATE returns only the new values.
		//
		// With a snapshot ($10) the row takes it, at seq $8, and its
		// tail (the events after the snapshot) is empty. Without one
		// (NULL) the row keeps its snapshot, whose TOASTed value the
		// UPDATE does not rewrite, and the tail grows by the size of the
		// events ($13). A NULL snap_seq (a row of schema version 3) means
		// the snapshot is at seq, here $4.
		//
		// w wakes the task's idle push configs (next_attempt $14 is
		// pushcode.IdleMS, the store.PushIdle phase; $18 is
		// pushcode.DueSince now, due at once). It updates every config of the task, not only
		// the idle ones: the statement reads push_configs as of its
		// start, and a config that a worker made idle after that (or is
		// making idle, holding its row) would not match a test of
		// next_attempt, though the worker, reading the task before this
		// commits, finds nothing new. An UPDATE of a row that changed
		// meanwhile waits for the change to commit and evaluates its SET
		// on the new row, so the CASE sees such a config idle. The cost
		// is a row version per config of the task on each append (for
		// a config left as it was, a heap-only one when its page has
		// room: no indexed value changes); a task without configs pays
		// one probe of the primary key.
		//
		// m records the message ids the events carry ($15, $16, made at
		// $17; see messages.go), once t has moved the row.
		//
		// The statement always returns one row: the new snapshot and
		// tail sizes if it appended, and otherwise NULLs and the seq the
		// task is at, NULL if it is not in scope; that lookup runs only
		// for an append that failed.
		append: r.Replace(`WITH o AS (
	SELECT id, state FROM {tasks}
	WHERE id = $1 AND tenant = $2 AND owner = $3 AND seq = $4
	FOR UPDATE
), t AS (
	UPDATE {tasks} AS u SET context_id = $5, state = $6, status_ts = $7, seq = $8, runner = $9,
		snapshot = coalesce($10::bytea, u.snapshot),
		snap_seq = CASE WHEN $10::bytea IS NULL THEN coalesce(u.snap_seq, $4) ELSE $8 END,
		snap_bytes = CASE WHEN $10::bytea IS NULL THEN u.snap_bytes ELSE octet_length($10::bytea) END,
		tail_bytes = CASE WHEN $10::bytea IS NULL THEN u.tail_bytes + $13 ELSE 0 END
	FROM o WHERE u.id = o.id AND u.seq = $4
	RETURNING u.id, o.state AS old_state, u.snap_bytes, u.tail_bytes
), e AS (
	INSERT INTO {events} (task_id, seq, payload)
	SELECT t.id, x.seq, x.payload FROM t CROSS JOIN unnest($11::bigint[], $12::bytea[]) AS x(seq, payload)
), d AS (
	INSERT INTO {task_count_deltas} (tenant, owner, state, delta)
	SELECT $2, $3, x.state, x.delta FROM t
	CROSS JOIN LATERAL (VALUES (t.old_state, -1), ($6, 1)) AS x(state, delta)
	WHERE t.old_state <> $6
), w AS (
	UPDATE {push_configs} SET next_attempt = CASE WHEN next_attempt = $14 THEN $18::bigint ELSE next_attempt END
	WHERE task_id IN (SELECT id FROM t)
), m AS (
	INSERT INTO {messages} (tenant, owner, id, task_id, digest, created)
	SELECT $2, $3, x.id, t.id, x.digest, $17 FROM t CROSS JOIN unnest($15::text[], $16::bytea[]) AS x(id, digest)
)
SELECT (SELECT snap_bytes FROM t), (SELECT tail_bytes FROM t),
	CASE WHEN NOT EXISTS (SELECT 1 FROM t) THEN
		(SELECT seq FROM {tasks} WHERE id = $1 AND tenant = $2 AND owner = $3)
	END`),

		// Update's lock of the task row: Appends to the task, from any
		// process, wait until the Update's transaction ends.
		lockTask: r.Replace(`SELECT seq FROM {tasks} WHERE id = $1 AND tenant = $2 AND owner = $3 FOR UPDATE`),

		// The snapshot, the last seq, the seq of the snapshot and the
		// payloads of the events after it, in order: the task is their
		// fold. One statement, and so one snapshot of the database.
		get: r.Replace(`SELECT t.snapshot, t.seq, coalesce(t.snap_seq, t.seq), ARRAY(
		SELECT e.payload FROM {events} e
		WHERE e.task_id = t.id AND e.seq > coalesce(t.snap_seq, t.seq) AND e.seq <= t.seq
		ORDER BY e.seq)
	FROM {tasks} t WHERE t.id = $1 AND t.tenant = $2 AND t.owner = $3`),
		// One row with a NULL seq when the task exists but has no events
		// after $4; no row when it does not exist in scope.
		events: r.Replace(`SELECT e.seq, e.payload FROM {tasks} t
	LEFT JOIN {events} e ON e.task_id = t.id AND e.seq > $4
	WHERE t.id = $1 AND t.tenant = $2 AND t.owner = $3
	ORDER BY e.seq`),

		// FOR KEY SHARE holds off a concurrent Expire of the task until the
		// config is in (and then deletes it too), or makes the insert see
		// the task gone. A new config starts at its task's last seq; a
		// replaced one keeps its delivered and starts afresh otherwise.
		// $6: due at once (pushcode.DueSince).
		putPush: r.Replace(`INSERT INTO {push_configs} (task_id, id, tenant, owner, config, delivered, next_attempt)
	SELECT t.id, $4, t.tenant, t.owner, $5, t.seq, $6 FROM {tasks} t
	WHERE t.id = $1 AND t.tenant = $2 AND t.owner = $3
	FOR KEY SHARE
	ON CONFLICT (task_id, id) DO UPDATE SET config = EXCLUDED.config,
		attempts = 0, next_attempt = EXCLUDED.next_attempt, failing = false, last_error = ''`),
		getPush: r.Replace(`SELECT config FROM {push_configs} WHERE task_id = $1 AND tenant = $2 AND owner = $3 AND id = $4`),
		// One row with a NULL config when the task has none to return.
		listPush: r.Replace(`SELECT p.config FROM {tasks} t
	LEFT JOIN LATERAL (
		SELECT id, config FROM {push_configs}
		WHERE task_id = t.id AND tenant = t.tenant AND owner = t.owner AND id > $4
		ORDER BY id LIMIT $5
	) p ON true
	WHERE t.id = $1 AND t.tenant = $2 AND t.owner = $3
	ORDER BY p.id`),
		deletePush: r.Replace(`WITH t AS (
	SELECT id FROM {tasks} WHERE id = $1 AND tenant = $2 AND owner = $3
), d AS (
	DELETE FROM {push_configs} WHERE task_id IN (SELECT id FROM t) AND id = $4
)
SELECT count(*) FROM t`),

		// Heartbeats use the database's clock, so that hosts whose
		// clocks disagree still agree on who is alive.
		upsertRunner: r.Replace(`INSERT INTO {runners} (id, host, pid, heartbeat)
	VALUES ($1, $2, $3, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
	ON CONFLICT (id) DO UPDATE SET heartbeat = EXCLUDED.heartbeat`),
		deleteRunner: r.Replace(`DELETE FROM {runners} WHERE id = $1`),
		runnersNow: r.Replace(`SELECT id, host, pid, heartbeat, (extract(epoch FROM clock_timestamp()) * 1000)::bigint
	FROM {runners}`),
		// A runner that renewed its heartbeat since it was judged dead
		// stays.
		reapDead: r.Replace(`DELETE FROM {runners} r USING unnest($1::text[], $2::bigint[]) AS d(id, heartbeat)
	WHERE r.id = d.id AND r.heartbeat = d.heartbeat`),
		orphans: r.Replace(`SELECT tenant, owner, id, seq, runner FROM {tasks} t
	WHERE state = ANY($1) AND runner <> $2
	AND NOT EXISTS (SELECT 1 FROM {runners} r WHERE r.id = t.runner)
	ORDER BY status_ts, id
	LIMIT $3`),
		// Tasks being appended to are skipped rather than waited for:
		// they are about to change. The counts go down by the rows
		// deleted, as they were when deleted.
		expire: r.Replace(`WITH v AS (
	DELETE FROM {tasks} WHERE id IN (
		SELECT id FROM {tasks} WHERE state = ANY($1) AND status_ts < $2
		ORDER BY status_ts, id
		LIMIT $3
		FOR UPDATE SKIP LOCKED
	)
	RETURNING id, tenant, owner, state
), e AS (
	DELETE FROM {events} WHERE task_id IN (SELECT id FROM v)
), p AS (
	DELETE FROM {push_configs} WHERE task_id IN (SELECT id FROM v)
), d AS (
	INSERT INTO {task_count_deltas} (tenant, owner, state, delta)
	SELECT tenant, owner, state, -count(*) FROM v GROUP BY tenant, owner, state
)
SELECT count(*) FROM v`),
		// The configs with work, due first ($1 is now, unix ms), leased
		// until $2. SKIP LOCKED passes over the configs that another
		// claim, in this process or another, is leasing at this moment;
		// a config it leased and committed meanwhile is read again once
		// locked, and dropped, as it is no longer due. The walk follows
		// push_configs_due and looks each task up by id. The configs of
		// the scopes in $4 (tenants) and $5 (owners) are left out: NOT IN
		// is a filter on the walk (a hashed subplan), where NOT EXISTS
		// would be planned as an anti join of the whole table.
		claimPush: r.Replace(`WITH c AS (
	SELECT p.task_id, p.id, p.next_attempt, t.seq
	FROM {push_configs} p JOIN {tasks} t ON t.id = p.task_id
	WHERE NOT p.failing AND p.next_attempt <= $1 AND p.delivered < t.seq
	AND (p.tenant, p.owner) NOT IN (SELECT * FROM unnest($4::text[], $5::text[]))
	ORDER BY p.next_attempt, p.task_id, p.id
	LIMIT $3
	FOR UPDATE OF p SKIP LOCKED
)
UPDATE {push_configs} p SET next_attempt = $2
FROM c WHERE p.task_id = c.task_id AND p.id = c.id
RETURNING p.task_id, p.id, p.tenant, p.owner, p.config, p.delivered, p.attempts, p.last_error, c.seq, c.next_attempt`),
		pushState: r.Replace(`SELECT delivered, attempts, next_attempt, failing, last_error FROM {push_configs}
	WHERE task_id = $1 AND tenant = $2 AND owner = $3 AND id = $4`),
		// The state moves on only from the delivered its caller read ($5).
		// The statement returns whether it did, and the delivered the
		// config had in the statement's snapshot (NULL if it had none),
		// to tell a conflict from a missing config.
		setPushState: r.Replace(`WITH u AS (
	UPDATE {push_configs} SET delivered = $6, attempts = $7, next_attempt = $8, failing = $9, last_error = $10
	WHERE task_id = $1 AND tenant = $2 AND owner = $3 AND id = $4 AND delivered = $5
	RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM u), (SELECT delivered FROM {push_configs}
	WHERE task_id = $1 AND tenant = $2 AND owner = $3 AND id = $4)`),

		getSecret:    r.Replace(`SELECT value FROM {secrets} WHERE name = $1`),
		insertSecret: r.Replace(`INSERT INTO {secrets} (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`),

		// Import's counts: one row per state.
		insertDeltas: r.Replace(`INSERT INTO {task_count_deltas} (tenant, owner, state, delta)
	SELECT $1, $2, x.state, x.delta FROM unnest($3::integer[], $4::bigint[]) AS x(state, delta)`),
		getMessage:     r.Replace(getMessageSQL),
		putReply:       r.Replace(putReplySQL),
		forgetMessages: r.Replace(forgetMessagesSQL),

		// Compaction moves every delta into task_counts, in one
		// statement: a reader sees the deltas either before or after.
		// Of the stores sharing the schema, one compacts at a time (the
		// others skip their turn): two would lock the same task_counts
		// rows, possibly in opposite orders.
		compact: r.Replace(`WITH l AS (
	SELECT pg_try_advisory_xact_lock($1, hashtext($2)) AS locked
), d AS (
	DELETE FROM {task_count_deltas} WHERE (SELECT locked FROM l)
	RETURNING tenant, owner, state, delta
)
INSERT INTO {task_counts} AS c (tenant, owner, state, n)
SELECT tenant, owner, state, sum(delta) FROM d GROUP BY tenant, owner, state
ON CONFLICT (tenant, owner, state) DO UPDATE SET n = c.n + EXCLUDED.n`),
	}
}

// Replica returns the name of this process among the replicas sharing the
// schema: Options.Replica, or its default, HOST:PID.
func (s *Store) Replica() string { return lease.Name(s.self.ID) }
