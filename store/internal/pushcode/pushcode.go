// Package pushcode is how the SQL stores keep a push config's delivery
// state in one next_attempt column: unix milliseconds, 0 for at once, and
// for the idle and parked phases two dates no retry reaches, so that
// "next_attempt <= now" claims only the configs that are due, on the
// column's index, and Append wakes idle configs by that value alone.
package pushcode

import (
	"time"

	"github.com/goa2a/a2a/store"
)

// The next_attempt values of the phases other than due.
const (
	IdleMS   int64 = 253339228800000 // 9998-01-01T00:00:00Z
	ParkedMS int64 = 253370764800000 // 9999-01-01T00:00:00Z
)

// NextAttempt is the next_attempt column of st.
func NextAttempt(st store.PushState) int64 {
	switch st.Phase {
	case store.PushIdle:
		return IdleMS
	case store.PushParked:
		return ParkedMS
	}
	return Millis(st.NextAttempt)
}

// SetNextAttempt sets st's phase and NextAttempt from the column.
func SetNextAttempt(st *store.PushState, ms int64) {
	st.Phase, st.NextAttempt = store.PushDue, time.Time{}
	switch ms {
	case IdleMS:
		st.Phase = store.PushIdle
	case ParkedMS:
		st.Phase = store.PushParked
	default:
		st.NextAttempt = Time(ms)
	}
}

// Millis is tm in unix milliseconds, 0 for the zero time.
func Millis(tm time.Time) int64 {
	if tm.IsZero() {
		return 0
	}
	return tm.UnixMilli()
}

// Time is the inverse of Millis.
func Time(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
