package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// DefaultMaxEventBytes bounds one event (its lines and its data) when
// [NewReader] is given no limit: 16 MiB.
const DefaultMaxEventBytes = 16 << 20

// ErrEventTooLarge reports an event or a line over the reader's limit.
var ErrEventTooLarge = errors.New("sse: event too large")

// Event is one dispatched event of a stream.
type Event struct {
	// Type is the "event:" field, "" when the event had none (the
	// "message" type of the W3C format).
	Type string
	// ID is the last event ID as of this event: the value of the latest
	// "id:" field seen on the stream, in this event or an earlier one, as
	// EventSource reports it and sends back as Last-Event-ID.
	ID string
	// Data is the "data:" fields joined by newlines. It is valid until the
	// next call to Next.
	Data []byte
}

// Reader reads events from a text/event-stream body following the W3C
// EventSource parsing rules: lines end in CRLF, LF or CR; a leading byte
// order mark is skipped; comment lines (": keep-alive") are ignored; "data:"
// fields accumulate, joined by newlines; "id:" sets the last event ID
// (unless the value holds a NUL); "retry:" sets the reconnection delay when
// it is all digits; unknown fields are ignored; an empty line dispatches the
// event, unless it has no data. An event cut off by the end of the stream
// is not dispatched.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	sc      *bufio.Scanner
	max     int
	started bool

	data      []byte
	hasData   bool
	eventType string
	lastID    string
	retry     time.Duration
	out       []byte
}

// NewReader returns a Reader of r. maxEventBytes bounds one event's lines
// and data; 0 or less means [DefaultMaxEventBytes].
func NewReader(r io.Reader, maxEventBytes int) *Reader {
	if maxEventBytes <= 0 {
		maxEventBytes = DefaultMaxEventBytes
	}
	sc := bufio.NewScanner(r)
	// A line holds at most the event plus its field name and terminator.
	sc.Buffer(make([]byte, 0, 4096), maxEventBytes+64)
	sc.Split(scanLines)
	return &Reader{sc: sc, max: maxEventBytes}
}

// Next returns the next event. At the end of the stream it returns io.EOF;
// a stream cut off in the middle of an event also ends with io.EOF, the
// partial event dropped, as EventSource does. Other errors come from the
// underlying reader, or are [ErrEventTooLarge].
func (r *Reader) Next() (Event, error) {
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if !r.started {
			r.started = true
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue // a comment, such as a keep-alive
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if len(r.data)+len(value)+1 > r.max {
				return Event{}, ErrEventTooLarge
			}
			r.data = append(r.data, value...)
			r.data = append(r.data, '\n')
			r.hasData = true
		case "event":
			r.eventType = string(value)
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.lastID = string(value)
			}
		case "retry":
			if n, ok := digits(value); ok {
				r.retry = time.Duration(n) * time.Millisecond
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Event{}, ErrEventTooLarge
		}
		return Event{}, err
	}
	return Event{}, io.EOF
}

// dispatch ends the current event. An event without data is not
// dispatched; its type is forgotten, its id is kept (W3C "dispatch the
// event").
func (r *Reader) dispatch() (Event, bool) {
	typ := r.eventType
	r.eventType = ""
	if !r.hasData {
		return Event{}, false
	}
	// Hand out a copy that stays valid while r.data is reused.
	r.out = append(r.out[:0], r.data[:len(r.data)-1]...)
	r.data, r.hasData = r.data[:0], false
	return Event{Type: typ, ID: r.lastID, Data: r.out}, true
}

// LastEventID is the last event ID seen so far, "" if none.
func (r *Reader) LastEventID() string { return r.lastID }

// Retry is the reconnection delay the stream asked for with "retry:", 0 if
// it asked for none.
func (r *Reader) Retry() time.Duration { return r.retry }

// digits parses a non-empty run of ASCII digits, saturating instead of
// overflowing.
func digits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		n = int64(time.Duration(1<<63-1) / time.Millisecond)
	}
	return min(n, int64(time.Duration(1<<63-1)/time.Millisecond)), true
}

// scanLines splits at CRLF, LF or CR, the three line ends of the format. A
// CR at the end of the buffered data waits for the next byte, which may be
// the LF of a CRLF.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	i := bytes.IndexAny(data, "\r\n")
	if i < 0 {
		if atEOF {
			// A last line without its end is cut off: drop it, as a
			// partial "id:" line would name the wrong event.
			return len(data), nil, nil
		}
		return 0, nil, nil
	}
	if data[i] == '\n' {
		return i + 1, data[:i], nil
	}
	// A CR: is it followed by an LF?
	if i+1 < len(data) {
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	}
	if atEOF {
		return i + 1, data[:i], nil
	}
	return 0, nil, nil // need more data to tell CR from CRLF
}
