// Package sse writes and reads Server-Sent Events streams (the W3C
// EventSource format) as the A2A HTTP bindings use them: one JSON object per
// "data:" line, an "id:" line for resumable events, and comment lines as
// keep-alives.
package sse

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// ContentType is the media type of an SSE response.
const ContentType = "text/event-stream"

// maxKeptBuffer is the largest event buffer a Writer keeps between events.
const maxKeptBuffer = 4 << 10

// Writer writes events to an HTTP response. It flushes each event through
// http.ResponseController, which reaches the underlying writer through
// middleware that implements Unwrap, until Detach moves it to a writer of
// its own. Its methods are safe for concurrent use.
type Writer struct {
	mu        sync.Mutex
	w         io.Writer
	rc        *http.ResponseController // nil once detached
	buf       []byte
	keepAlive time.Duration
	timer     *time.Timer
	closed    bool
	err       error
}

// Start writes the response headers (status 200) and returns a Writer. With
// keepAlive > 0, a comment line is written whenever the stream has been idle
// that long, so proxies and clients do not time the stream out; no goroutine
// waits in between. Call Close when done.
func Start(w http.ResponseWriter, keepAlive time.Duration) *Writer {
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // ask reverse proxies not to buffer
	w.WriteHeader(http.StatusOK)
	s := &Writer{w: w, rc: http.NewResponseController(w), keepAlive: keepAlive}
	s.mu.Lock()
	s.flushLocked()
	if keepAlive > 0 {
		s.timer = time.AfterFunc(keepAlive, s.ping)
	}
	s.mu.Unlock()
	return s
}

// Event writes one event: an optional id line and the data, which must not
// contain newlines (compact JSON never does). It returns the write error, if
// any, which usually means the client went away.
func (s *Writer) Event(id string, data []byte) error {
	return s.NamedEvent("", id, data)
}

// NamedEvent is Event with an event type line ("event: error", say) unless
// event is empty.
func (s *Writer) NamedEvent(event, id string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	b := s.buf[:0]
	if event != "" {
		b = append(b, "event: "...)
		b = append(b, event...)
		b = append(b, '\n')
	}
	if id != "" {
		b = append(b, "id: "...)
		b = append(b, id...)
		b = append(b, '\n')
	}
	// A stray newline would end the field early; split it across data
	// lines as the format allows.
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		b = append(b, "data: "...)
		b = append(b, bytes.TrimSuffix(data[:i], []byte("\r"))...)
		b = append(b, '\n')
		data = data[i+1:]
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	if cap(b) <= maxKeptBuffer {
		s.buf = b // reused by the next event
	} else {
		s.buf = nil // a large event's buffer is not kept for the stream's life
	}
	if _, err := s.w.Write(b); err != nil {
		s.err = err
		return err
	}
	s.flushLocked()
	if s.timer != nil {
		s.timer.Reset(s.keepAlive)
	}
	return s.err
}

// Retry asks the client to wait d before reconnecting.
func (s *Writer) Retry(d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if _, err := s.w.Write([]byte("retry: " + strconv.FormatInt(d.Milliseconds(), 10) + "\n\n")); err != nil {
		s.err = err
		return err
	}
	s.flushLocked()
	return s.err
}

func (s *Writer) ping() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.err != nil {
		return
	}
	if _, err := s.w.Write([]byte(": keep-alive\n\n")); err != nil {
		s.err = err
		return
	}
	s.flushLocked()
	s.timer.Reset(s.keepAlive)
}

// Detach calls take with the Writer's lock held (no keep-alive is written
// meanwhile) and, unless it returns nil, sends what the Writer writes from
// then on to the writer it returned, unbuffered, instead of the HTTP
// response: a stream that goes on on a hijacked connection.
func (s *Writer) Detach(take func() io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := take(); w != nil {
		s.w, s.rc = w, nil
	}
}

func (s *Writer) flushLocked() {
	if s.rc == nil {
		return
	}
	// A writer that cannot flush still delivers, only later.
	if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) && s.err == nil {
		s.err = err
	}
}

// Close stops the keep-alives. The Writer must not be used afterwards; the
// response ends when the HTTP handler returns.
func (s *Writer) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
	}
}
