// Package wire holds what the HTTP bindings share: reading bounded request
// bodies, decoding JSON into the model with errors that name the field, and
// reading the A2A service parameters from headers.
package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/sse"
	"github.com/goa2a/a2a/server"
)

// DefaultMaxBodyBytes is the default limit on request bodies: 10 MiB.
const DefaultMaxBodyBytes = 10 << 20

// Header names of the A2A service parameters (A2A §3.2.6).
const (
	HeaderVersion    = a2a.HeaderVersion
	HeaderExtensions = a2a.HeaderExtensions
	HeaderLastEvent  = a2a.HeaderLastEventID
)

// ErrBodyTooLarge reports a request body over the limit.
type ErrBodyTooLarge struct{ Limit int64 }

func (e *ErrBodyTooLarge) Error() string {
	return "request body is larger than " + strconv.FormatInt(e.Limit, 10) + " bytes"
}

// ReadBody reads the whole request body, refusing one over limit bytes. A
// declared Content-Length over the limit is refused before anything is read.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, &ErrBodyTooLarge{Limit: limit}
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	b, err := io.ReadAll(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &ErrBodyTooLarge{Limit: limit}
		}
		return nil, err
	}
	return b, nil
}

// TooLarge is the A2A error for an oversize body.
func TooLarge(err *ErrBodyTooLarge) *a2a.Error {
	return a2a.NewError(a2a.CodeInvalidRequest, err.Error())
}

// Decode unmarshals data into v with [a2a.Unmarshal]. Malformed JSON is a
// ParseError; JSON of the wrong shape, a member given twice or a name that
// matches a field only when case is ignored ([a2a.CheckMembers]) is
// InvalidParams naming the field. Both JSON bindings decode with it, so
// they refuse alike. A non-nil error is always an *a2a.Error.
func Decode(data []byte, v any) error {
	if err := a2a.Unmarshal(data, v); err != nil {
		return DecodeError(err)
	}
	// Strict member names (a2a.CheckMembers), after the decoder: a document
	// it refuses is answered as before, and the check costs a pass only
	// over what decoded.
	var me *a2a.MemberError
	if err := a2a.CheckMembers(data, v); errors.As(err, &me) {
		return a2a.InvalidParam(me.Field(), me.Reason)
	}
	return nil
}

// DecodeError classifies an encoding/json error.
func DecodeError(err error) *a2a.Error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) {
		return a2a.NewError(a2a.CodeParseError, "").WithCause(err)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "(root)"
		}
		return a2a.InvalidParam(field, fmt.Sprintf("expected %s, got JSON %s", jsonKind(te.Type.Kind().String()), te.Value))
	}
	return a2a.InvalidParam("(body)", err.Error())
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "int", "int32", "int64", "uint", "uint32", "uint64", "float32", "float64":
		return "a number"
	}
	return goKind
}

// HeaderResponse is server.ResponseMetadata written into the header of an
// HTTP response, before the binding writes its status.
type HeaderResponse http.Header

// ActivateExtension implements server.ResponseMetadata: the extension is
// echoed in A2A-Extensions.
func (h HeaderResponse) ActivateExtension(uri string) { http.Header(h).Add(HeaderExtensions, uri) }

// Set implements server.ResponseMetadata.
func (h HeaderResponse) Set(key, value string) { http.Header(h).Set(key, value) }

// Params reads the service parameters of r: A2A-Version from the header or,
// failing that, the query parameter of the same name (A2A §3.6.1);
// A2A-Extensions from any number of headers; Last-Event-ID.
func Params(r *http.Request) server.ServiceParams {
	v := r.Header.Get(HeaderVersion)
	if v == "" && r.URL.RawQuery != "" {
		v = r.URL.Query().Get(HeaderVersion)
	}
	return server.ServiceParams{
		Version:     strings.TrimSpace(v),
		Extensions:  server.ParseList(r.Header.Values(HeaderExtensions)),
		LastEventID: r.Header.Get(HeaderLastEvent),
		Metadata:    r.Header,
	}
}

// appender is implemented by the model's oneof wrappers, which can encode
// themselves without encoding/json's second pass over a MarshalJSON result.
type appender interface {
	AppendJSON(dst []byte) ([]byte, error)
}

// AppendJSON appends the JSON encoding of v to dst.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case appender:
		return x.AppendJSON(dst)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// StreamFormat is how a binding writes a stream.
