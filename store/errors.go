package store

import (
	"context"
	"errors"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// ErrUnavailable: the store cannot be reached or cannot write now; retry
// later. Its database is down or unreachable, or its file unwritable; the
// same call may succeed once that passes. Stores wrap such failures with
// it (see [Unavailable]), so that the server keeps what it could not store
// and tries again, and answers its callers Unavailable (retryable) rather
// than a failure of their request.
//
// What counts, in this module's stores:
//
//   - PostgreSQL: a connection that cannot be made (refused, no socket,
//     timed out, the server starting up or shutting down) or that is lost
//     in the middle of a call; and the server's errors of class 08
//     (connection exception), 57P01 to 57P03 and 57P05 (the server
//     terminated the connection or is shutting down), 53100, 53200 and
//     53300 (disk full, out of memory, too many connections), 58030 (I/O
//     error) and 25006 (a read-only server, such as a standby after a
//     failover).
//   - SQLite: SQLITE_BUSY (once the busy timeout of 10 s has passed),
//     SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN and
//     SQLITE_PROTOCOL, with their extended codes: the file cannot be
//     written or opened now (a full disk, a file size limit, permissions,
//     another process holding the lock).
//
// Not counted: a call whose context ended returns the context's error as
// it is (the caller gave up, the store did not fail; [a2a.AsError] answers
// it Unavailable anyway); a closed store, a conflict, a missing task, bad
// data, a refused login or a missing table are errors of their own.
//
// An error that wraps ErrUnavailable converts, with [errors.As], to an
// [*a2a.Error] of code Unavailable whose RetryAfter is one second, with a
// message that names no internals; so [a2a.AsError] answers it Unavailable
// wherever the server maps an error, and the bindings send HTTP 503 with
// Retry-After, gRPC UNAVAILABLE, or JSON-RPC -32603 with a RetryInfo in
// its data.
var ErrUnavailable error = unavailableSentinel{}

// UnavailableRetryAfter is how long the Unavailable error of an outage
// ([ErrUnavailable]) tells clients to wait before they try again.
const UnavailableRetryAfter = time.Second

// unavailableMessage is the message clients get for an outage.
const unavailableMessage = "The task store is unavailable; try again later."

type unavailableSentinel struct{}

func (unavailableSentinel) Error() string {
	return "store: unavailable: the store cannot be reached or cannot write now; retry later"
}

// As converts the outage to the A2A error clients get.
func (unavailableSentinel) As(target any) bool {
	p, ok := target.(**a2a.Error)
	if !ok {
		return false
	}
	e := a2a.NewError(a2a.CodeUnavailable, unavailableMessage).WithCause(ErrUnavailable)
	e.RetryAfter = UnavailableRetryAfter
	*p = e
	return true
}

// Unavailable returns err marked as an outage: the result wraps err and
// [ErrUnavailable], and its message is err's. It returns nil for nil, and
// err itself when it already wraps ErrUnavailable. Stores call it on the
// failures that ErrUnavailable lists.
func Unavailable(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	return &unavailableError{err: err}
}

type unavailableError struct{ err error }

func (e *unavailableError) Error() string   { return e.err.Error() }
func (e *unavailableError) Unwrap() []error { return []error{e.err, ErrUnavailable} }

// A Prober can tell cheaply whether the store can serve now: Probe returns
// nil when it can read and write, and otherwise why not (wrapping
// [ErrUnavailable] for an outage). It writes a few bytes at most (both SQL
// stores renew their runner's heartbeat), so a readiness check may call it
// every second or so. a2a serve's /readyz does.
type Prober interface {
	Probe(ctx context.Context) error
}
