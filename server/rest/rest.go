package rest

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/internal/wire"
)

// contentType is the media type of HTTP+JSON bodies (A2A §11.1), the
// default of the answers (wire.ResponseMediaType).
const contentType = wire.MediaA2A

// Handler serves the HTTP+JSON binding of a [server.Handler]. It is safe for
// concurrent use.
type Handler struct {
	h   *server.Handler
	cfg wire.Settings
}

// Option configures a [Handler].
type Option func(*Handler)

// WithMaxBodyBytes limits request bodies; larger ones are refused with 413
// before they are decoded. The default (and what 0 or less means) is 10 MiB.
func WithMaxBodyBytes(n int64) Option { return func(rh *Handler) { rh.cfg.MaxBody = n } }

// WithKeepAlive sets how long a stream may stay idle before a keep-alive
// comment is sent. The default is 15 seconds; 0 or less disables keep-alives.
func WithKeepAlive(d time.Duration) Option { return func(rh *Handler) { rh.cfg.KeepAlive = d } }

// WithLogger sets the logger for internal errors and failed writes. The
// default (and nil) discards logs.
func WithLogger(l *slog.Logger) Option { return func(rh *Handler) { rh.cfg.Log = l } }

// NewHandler returns the HTTP+JSON binding of h.
func NewHandler(h *server.Handler, opts ...Option) *Handler {
	rh := &Handler{h: h, cfg: wire.DefaultSettings()}
	for _, o := range opts {
		o(rh)
	}
	rh.cfg.Normalize()
	return rh
}

// ServeHTTP implements http.Handler. Every answer, errors included, is of
// the media type the client sent or accepts (wire.ResponseMediaType);
// streams are text/event-stream.
func (rh *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", wire.ResponseMediaType(r))
	rt, ok, err := parsePath(r.URL.EscapedPath())
	if !ok {
		rh.writeError(w, http.StatusNotFound, a2a.NewError(a2a.CodeMethodNotFound, "no A2A operation at "+strconv.Quote(r.URL.EscapedPath())))
		return
	}
	if err != nil {
		rh.writeError(w, 0, err)
		return
	}
	o := rt.op(r.Method)
	if o == opNone {
		info := resourceInfo[rt.res]
		w.Header().Set("Allow", info.allow)
		rh.writeError(w, http.StatusMethodNotAllowed, a2a.NewError(a2a.CodeMethodNotFound,
			"method "+r.Method+" is not allowed on "+info.template+"; use "+info.allow))
		return
	}
	p := wire.Params(r)
	p.Binding = a2a.BindingHTTPJSON
	p.Response = wire.HeaderResponse(w.Header())
	rh.dispatch(server.WithServiceParams(r.Context(), p), w, r, rt, o)
}

func (rh *Handler) dispatch(ctx context.Context, w http.ResponseWriter, r *http.Request, rt route, o op) {
	var (
		result any
		err    error
	)
	switch o {
	case opSendMessage, opSendStreamingMessage:
		var req a2a.SendMessageRequest
		if status, err := rh.readBody(w, r, &req); err != nil {
			rh.writeError(w, status, err)
			return
		}
		if err := mergeTenant(rt, &req.Tenant); err != nil {
			rh.writeError(w, 0, err)
			return
		}
		if o == opSendStreamingMessage {
			rh.stream(ctx, w, r, func(ctx context.Context) iter.Seq2[server.StreamEvent, error] {
				return rh.h.SendStreamingMessage(ctx, &req)
			})
			return
		}
		result, err = rh.h.SendMessage(ctx, &req)
	case opGetTask:
		var req *a2a.GetTaskRequest
		if req, err = getTaskRequest(rt, r.URL.RawQuery); err == nil {
			result, err = rh.h.GetTask(ctx, req)
		}
	case opListTasks:
		var req *a2a.ListTasksRequest
		if req, err = listTasksRequest(rt, r.URL.RawQuery); err == nil {
			result, err = rh.h.ListTasks(ctx, req)
		}
	case opCancelTask:
		var req a2a.CancelTaskRequest
		if status, err := rh.readBody(w, r, &req); err != nil {
			rh.writeError(w, status, err)
			return
		}
		if err = mergeTenant(rt, &req.Tenant); err == nil {
			if err = mergeField("id", rt.taskID, &req.ID); err == nil {
				result, err = rh.h.CancelTask(ctx, &req)
			}
		}
	case opSubscribeToTask:
		req := a2a.SubscribeToTaskRequest{Tenant: rt.tenant, ID: rt.taskID}
		rh.stream(ctx, w, r, func(ctx context.Context) iter.Seq2[server.StreamEvent, error] {
			return rh.h.SubscribeToTask(ctx, &req)
		})
		return
	case opCreatePushConfig:
		var req a2a.TaskPushNotificationConfig
		if status, err := rh.readBody(w, r, &req); err != nil {
			rh.writeError(w, status, err)
			return
		}
		if err = mergeTenant(rt, &req.Tenant); err == nil {
			if err = mergeField("taskId", rt.taskID, &req.TaskID); err == nil {
				result, err = rh.h.CreateTaskPushNotificationConfig(ctx, &req)
			}
		}
	case opGetPushConfig:
		result, err = rh.h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{
			Tenant: rt.tenant, TaskID: rt.taskID, ID: rt.configID,
		})
	case opListPushConfigs:
		var req *a2a.ListTaskPushNotificationConfigsRequest
		if req, err = listPushConfigsRequest(rt, r.URL.RawQuery); err == nil {
			result, err = rh.h.ListTaskPushNotificationConfigs(ctx, req)
		}
	case opDeletePushConfig:
		err = rh.h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{
			Tenant: rt.tenant, TaskID: rt.taskID, ID: rt.configID,
		})
		result = struct{}{}
	case opGetExtendedCard:
		rh.extendedCard(ctx, w, r, rt)
		return
	default:
		err = a2a.NewError(a2a.CodeInternal, "")
	}
	if err != nil {
		rh.writeError(w, 0, err)
		return
	}
	rh.writeJSON(w, result)
}