type StreamFormat struct {
	// KeepAlive is the idle time before a keep-alive comment; 0 for none.
	KeepAlive time.Duration
	// Frame encodes the data of one event. data, when not nil, is the
	// event already encoded as an a2a.StreamResponse (the bytes the store
	// keeps, shared by every subscriber): a frame built from it costs no
	// encoding.
	Frame func(ev a2a.Event, data []byte) ([]byte, error)
	// Last, when not nil, reports whether the stream ends after the
	// frame of ev (a v0.3 stream ends where it writes final: true);
	// nil leaves the end to the events.
	Last func(ev a2a.Event) bool
	// Error answers an error that came before the first frame, as a plain
	// (non-stream) error response.
	Error func(w http.ResponseWriter, err error)
	// ErrorData encodes the data of the last frame for an error after the
	// stream started; it is sent as an "error" event.
	ErrorData func(e *a2a.Error) []byte
	// Log receives encoding failures.
	Log *slog.Logger
}

// Stream answers a streaming operation with Server-Sent Events: one frame
// per event, with the event's SSE id. An error before the first frame is a
// plain error response; one after it is a last frame of type "error", then
// the stream ends (REQUIREMENTS B2); the official JavaScript SDK sends and
// recognises the same.
//
// open returns the events; the context it gets has ctx's values and ends
// when the client goes away. On an HTTP/1.x connection whose
// ResponseWriter can be hijacked, the stream goes on after its first
// frame in a goroutine of its own and Stream returns (see
// server.StreamWatcher): the body then ends when the connection closes.
func Stream(ctx context.Context, w http.ResponseWriter, r *http.Request, open func(context.Context) iter.Seq2[server.StreamEvent, error], f StreamFormat) {
	if r.ProtoMajor != 1 || !hijackable(w) {
		s := &streamer{f: f}
		defer s.close()
		for ev, err := range open(ctx) {
			if !s.put(w, ev, err) {
				return
			}
		}
		s.start(w)
		return
	}
	streamDetached(ctx, w, open, f)
}

// streamer writes the frames of one stream.
type streamer struct {
	f  StreamFormat
	sw *sse.Writer // nil until the first frame
}

// put writes one step of the stream and reports whether it goes on. w is
// only used before the first frame.
func (s *streamer) put(w http.ResponseWriter, ev server.StreamEvent, err error) bool {
	if err != nil {
		if s.sw == nil {
			s.f.Error(w, err)
		} else {
			s.fail(err)
		}
		return false
	}
	if s.sw == nil {
		s.sw = sse.Start(w, s.f.KeepAlive)
	}
	b, err := s.f.Frame(ev.Event, ev.Data)
	if err != nil {
		s.fail(a2a.NewError(a2a.CodeInternal, "").WithCause(err))
		return false
	}
	if s.sw.Event(ev.ID, b) != nil {
		return false // the client went away
	}
	return s.f.Last == nil || !s.f.Last(ev.Event)
}

func (s *streamer) fail(err error) {
	e := a2a.AsError(err)
	if e.Code == a2a.CodeInternal || e.Code == a2a.CodeUnknown {
		s.f.Log.Error("internal error in a stream", "err", err)
	}
	_ = s.sw.NamedEvent("error", "", s.f.ErrorData(e))
}

// start begins a stream with no events at all, unless it has begun.
func (s *streamer) start(w http.ResponseWriter) {
	if s.sw == nil {
		s.sw = sse.Start(w, 0)
	}
}

// close stops the keep-alives.
func (s *streamer) close() {
	if s.sw != nil {
		s.sw.Close()
	}
}

// step is one value of a stream's events.
type step struct {
	ev  server.StreamEvent
	err error
}

// streamDetached runs the events in a goroutine that hands each step to
// the handler's goroutine to write, until the first frame is written and
// the connection hijacked: from then on the goroutine writes to the
// connection itself and the handler returns.
func streamDetached(ctx context.Context, w http.ResponseWriter, open func(context.Context) iter.Seq2[server.StreamEvent, error], f StreamFormat) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	// Until the stream is detached, it ends with the request.
	unwatch := context.AfterFunc(ctx, cancel)
	// Without a Content-Length or chunking, net/http ends the response
	// (and says Connection: close) by closing the connection, so that
	// what the goroutine writes after the hijack is the body as it is.
	w.Header().Set("Transfer-Encoding", "identity")

	s := &streamer{f: f}
	steps := make(chan step)
	replies := make(chan *detached) // nil: go on through the handler
	stop := make(chan struct{})     // closed when the handler ends the stream
	go func() {
		var d *detached
		for ev, err := range open(sctx) {
			if d == nil {
				select {
				case steps <- step{ev, err}:
				case <-stop:
					return
				}
				select {
				case d = <-replies:
				case <-stop:
					return
				}
				continue
			}
			if !s.put(nil, ev, err) {
				break
			}
		}
		if d == nil {
			close(steps)
			return
		}
		s.sw.Close()
		d.close()
		cancel()
	}()

	detachedOK := false
	defer func() {
		if !detachedOK {
			cancel()
			unwatch()
		}
	}()
	for st := range steps {
		first := s.sw == nil
		if !s.put(w, st.ev, st.err) {
			close(stop)
			s.close()
			return
		}
		if first {
			var d *detached
			s.sw.Detach(func() io.Writer {
				if d = detach(w, cancel, f.Log); d == nil {
					return nil
				}
				return d.conn
			})
			if d != nil {
				// From now on the stream ends when the connection does,
				// and the goroutine owns s, sctx and cancel.
				unwatch()
				detachedOK = true
				replies <- d
				return
			}
		}
		replies <- nil
	}
	s.start(w)
	s.close()
}

