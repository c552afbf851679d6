package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	msqlite "modernc.org/sqlite" // the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/internal/lease"
)

// Durability says which failures a committed write survives.
type Durability int

const (
	// ProcessCrash, the default, survives the crash of the process (kill
	// -9, a panic) but may lose the last commits if the machine loses
	// power or the operating system crashes: the database stays
	// consistent, it only goes back in time a little. The write-ahead log
	// is synced at checkpoints, not at every commit (synchronous=NORMAL).
	ProcessCrash Durability = iota
	// PowerLoss also survives power loss: every commit waits for the
	// write-ahead log to reach the disk (synchronous=FULL). Commits cost a
	// sync each; group commit shares one among concurrent writes.
	PowerLoss
)

// String returns the name of the constant.
func (d Durability) String() string {
	switch d {
	case ProcessCrash:
		return "ProcessCrash"
	case PowerLoss:
		return "PowerLoss"
	}
	return fmt.Sprintf("Durability(%d)", int(d))
}

// synchronous returns the value of PRAGMA synchronous for d.
func (d Durability) synchronous() (string, error) {
	switch d {
	case ProcessCrash:
		return "NORMAL", nil
	case PowerLoss:
		return "FULL", nil
	}
	return "", fmt.Errorf("sqlite: unknown durability %v", d)
}

// DefaultMaxBatch is how many write requests one transaction takes at most
// when Options.MaxBatch is zero.
const DefaultMaxBatch = 256

// busyTimeout is how long a connection waits for a lock another process
// (or, at Open, another store) holds, before it fails with SQLITE_BUSY.
const busyTimeout = 10 * time.Second

// Options configure a Store. The zero value is usable.
type Options struct {
	// Durability says which failures a committed write survives. The
	// default is ProcessCrash.
	Durability Durability
	// LeaseTTL is how long the store's heartbeat stays valid for other
	// processes (see Orphans); the store renews it every LeaseTTL/3. Zero
	// means lease.DefaultTTL (30 s).
	LeaseTTL time.Duration
	// MaxBatch is the most write requests (Appends, push config changes)
	// that one transaction commits together. Zero means DefaultMaxBatch;
	// 1 turns group commit off.
	MaxBatch int
	// Replica names this process among those that open the file: in the
	// runners table, and in the status message of the tasks it leaves
	// unfinished when it stops. Empty means the host name and the
	// process id.
	Replica string
	// Logger receives the failures of background work (heartbeats). Nil
	// discards them.
	Logger *slog.Logger
}

// Stats are counters of a Store's writes since it opened.
type Stats struct {
	// Appends counts the Append calls that committed.
	Appends int64
	// Writes counts the write requests that ran in a transaction
	// (Appends, push config changes, heartbeats, maintenance), whether
	// they succeeded or failed, such as an Append that conflicted.
	Writes int64
	// Commits counts the write transactions committed. With group
	// commit, under concurrent writes, it grows slower than Writes.
	Commits int64
	// Reruns counts the batches of writes that ran a second time, each
	// write in a savepoint, because one had failed after changing rows
	// (see runRequests); a conflict or a missing task does not.
	Reruns int64
}

// Store is a [store.Store], [store.Maintainer] and [store.Secrets] in a
// SQLite file. It is safe for concurrent use; call Close when done.
type Store struct {
	path     string
	wdb      *sql.DB // one connection, used by the writer goroutine alone
	rdb      *sql.DB // read-only connections for queries
	cdb      *sql.DB // one connection, for the checkpointer (checkpoint.go)
	ws       writeStmts
	rs       readStmts
	ms       messageStmts // messages.go
	self     lease.Runner
	ttl      time.Duration
	maxBatch int
	log      *slog.Logger

	reqs       chan *request // unbuffered: waiting senders are the queue
	kick       chan struct{} // a commit for the checkpointer; buffered (1)
	closing    chan struct{} // closed when the store starts closing
	writerDone chan struct{} // closed when the writer has returned
	// batchMu is held by the writer while it runs a batch, and by the
	// checkpointer while it finishes a restart of the log (checkpoint.go).
	batchMu sync.Mutex

	stopHeartbeat context.CancelFunc
	heartbeatDone chan struct{}

	closeOnce sync.Once
	closeErr  error

	appends, writes, commits, reruns atomic.Int64

	cacheMu sync.Mutex
	cache   map[string]*sql.Stmt // reader statements built at run time

	secretsMu sync.Mutex
	secrets   map[string][]byte // secrets never change once made

	feed store.Followers // see Follow
}

