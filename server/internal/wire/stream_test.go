package wire_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/internal/wire"
)

// feed is a stream's events as the test hands them out, one by one.
type feed struct {
	steps    chan step
	canceled chan struct{} // closed when the events' context ended
	returned chan struct{} // closed when the events' function returned
}

type step struct {
	data string
	err  error
}

func newFeed() *feed {
	return &feed{steps: make(chan step), canceled: make(chan struct{}), returned: make(chan struct{})}
}

func (f *feed) open(ctx context.Context) iter.Seq2[server.StreamEvent, error] {
	return func(yield func(server.StreamEvent, error) bool) {
		defer close(f.returned)
		for n := 1; ; n++ {
			select {
			case st, ok := <-f.steps:
				if !ok {
					return
				}
				ev := server.StreamEvent{ID: fmt.Sprintf("t:%d", n), Data: []byte(st.data)}
				if !yield(ev, st.err) {
					return
				}
			case <-ctx.Done():
				close(f.canceled)
				return
			}
		}
	}
}

// send hands out one event, in a goroutine of its own, and marks the test
// failed if nothing takes it.
func (f *feed) send(t *testing.T, st step) {
	go func() {
		select {
		case f.steps <- st:
		case <-time.After(30 * time.Second):
			t.Errorf("nobody took %q", st.data)
		}
	}()
}

var format = wire.StreamFormat{
	Frame: func(_ a2a.Event, data []byte) ([]byte, error) { return data, nil },
	Error: func(w http.ResponseWriter, err error) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, `{"error":"`+err.Error()+`"}`)
	},
	ErrorData: func(e *a2a.Error) []byte { return []byte(`{"error":"` + e.Message + `"}`) },
}

// streamServer serves f's events with wire.Stream behind wrap (nil for
// none); returned is closed, once per request, when the handler returns.
func streamServer(t *testing.T, f *feed, format wire.StreamFormat, wrap func(http.ResponseWriter) http.ResponseWriter, h2 bool) (*httptest.Server, chan struct{}) {
	returned := make(chan struct{})
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		if wrap != nil {
			w = wrap(w)
		}
		wire.Stream(r.Context(), w, r, f.open, format)
	}))
	if h2 {
		ts.EnableHTTP2 = true
		ts.StartTLS()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	return ts, returned
}

// open starts the stream and returns the response and a reader of its
// lines.
func open(t *testing.T, c *http.Client, url string) (*http.Response, *bufio.Reader) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader("{}"))
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res, bufio.NewReader(res.Body)
}

// frame reads the next frame, skipping keep-alive comments.
func frame(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var lines []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading a frame after %q: %v", lines, err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && len(lines) > 0:
			return strings.Join(lines, "|")
		case line == "", strings.HasPrefix(line, ":"):
		default:
			lines = append(lines, line)
		}
	}
}

func waitClosed(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not after 30s", what)
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestStreamDetaches checks a stream over HTTP/1.1: after its first frame
// the handler returns and the stream goes on, every frame in order, until
// the events end and the connection closes, which ends the body.
func TestStreamDetaches(t *testing.T) {
	f := newFeed()
	ts, returned := streamServer(t, f, format, nil, false)
	f.send(t, step{data: `{"n":1}`})
	res, br := open(t, ts.Client(), ts.URL)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if !res.Close || len(res.TransferEncoding) != 0 {
		t.Errorf("Close %v, Transfer-Encoding %q: want a body that ends with the connection", res.Close, res.TransferEncoding)
	}
	if got := frame(t, br); got != `id: t:1|data: {"n":1}` {
		t.Fatalf("frame 1 = %q", got)
	}
	waitClosed(t, returned, "the handler returning after the first frame")
	for n := 2; n <= 50; n++ {
		data := fmt.Sprintf(`{"n":%d}`, n)
		f.send(t, step{data: data})
		if got, want := frame(t, br), fmt.Sprintf("id: t:%d|data: %s", n, data); got != want {
			t.Fatalf("frame %d = %q, want %q", n, got, want)
		}
	}
	if isClosed(f.canceled) {
		t.Fatal("the events' context ended with the handler")
	}
	close(f.steps)
	if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
		t.Errorf("after the last frame: %q, %v; want the end of the body", rest, err)
	}
	waitClosed(t, f.returned, "the events returning")
}

