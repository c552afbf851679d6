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
// pool_max_conns. Each connection commits one Append at a time, so where
// commits wait long on the disk a larger pool lets the server group more
// of them into one flush; on a small machine with a fast disk it only adds
// server processes competing for the CPUs.
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
// Append is one SQL statement, and so one transaction: the task row moves
// to its new snapshot and last seq only if it is still at the seq the
// caller read (optimistic concurrency), the events go in with it, and a
// notification is queued; all commit together or not at all. When Append
// returns, the events are as durable as the server's commit settings make
// them (with the default synchronous_commit, on disk). As with any
// database, an Append that fails because the connection broke or the
// context ended may nevertheless have committed; reading the task again
// tells. Events are numbered
// per task from 1 without gaps; the events table's primary key (task_id,
// seq) is a second guard against two writers of one seq.
//
// [Store.Import] copies many tasks at once (COPY) in one transaction, all
// or none, and notifies nobody.
//
// Reads are single statements too: Get, Events and List each see one
// consistent snapshot of the database. List's total is exact: unfiltered
// or filtered by state only, it is read from counters kept by every write
// in its own transaction (see Schema), in time independent of the number
// of tasks; filtered by context or time, it is a count of the matching
// tasks, an index range scan.
//
// # Following tasks from another process
//
// Each Append notifies [Store.Channel] ("a2a_task_events.<schema>") with
// "<task id>:<last seq>" when it commits. A process that LISTENs on the
// channel, then reads Events(after) from the last seq it knows, and again
// on each notification, misses nothing: an event is in the table before
// its notification is sent. Notifications are a wake-up, not a transport;
// PostgreSQL queues them for slow listeners but drops none while the
// listener's connection lives.
//
// # Schema
//
// Schema version 3 has these tables (see migrations/0001_init.sql,
// 0002_task_counts.sql and 0003_push_delivery.sql):
//
//   - schema_migrations(version, applied_at): the migrations applied.
//   - tasks(id, tenant, owner, context_id, state, status_ts, seq, runner,
//     snapshot): one row per task; snapshot is the task's JSON, status_ts
//     its status timestamp in unix milliseconds, seq the last event's
//     number, runner the store that appended it. Four indexes on (tenant,
//     owner, [context_id], [state], status_ts, id) make every ListTasks
//     filter a keyset range scan; (state, status_ts) serves Orphans and
//     Expire.
//   - events(task_id, seq, payload): the logs, payload being the JSON of
//     an a2a.StreamResponse.
//   - push_configs(task_id, id, tenant, owner, config, delivered,
//     attempts, next_attempt, failing, last_error): webhook configs, with
//     their task's scope and their delivery state (store.PushState;
//     next_attempt in unix milliseconds, 0 for at once). ClaimPush walks
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
