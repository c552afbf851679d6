-- The first schema of store/postgres. It runs inside the migration
-- transaction with search_path set to the store's schema, so the names
-- below are created there.
--
-- Identifiers use the "C" collation: ListTasks and ListPushConfigs order by
-- id, and that order must be the byte order callers compute in Go
-- (store.Cursor.Before), whatever the database's default collation.

-- tasks holds one row per task: the snapshot and the columns queries filter
-- on. seq is the seq of the last event of the task's log; runner is the id
-- of the store (lease.Runner) that appended it.
CREATE TABLE tasks (
    id         TEXT COLLATE "C" PRIMARY KEY,
    tenant     TEXT COLLATE "C" NOT NULL,
    owner      TEXT COLLATE "C" NOT NULL,
    context_id TEXT COLLATE "C" NOT NULL,
    state      INTEGER NOT NULL,
    status_ts  BIGINT NOT NULL, -- status timestamp, unix milliseconds
    seq        BIGINT NOT NULL,
    runner     TEXT COLLATE "C" NOT NULL,
    snapshot   BYTEA NOT NULL   -- JSON of the a2a.Task
);

-- One index per combination of ListTasks filters, so that each query is a
-- range scan in (status_ts, id) order.
CREATE INDEX tasks_list ON tasks (tenant, owner, status_ts, id);
CREATE INDEX tasks_list_context ON tasks (tenant, owner, context_id, status_ts, id);
CREATE INDEX tasks_list_state ON tasks (tenant, owner, state, status_ts, id);
CREATE INDEX tasks_list_context_state ON tasks (tenant, owner, context_id, state, status_ts, id);
-- Orphans and Expire look for states, oldest first, in every scope.
CREATE INDEX tasks_state ON tasks (state, status_ts);

-- events is the log of each task, numbered from 1 without gaps. The primary
-- key also guards against two writers appending the same seq.
CREATE TABLE events (
    task_id TEXT COLLATE "C" NOT NULL,
    seq     BIGINT NOT NULL,
    payload BYTEA NOT NULL, -- JSON of the a2a.StreamResponse
    PRIMARY KEY (task_id, seq)
);

-- push_configs holds the webhook configs of each task, with the task's
-- scope, so that every read can filter on it.
CREATE TABLE push_configs (
    task_id TEXT COLLATE "C" NOT NULL,
    id      TEXT COLLATE "C" NOT NULL,
    tenant  TEXT COLLATE "C" NOT NULL,
    owner   TEXT COLLATE "C" NOT NULL,
    config  BYTEA NOT NULL, -- JSON of the a2a.TaskPushNotificationConfig
    PRIMARY KEY (task_id, id)
);

-- runners lists the open stores and their heartbeats (see internal/lease).
CREATE TABLE runners (
    id        TEXT COLLATE "C" PRIMARY KEY,
    host      TEXT NOT NULL,
    pid       INTEGER NOT NULL,
    heartbeat BIGINT NOT NULL -- unix milliseconds, database clock
);

-- secrets holds the keys every process sharing the database agrees on.
CREATE TABLE secrets (
    name  TEXT COLLATE "C" PRIMARY KEY,
    value BYTEA NOT NULL
);