// TestStreamDetachedErrors checks the errors of a stream on a connection
// that could be hijacked: one before the first frame is a plain response
// (no hijack), one after it is the last frame.
func TestStreamDetachedErrors(t *testing.T) {
	t.Run("before the first frame", func(t *testing.T) {
		f := newFeed()
		ts, returned := streamServer(t, f, format, nil, false)
		f.send(t, step{err: errors.New("nope")})
		res, br := open(t, ts.Client(), ts.URL)
		body, _ := io.ReadAll(br)
		if res.StatusCode != http.StatusTeapot || string(body) != `{"error":"nope"}` {
			t.Errorf("status %d, body %q", res.StatusCode, body)
		}
		waitClosed(t, returned, "the handler returning")
	})
	t.Run("after it", func(t *testing.T) {
		f := newFeed()
		ts, returned := streamServer(t, f, format, nil, false)
		f.send(t, step{data: "1"})
		_, br := open(t, ts.Client(), ts.URL)
		frame(t, br)
		waitClosed(t, returned, "the handler returning")
		f.send(t, step{data: "2"})
		frame(t, br)
		f.send(t, step{err: a2a.NewError(a2a.CodeTaskNotFound, "gone")})
		if got := frame(t, br); got != `event: error|data: {"error":"gone"}` {
			t.Errorf("last frame %q", got)
		}
		if rest, err := io.ReadAll(br); err != nil || len(rest) != 0 {
			t.Errorf("after the error frame: %q, %v", rest, err)
		}
		waitClosed(t, f.returned, "the events returning")
	})
	t.Run("no events", func(t *testing.T) {
		f := newFeed()
		close(f.steps)
		ts, _ := streamServer(t, f, format, nil, false)
		res, br := open(t, ts.Client(), ts.URL)
		body, _ := io.ReadAll(br)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" || len(body) != 0 {
			t.Errorf("status %d, Content-Type %q, body %q", res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	})
}

// TestStreamDetachedClientGone checks that a client closing the connection
// of a detached stream ends the events' context.
func TestStreamDetachedClientGone(t *testing.T) {
	f := newFeed()
	ts, returned := streamServer(t, f, format, nil, false)
	f.send(t, step{data: "1"})
	res, br := open(t, ts.Client(), ts.URL)
	frame(t, br)
	waitClosed(t, returned, "the handler returning")
	res.Body.Close()
	waitClosed(t, f.canceled, "the events' context ending")
	waitClosed(t, f.returned, "the events returning")
}

// TestStreamKeepAliveDetached checks that keep-alive comments go on after
// the stream is detached.
func TestStreamKeepAliveDetached(t *testing.T) {
	f := newFeed()
	kf := format
	kf.KeepAlive = 5 * time.Millisecond
	ts, returned := streamServer(t, f, kf, nil, false)
	f.send(t, step{data: "1"})
	_, br := open(t, ts.Client(), ts.URL)
	frame(t, br)
	waitClosed(t, returned, "the handler returning")
	for range 3 {
		line, err := br.ReadString('\n')
		for err == nil && line == "\n" {
			line, err = br.ReadString('\n')
		}
		if err != nil || line != ": keep-alive\n" {
			t.Fatalf("read %q, %v; want a keep-alive", line, err)
		}
	}
	close(f.steps)
	waitClosed(t, f.returned, "the events returning")
}

// watcher is middleware that follows streams past their handler.
type watcher struct {
	http.ResponseWriter
	refuse bool
	frames atomic.Int32 // writes that went through it
	mu     sync.Mutex
	ended  []bool
	done   chan struct{} // closed at ended(true)
}

func (w *watcher) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *watcher) Write(b []byte) (int, error) {
	w.frames.Add(1)
	return w.ResponseWriter.Write(b)
}

func (w *watcher) StreamDetached() (func(bool), bool) {
	if w.refuse {
		return nil, false
	}
	return func(detached bool) {
		w.mu.Lock()
		w.ended = append(w.ended, detached)
		w.mu.Unlock()
		if detached {
			close(w.done)
		}
	}, true
}

func (w *watcher) endedCalls() []bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]bool(nil), w.ended...)
}

