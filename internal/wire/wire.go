// Package wire holds what the HTTP bindings share: reading bounded request
// bodies, decoding JSON into the model with errors that name the field, and
// reading the A2A service parameters from headers.
package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
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
	HeaderVersion    = "A2A-Version"
	HeaderExtensions = "A2A-Extensions"
	HeaderLastEvent  = "Last-Event-ID"
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

// Decode unmarshals data into v with [a2a.Unmarshal]. Malformed JSON is a ParseError; JSON of
// the wrong shape is InvalidParams naming the field. A non-nil error is
// always an *a2a.Error.
func Decode(data []byte, v any) error {
	if err := a2a.Unmarshal(data, v); err != nil {
		return DecodeError(err)
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
func Stream(w http.ResponseWriter, events iter.Seq2[server.StreamEvent, error], f StreamFormat) {
	var sw *sse.Writer
	defer func() {
		if sw != nil {
			sw.Close()
		}
	}()
	fail := func(err error) {
		e := a2a.AsError(err)
		if e.Code == a2a.CodeInternal || e.Code == a2a.CodeUnknown {
			f.Log.Error("internal error in a stream", "err", err)
		}
		_ = sw.NamedEvent("error", "", f.ErrorData(e))
	}
	for ev, err := range events {
		if err != nil {
			if sw == nil {
				f.Error(w, err)
			} else {
				fail(err)
			}
			return
		}
		if sw == nil {
			sw = sse.Start(w, f.KeepAlive)
		}
		b, err := f.Frame(ev.Event, ev.Data)
		if err != nil {
			fail(a2a.NewError(a2a.CodeInternal, "").WithCause(err))
			return
		}
		if sw.Event(ev.ID, b) != nil {
			return // the client went away
		}
	}
	if sw == nil { // a stream with no events at all
		sw = sse.Start(w, 0)
	}
}
