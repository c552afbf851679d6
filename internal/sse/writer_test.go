package sse_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/internal/sse"
)

// lockedRecorder lets the test read what the keep-alive timer writes.
type lockedRecorder struct {
	mu  sync.Mutex
	rec *httptest.ResponseRecorder
}

func (l *lockedRecorder) Header() http.Header { return l.rec.Header() }
func (l *lockedRecorder) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec.Write(b)
}
func (l *lockedRecorder) WriteHeader(code int) { l.rec.WriteHeader(code) }
func (l *lockedRecorder) Flush()               {}
func (l *lockedRecorder) body() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec.Body.String()
}

// TestKeepAlive: an idle stream gets comment lines, events carry their id,
// and nothing is written after Close.
func TestKeepAlive(t *testing.T) {
	w := &lockedRecorder{rec: httptest.NewRecorder()}
	s := sse.Start(w, 10*time.Millisecond)
	if err := s.Event("task-1:1", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(w.body(), ": keep-alive\n\n") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no keep-alives after idling:\n%q", w.body())
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.Close()
	closed := w.body()
	time.Sleep(50 * time.Millisecond)
	if w.body() != closed {
		t.Fatalf("written after Close:\n%q", strings.TrimPrefix(w.body(), closed))
	}
	if !strings.HasPrefix(closed, "id: task-1:1\ndata: {\"a\":1}\n\n") {
		t.Fatalf("event framing:\n%q", closed)
	}
	if ct := w.Header().Get("Content-Type"); ct != sse.ContentType {
		t.Fatalf("content type %q", ct)
	}
}