// Follow implements [store.Feed]: fn hears of the Appends made through s,
// once they are committed, from the goroutine that made each. Other
// processes that open the same file are not heard: a server that shares
// one SQLite file with another process follows that one's tasks only by
// its slow poll.
func (s *Store) Follow(fn func(store.Change)) (stop func()) { return s.feed.Follow(fn) }

var (
	_ store.Store      = (*Store)(nil)
	_ store.Maintainer = (*Store)(nil)
	_ store.Secrets    = (*Store)(nil)
	_ store.PushQueue  = (*Store)(nil)
	_ store.Feed       = (*Store)(nil)
)

// Open opens the SQLite database at path, creating the file if it does not
// exist (its directory must; the new file is readable by its owner only),
// creates or migrates its schema to
// [SchemaVersion], and registers the store as a runner (see Orphans).
// Several stores, in one process or several, may open the same file at
// once; writes then take turns, waiting up to 10 s for each other.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	syncMode, err := opts.Durability.synchronous()
	if err != nil {
		return nil, err
	}
	if opts.MaxBatch < 0 {
		return nil, fmt.Errorf("sqlite: negative MaxBatch %d", opts.MaxBatch)
	}
	if opts.LeaseTTL < 0 || (opts.LeaseTTL > 0 && opts.LeaseTTL < time.Millisecond) {
		return nil, fmt.Errorf("sqlite: LeaseTTL %v: want zero (the default) or at least 1ms", opts.LeaseTTL)
	}
	s := &Store{
		path:          path,
		self:          lease.Self(opts.Replica),
		ttl:           cmp.Or(opts.LeaseTTL, lease.DefaultTTL),
		maxBatch:      cmp.Or(opts.MaxBatch, DefaultMaxBatch),
		log:           opts.Logger,
		reqs:          make(chan *request),
		kick:          make(chan struct{}, 1),
		closing:       make(chan struct{}),
		writerDone:    make(chan struct{}),
		heartbeatDone: make(chan struct{}),
		cache:         make(map[string]*sql.Stmt),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.log = s.log.With("store", "sqlite", "path", path)
	if err := createFile(path); err != nil {
		return nil, err
	}
	if err := s.open(ctx, syncMode); err != nil {
		s.closeDBs()
		return nil, err
	}
	go s.writer()
	if err := s.heartbeat(ctx); err != nil {
		close(s.closing)
		<-s.writerDone
		s.closeDBs()
		return nil, err
	}
	hctx, stop := context.WithCancel(context.Background())
	s.stopHeartbeat = stop
	go s.renew(hctx)
	return s, nil
}

// checkPath reports why path cannot name a database file, if it cannot.
func checkPath(path string) error {
	switch {
	case path == "":
		return errors.New("sqlite: empty database path")
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		return fmt.Errorf("sqlite: %q is not a file path; the store needs a file that its connections share", path)
	case strings.ContainsRune(path, '?'):
		return fmt.Errorf("sqlite: database path %q contains '?'", path)
	}
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sqlite: database path %s: directory %s does not exist", path, dir)
	case err != nil:
		return fmt.Errorf("sqlite: database path %s: %w", path, err)
	case !di.IsDir():
		return fmt.Errorf("sqlite: database path %s: %s is not a directory", path, dir)
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("sqlite: database path %s is a directory", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("sqlite: database path %s: %w", path, err)
	}
	return nil
}

// createFile creates the database file, empty, readable and writable by
// its owner only (0600, whatever the umask), if it does not exist: the
// tasks it will hold, their messages and push credentials, are nobody
// else's business. SQLite would create it 0644 less the umask; the files
// it makes beside it (-wal, -shm, and -journal while a new file turns to
// WAL) get the main file's permissions. A file that exists keeps its mode,
// which is its owner's choice; so does one that another process creates
// between the check and the open.
func createFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil
	case err != nil:
		return fmt.Errorf("sqlite: creating %s: %w", path, err)
	}
	// A umask that takes the owner's bits away too would leave a file
	// that SQLite cannot write.
	err = f.Chmod(0o600)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sqlite: creating %s: %w", path, err)
	}
	return nil
}