// plainWrapper unwraps but is no StreamWatcher: it may need every byte.
type plainWrapper struct {
	http.ResponseWriter
	frames atomic.Int32
}

func (w *plainWrapper) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *plainWrapper) Write(b []byte) (int, error) {
	w.frames.Add(1)
	return w.ResponseWriter.Write(b)
}

// TestStreamWatchers checks the middleware that lets a stream go on past
// its handler and the middleware that keeps it there.
func TestStreamWatchers(t *testing.T) {
	t.Run("watcher", func(t *testing.T) {
		f := newFeed()
		w := &watcher{done: make(chan struct{})}
		ts, returned := streamServer(t, f, format, func(rw http.ResponseWriter) http.ResponseWriter { w.ResponseWriter = rw; return w }, false)
		f.send(t, step{data: "1"})
		_, br := open(t, ts.Client(), ts.URL)
		frame(t, br)
		waitClosed(t, returned, "the handler returning")
		f.send(t, step{data: "2"})
		frame(t, br)
		if got := w.endedCalls(); len(got) != 0 {
			t.Errorf("ended(%v) before the stream ended", got)
		}
		close(f.steps)
		waitClosed(t, w.done, "ended(true)")
		if got := w.endedCalls(); len(got) != 1 || !got[0] {
			t.Errorf("ended calls %v, want [true]", got)
		}
		if n := w.frames.Load(); n != 1 {
			t.Errorf("%d writes through the watcher, want the first frame's only", n)
		}
	})
	for _, c := range []struct {
		name string
		wrap func(http.ResponseWriter) (http.ResponseWriter, func() int32)
	}{
		{"wrapper that is no watcher", func(rw http.ResponseWriter) (http.ResponseWriter, func() int32) {
			w := &plainWrapper{ResponseWriter: rw}
			return w, w.frames.Load
		}},
		{"refusing watcher", func(rw http.ResponseWriter) (http.ResponseWriter, func() int32) {
			w := &watcher{ResponseWriter: rw, refuse: true}
			return w, w.frames.Load
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFeed()
			var frames func() int32
			var outer *watcher
			ts, returned := streamServer(t, f, format, func(rw http.ResponseWriter) http.ResponseWriter {
				var w http.ResponseWriter
				w, frames = c.wrap(rw)
				// An accepting watcher outside is told the stream stays.
				outer = &watcher{ResponseWriter: w, done: make(chan struct{})}
				return outer
			}, false)
			f.send(t, step{data: "1"})
			_, br := open(t, ts.Client(), ts.URL)
			frame(t, br)
			f.send(t, step{data: "2"})
			frame(t, br)
			if isClosed(returned) {
				t.Fatal("the handler returned with its stream open")
			}
			close(f.steps)
			io.ReadAll(br)
			waitClosed(t, returned, "the handler returning")
			if n := frames(); n < 2 {
				t.Errorf("%d writes through the wrapper, want every frame", n)
			}
			// The outer watcher is asked first: it hears the stream stays
			// when the inner one refuses; past a wrapper that is no
			// watcher, nobody is asked.
			want := "[]"
			if c.name == "refusing watcher" {
				want = "[false]"
			}
			if got := fmt.Sprint(outer.endedCalls()); got != want {
				t.Errorf("outer watcher: ended calls %v, want %v", got, want)
			}
		})
	}
}

// TestStreamHTTP2StaysOnHandler checks that an HTTP/2 stream is served by
// its handler to the end.
func TestStreamHTTP2StaysOnHandler(t *testing.T) {
	f := newFeed()
	ts, returned := streamServer(t, f, format, nil, true)
	c := ts.Client()
	c.Transport.(*http.Transport).TLSClientConfig.NextProtos = []string{"h2"}
	c.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	f.send(t, step{data: "1"})
	res, br := open(t, c, ts.URL)
	if res.ProtoMajor != 2 {
		t.Fatalf("protocol %s, want HTTP/2", res.Proto)
	}
	frame(t, br)
	f.send(t, step{data: "2"})
	if got := frame(t, br); got != "id: t:2|data: 2" {
		t.Fatalf("frame 2 = %q", got)
	}
	if isClosed(returned) {
		t.Fatal("the handler returned with its HTTP/2 stream open")
	}
	close(f.steps)
	io.ReadAll(br)
	waitClosed(t, returned, "the handler returning")
}
