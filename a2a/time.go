package a2a

import (
	"fmt"
	"strings"
	"time"
)

// Timestamp is a google.protobuf.Timestamp. It encodes as an RFC 3339 string
// in UTC with the "Z" suffix and millisecond precision (A2A §5.6.1); it
// decodes any RFC 3339 time, with or without an offset.
//
// The zero Timestamp is "unset" and is omitted from output.
type Timestamp struct {
	time.Time
}

// TimestampOf returns t as a Timestamp truncated to the millisecond, the
// precision the wire carries, so that a value survives a round trip intact.
func TimestampOf(t time.Time) Timestamp {
	return Timestamp{t.UTC().Truncate(time.Millisecond)}
}

const timestampLayout = "2006-01-02T15:04:05.000Z"

// MarshalJSON writes the time as "2026-10-06T09:00:00.000Z". A time outside
// the range of google.protobuf.Timestamp (years 0001 to 9999) is an error,
// as it is for ProtoJSON: RFC 3339 cannot write it.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	u := t.UTC()
	if y := u.Year(); y < 1 || y > 9999 {
		return nil, fmt.Errorf("a2a: timestamp year %d is outside 0001 to 9999", y)
	}
	// AppendFormat writes nine fractional digits before it cuts them to
	// three: leave room for them so that it does not grow the slice.
	b := make([]byte, 0, len(timestampLayout)+2+6)
	b = append(b, '"')
	b = u.AppendFormat(b, timestampLayout)
	return append(b, '"'), nil
}

// UnmarshalJSON reads an RFC 3339 string.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = Timestamp{}
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return fmt.Errorf("timestamp must be an RFC 3339 string, got %s", b)
	}
	s, err := unquoteJSON(b)
	if err != nil {
		return err
	}
	v, err := ParseTimestamp(s)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// ParseTimestamp parses an RFC 3339 time such as "2026-10-06T09:00:00.000Z"
// or "2026-10-06T11:00:00+02:00" and converts it to UTC. Like ProtoJSON it
// refuses more than nine fractional digits and years outside 0001 to 9999.
func ParseTimestamp(s string) (Timestamp, error) {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Timestamp{}, fmt.Errorf("invalid RFC 3339 timestamp %q", s)
	}
	v = v.UTC()
	if y := v.Year(); y < 1 || y > 9999 {
		return Timestamp{}, fmt.Errorf("timestamp %q is outside years 0001 to 9999", s)
	}
	// time.Parse accepts any number of fractional digits.
	if i, j := strings.LastIndexByte(s, '.'), strings.LastIndexAny(s, "Zz+-"); i >= 0 && j > i && j-i > len(".999999999") {
		return Timestamp{}, fmt.Errorf("timestamp %q has more than nine fractional digits", s)
	}
	return Timestamp{v}, nil
}

// String formats the timestamp as it appears on the wire.
func (t Timestamp) String() string { return t.UTC().Format(timestampLayout) }
