-- Schema version 5: the ids of client messages (store.Messages), so that a
-- client that sends a message again, having lost the answer, gets what the
-- first attempt led to instead of a second task, on whichever process
-- sharing the schema the retry lands.
--
-- messages holds one row per message id in a scope: the task whose log
-- holds the message (the one it created or continued), or, task_id empty,
-- the direct reply the message was answered with. digest is the server's
-- digest of the message's content, which a retry must repeat. An Append
-- inserts the rows of the ids its events carry in its own statement, once
-- the task row is where the Append expects (a stale Append records
-- nothing): the primary key decides between two Appends bringing one id,
-- in this process or another. The second one's statement waits for the
-- first's transaction and then fails with a unique violation, so that its
-- own transaction writes nothing; the store then runs each Append of its
-- batch again alone and reports ErrMessageUsed for that one.
--
-- created (unix milliseconds, the store's clock) is what ForgetMessages
-- deletes by, oldest first, along messages_created.
--
-- An older build does not write rows here: while processes of an older
-- build share the schema, their messages are not recorded (as with
-- versions 2 to 4, run one build at a time once the schema is migrated).
CREATE TABLE messages (
    tenant  TEXT COLLATE "C" NOT NULL,
    owner   TEXT COLLATE "C" NOT NULL,
    id      TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL, -- '' for a direct reply
    digest  BYTEA NOT NULL,
    reply   BYTEA,                     -- JSON of the a2a.Message of a direct reply
    created BIGINT NOT NULL,
    PRIMARY KEY (tenant, owner, id)
);
CREATE INDEX messages_created ON messages (created);