// open opens both pools, migrates the schema and prepares the statements.
//
// Another store, in this process or another, may be opening the file at
// the same moment, so no statement here may meet SQLITE_BUSY without
// waiting the busy timeout. SQLite waits when a statement starts a read
// (the pragmas of a new connection, preparing, which reads the schema)
// and when BEGIN IMMEDIATE starts from no transaction (migrate, the first
// heartbeat); it does not when a read upgrades to a write, which only
// PRAGMA journal_mode does here, on a file not yet in WAL mode: see
// enableWAL.
func (s *Store) open(ctx context.Context, syncMode string) error {
	ms := fmt.Sprint(busyTimeout.Milliseconds())
	var err error
	s.wdb, err = sql.Open("sqlite", s.path+"?"+url.Values{
		"_pragma": {"busy_timeout(" + ms + ")", "synchronous(" + syncMode + ")", "temp_store(memory)",
			"wal_autocheckpoint(" + fmt.Sprint(writerCheckpointPages) + ")"},
		"_txlock": {"immediate"},
	}.Encode())
	if err != nil {
		return fmt.Errorf("sqlite: opening %s: %w", s.path, err)
	}
	// One connection, kept for the life of the store, so that its
	// prepared statements stay prepared.
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	if err := s.wdb.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: opening %s: %w", s.path, err)
	}
	if err := enableWAL(ctx, s.wdb); err != nil {
		return fmt.Errorf("sqlite: opening %s: %w", s.path, err)
	}
	if err := migrate(ctx, s.wdb, s.path); err != nil {
		return err
	}

	// Readers. WAL lets them read while the writer writes; query_only
	// makes sure they never do.
	s.rdb, err = sql.Open("sqlite", s.path+"?"+url.Values{
		"_pragma": {"busy_timeout(" + ms + ")", "query_only(1)", "synchronous(" + syncMode + ")"},
	}.Encode())
	if err != nil {
		return fmt.Errorf("sqlite: opening %s: %w", s.path, err)
	}
	n := max(4, runtime.GOMAXPROCS(0))
	s.rdb.SetMaxOpenConns(n)
	s.rdb.SetMaxIdleConns(n)
	s.rdb.SetConnMaxLifetime(0)
	s.rdb.SetConnMaxIdleTime(0)
	if err := s.rdb.PingContext(ctx); err != nil {
		return fmt.Errorf("sqlite: opening %s for reading: %w", s.path, err)
	}
	// The checkpointer's connection syncs as the writer's does.
	s.cdb, err = sql.Open("sqlite", s.path+"?"+url.Values{
		"_pragma": {"busy_timeout(" + ms + ")", "synchronous(" + syncMode + ")"},
	}.Encode())
	if err != nil {
		return fmt.Errorf("sqlite: opening %s: %w", s.path, err)
	}
	s.cdb.SetMaxOpenConns(1)
	s.cdb.SetMaxIdleConns(1)
	s.cdb.SetConnMaxLifetime(0)
	s.cdb.SetConnMaxIdleTime(0)
	if err := s.ws.prepare(ctx, s.wdb); err != nil {
		return fmt.Errorf("sqlite: preparing statements on %s: %w", s.path, err)
	}
	if err := s.rs.prepare(ctx, s.rdb); err != nil {
		return fmt.Errorf("sqlite: preparing statements on %s: %w", s.path, err)
	}
	if err := s.ms.prepare(ctx, s.wdb, s.rdb); err != nil {
		return fmt.Errorf("sqlite: preparing statements on %s: %w", s.path, err)
	}
	return nil
}

