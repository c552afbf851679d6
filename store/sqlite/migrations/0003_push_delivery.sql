-- Schema version 3: the delivery state of each push config (store.PushState),
-- so that webhook delivery survives a restart and the processes sharing
-- the file do not deliver one event twice at once.
--
-- delivered is the seq of the last event of the task's log the config is
-- done with; the config has work while it is below the task's seq.
-- next_attempt is when it may next be worked on, unix milliseconds, 0 for
-- at once: the time of a retry, or the end of a worker's claim. failing is
-- 1 once the worker gave up; the config then waits to be replaced.
ALTER TABLE push_configs ADD COLUMN delivered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE push_configs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE push_configs ADD COLUMN next_attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE push_configs ADD COLUMN failing INTEGER NOT NULL DEFAULT 0 CHECK (failing IN (0, 1));
ALTER TABLE push_configs ADD COLUMN last_error TEXT NOT NULL DEFAULT '';

-- The configs already there have seen everything so far: an upgrade must
-- not replay old events to them. This runs inside the migration
-- transaction, so no Append comes between the read of a task's seq and
-- the update.
UPDATE push_configs SET delivered = t.seq FROM tasks t WHERE t.id = push_configs.task_id;

-- ClaimPush walks the configs that are not failing, due first, and looks
-- up each one's task by id; it stops after the configs it wants.
CREATE INDEX push_configs_due ON push_configs (next_attempt, task_id, id) WHERE failing = 0;
