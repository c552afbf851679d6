package store

import "errors"

// ErrUnavailable: the store cannot be reached, or cannot write, now (its
// database is down or unreachable, its file unwritable); the same call may
// succeed later. Stores wrap such failures with it, so that the server
// keeps what it could not store and tries again, and answers its callers
// Unavailable (retryable) rather than a failure of their request.
var ErrUnavailable = errors.New("store: unavailable")
