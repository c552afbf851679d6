// Package jsonrpc is the JSON-RPC 2.0 binding of A2A (A2A §9): one POST
// endpoint taking the eleven PascalCase methods, answering with JSON-RPC
// responses, and streaming as Server-Sent Events whose every frame is a full
// JSON-RPC response.
//
// With [server.WithV03] it serves A2A v0.3 clients too, on the same
// endpoint: a call of a v0.3 method (message/send, tasks/get, ...) that
// sends A2A-Version 0.3, or none (A2A §3.6.2), has its params, results,
// events and errors translated by package a2a/v03, and its streams end
// after the event written with final: true. Without it such a call is
// VersionNotSupported naming 1.0. The version chosen is the Handler's
// ([server.Handler.ProtocolVersion]).
//
// The binding maps wire shapes and error codes only; every protocol rule is
// in [server.Handler], every v0.3 shape in package a2a/v03.
package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"log/slog"
	"net/http"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/internal/wire"
)

// Handler serves the JSON-RPC binding of a [server.Handler]. Mount it at the
// URL the agent card declares for the "JSONRPC" interface.
type Handler struct {
	h   *server.Handler
	cfg wire.Settings
}

// Option configures a [Handler].
type Option func(*Handler)

// WithMaxBodyBytes limits request bodies; larger ones are refused before
// they are decoded. The default (and what 0 or less means) is 10 MiB.
func WithMaxBodyBytes(n int64) Option { return func(j *Handler) { j.cfg.MaxBody = n } }

// WithKeepAlive sets how long a stream may stay idle before a keep-alive
// comment is sent. The default is 15 seconds; 0 or less disables keep-alives.
func WithKeepAlive(d time.Duration) Option { return func(j *Handler) { j.cfg.KeepAlive = d } }

// WithLogger sets the logger for failed writes. The default (and nil) discards logs.
func WithLogger(l *slog.Logger) Option { return func(j *Handler) { j.cfg.Log = l } }

// NewHandler returns the JSON-RPC binding of h.
func NewHandler(h *server.Handler, opts ...Option) *Handler {
	j := &Handler{h: h, cfg: wire.DefaultSettings()}
	for _, o := range opts {
		o(j)
	}
	j.cfg.Normalize()
	return j
}

// The request envelope (JSON-RPC 2.0 §4).
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params" a2a:"unchecked"` // checked by decodeParams, with its type
}

var nullID = json.RawMessage("null")

// ServeHTTP implements http.Handler.
func (j *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		j.writeError(w, http.StatusMethodNotAllowed, nullID, a2a.NewError(a2a.CodeInvalidRequest, "JSON-RPC requests must be POSTed"))
		return
	}
	body, err := wire.ReadBody(w, r, j.cfg.MaxBody)
	if err != nil {
		var tl *wire.ErrBodyTooLarge
		if errors.As(err, &tl) {
			j.writeError(w, http.StatusRequestEntityTooLarge, nullID, wire.TooLarge(tl))
			return
		}
		j.writeError(w, http.StatusBadRequest, nullID, a2a.NewError(a2a.CodeInvalidRequest, "could not read the request body"))
		return
	}
	// Nesting is checked before anything is decoded; like a parse error,
	// the answer has a null id.
	if err := a2a.CheckDepth(body, j.h.Limits().MaxDepth); err != nil {
		j.writeError(w, http.StatusOK, nullID, err)
		return
	}
	env, perr := parseEnvelope(body)
	if perr != nil {
		id := nullID
		if env != nil && validID(env.ID) {
			id = env.ID
		}
		j.writeError(w, http.StatusOK, id, perr)
		return
	}
	p := wire.Params(r)
	p.Binding = a2a.BindingJSONRPC
	p.Response = wire.HeaderResponse(w.Header())
	handled, v03 := j.v03Call(w, &p, env)
	switch {
	case handled:
	case v03:
		p.V03 = true
		j.dispatchV03(server.WithServiceParams(r.Context(), p), w, r, env)
	default:
		j.dispatch(server.WithServiceParams(r.Context(), p), w, r, env)
	}
}

