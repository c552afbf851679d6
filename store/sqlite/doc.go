// Package sqlite is a [store.Store] in a SQLite file, through the pure Go
// driver modernc.org/sqlite (no cgo): tasks survive restarts with nothing
// to set up but a path.
//
// # Opening
//
//	s, err := sqlite.Open(ctx, "/var/lib/a2a/tasks.db", sqlite.Options{})
//	if err != nil {
//		return err
//	}
//	defer s.Close()
//
// The file is created if missing; its directory must exist. Open creates
// the schema or migrates it to [SchemaVersion]: migrations are SQL files
// embedded in the package, each applied in a BEGIN IMMEDIATE transaction
// that re-reads the version, so several processes may open a new file at
// once. A file migrated by a newer release is refused. [Store.Check] runs
// SQLite's integrity check.
//
// # Durability
//
// The database is in WAL mode. When Append (or any other write) returns
// nil, its transaction has committed, and:
//
//   - with [ProcessCrash] (the default, synchronous=NORMAL), it survives
//     the crash of the process; a power loss or an operating system crash
//     may lose the last commits, never the database's consistency;
//   - with [PowerLoss] (synchronous=FULL), it also survives power loss:
//     each commit waits for the log to reach the disk.
//
// A failed write changes nothing. Each write made with a context that ends
// while it waits its turn returns the context's error and is not applied;
// once its turn has come, it is applied or not as if the context were
// still alive, and its outcome is returned.
//
// # Concurrency: one writer, group commit
//
// SQLite lets one connection write at a time. The store has one writer
// connection, used by one goroutine, and a pool of read-only connections
// that WAL lets read while it writes. Reads (Get, Events, List, the push
// config reads) each see one consistent snapshot of the database.
//
// Writes (Append, Import, PutPushConfig, DeletePushConfig, ClaimPush,
// SetPushState, heartbeats, Expire) are requests to the writer goroutine.
// It takes the first one, then all that are waiting (up to
// [Options.MaxBatch]), yielding its CPU once so that callers about to send
// one join, runs them in one transaction and commits once: under load,
// many writes share one commit and its sync. A write that fails (for
// example with ErrConflict) undoes only itself: the batch runs without
// savepoints, and in the rare case of a write that failed after changing
// rows, runs again with a savepoint per write. [Store.Stats] counts writes,
// commits and such reruns. [Store.Import] is one request however many
// tasks it brings: other writes wait while it runs, a few seconds per
// 100,000 tasks. Checkpoints, which copy the write-ahead log back into the
// file, run on a connection of their own in the background, not in the
// writer's commits.
//
// Several stores may open the same file, in one process or in several on
// one host (not on a network file system: WAL needs shared memory). Their
// writers take turns, each waiting up to 10 s for the lock.
//
// # Schema
//
// Schema version 4 has these tables (see migrations/0001_init.sql to
// 0004_snapshots.sql):
//
//   - schema_migrations(version, applied_at): the migrations applied.
//   - tasks(rid, id, tenant, owner, context_id, state, status_ts, seq,
//     runner, snap_bytes, tail_bytes): one small row per task; rid is its
//     stable rowid, status_ts its status timestamp in unix milliseconds,
//     seq the last event's number, runner the store that appended it,
//     snap_bytes and tail_bytes the sizes of its snapshot and of the events
//     after it. Indexes: tasks_list (tenant, owner, status_ts, id, state)
//     and tasks_list_context (tenant, owner, context_id, status_ts, id,
//     state) make every ListTasks filter, and its count, a keyset range
//     scan (a state filter is checked on the index entries);
//     tasks_state (state, status_ts, id) serves Orphans and Expire, one
//     range per state, merged.
//   - snapshots(rid, seq, snapshot): the task's JSON as the fold of its log
//     up to seq. An Append writes it only when [store.SnapshotDue] says so
//     (the task reached a terminal or interrupted state, or the events
//     since outweigh it); otherwise it inserts the events and updates the
//     task's row with a statement that touches no index, and a second one
//     that moves the task in the indexes only when its status changed. Get
//     and List fold the events after the snapshot ([store.Fold]); a task
//     without a snapshot row folds from its first event, the task itself.
//     An Append costs the same however long the task.
//   - events(rid, seq, payload): the logs, numbered per task from 1
//     without gaps, payload being the JSON of an a2a.StreamResponse, as the
//     writer gave it in [store.Event.Data] or as the store encoded it; it is
//     the Data of the events that Events returns. Without rowid, a task's
//     events are stored together, in order, and those of the tasks running
//     at a time (whose rids are close) near each other.
//   - push_configs(task_id, id, tenant, owner, config, delivered,
//     attempts, next_attempt, failing, last_error): webhook configs, with
//     their task's scope and their delivery state (store.PushState;
//     next_attempt in unix milliseconds, negative for at once, ordered
//     by when it became due: pushcode.DueSince). The partial index
//     push_configs_due (next_attempt, task_id, id) of the configs that are
//     not failing gives ClaimPush the due configs in order, each joined to
//     its task by id to compare delivered with the task's seq; ClaimPush
//     reads and leases them in one write transaction. Migration 3 starts
//     the configs already there at their task's seq.
//   - task_counts(tenant, owner, state, n): the number of tasks of each
//     state in each scope, kept exact by every write that creates, deletes
//     or changes the state of a task, in the same transaction. ListTasks'
//     Total reads it when the query filters on nothing but the state (a
//     lookup, where counting a million rows takes 100 ms); with a context
//     or time filter, Total counts the rows of that filter's index range.
//     Migration 2 fills it from the tasks already there; the writer adds
//     up the changes of a batch and writes them once.
//   - runners(id, host, pid, heartbeat): the open stores (see Orphans).
//   - secrets(name, value): keys shared by every process, such as the one
//     that signs page tokens.
//
// Every query filters on tenant and owner: a task in another scope is
// reported missing, exactly like one that does not exist. Task ids are
// unique across scopes.
//
// # Crash recovery
//
// Each open store registers a runner (host, process id, heartbeat) and
// renews its heartbeat every LeaseTTL/3; Close removes it. [Store.Orphans]
// reports the unfinished tasks whose last writer is gone: its heartbeat
// expired, or it ran on this host and its process exited. [Store.Expire]
// deletes old finished tasks.
package sqlite
