// Package pushcode is how the SQL stores keep a push config's delivery
// state in one next_attempt column: unix milliseconds of the next
// attempt; for a config due at once, a negative value that orders such
// configs by when they became due ([DueSince]); and for the idle and
// parked phases two dates no retry reaches. So "next_attempt <= now"
// claims only the configs that are due, on the column's index, the
// longest waiting first, and Append wakes idle configs by that value
// alone.
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

// dueOffset puts the values of [DueSince] below every date.
const dueOffset int64 = 1 << 62

// DueSince is the next_attempt of a config due at once since t: t in unix
// microseconds less 2^62, negative. "next_attempt <= now" holds for it
// whatever the claimer's clock (another replica's, a test's), and among
// such configs the column's order is the order they became due in, so
// that a claim that takes only some of them starves none (an order by
// task id would pass over the same tasks each time).
func DueSince(t time.Time) int64 { return t.UnixMicro() - dueOffset }

// NextAttempt is the next_attempt column of st; a config due at once is
// due since now.
func NextAttempt(st store.PushState) int64 {
	switch st.Phase {
	case store.PushIdle:
		return IdleMS
	case store.PushParked:
		return ParkedMS
	}
	if st.NextAttempt.IsZero() {
		return DueSince(time.Now())
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
		if ms > 0 { // else due at once (0, or DueSince)
			st.NextAttempt = Time(ms)
		}
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
