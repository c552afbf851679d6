-- Schema version 4: the snapshot of each task moves out of its row into a
-- table of its own, written now and then instead of at every Append; the
-- events are keyed by the task's rid instead of its id; and the tasks
-- table keeps three indexes instead of five.
--
-- Why. SQLite rewrites the whole record of a row when any of its columns
-- changes, a large snapshot with all its overflow pages included, and an
-- UPDATE that names an indexed column rewrites that index's entry. Every
-- Append used to re-encode the whole task, write it into its tasks row and
-- name every column: a task streaming N chunks cost O(N^2) bytes written
-- (16,000 chunks: minutes), and five index entries per chunk.
--
-- Now an Append inserts its events and updates the small columns of the
-- task's row (seq, runner, the byte counts below) with an UPDATE that
-- names no indexed column, so that SQLite touches no index; a second
-- UPDATE names context_id, state and status_ts only when the status
-- changed. The snapshot is written only when store.SnapshotDue says so
-- (the task reached a terminal or interrupted state, or the events since
-- the last snapshot outweigh it), and Get and List fold the events after
-- it (store.Fold): an append costs the same however long the task, and a
-- read folds at most as many bytes as the snapshot holds.
--
-- Task ids are random (UUIDs): keyed by them, the events of the tasks
-- running at a time were spread over the whole table, and each Append
-- wrote a page of its own. Keyed by the task's rid, which grows with each
-- new task, they sit together at the end of the table, where one group
-- commit's Appends share a few pages.
--
-- This runs inside the migration transaction (BEGIN IMMEDIATE): no Append
-- comes between the copy of the rows and the switch to the new table.

-- The new tasks table: the same columns but the snapshot, plus the byte
-- counts store.SnapshotDue needs. rid is the rowid, made an INTEGER
-- PRIMARY KEY so that it is stable (VACUUM may renumber an implicit
-- rowid): snapshots and events refer to it. A task is deleted (Expire)
-- with its snapshot and events, in one transaction, so a rid that SQLite
-- hands out again never finds old ones.
CREATE TABLE tasks_v4 (
    rid        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    tenant     TEXT NOT NULL,
    owner      TEXT NOT NULL,
    context_id TEXT NOT NULL,
    state      INTEGER NOT NULL,
    status_ts  INTEGER NOT NULL, -- status timestamp, unix milliseconds
    seq        INTEGER NOT NULL, -- the seq of the last event of the log
    runner     TEXT NOT NULL,    -- the store (lease.Runner) that appended it
    snap_bytes INTEGER NOT NULL, -- size of the snapshot reads fold from
    tail_bytes INTEGER NOT NULL  -- bytes of the events after that snapshot
) STRICT;

-- snapshots holds, for each task that has one, the fold of its log up to
-- seq. A task without a row folds from its first event, the *a2a.Task
-- that created it (seq 1); snap_bytes is then that event's size. Append
-- writes no row for a new task unless store.SnapshotDue asks for one, so
-- that creating a task writes nothing twice. A rowid table keyed by the
-- task's rid: a large blob is best kept in a table b-tree (WITHOUT ROWID
-- tables suit small rows).
CREATE TABLE snapshots (
    rid      INTEGER PRIMARY KEY, -- tasks.rid
    seq      INTEGER NOT NULL,    -- the last event folded into it
    snapshot BLOB NOT NULL        -- JSON of the a2a.Task
) STRICT;

-- The tasks already there keep their rowid as rid; each one's snapshot,
-- which is at its seq, moves to snapshots, with no events after it.
INSERT INTO tasks_v4 (rid, id, tenant, owner, context_id, state, status_ts, seq, runner, snap_bytes, tail_bytes)
    SELECT rowid, id, tenant, owner, context_id, state, status_ts, seq, runner, length(snapshot), 0 FROM tasks ORDER BY rowid;
INSERT INTO snapshots (rid, seq, snapshot)
    SELECT rowid, seq, snapshot FROM tasks ORDER BY rowid;

-- events, keyed by (rid, seq): still a log numbered per task from 1 without
-- gaps, one range of the primary key per task, and the key still guards
-- against two writers of one seq. Events whose task is gone (no store
-- leaves any) are dropped.
CREATE TABLE events_v4 (
    rid     INTEGER NOT NULL, -- tasks.rid
    seq     INTEGER NOT NULL,
    payload BLOB NOT NULL,    -- JSON of the a2a.StreamResponse
    PRIMARY KEY (rid, seq)
) STRICT, WITHOUT ROWID;
INSERT INTO events_v4 (rid, seq, payload)
    SELECT t.rowid, e.seq, e.payload FROM tasks t JOIN events e ON e.task_id = t.id ORDER BY t.rowid, e.seq;
DROP TABLE events;
ALTER TABLE events_v4 RENAME TO events;

DROP TABLE tasks; -- with its five indexes
ALTER TABLE tasks_v4 RENAME TO tasks;

-- Three indexes instead of five. ListTasks reads every filter in (status_ts,
-- id) order from tasks_list, or tasks_list_context with a context filter;
-- a state filter no longer has indexes of its own (tasks_list_state and
-- tasks_list_context_state are gone) but is checked on the state that
-- ends each entry, so that rows of other states are passed over without
-- reading them, and the count of a filtered range stays a covering scan
-- of the index. The trailing state costs no index write: the state changes
-- with the status, whose timestamp is in every index anyway.
CREATE INDEX tasks_list ON tasks (tenant, owner, status_ts, id, state);
CREATE INDEX tasks_list_context ON tasks (tenant, owner, context_id, status_ts, id, state);
-- Orphans and Expire look for states, oldest first, in every scope: one
-- range of this index per state, in (status_ts, id) order, which they
-- merge without sorting.
CREATE INDEX tasks_state ON tasks (state, status_ts, id);
