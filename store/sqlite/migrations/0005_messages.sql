-- Schema version 5: the ids of client messages (store.Messages), so that a
-- client that sends a message again, having lost the answer, gets what the
-- first attempt led to instead of a second task.
--
-- messages holds one row per message id in a scope: the task whose log
-- holds the message (the one it created or continued), or, task_id empty,
-- the direct reply the message was answered with. digest is the server's
-- digest of the message's content, which a retry must repeat. An Append
-- inserts the rows of the ids its events carry in its own transaction (and
-- savepoint), after it knows the task is where it expects, so that of two
-- Appends bringing one id the second finds the first's row and fails,
-- writing nothing.
--
-- Without a rowid, a row is one entry of the primary key's b-tree: a lookup
-- by (tenant, owner, id) reads one leaf, and an insert writes one. created
-- (unix milliseconds) is what ForgetMessages deletes by, oldest first: its
-- index grows at its right edge, so the inserts of one group commit share
-- its last page.
CREATE TABLE messages (
    tenant  TEXT NOT NULL,
    owner   TEXT NOT NULL,
    id      TEXT NOT NULL,
    task_id TEXT NOT NULL,  -- '' for a direct reply
    digest  BLOB NOT NULL,
    reply   BLOB,           -- JSON of the a2a.Message of a direct reply
    created INTEGER NOT NULL,
    PRIMARY KEY (tenant, owner, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX messages_created ON messages (created);
