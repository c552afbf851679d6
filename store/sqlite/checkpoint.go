package sqlite

import (
	"context"
	"errors"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Checkpoints. A commit appends pages to the write-ahead log; a checkpoint
// copies them back into the database file, so that the log can start over.
// SQLite runs one at the end of the commit that takes the log past 1,000
// pages, in the committing connection: with one writer goroutine, every
// write of the store waited for it (an eighth of the writer's time under
// load). The store runs them on a connection of their own instead, in the
// background, after commits, at most every checkpointEvery: a PASSIVE
// checkpoint waits for no reader or writer, and the writer carries on
// while it copies and syncs. If it falls behind, the writer's own
// automatic checkpoint, at writerCheckpointPages, still bounds the log.
const (
	checkpointEvery       = 10 * time.Millisecond
	writerCheckpointPages = 8192 // 32 MiB of 4 KiB pages
)

// kickCheckpoint tells the checkpointer that a commit added to the log. It
// never waits.
func (s *Store) kickCheckpoint() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// checkpointer runs a passive checkpoint after commits, at most every
// checkpointEvery, until the store closes; then it closes done.
func (s *Store) checkpointer(done chan<- struct{}) {
	defer close(done)
	pause := time.NewTimer(0)
	defer pause.Stop()
	for {
		select {
		case <-s.kick:
		case <-s.closing:
			return
		}
		// The statement does not use a context that the store's closing
		// cancels: an interrupted checkpoint is harmless, but a clean
		// end is simpler to reason about.
		var busy, logged, moved int64
		err := s.cdb.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, &moved)
		var se *msqlite.Error
		if err != nil && !(errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY) {
			// SQLITE_BUSY: another process's checkpoint is running.
			s.log.Warn("checkpoint failed; the writer's own checkpoints still bound the log", "err", err)
		}
		pause.Reset(checkpointEvery)
		select {
		case <-pause.C:
		case <-s.closing:
			return
		}
	}
}
