-- Schema version 4: a task's snapshot may be older than its log, so that an
-- Append costs the same however long the task has grown, and two of the
-- list indexes go.
--
-- The task is its snapshot with the events snap_seq+1 .. seq of its log
-- applied in order (store.Fold); readers fold them. snap_bytes is the size
-- of the snapshot, tail_bytes the total size of the payloads of those
-- events. An Append writes the snapshot (and sets snap_seq to its last
-- seq, tail_bytes to 0) only when store.SnapshotDue says so of the task's
-- new state and these sizes; otherwise it inserts its events and adds
-- their size to tail_bytes, and the snapshot, a TOASTed value the UPDATE
-- leaves as it is, is not written again.
--
-- Existing rows: adding a column without a default, or with a constant
-- one, rewrites no row, so this is quick however many tasks there are.
-- snap_seq is NULL on the rows of older versions: their snapshot is at
-- seq, which readers take a NULL for (coalesce(snap_seq, seq)) until the
-- task's next Append sets it. Their snap_bytes is 0, not the size of their
-- snapshot: the first Append that brings 4 KiB of events writes the
-- snapshot again (store.SnapshotDue), and from then on the sizes are
-- exact.
--
-- An older build would write a full snapshot without moving snap_seq, and
-- readers would then apply the events since snap_seq a second time: as
-- with versions 2 and 3, every process sharing a schema must run a build
-- that knows version 4 once it is migrated (an older one refuses to open
-- it; processes already running must be stopped first).
ALTER TABLE tasks
    ADD COLUMN snap_seq   BIGINT,
    ADD COLUMN snap_bytes BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN tail_bytes BIGINT NOT NULL DEFAULT 0;

-- Every index of tasks that holds status_ts gets a new entry when a status
-- update changes it. ListTasks by state needs no index of its own: it
-- walks tasks_list, or tasks_list_context with a context filter, in the
-- same order and keeps the tasks in that state (the total still comes
-- from the counters). tasks_state stays for Orphans and Expire, which look
-- for a few states in every scope.
DROP INDEX tasks_list_state;
DROP INDEX tasks_list_context_state;