// parseEnvelope checks the JSON-RPC envelope: one object (batches are not
// supported, REQUIREMENTS B9), "jsonrpc":"2.0", a string or number id (no
// notifications) and a method name.
func parseEnvelope(body []byte) (*envelope, *a2a.Error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		if !json.Valid(trimmed) {
			return nil, a2a.NewError(a2a.CodeParseError, "")
		}
		return nil, a2a.NewError(a2a.CodeInvalidRequest, "batch requests are not supported")
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		if e := wire.DecodeError(err); e.Code == a2a.CodeParseError {
			return nil, e
		}
		return nil, a2a.NewError(a2a.CodeInvalidRequest, "the request must be a JSON-RPC 2.0 request object")
	}
	// A member given twice, or in another case ("METHOD"), would make a
	// reader that takes the first or the exact one see another request.
	// What is wrong inside params is InvalidParams, found with the
	// params' own type (decodeParams).
	var me *a2a.MemberError
	if err := a2a.CheckMembers(body, &env); errors.As(err, &me) {
		return &env, a2a.NewError(a2a.CodeInvalidRequest, me.Error()).With("member", me.Field())
	}
	switch {
	case env.JSONRPC != "2.0":
		return &env, a2a.NewError(a2a.CodeInvalidRequest, `"jsonrpc" must be "2.0"`)
	case len(env.ID) == 0:
		return &env, a2a.NewError(a2a.CodeInvalidRequest, "notifications (requests without an id) are not supported")
	case !validID(env.ID) || bytes.Equal(env.ID, nullID):
		return &env, a2a.NewError(a2a.CodeInvalidRequest, `"id" must be a string or a number`)
	case env.Method == "":
		return &env, a2a.NewError(a2a.CodeInvalidRequest, `"method" is required`)
	}
	return &env, nil
}

func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return bytes.Equal(id, nullID)
}

// decodeParams decodes the params member; absent or null params decode as
// an empty object.
func decodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 || bytes.Equal(raw, nullID) {
		return nil
	}
	if raw[0] != '{' {
		return a2a.InvalidParam("params", "params must be an object")
	}
	return wire.Decode(raw, v)
}

