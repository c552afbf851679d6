package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Recorder is an http.RoundTripper that writes every exchange it carries
// in the A2A 101 kit's format: a *.http file with "### N · title"
// headings, the request line, Host and the headers that matter, JSON
// bodies pretty-printed with two spaces and keys in the order sent, and
// SSE bodies as "data:" lines of compact JSON in the style of Python's
// json.dumps; and a *.events.json file with the frames of each stream,
// pretty-printed.
//
// Stream frames are written as the client reads them, so an exchange
// made while a stream is open (an operator's approval, say) sits between
// the frames read before it and those read after it, as in the kit's
// 19-planner.http.
type Recorder struct {
	// Next carries the requests; nil means http.DefaultTransport.
	Next http.RoundTripper
	// Title names an exchange for its heading; nil uses "METHOD path".
	// It sees the request and its body.
	Title func(r *http.Request, body []byte) string

	mu      sync.Mutex
	n       int
	out     bytes.Buffer
	streams []*stream
}

type stream struct {
	n      int
	title  string
	frames [][]byte // compact JSON
}

// RoundTrip implements http.RoundTripper.
func (rec *Recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
		r = r.Clone(r.Context())
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	title := r.Method + " " + r.URL.RequestURI()
	if rec.Title != nil {
		title = rec.Title(r, body)
	}
	rec.mu.Lock()
	rec.n++
	n := rec.n
	rec.mu.Unlock()

	next := rec.Next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(r)
	if err != nil {
		return nil, err
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "### %d · %s\n", n, title)
	fmt.Fprintf(&b, "%s %s HTTP/1.1\n", r.Method, r.URL.RequestURI())
	host := r.Host
	if host == "" {
		host = r.URL.Host
	}
	fmt.Fprintf(&b, "Host: %s\n", host)
	for _, k := range []string{"Content-Type", "A2A-Version", "Authorization", "Accept"} {
		if v := r.Header.Get(k); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	if len(body) > 0 {
		b.WriteString("\n")
		b.Write(Pretty(body))
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nHTTP/1.1 %d %s\n", resp.StatusCode, http.StatusText(resp.StatusCode))
	ct := resp.Header.Get("Content-Type")
	if ct != "" {
		fmt.Fprintf(&b, "Content-Type: %s\n", ct)
	}
	if v := resp.Header.Get("WWW-Authenticate"); v != "" {
		fmt.Fprintf(&b, "WWW-Authenticate: %s\n", v)
	}

	if strings.HasPrefix(ct, "text/event-stream") {
		st := &stream{n: n, title: title}
		b.WriteString("\n")
		rec.mu.Lock()
		rec.out.Write(b.Bytes())
		rec.streams = append(rec.streams, st)
		rec.mu.Unlock()
		resp.Body = &sseBody{rc: resp.Body, rec: rec, st: st}
		return resp, nil
	}

	rbody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(rbody))
	if len(rbody) > 0 {
		b.WriteString("\n")
		b.Write(Pretty(rbody))
		b.WriteString("\n")
	}
	b.WriteString("\n")
	rec.mu.Lock()
	rec.out.Write(b.Bytes())
	rec.mu.Unlock()
	return resp, nil
}

// ReceivedHeaders are the headers Received writes, in this order when
// present: the three the kit's webhook sections show, then the token
// header of A2A v1.0, the event id and the signature that our deliverer
// (package push) adds.
var ReceivedHeaders = []string{"Content-Type", "Authorization", "X-A2A-Notification-Token", "A2A-Notification-Token", "A2A-Push-Event-Id", "A2A-Push-Signature"}

// Received writes a request the client received rather than sent, such
// as a webhook call, under "### heading" as the kit writes its "webhook N
// · received by the client" sections: the request line, the
// ReceivedHeaders it has, and its body pretty-printed; no Host and no
// response.
func (rec *Recorder) Received(heading string, r *http.Request, body []byte) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "### %s\n%s %s HTTP/1.1\n", heading, r.Method, r.URL.RequestURI())
	for _, k := range ReceivedHeaders {
		if v := r.Header.Get(k); v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	if len(body) > 0 {
		b.WriteString("\n")
		b.Write(Pretty(body))
		b.WriteString("\n")
	}
	b.WriteString("\n")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.out.Write(b.Bytes())
}

