package rest

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"strconv"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/internal/wire"
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
		rh.cfg.Log.Error("internal error", "err", err)
	}
	if status == 0 {
		status = e.Code.HTTPStatus()
	}
	if e.RetryAfter > 0 {
		// Whole seconds, rounded up (RFC 9110 §10.2.3).
		w.Header().Set("Retry-After", strconv.FormatInt(int64((e.RetryAfter+time.Second-1)/time.Second), 10))
	}
	wire.NoteError(w, e.Code)
	w.WriteHeader(status) // Content-Type: set by ServeHTTP
	if _, err := w.Write(marshalError(status, e)); err != nil {
		rh.cfg.Log.Debug("writing HTTP+JSON error", "err", err)
	}
}

// stream answers a streaming operation with SSE frames, each a bare
// StreamResponse (A2A §11.7). An error before the first frame is a plain
// error response; one after it is sent as a last frame (REQUIREMENTS B2).
func (rh *Handler) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, open func(context.Context) iter.Seq2[server.StreamEvent, error]) {
	wire.Stream(ctx, w, r, open, wire.StreamFormat{
		KeepAlive: rh.cfg.KeepAlive,
		Frame: func(ev a2a.Event, data []byte) ([]byte, error) {
			if data != nil {
				return data, nil
			}
			return a2a.StreamResponse{Event: ev}.AppendJSON(nil)
		},
		Error: func(w http.ResponseWriter, err error) {
			w.Header().Set("Content-Type", wire.ResponseMediaType(r)) // as ServeHTTP does
			rh.writeError(w, 0, err)
		},
		ErrorData: func(e *a2a.Error) []byte { return marshalError(e.Code.HTTPStatus(), e) },
		Log:       rh.cfg.Log,
	})
}