// enableWAL puts the database of db, the writer pool, in WAL mode, which
// the file keeps from then on.
//
// On a file that is not yet in WAL mode (a new one), PRAGMA journal_mode
// reads the file's first page and then takes the write lock to change it.
// A connection that holds a read lock and asks for the write lock while
// another connection holds it gets SQLITE_BUSY at once, without waiting
// for the busy timeout: SQLite will not wait there, because the other
// connection may be waiting for this one's read lock (a deadlock). So when
// several stores opened a new file at once, all but the first failed with
// "database is locked" (TestMigrationRace; from several processes, where
// it shows most, TestMigrationRaceProcesses). The pragma has then ended and
// released its read lock: enableWAL waits, with the busy timeout, for the
// write lock (BEGIN IMMEDIATE, holding no lock before, does wait), lets it
// go and runs the pragma again, which finds the file converted (a no-op)
// or converts it. Each round waits for another connection's write, so it
// ends; a file already in WAL mode costs one pragma and no write lock.
func enableWAL(ctx context.Context, db *sql.DB) error {
	for round := 0; ; round++ {
		var mode string
		err := db.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
		var se *msqlite.Error
		switch {
		case err == nil && strings.EqualFold(mode, "wal"):
			return nil
		case err == nil:
			return fmt.Errorf("the database stays in journal mode %q, not WAL (a file system without shared memory?)", mode)
		case !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || round == 100:
			return fmt.Errorf("setting WAL mode: %w", err)
		}
		tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the writer DSN sets _txlock
		if err != nil {
			return fmt.Errorf("setting WAL mode: waiting for another writer: %w", err)
		}
		tx.Rollback()
	}
}

// closeDBs closes the pools, those that are open.
func (s *Store) closeDBs() error {
	var errs []error
	for _, db := range []*sql.DB{s.cdb, s.rdb, s.wdb} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: closing %s: %w", s.path, err)
	}
	return nil
}

// Path returns the path of the database file.
func (s *Store) Path() string { return s.path }

// Close stops the heartbeat, removes the store's runner registration (its
// unfinished tasks become orphans for other stores at once), lets the
// writes already queued finish, and closes the database. Operations after
// Close return ErrClosed. It is safe to call more than once.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.stopHeartbeat()
		<-s.heartbeatDone
		ctx, cancel := context.WithTimeout(context.Background(), busyTimeout)
		defer cancel()
		err := s.write(ctx, false, func(w *wtx) error {
			_, err := w.exec(s.ws.deleteRunner, s.self.ID)
			return err
		})
		if err != nil {
			err = fmt.Errorf("sqlite: removing runner %s from %s: %w", s.self.ID, s.path, err)
		}
		close(s.closing)
		<-s.writerDone
		s.closeErr = errors.Join(err, s.closeDBs())
	})
	return s.closeErr
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	return Stats{Appends: s.appends.Load(), Writes: s.writes.Load(), Commits: s.commits.Load(), Reruns: s.reruns.Load()}
}

// Check runs SQLite's integrity check on the whole database, which reads
// every page: it suits a check after a crash or a restore, not a frequent
// health probe on a large database. It returns nil if the database is
// sound.
func (s *Store) Check(ctx context.Context) error {
	rows, err := s.rdb.QueryContext(ctx, "PRAGMA integrity_check")
	if err != nil {
		return fmt.Errorf("sqlite: checking %s: %w", s.path, err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("sqlite: checking %s: %w", s.path, err)
		}
		problems = append(problems, line)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("sqlite: checking %s: %w", s.path, err)
	}
	if len(problems) != 1 || problems[0] != "ok" {
		return fmt.Errorf("sqlite: %s is damaged: %s", s.path, strings.Join(problems, "; "))
	}
	return nil
}

// readStmt returns a prepared reader statement for query, preparing it on
// first use. It serves the statements built at run time, whose number is
// bounded (one per combination of List filters, one per count of states).
func (s *Store) readStmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if st, ok := s.cache[query]; ok {
		return st, nil
	}
	st, err := s.rdb.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s.cache[query] = st
	return st, nil
}

// writeStmts are the writer connection's prepared statements.
type writeStmts struct {
	savepoint, release, rollbackTo *sql.Stmt

	createTask, readTask, moveTask, setStatus    *sql.Stmt
	maxRID, putSnapshot, addCount                *sql.Stmt
	insertEvents                                 [maxEventRows]*sql.Stmt
	putPush, deletePush, taskInScope             *sql.Stmt
	claimPush, leasePush, setPush, pushDelivered *sql.Stmt
	wakePush                                     *sql.Stmt
	deleteTask, deleteSnapshot                   *sql.Stmt
	deleteEvents, deletePushes                   *sql.Stmt
	upsertRunner, deleteRunner, reapRunner       *sql.Stmt
	insertSecret                                 *sql.Stmt
}

