-- Schema version 2: counters of tasks by scope and state, so that
-- ListTasks' total need not count a scope's rows at every call.
--
-- The number of tasks of state s in scope (tenant, owner) is, in any one
-- snapshot, task_counts.n plus the sum of task_count_deltas.delta for
-- (tenant, owner, s). Writers never update task_counts: a row there is
-- shared by every task of its scope and state, and an UPDATE would hold its
-- lock until the writer commits, serializing all the appends of a scope.
-- Instead each write inserts delta rows, in the statement (and so the
-- transaction) that changes the tasks; a background compaction, one
-- statement, moves the deltas into task_counts.

CREATE TABLE task_counts (
    tenant TEXT COLLATE "C" NOT NULL,
    owner  TEXT COLLATE "C" NOT NULL,
    state  INTEGER NOT NULL,
    n      BIGINT NOT NULL,
    PRIMARY KEY (tenant, owner, state)
);

-- Append-only between compactions: creation inserts (state, +1), an
-- append that changes the state (old, -1) and (new, +1), Import one row
-- per state it brought, Expire one per scope and state it deleted.
CREATE TABLE task_count_deltas (
    tenant TEXT COLLATE "C" NOT NULL,
    owner  TEXT COLLATE "C" NOT NULL,
    state  INTEGER NOT NULL,
    delta  BIGINT NOT NULL
);
CREATE INDEX task_count_deltas_scope ON task_count_deltas (tenant, owner, state);

-- Backfill. Processes still running an older build write tasks without
-- deltas; the lock makes them wait until the counts are taken, so that
-- the counts are exact when this transaction commits.
LOCK TABLE tasks IN SHARE MODE;
INSERT INTO task_counts (tenant, owner, state, n)
SELECT tenant, owner, state, count(*) FROM tasks GROUP BY tenant, owner, state;