// NoteError tells the server.ErrorWatchers among w and the writers it
// unwraps to that the response is the A2A error code.
func NoteError(w http.ResponseWriter, code a2a.Code) {
	for w != nil {
		if ew, ok := w.(server.ErrorWatcher); ok {
			ew.A2AError(code)
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// hijackable reports whether w's connection can be hijacked for a stream:
// w is a Hijacker, or a wrapper that is a server.StreamWatcher and unwraps
// to one that is. A wrapper that is no StreamWatcher may need to see (or
// change) every byte of the body, so a stream under it stays on its
// handler.
func hijackable(w http.ResponseWriter) bool {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			_, ok := w.(http.Hijacker)
			return ok
		}
		if _, ok := w.(server.StreamWatcher); !ok {
			return false
		}
		w = u.Unwrap()
	}
}

// detached is a stream's connection after its handler returned.
type detached struct {
	conn  net.Conn
	ended []func(bool)
}

// detach asks the StreamWatchers among w and the writers it unwraps to,
// then hijacks the connection. It returns nil, leaving the stream on its
// handler, when a watcher refuses or the hijack fails. Once the stream is
// detached, reading from the connection stops at the client's going away
// (or sending anything), which calls cancel.
func detach(w http.ResponseWriter, cancel context.CancelFunc, log *slog.Logger) *detached {
	d := &detached{}
	undo := func() {
		for _, ended := range d.ended {
			ended(false)
		}
	}
	for ww := w; ww != nil; {
		if sw, ok := ww.(server.StreamWatcher); ok {
			ended, ok := sw.StreamDetached()
			if !ok {
				undo()
				return nil
			}
			d.ended = append(d.ended, ended)
		}
		u, ok := ww.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		ww = u.Unwrap()
	}
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		if log != nil {
			log.Debug("stream stays on its handler: cannot hijack the connection", "err", err)
		}
		undo()
		return nil
	}
	d.conn = conn
	go func() {
		// A client does not send on a connection whose response is not
		// over: whatever comes (a pipelined request, the end of the
		// connection) ends the stream.
		var b [1]byte
		_, _ = conn.Read(b[:])
		cancel()
	}()
	return d
}

// close closes the connection and tells the watchers.
func (d *detached) close() {
	d.conn.Close()
	for _, ended := range d.ended {
		ended(true)
	}
}

// DefaultKeepAlive is how long a stream of the HTTP bindings stays idle
// before a keep-alive comment, by default.
const DefaultKeepAlive = 15 * time.Second

// Settings are the options both HTTP bindings take, with one meaning:
// MaxBody <= 0 is the default limit, KeepAlive <= 0 turns keep-alives off,
// and a nil Log discards.
type Settings struct {
	MaxBody   int64
	KeepAlive time.Duration
	Log       *slog.Logger
}

// DefaultSettings are the bindings' defaults.
func DefaultSettings() Settings {
	return Settings{MaxBody: DefaultMaxBodyBytes, KeepAlive: DefaultKeepAlive, Log: slog.New(slog.DiscardHandler)}
}

// Normalize gives the values that mean "the default" or "off" their
// working form.
func (s *Settings) Normalize() {
	if s.MaxBody <= 0 {
		s.MaxBody = DefaultMaxBodyBytes
	}
	s.KeepAlive = max(s.KeepAlive, 0)
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
}

// Media types of the JSON bindings' bodies: A2A's (v1.0.1 §11.1, a SHOULD
// for HTTP+JSON) and plain JSON, which every binding accepts on requests.
const (
	MediaA2A  = "application/a2a+json"
	MediaJSON = "application/json"
)

// ResponseMediaType is the media type to answer r with: plain JSON to a
// client that sent its body as application/json, or accepts
// application/json and not application/a2a+json (the official Go SDK's
// client reads only that); A2A's otherwise.
func ResponseMediaType(r *http.Request) string {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil && mt == MediaJSON {
		return MediaJSON
	}
	json := false
	for _, v := range r.Header.Values("Accept") {
		for item := range strings.SplitSeq(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(item))
			if err != nil || params["q"] == "0" || params["q"] == "0.0" || params["q"] == "0.00" || params["q"] == "0.000" {
				continue
			}
			switch mt {
			case MediaA2A:
				return MediaA2A
			case MediaJSON:
				json = true
			}
		}
	}
	if json {
		return MediaJSON
	}
	return MediaA2A
}