// maxEventRows is the most events one INSERT of an Append writes: 1 to
// maxEventRows rows, each statement prepared once. The statements are
// INSERT OR FAIL: a failing row leaves the rows before it, where the
// default (ABORT) undoes them, which costs SQLite a copy of every page
// the statement changes, in case. Append checks the seq before, so the
// key never fails; if it did, the request fails with an error of SQLite,
// which undoes the request (runRequests).
const maxEventRows = 8

func (ws *writeStmts) prepare(ctx context.Context, db *sql.DB) error {
	var events []stmtDef
	for n := 1; n <= maxEventRows; n++ {
		events = append(events, stmtDef{&ws.insertEvents[n-1],
			"INSERT OR FAIL INTO events (rid, seq, payload) VALUES " + strings.TrimSuffix(strings.Repeat("(?, ?, ?), ", n), ", ")})
	}
	return prepareAll(ctx, db, append(events, []stmtDef{
		{&ws.savepoint, "SAVEPOINT request"},
		{&ws.release, "RELEASE request"},
		{&ws.rollbackTo, "ROLLBACK TO request"},

		{&ws.createTask, `INSERT INTO tasks (id, tenant, owner, context_id, state, status_ts, seq, runner, snap_bytes, tail_bytes)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (id) DO NOTHING`},
		// What an Append to the task needs to know, in the writer's
		// transaction: no other write comes between this read and the
		// updates.
		{&ws.readTask, `SELECT rid, seq, state, status_ts, context_id, snap_bytes, tail_bytes FROM tasks
	WHERE id = ? AND tenant = ? AND owner = ?`},
		// Every Append: it names no indexed column, so SQLite updates the
		// row and no index (migrations/0004_snapshots.sql).
		{&ws.moveTask, `UPDATE tasks SET seq = ?, runner = ?, snap_bytes = ?, tail_bytes = ? WHERE rid = ? AND seq = ?`},
		// Only an Append that changes the status: it moves the task in
		// every index.
		{&ws.setStatus, `UPDATE tasks SET context_id = ?, state = ?, status_ts = ? WHERE rid = ?`},
		{&ws.maxRID, `SELECT coalesce(max(rid), 0) FROM tasks`},
		{&ws.putSnapshot, `INSERT INTO snapshots (rid, seq, snapshot) VALUES (?, ?, ?)
	ON CONFLICT (rid) DO UPDATE SET seq = excluded.seq, snapshot = excluded.snapshot`},
		// The kept counts (migrations/0002_task_counts.sql): add n tasks
		// (n < 0 removes) to a state of a scope. The writer adds up
		// those of a batch first (wtx.addTasks).
		{&ws.addCount, `INSERT INTO task_counts (tenant, owner, state, n) VALUES (?, ?, ?, ?)
	ON CONFLICT (tenant, owner, state) DO UPDATE SET n = n + excluded.n`},

		// A new config starts at its task's last seq; a replaced one
		// keeps its delivered and starts afresh otherwise.
		// next_attempt: due at once (pushcode.DueSince).
		{&ws.putPush, `INSERT INTO push_configs (task_id, id, tenant, owner, config, delivered, next_attempt)
	SELECT id, ?, tenant, owner, ?, seq, ? FROM tasks WHERE id = ? AND tenant = ? AND owner = ?
	ON CONFLICT (task_id, id) DO UPDATE SET config = excluded.config,
		attempts = 0, next_attempt = excluded.next_attempt, failing = 0, last_error = ''`},
		{&ws.deletePush, `DELETE FROM push_configs WHERE task_id = ? AND tenant = ? AND owner = ? AND id = ?`},
		{&ws.taskInScope, `SELECT count(*) FROM tasks WHERE id = ? AND tenant = ? AND owner = ?`},
		{&ws.claimPush, claimPushSQL},
		{&ws.leasePush, `UPDATE push_configs SET next_attempt = ? WHERE task_id = ? AND id = ?`},
		// The state moves on only from the delivered its caller read.
		{&ws.setPush, `UPDATE push_configs SET delivered = ?, attempts = ?, next_attempt = ?, failing = ?, last_error = ?
	WHERE task_id = ? AND tenant = ? AND owner = ? AND id = ? AND delivered = ?`},
		{&ws.pushDelivered, `SELECT delivered FROM push_configs WHERE task_id = ? AND tenant = ? AND owner = ? AND id = ?`},
		// Append wakes the task's idle configs (next_attempt ?2 is
		// pushcode.IdleMS, the store.PushIdle phase; ?3 pushcode.DueSince
		// now): a range of the primary key, empty for most tasks.
		{&ws.wakePush, `UPDATE push_configs SET next_attempt = ?3 WHERE task_id = ?1 AND next_attempt = ?2`},

		{&ws.deleteTask, `DELETE FROM tasks WHERE rid = ?`},
		{&ws.deleteSnapshot, `DELETE FROM snapshots WHERE rid = ?`},
		{&ws.deleteEvents, `DELETE FROM events WHERE rid = ?`},
		{&ws.deletePushes, `DELETE FROM push_configs WHERE task_id = ?`},

		{&ws.upsertRunner, `INSERT INTO runners (id, host, pid, heartbeat) VALUES (?, ?, ?, ?)
	ON CONFLICT (id) DO UPDATE SET heartbeat = excluded.heartbeat`},
		{&ws.deleteRunner, `DELETE FROM runners WHERE id = ?`},
		// A runner that renewed its heartbeat since it was judged dead
		// stays.
		{&ws.reapRunner, `DELETE FROM runners WHERE id = ? AND heartbeat = ?`},
		{&ws.insertSecret, `INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`},
	}...))
}