// readBody reads and decodes a JSON request body into v. An empty (or
// all white space) body leaves v as it is (CancelTask's body may be empty, R211). On failure it
// returns the HTTP status to answer with (0 for the error's own) and an
// *a2a.Error.
func (rh *Handler) readBody(w http.ResponseWriter, r *http.Request, v any) (int, error) {
	body, err := wire.ReadBody(w, r, rh.cfg.MaxBody)
	if err != nil {
		var tl *wire.ErrBodyTooLarge
		if errors.As(err, &tl) {
			return http.StatusRequestEntityTooLarge, wire.TooLarge(tl)
		}
		return http.StatusBadRequest, a2a.NewError(a2a.CodeInvalidRequest, "could not read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return 0, nil
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !jsonContentType(ct) {
		return 0, a2a.NewError(a2a.CodeInvalidRequest,
			"unsupported Content-Type "+strconv.Quote(ct)+"; send application/a2a+json or application/json")
	}
	if err := a2a.CheckDepth(body, rh.h.Limits().MaxDepth); err != nil {
		return 0, err
	}
	return 0, wire.Decode(body, v)
}

// jsonContentType reports whether ct names one of the JSON media types the
// binding accepts, with any parameters (A2A §11.1, REQUIREMENTS C5).
func jsonContentType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == wire.MediaA2A || mt == wire.MediaJSON
}

// mergeTenant fills the request's tenant from the path. A tenant in the body
// must match the path's; with no tenant in the path, the body's stands.
func mergeTenant(rt route, body *string) error {
	if !rt.hasTenant {
		return nil
	}
	return mergeField("tenant", rt.tenant, body)
}

// mergeField fills a request field from the path value; a body value that
// disagrees with the path is InvalidParams.
func mergeField(field, path string, body *string) error {
	if *body != "" && *body != path {
		return a2a.InvalidParam(field, field+" "+strconv.Quote(*body)+" in the body does not match "+strconv.Quote(path)+" in the path")
	}
	*body = path
	return nil
}

func (rh *Handler) writeJSON(w http.ResponseWriter, v any) {
	b, err := wire.AppendJSON(nil, v)
	if err != nil {
		rh.cfg.Log.Error("encoding HTTP+JSON response", "err", err)
		rh.writeError(w, 0, a2a.NewError(a2a.CodeInternal, ""))
		return
	}
	w.WriteHeader(http.StatusOK) // Content-Type: set by ServeHTTP
	if _, err := w.Write(b); err != nil {
		rh.cfg.Log.Debug("writing HTTP+JSON response", "err", err)
	}
}

// errBadEscape is the error for a path value that does not percent-decode.
func errBadEscape(field, value string) error {
	return a2a.InvalidParam(field, "the path value "+strconv.Quote(value)+" is not validly percent-encoded")
}
