-- Schema version 2: kept counts of tasks, so that ListTasks' Total costs a
-- lookup instead of a count of every matching row (a count of a million
-- rows takes about 100 ms; a lookup, microseconds).
--
-- task_counts holds, for each scope and state, how many tasks are in it.
-- Every write that creates, deletes or changes the state of a task (Append,
-- Import, Expire) updates it in the same transaction, so it always agrees
-- with tasks. A row whose count falls to zero stays, at n = 0: there are at
-- most nine per scope. List reads it when no filter but the state is set
-- (see listSQL); a context or time filter still counts rows of tasks.
CREATE TABLE task_counts (
    tenant TEXT NOT NULL,
    owner  TEXT NOT NULL,
    state  INTEGER NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (tenant, owner, state)
) STRICT, WITHOUT ROWID;

-- The counts of the tasks already there. This runs inside the migration
-- transaction: no write comes between the count and the first update.
INSERT INTO task_counts (tenant, owner, state, n)
    SELECT tenant, owner, state, count(*) FROM tasks GROUP BY tenant, owner, state;
