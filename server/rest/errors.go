package rest

import (
	"encoding/json"
	"iter"
	"net/http"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/sse"
	"github.com/goa2a/a2a/server"
)

// errorBody is the google.rpc.Status JSON of an HTTP+JSON error (A2A
// §11.6): code is the HTTP status, status the gRPC code name, and details
// the detail objects, each with an "@type".
type errorBody struct {
	Error errorStatus `json:"error"`
}

type errorStatus struct {
	Code    int    `json:"code"`
	Status  string `json:"status"`
	Message string `json:"message"`
	Details []any  `json:"details,omitempty"`
}

// marshalError encodes e as answered with HTTP status.
func marshalError(status int, e *a2a.Error) []byte {
	b, err := json.Marshal(errorBody{errorStatus{
		Code:    status,
		Status:  e.Code.GRPCStatusName(),
		Message: e.Text(),
		Details: e.WireDetails(),
	}})
	if err != nil {
		return []byte(`{"error":{"code":500,"status":"INTERNAL","message":"Internal error"}}`)
	}
	return b
}

// writeError writes an error response. A status of 0 means the HTTP status
// of the error's code (REQUIREMENTS E1); the binding passes another only
// where the HTTP layer itself refused the request (404, 405, 413).
func (rh *Handler) writeError(w http.ResponseWriter, status int, err error) {
	e := a2a.AsError(err)
	if e.Code == a2a.CodeInternal || e.Code == a2a.CodeUnknown {
		rh.log.Error("internal error", "err", err)
	}
	if status == 0 {
		status = e.Code.HTTPStatus()
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	if _, err := w.Write(marshalError(status, e)); err != nil {
		rh.log.Debug("writing HTTP+JSON error", "err", err)
	}
}

// stream answers a streaming operation with SSE frames, each a bare
// StreamResponse (A2A §11.7). An error before the first frame is a plain
// error response; one after it is sent as a last frame (REQUIREMENTS B2).
func (rh *Handler) stream(w http.ResponseWriter, events iter.Seq2[server.StreamEvent, error]) {
	var sw *sse.Writer
	defer func() {
		if sw != nil {
			sw.Close()
		}
	}()
	for ev, err := range events {
		if err != nil {
			if sw == nil {
				rh.writeError(w, 0, err)
				return
			}
			rh.streamError(sw, err)
			return
		}
		if sw == nil {
			sw = sse.Start(w, rh.keepAlive)
		}
		b, merr := a2a.StreamResponse{Event: ev.Event}.AppendJSON(nil)
		if merr != nil {
			rh.log.Error("encoding stream event", "err", merr)
			rh.streamError(sw, a2a.NewError(a2a.CodeInternal, ""))
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

// streamError ends a started stream with an error frame: "event: error" and
// the error body as data, the form the official JavaScript SDK sends and
// recognises (REQUIREMENTS B2).
func (rh *Handler) streamError(sw *sse.Writer, err error) {
	e := a2a.AsError(err)
	if e.Code == a2a.CodeInternal || e.Code == a2a.CodeUnknown {
		rh.log.Error("internal error in stream", "err", err)
	}
	if werr := sw.NamedEvent("error", "", marshalError(e.Code.HTTPStatus(), e)); werr != nil {
		rh.log.Debug("writing stream error", "err", werr)
	}
}
