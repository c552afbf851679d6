// Package postgres is a [store.Store] on PostgreSQL, through pgx: tasks
// survive restarts, and several server processes can share one database,
// each following the others' tasks.
//
// # Opening
//
// [Open] takes a DSN, a libpq keyword/value string or a URL:
//
//	s, err := postgres.Open(ctx, "host=/var/run/postgresql dbname=a2a", postgres.Options{Schema: "a2a"})
//	if err != nil {
//		return err
//	}
//	defer s.Close()
//
// The pool has pgxpool's default size, max(4, NumCPU), unless the DSN sets
// pool_max_conns. Appends do not need a connection each: a store's writers
// (two goroutines) each take a connection only while they commit a batch
// of them (see below); the other connections serve reads.
//
// [New] does the same on a pgxpool.Pool the caller keeps. Both create the
// schema and its tables if needed and migrate them to [SchemaVersion]:
// migrations are SQL files embedded in the package, applied in order, each
// in a transaction under an advisory lock, so any number of processes can
// start at once. A schema migrated by a newer release is refused. Every
// statement names its tables with the schema, so the connections'
// search_path does not matter. [Store.Check] is a cheap health check.
//
// # Durability and concurrency
//
// Each Append is one SQL statement: the task row moves to its new last seq
// only if it is still at the seq the caller read (optimistic concurrency),
// and the events, the task counts and the wake of the task's idle push
// configs go in with it; it applies whole or not at all, and reports which.
// Appends are committed in groups (group commit): a writer goroutine takes
// every Append waiting, up to 256, runs their statements in one
// transaction, in task id order (so that writers of several processes
// never deadlock on the rows of the tasks they share), queues one
// notification for the transaction (see below), commits once and then
// answers each caller with its own outcome: a conflicting or missing task
// fails only its own Append. Commits wait on the disk and PostgreSQL
// serializes the commits of transactions that notify, so under load one
// commit carries many Appends instead of one each. If the transaction
// fails as a whole before it commits (a deadlock with another client, a
// broken connection), each of its Appends runs again alone. An Append
// whose context ends while it waits for a writer returns ctx.Err() and
// never runs; once a writer has taken it, Append returns its outcome.
// Close lets the Appends queued before it finish.
//
// When Append returns nil, the events are in the log, visible to every
// reader, and as durable as the server's commit settings make them (with
// the default synchronous_commit, on disk). As with any database, an
// Append that fails because the connection broke while it committed may
// nevertheless have committed (its error says so); reading the task again
// tells. Events are numbered per task from 1 without gaps; the events
// table's primary key (task_id, seq) is a second guard against two writers
// of one seq.
//
// An Append costs the same however long the task: it writes the events
// given, and the snapshot only when [store.SnapshotDue] says so (the task
// reached a terminal or interrupted state, or the events since the
// snapshot outweigh it); otherwise the snapshot stays as it was, at an
// older seq, and readers fold the events after it ([store.Fold]). The
// store remembers the sizes of the snapshots and tails of the tasks it
// appended to, to decide without reading; for a task another process
// appended to last, it learns them from its first Append.
//
// [Store.Import] copies many tasks at once (COPY) in one transaction, all
// or none, and notifies nobody.
//
// Reads are single statements too: Get, Events and List each see one
// consistent snapshot of the database. Get and List read each task's
// snapshot with the events after it, which they fold; Events returns each
// event's stored JSON as its Data. List's total is exact: unfiltered
// or filtered by state only, it is read from counters kept by every write
// in its own transaction (see Schema), in time independent of the number
// of tasks; filtered by context or time, it is a count of the matching
// tasks, an index range scan.
//
// # Following tasks from another process
//
// Each commit of Appends notifies [Store.Channel]
// ("a2a_task_events.<schema>") once. The payload has a line for each task
// the commit appended to, "<task id>:<last seq>", lines separated by a
// newline ("\n", none after the last), for example "task-1:3\ntask-7:12":
// a commit of a single Append sends "<task id>:<last seq>" alone, as
// before. Task ids may contain colons: split each line at its last one. A
// payload is at most 7999 bytes (PostgreSQL's limit): a commit with more
// lines sends several notifications, each of whole lines, in the same
// transaction. A process that LISTENs on the channel, then reads
// Events(after) from the last seq it knows, and again for each line of
// each notification, misses nothing: the notifications go out when the
// transaction commits, with the events in the table. Notifications are a
// wake-up, not a transport; PostgreSQL queues them for slow listeners but
// drops none while the listener's connection lives.
//
// # Schema
//
// Schema version 4 has these tables (see migrations/0001_init.sql,
// 0002_task_counts.sql, 0003_push_delivery.sql and
// 0004_snapshot_tail.sql):
//
//   - schema_migrations(version, applied_at): the migrations applied.
//   - tasks(id, tenant, owner, context_id, state, status_ts, seq, runner,
//     snapshot, snap_seq, snap_bytes, tail_bytes): one row per task;
//     status_ts is its status timestamp in unix milliseconds, seq the last
//     event's number, runner the store that appended it. snapshot is the
//     JSON of the task at seq snap_seq (NULL on rows not appended to since
//     version 3: at seq); the task is that snapshot with the events after
//     it folded in. snap_bytes and tail_bytes are the sizes of the
//     snapshot and of those events, for [store.SnapshotDue]. Two indexes
//     on (tenant, owner, [context_id], status_ts, id) make every ListTasks
//     filter a keyset range scan (a state filter keeps the tasks in that
//     state from the range); (state, status_ts) serves Orphans and Expire.
//     Migration 4 rewrites no row; as with versions 2 and 3, every process
//     sharing a schema must then run a build that knows version 4.
//   - events(task_id, seq, payload): the logs, payload being the JSON of
//     an a2a.StreamResponse.
//   - push_configs(task_id, id, tenant, owner, config, delivered,
//     attempts, next_attempt, failing, last_error): webhook configs, with
//     their task's scope and their delivery state (store.PushState;
//     next_attempt in unix milliseconds, negative for at once, ordered
//     by when it became due: pushcode.DueSince). ClaimPush walks
//     the partial index push_configs_due (next_attempt, task_id, id) of the
//     configs that are not failing, joins each to its task by id, and
//     leases the rows it locks in one statement (FOR UPDATE SKIP LOCKED):
//     claimers in several processes never get the same config. Migration
//     3 starts the configs already there at their task's seq; as with
//     version 2, every process sharing a schema must then run a build
//     that knows version 3.
//   - runners(id, host, pid, heartbeat): the open stores (see Orphans).
//   - secrets(name, value): keys shared by every process, such as the one
//     that signs page tokens.
//   - task_counts(tenant, owner, state, n) and task_count_deltas(tenant,
//     owner, state, delta): the number of tasks of each scope and state is
//     n plus the deltas of its scope and state. Creation, a state-changing
//     Append, Import and Expire insert deltas in the statement or
//     transaction that changes the tasks; they never update task_counts,
//     whose rows every write of a scope would otherwise lock in turn until
//     it commits. A compaction, one statement, folds the deltas into
//     task_counts when a store opens and every LeaseTTL/3. The migration
//     to version 2 counts the existing tasks; every process sharing a
//     schema must run a build that knows version 2 once it is migrated, as
//     older ones would change tasks without counting them.
//
// Every query filters on tenant and owner: a task in another scope is
// reported missing, exactly like one that does not exist. Task ids are
// unique across scopes.
//
// # Crash recovery
//
// Each open store registers a runner (host, process id, heartbeat by the
// database clock) and renews its heartbeat every LeaseTTL/3; Close removes
// it. [Store.Orphans] reports the unfinished tasks whose last writer is
// gone: its heartbeat expired, or it ran on this host and its process
// exited. [Store.Expire] deletes old finished tasks.
package postgres