// readStmts are the reader pool's prepared statements; database/sql
// prepares each on every connection that runs it.
type readStmts struct {
	get, tails, events            *sql.Stmt
	getPush, listPush, runners    *sql.Stmt
	getSecret, pushState, pushDue *sql.Stmt
}

func (rs *readStmts) prepare(ctx context.Context, db *sql.DB) error {
	return prepareAll(ctx, db, []stmtDef{
		// A task as Get folds it, in one statement and so from one
		// snapshot of the database: a first row (0) with the task's seq
		// and its snapshot, if it has one, and its seq, then a row (1)
		// per event after that snapshot, in order. No row when the task
		// does not exist in scope.
		{&rs.get, getSQL},
		// The events after their snapshots of the tasks of a List page,
		// in its read transaction.
		{&rs.tails, tailsSQL},
		// One row with a NULL seq when the task exists but has no events
		// after the one asked for; no row when it does not exist in
		// scope. One statement reads one snapshot of the database.
		{&rs.events, eventsSQL},
		{&rs.getPush, `SELECT config FROM push_configs WHERE task_id = ? AND tenant = ? AND owner = ? AND id = ?`},
		// One row with a NULL config when the task has none to return.
		// LIMIT -1 is no limit.
		{&rs.listPush, `SELECT p.config FROM tasks t
	LEFT JOIN push_configs p ON p.task_id = t.id AND p.tenant = t.tenant AND p.owner = t.owner AND p.id > ?
	WHERE t.id = ? AND t.tenant = ? AND t.owner = ?
	ORDER BY p.id
	LIMIT ?`},
		{&rs.runners, `SELECT id, host, pid, heartbeat FROM runners`},
		{&rs.getSecret, `SELECT value FROM secrets WHERE name = ?`},
		{&rs.pushState, `SELECT delivered, attempts, next_attempt, failing, last_error FROM push_configs
	WHERE task_id = ? AND tenant = ? AND owner = ? AND id = ?`},
		// Whether ClaimPush has anything to claim, without the writer.
		{&rs.pushDue, `SELECT count(*) FROM (` + claimPushSQL + `)`},
	})
}

type stmtDef struct {
	dst   **sql.Stmt
	query string
}

func prepareAll(ctx context.Context, db *sql.DB, defs []stmtDef) error {
	for _, d := range defs {
		st, err := db.PrepareContext(ctx, d.query)
		if err != nil {
			first, _, _ := strings.Cut(d.query, "\n")
			return fmt.Errorf("%q: %w", first, err)
		}
		*d.dst = st
	}
	return nil
}