// Note writes a comment line, such as "# The operator approves the
// deploy, outside A2A.", before the next exchange.
func (rec *Recorder) Note(text string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	fmt.Fprintf(&rec.out, "# %s\n\n", text)
}

// sseBody passes a stream through and records each data line as the
// client reads past it.
type sseBody struct {
	rc   io.ReadCloser
	rec  *Recorder
	st   *stream
	line []byte // the part of the current line read so far
}

func (s *sseBody) Read(p []byte) (int, error) {
	n, err := s.rc.Read(p)
	for _, c := range p[:n] {
		if c != '\n' {
			s.line = append(s.line, c)
			continue
		}
		s.flush()
	}
	return n, err
}

func (s *sseBody) flush() {
	line := strings.TrimSuffix(string(s.line), "\r")
	s.line = s.line[:0]
	data, ok := strings.CutPrefix(line, "data:")
	if !ok {
		return
	}
	var c bytes.Buffer
	if err := json.Compact(&c, []byte(strings.TrimPrefix(data, " "))); err != nil {
		c.Reset()
		c.WriteString(strings.TrimPrefix(data, " "))
	}
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	s.st.frames = append(s.st.frames, c.Bytes())
	fmt.Fprintf(&s.rec.out, "data: %s\n\n", PythonCompact(c.Bytes()))
}

func (s *sseBody) Close() error { return s.rc.Close() }

// HTTP returns the *.http text recorded so far.
func (rec *Recorder) HTTP() []byte {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append(bytes.TrimRight(bytes.Clone(rec.out.Bytes()), "\n"), '\n')
}

// Events returns the *.events.json text: for each stream, its exchange
// number, title and frames. It is nil when no stream was recorded.
func (rec *Recorder) Events() []byte {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.streams) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("[")
	for i, st := range rec.streams {
		if i > 0 {
			b.WriteString(",")
		}
		title := marshalNoEscape(st.title)
		fmt.Fprintf(&b, `{"exchange":%d,"title":%s,"events":[`, st.n, title)
		for j, f := range st.frames {
			if j > 0 {
				b.WriteString(",")
			}
			b.Write(f)
		}
		b.WriteString("]}")
	}
	b.WriteString("]")
	return append(Pretty(b.Bytes()), '\n')
}

// WriteFiles writes NAME.http and, when a stream was recorded,
// NAME.events.json into dir.
func (rec *Recorder) WriteFiles(dir, name string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, name+".http"), rec.HTTP(), 0o644); err != nil {
		return err
	}
	if ev := rec.Events(); ev != nil {
		return os.WriteFile(filepath.Join(dir, name+".events.json"), ev, 0o644)
	}
	return nil
}

func marshalNoEscape(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// Pretty indents a JSON text with two spaces, keeping its keys in the
// order they were written. A text that is not JSON is returned as is.
func Pretty(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, bytes.TrimSpace(b), "", "  "); err != nil {
		return bytes.TrimSpace(b)
	}
	return out.Bytes()
}

// PythonCompact writes a compact JSON text the way Python's json.dumps
// does by default: ", " between items and ": " after keys.
func PythonCompact(b []byte) []byte {
	var out bytes.Buffer
	r := bufio.NewReader(bytes.NewReader(b))
	inStr, esc := false, false
	for {
		c, err := r.ReadByte()
		if err != nil {
			break
		}
		out.WriteByte(c)
		switch {
		case inStr && esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case !inStr && (c == ',' || c == ':'):
			out.WriteByte(' ')
		}
	}
	return out.Bytes()
}
