package sqlite

import (
	"context"
	"errors"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/goa2a/a2a/store"
)

// classify marks err with [store.ErrUnavailable] when SQLite says that the
// file cannot be written or opened now (see [unavailable]), and returns
// every other error as it is. Writes pass their outcome through it where
// the writer answers them, reads where they return (readErr).
func classify(err error) error {
	if err == nil || !unavailable(err) {
		return err
	}
	return store.Unavailable(err)
}

// unavailable reports whether err is an error of SQLite whose primary
// code says the database cannot be written or opened now, but may be
// later: SQLITE_BUSY (returned once the busy timeout has passed: another
// process holds the lock), SQLITE_READONLY (the file or its directory is
// not writable), SQLITE_IOERR (a write or sync failed: a file size limit,
// a failing disk), SQLITE_FULL (a full disk or quota), SQLITE_CANTOPEN (a
// file, such as the write-ahead log, cannot be opened) and SQLITE_PROTOCOL
// (the lock protocol failed, a race SQLite itself retries a while).
func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrClosed) {
		return false
	}
	var se *msqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL,
		sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PROTOCOL:
		return true
	}
	return false
}

var _ store.Prober = (*Store)(nil)

// Probe implements [store.Prober]: it renews the store's heartbeat in the
// runners table through the writer, a write of one row that commits like
// any other, so it fails (wrapping [store.ErrUnavailable]) as soon as the
// file cannot be written, which reads alone would not notice: SQLite reads
// an open file whose disk is full or whose permissions changed. It waits
// for the writer's batch in progress. [Store.Check] is the thorough check
// of the file's integrity, too slow for a probe.
func (s *Store) Probe(ctx context.Context) error { return s.heartbeat(ctx) }