func (j *Handler) dispatch(ctx context.Context, w http.ResponseWriter, r *http.Request, env *envelope) {
	var (
		result any
		err    error
	)
	switch env.Method {
	case a2a.MethodSendMessage:
		var req a2a.SendMessageRequest
		if err = decodeParams(env.Params, &req); err == nil {
			result, err = j.h.SendMessage(ctx, &req)
		}
	case a2a.MethodSendStreamingMessage:
		var req a2a.SendMessageRequest
		if perr := decodeParams(env.Params, &req); perr != nil {
			err = perr
			break
		}
		j.stream(ctx, w, r, env.ID, func(ctx context.Context) iter.Seq2[server.StreamEvent, error] {
			return j.h.SendStreamingMessage(ctx, &req)
		})
		return
	case a2a.MethodSubscribeToTask:
		var req a2a.SubscribeToTaskRequest
		if perr := decodeParams(env.Params, &req); perr != nil {
			err = perr
			break
		}
		j.stream(ctx, w, r, env.ID, func(ctx context.Context) iter.Seq2[server.StreamEvent, error] {
			return j.h.SubscribeToTask(ctx, &req)
		})
		return
	case a2a.MethodGetTask:
		var req a2a.GetTaskRequest
		if err = decodeParams(env.Params, &req); err == nil {
			result, err = j.h.GetTask(ctx, &req)
		}
	case a2a.MethodListTasks:
		var req a2a.ListTasksRequest
		if err = decodeParams(env.Params, &req); err == nil {
			result, err = j.h.ListTasks(ctx, &req)
		}
	case a2a.MethodCancelTask:
		var req a2a.CancelTaskRequest
		if err = decodeParams(env.Params, &req); err == nil {
			result, err = j.h.CancelTask(ctx, &req)
		}
	case a2a.MethodCreateTaskPushNotificationConfig:
		var req a2a.TaskPushNotificationConfig
		if err = decodeParams(env.Params, &req); err == nil {
			result, err = j.h.CreateTaskPushNotificationConfig(ctx, &req)
		}
	case a2a.MethodGetTaskPushNotificationConfig:
		var req a2a.GetTaskPushNotificationConfigRequest
		if err = decodeParams(env.Params, &req); err == nil {
			result, err = j.h.GetTaskPushNotificationConfig(ctx, &req)
		}
	case a2a.MethodListTaskPushNotificationConfigs:
		var req a2a.ListTaskPushNotificationConfigsRequest
		if err = decodeParams(env.Params, &req); err == nil {
			result, err = j.h.ListTaskPushNotificationConfigs(ctx, &req)
		}
	case a2a.MethodDeleteTaskPushNotificationConfig:
		var req a2a.DeleteTaskPushNotificationConfigRequest
		if err = decodeParams(env.Params, &req); err == nil {
			err = j.h.DeleteTaskPushNotificationConfig(ctx, &req)
			result = struct{}{}
		}
	case a2a.MethodGetExtendedAgentCard:
		var req a2a.GetExtendedAgentCardRequest
		if err = decodeParams(env.Params, &req); err == nil {
			result, err = j.h.GetExtendedAgentCard(ctx, &req)
		}
		if err == nil {
			wire.ExtendedCardHeaders(w.Header(), 0, http.MethodPost, "", nil)
		}
	default:
		err = a2a.NewError(a2a.CodeMethodNotFound, "")
	}
	if err != nil {
		j.writeError(w, http.StatusOK, env.ID, err)
		return
	}
	b, merr := marshalResponse(env.ID, result)
	if merr != nil {
		j.cfg.Log.Error("encoding JSON-RPC result", "method", env.Method, "err", merr)
		j.writeError(w, http.StatusOK, env.ID, a2a.NewError(a2a.CodeInternal, ""))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(b); err != nil {
		j.cfg.Log.Debug("writing JSON-RPC response", "err", err)
	}
}

// stream answers a streaming method with SSE frames, each a full JSON-RPC
// response with the request id (A2A §9.4.2). An error before the first frame
// is a plain JSON-RPC error response; one after it is sent as a last frame
// (REQUIREMENTS B2).
func (j *Handler) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, id json.RawMessage, open func(context.Context) iter.Seq2[server.StreamEvent, error]) {
	wire.Stream(ctx, w, r, open, wire.StreamFormat{
		KeepAlive: j.cfg.KeepAlive,
		Frame: func(ev a2a.Event, data []byte) ([]byte, error) {
			if data != nil {
				return appendResponse(make([]byte, 0, len(data)+len(id)+32), id, data), nil
			}
			return marshalResponse(id, a2a.StreamResponse{Event: ev})
		},
		Error:     func(w http.ResponseWriter, err error) { j.writeError(w, http.StatusOK, id, err) },
		ErrorData: func(e *a2a.Error) []byte { return marshalError(id, e) },
		Log:       j.cfg.Log,
	})
}

// appendResponse appends a JSON-RPC response whose result is the encoded
// JSON result.
func appendResponse(b []byte, id json.RawMessage, result []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

func marshalResponse(id json.RawMessage, result any) ([]byte, error) {
	b := make([]byte, 0, 1024)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b, err := wire.AppendJSON(b, result)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// wireError is the JSON-RPC error object; data is the array of detail
// objects, each with an "@type" (A2A §9.5).
type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    []any  `json:"data,omitempty"`
}

func marshalError(id json.RawMessage, e *a2a.Error) []byte {
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{Code: e.Code.JSONRPCCode(), Message: e.Text(), Data: e.WireDetails()}})
	if err != nil {
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`)
	}
	return b
}

// writeError writes a JSON-RPC error response. JSON-RPC errors travel with
// HTTP 200 (REQUIREMENTS B3), except where the HTTP layer itself refused the
// request, and authentication failures, which use 401 and 403 so gateways
// and clients see them.
func (j *Handler) writeError(w http.ResponseWriter, status int, id json.RawMessage, err error) {
	j.writeErrorAs(w, status, id, err, marshalError)
}

// writeErrorAs is writeError with the response encoded by marshal.
func (j *Handler) writeErrorAs(w http.ResponseWriter, status int, id json.RawMessage, err error, marshal func(json.RawMessage, *a2a.Error) []byte) {
	e := a2a.AsError(err)
	if e.Code == a2a.CodeInternal || e.Code == a2a.CodeUnknown {
		j.cfg.Log.Error("internal error", "err", err)
	}
	switch e.Code {
	case a2a.CodeUnauthenticated, a2a.CodePermissionDenied:
		status = e.Code.HTTPStatus()
	}
	wire.NoteError(w, e.Code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(marshal(id, e))
}
