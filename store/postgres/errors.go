package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/goa2a/a2a/store"
)

// classify marks err with [store.ErrUnavailable] when it says that the
// database cannot be reached or cannot write now (see [unavailable]), and
// returns every other error as it is. The store's operations pass their
// errors through it where they return them.
func classify(err error) error {
	if err == nil || !unavailable(err) {
		return err
	}
	return store.Unavailable(err)
}

// classifyErr is classify for a deferred call on a named error result.
func classifyErr(err *error) { *err = classify(*err) }

// unavailable reports whether err is an outage rather than a failure of
// the call: what the server said decides first (a login refused, a
// missing table, a conflict are not outages, even while connecting);
// then a connection that could not be made or broke, but never the
// caller's context ending.
func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return unavailableState(pgErr.Code)
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true // refused, no socket, or no answer within connect_timeout
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var netErr net.Error
	return errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.As(err, &netErr)
}

// unavailableState reports whether a SQLSTATE is one of an outage
// (PostgreSQL's appendix A, "Error codes").
func unavailableState(code string) bool {
	switch code {
	case "57P01", // admin_shutdown: pg_ctl stop -m fast, or the connection terminated
		"57P02", // crash_shutdown
		"57P03", // cannot_connect_now: starting up, shutting down, in recovery
		"57P05", // idle_session_timeout
		"53100", // disk_full
		"53200", // out_of_memory
		"53300", // too_many_connections
		"58030", // io_error
		"25006": // read_only_sql_transaction: a standby, or default_transaction_read_only
		return true
	}
	return strings.HasPrefix(code, "08") // connection_exception and its subclasses
}

var _ store.Prober = (*Store)(nil)

// Probe implements [store.Prober]: it renews the store's heartbeat in the
// runners table, a write of one row, so that it fails (wrapping
// [store.ErrUnavailable]) both when the database cannot be reached and
// when it cannot write, such as a standby or a full disk.
func (s *Store) Probe(ctx context.Context) error { return s.heartbeat(ctx) }
