package a2a

import (
	"fmt"
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

// MarshalJSON writes the time as "2026-10-06T09:00:00.000Z".
func (t Timestamp) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(timestampLayout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, timestampLayout)
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
	v, err := ParseTimestamp(string(b[1 : len(b)-1]))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// ParseTimestamp parses an RFC 3339 time such as "2026-10-06T09:00:00.000Z".
func ParseTimestamp(s string) (Timestamp, error) {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Timestamp{}, fmt.Errorf("invalid RFC 3339 timestamp %q", s)
	}
	return Timestamp{v.UTC()}, nil
}

// String formats the timestamp as it appears on the wire.
func (t Timestamp) String() string { return t.UTC().Format(timestampLayout) }
