package jsonrpc

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/a2a/v03"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/internal/wire"
)

// v03Call reports whether env is an A2A v0.3 call the Handler serves as
// one: a v0.3 method name, with an A2A-Version the Handler serves as v0.3
// (0.3, or none, with server.WithV03). A v0.3 method name with a version
// the Handler does not serve is answered here with VersionNotSupported,
// not MethodNotFound: the client asked for a version, not for a method
// of this one. Under A2A-Version 1.0 the name is no method (A2A §9.1).
func (j *Handler) v03Call(w http.ResponseWriter, p *server.ServiceParams, env *envelope) (handled, v03Call bool) {
	if _, ok := v03.ToV1Method(env.Method); !ok {
		return false, false
	}
	v, err := j.h.ProtocolVersion(p.Version)
	if err != nil {
		j.writeError(w, http.StatusOK, env.ID, err)
		return true, false
	}
	return false, v == v03.Version
}

// dispatchV03 serves a v0.3 call: its params and answer are translated by
// package a2a/v03, its errors have v0.3's shape, and its streams end after
// the event written with final: true. No rule of either version is here.
func (j *Handler) dispatchV03(ctx context.Context, w http.ResponseWriter, r *http.Request, env *envelope) {
	op, req, err := v03.ToV1Request(env.Method, env.Params)
	if err != nil {
		j.writeErrorV03(w, http.StatusOK, env.ID, err)
		return
	}
	switch op {
	case a2a.MethodSendStreamingMessage:
		j.streamV03(ctx, w, r, env.ID, func(ctx context.Context) iter.Seq2[server.StreamEvent, error] {
			return j.h.SendStreamingMessage(ctx, req.(*a2a.SendMessageRequest))
		})
		return
	case a2a.MethodSubscribeToTask:
		j.streamV03(ctx, w, r, env.ID, func(ctx context.Context) iter.Seq2[server.StreamEvent, error] {
			return j.h.SubscribeToTask(ctx, req.(*a2a.SubscribeToTaskRequest))
		})
		return
	}
	res, err := j.call(ctx, op, req)
	var result any
	if err == nil {
		result, err = v03.FromV1Result(op, res)
	}
	if err != nil {
		j.writeErrorV03(w, http.StatusOK, env.ID, err)
		return
	}
	if op == a2a.MethodGetExtendedAgentCard {
		wire.ExtendedCardHeaders(w.Header(), 0, http.MethodPost, "", nil)
	}
	b, merr := marshalResponse(env.ID, result)
	if merr != nil {
		j.cfg.Log.Error("encoding JSON-RPC result", "method", env.Method, "err", merr)
		j.writeErrorV03(w, http.StatusOK, env.ID, a2a.NewError(a2a.CodeInternal, ""))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(b); err != nil {
		j.cfg.Log.Debug("writing JSON-RPC response", "err", err)
	}
}

// call runs the unary operation op with req, of the type v03.ToV1Request
// gives it.
func (j *Handler) call(ctx context.Context, op string, req any) (any, error) {
	switch op {
	case a2a.MethodSendMessage:
		return j.h.SendMessage(ctx, req.(*a2a.SendMessageRequest))
	case a2a.MethodGetTask:
		return j.h.GetTask(ctx, req.(*a2a.GetTaskRequest))
	case a2a.MethodCancelTask:
		return j.h.CancelTask(ctx, req.(*a2a.CancelTaskRequest))
	case a2a.MethodCreateTaskPushNotificationConfig:
		return j.h.CreateTaskPushNotificationConfig(ctx, req.(*a2a.TaskPushNotificationConfig))
	case a2a.MethodGetTaskPushNotificationConfig:
		return j.h.GetTaskPushNotificationConfig(ctx, req.(*a2a.GetTaskPushNotificationConfigRequest))
	case a2a.MethodListTaskPushNotificationConfigs:
		return j.h.ListTaskPushNotificationConfigs(ctx, req.(*a2a.ListTaskPushNotificationConfigsRequest))
	case a2a.MethodDeleteTaskPushNotificationConfig:
		return nil, j.h.DeleteTaskPushNotificationConfig(ctx, req.(*a2a.DeleteTaskPushNotificationConfigRequest))
	case a2a.MethodGetExtendedAgentCard:
		return j.h.GetExtendedAgentCard(ctx, req.(*a2a.GetExtendedAgentCardRequest))
	}
	return nil, a2a.NewError(a2a.CodeMethodNotFound, "")
}

// streamV03 is [Handler.stream] in v0.3's shapes: each frame's result is
// the v0.3 event, and the stream ends after the one v03.EndsStream says.
func (j *Handler) streamV03(ctx context.Context, w http.ResponseWriter, r *http.Request, id json.RawMessage, open func(context.Context) iter.Seq2[server.StreamEvent, error]) {
	wire.Stream(ctx, w, r, open, wire.StreamFormat{
		KeepAlive: j.cfg.KeepAlive,
		Frame: func(ev a2a.Event, _ []byte) ([]byte, error) {
			out, err := v03.FromV1Event(ev)
			if err != nil {
				return nil, err
			}
			return marshalResponse(id, out)
		},
		Last:      v03.EndsStream,
		Error:     func(w http.ResponseWriter, err error) { j.writeErrorV03(w, http.StatusOK, id, err) },
		ErrorData: func(e *a2a.Error) []byte { return marshalErrorV03(id, e) },
		Log:       j.cfg.Log,
	})
}

func marshalErrorV03(id json.RawMessage, e *a2a.Error) []byte {
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *v03.Error      `json:"error"`
	}{"2.0", id, v03.FromV1Error(e)})
	if err != nil {
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`)
	}
	return b
}

// writeErrorV03 is [Handler.writeError] with the error in v0.3's shape.
func (j *Handler) writeErrorV03(w http.ResponseWriter, status int, id json.RawMessage, err error) {
	j.writeErrorAs(w, status, id, err, marshalErrorV03)
}
