-- Schema version 3: the delivery state of each push config (store.PushState),
-- so that webhook delivery survives a restart and the processes sharing
-- the schema do not deliver one event twice at once.
--
-- delivered is the seq of the last event of the task's log the config is
-- done with; the config has work while it is below the task's seq.
-- next_attempt is when it may next be worked on, unix milliseconds, 0 for
-- at once: the time of a retry, or the end of a worker's claim. failing is
-- set once the worker gave up; the config then waits to be replaced.
--
-- ALTER TABLE locks push_configs until this transaction commits. A process
-- of an older build that puts a new config meanwhile waits, then inserts
-- it at delivered 0, and its task's whole log would be delivered: every
-- process sharing a schema must run a build that knows version 3 once it
-- is migrated.
ALTER TABLE push_configs
    ADD COLUMN delivered    BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN attempts     INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN next_attempt BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN failing      BOOLEAN NOT NULL DEFAULT false,
    ADD COLUMN last_error   TEXT NOT NULL DEFAULT '';

-- The configs already there have seen everything so far: an upgrade must
-- not replay old events to them. An Append that commits after this reads
-- a task's seq brings an event that the config is then sent, as it should.
UPDATE push_configs p SET delivered = t.seq FROM tasks t WHERE t.id = p.task_id;

-- ClaimPush walks the configs that are not failing, due first, and looks
-- up each one's task by its primary key; it stops after the configs it
-- wants.
CREATE INDEX push_configs_due ON push_configs (next_attempt, task_id, id) WHERE NOT failing;
