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
// while it copies and syncs.
//
// The log starts over only when a commit finds every frame of it copied,
// which under steady load never happens by itself: commits come while
// the checkpoint copies. So the writer's own automatic checkpoint used to
// restart the log, at 32 MiB, and every write waited while it copied the
// frames of the last checkpointEvery and synced both files: tens of
// milliseconds each time, 6 % of the writer's time under load. Instead,
// once the log holds restartPages, the checkpointer copies once more what
// came during its last round, the writer carrying on, and then holds the
// writer (Store.batchMu) for a last round, which copies only what came
// during the one before: about 10 ms every 64 MiB of log. The writer's
// next commit starts the log over. The writer's own checkpoint, at
// writerCheckpointPages, still bounds the log if that fails (another
// process writing, a reader holding on to the log's frames).
const (
	checkpointEvery       = 100 * time.Millisecond
	restartPages          = 16384 // 64 MiB of 4 KiB pages
	writerCheckpointPages = 32768 // 128 MiB
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
// checkpointEvery, and restarts the log when it is long, until the store
// closes; then it closes done.
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
		if logged, ok := s.checkpoint(); ok && logged >= restartPages {
			s.restartLog()
		}
		pause.Reset(checkpointEvery)
		select {
		case <-pause.C:
		case <-s.closing:
			return
		}
	}
}

// restartLog copies the log into the database file once with the writer
// carrying on, then once more with the writer held, so that its next
// commit starts the log over (see the top of this file).
func (s *Store) restartLog() {
	if _, ok := s.checkpoint(); !ok {
		return
	}
	s.batchMu.Lock()
	defer s.batchMu.Unlock()
	s.checkpoint()
}

// checkpoint runs a passive checkpoint and returns the frames in the log;
// ok is false if it failed.
func (s *Store) checkpoint() (logged int64, ok bool) {
	// The statement does not use a context that the store's closing
	// cancels: an interrupted checkpoint is harmless, but a clean end is
	// simpler to reason about.
	var busy, moved int64
	err := s.cdb.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, &moved)
	var se *msqlite.Error
	switch {
	case err == nil:
		return logged, true
	case !(errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY):
		// SQLITE_BUSY: another process's checkpoint is running.
		s.log.Warn("checkpoint failed; the writer's own checkpoints still bound the log", "err", err)
	}
	return 0, false
}
