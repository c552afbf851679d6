-- The first schema of store/sqlite. It runs inside the migration
-- transaction (BEGIN IMMEDIATE), so a second process that opens the file at
-- the same moment waits for it and then finds the tables made.
--
-- Tables are STRICT: a value of the wrong type is an error, not a silent
-- conversion. Text compares with the BINARY collation, byte by byte, which
-- is the order Go's string comparison (store.Cursor.Before) uses.

-- tasks holds one row per task: the snapshot and the columns queries filter
-- on. seq is the seq of the last event of the task's log; runner is the id
-- of the store (lease.Runner) that appended it.
CREATE TABLE tasks (
    id         TEXT NOT NULL PRIMARY KEY,
    tenant     TEXT NOT NULL,
    owner      TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state      INTEGER NOT NULL,
    status_ts  INTEGER NOT NULL, -- status timestamp, unix milliseconds
    seq        INTEGER NOT NULL,
    runner     TEXT NOT NULL,
    snapshot   BLOB NOT NULL     -- JSON of the a2a.Task
) STRICT;

-- One index per combination of ListTasks filters, so that each query is a
-- range scan in (status_ts, id) order, and its count too.
CREATE INDEX tasks_list ON tasks (tenant, owner, status_ts, id);
CREATE INDEX tasks_list_context ON tasks (tenant, owner, context_id, status_ts, id);
CREATE INDEX tasks_list_state ON tasks (tenant, owner, state, status_ts, id);
CREATE INDEX tasks_list_context_state ON tasks (tenant, owner, context_id, state, status_ts, id);
-- Orphans and Expire look for states, oldest first, in every scope.
CREATE INDEX tasks_state ON tasks (state, status_ts);

-- events is the log of each task, numbered from 1 without gaps. Without a
-- rowid, the rows of one task are stored together in seq order, so reading
-- a log is one range of the primary key. The key also guards against two
-- writers of one seq.
CREATE TABLE events (
    task_id TEXT NOT NULL,
    seq     INTEGER NOT NULL,
    payload BLOB NOT NULL, -- JSON of the a2a.StreamResponse
    PRIMARY KEY (task_id, seq)
) STRICT, WITHOUT ROWID;

-- push_configs holds the webhook configs of each task, with the task's
-- scope, so that every read can filter on it.
CREATE TABLE push_configs (
    task_id TEXT NOT NULL,
    id      TEXT NOT NULL,
    tenant  TEXT NOT NULL,
    owner   TEXT NOT NULL,
    config  BLOB NOT NULL, -- JSON of the a2a.TaskPushNotificationConfig
    PRIMARY KEY (task_id, id)
) STRICT, WITHOUT ROWID;

-- runners lists the open stores and their heartbeats (see internal/lease).
CREATE TABLE runners (
    id        TEXT NOT NULL PRIMARY KEY,
    host      TEXT NOT NULL,
    pid       INTEGER NOT NULL,
    heartbeat INTEGER NOT NULL -- unix milliseconds
) STRICT, WITHOUT ROWID;

-- secrets holds the keys every process sharing the file agrees on.
CREATE TABLE secrets (
    name  TEXT NOT NULL PRIMARY KEY,
    value BLOB NOT NULL
) STRICT, WITHOUT ROWID;
