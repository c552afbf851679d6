package v03

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/goa2a/a2a/a2a"
)

// ToV1Request reads the params of a v0.3 JSON-RPC call and returns the
// v1.0 operation it is (an a2a.Method* name) with a pointer to that
// operation's request type: *a2a.SendMessageRequest for message/send and
// message/stream, *a2a.TaskPushNotificationConfig for
// tasks/pushNotificationConfig/set, and so on.
//
// The params are checked as the v1.0 bindings check theirs: a member
// given twice, or one that matches a field only when case is ignored, is
// an InvalidParams error (see [a2a.CheckMembers]), as is params of the
// wrong shape. An unknown method is MethodNotFound.
func ToV1Request(method string, params json.RawMessage) (op string, req any, err error) {
	op, ok := ToV1Method(method)
	if !ok {
		return "", nil, a2a.NewError(a2a.CodeMethodNotFound, "no A2A v0.3 method "+method)
	}
	switch op {
	case a2a.MethodSendMessage, a2a.MethodSendStreamingMessage:
		req, err = decodeThen(params, decodeParams, func(p *MessageSendParams) (*a2a.SendMessageRequest, error) {
			if p.Message == nil {
				return nil, invalid("message", "message is required")
			}
			return ToV1SendMessageRequest(p)
		})
	case a2a.MethodGetTask:
		req, err = decodeThen(params, decodeParams, ToV1GetTaskRequest)
	case a2a.MethodCancelTask:
		req, err = decodeThen(params, decodeParams, ToV1CancelTaskRequest)
	case a2a.MethodSubscribeToTask:
		req, err = decodeThen(params, decodeParams, ToV1SubscribeToTaskRequest)
	case a2a.MethodCreateTaskPushNotificationConfig:
		req, err = decodeThen(params, decodeParams, ToV1TaskPushNotificationConfig)
	case a2a.MethodGetTaskPushNotificationConfig:
		req, err = decodeThen(params, decodeParams, ToV1GetTaskPushNotificationConfigRequest)
	case a2a.MethodListTaskPushNotificationConfigs:
		req, err = decodeThen(params, decodeParams, ToV1ListTaskPushNotificationConfigsRequest)
	case a2a.MethodDeleteTaskPushNotificationConfig:
		req, err = decodeThen(params, decodeParams, ToV1DeleteTaskPushNotificationConfigRequest)
	case a2a.MethodGetExtendedAgentCard:
		// The method has no params; whatever is sent is not read.
		req = &a2a.GetExtendedAgentCardRequest{}
	}
	if err != nil {
		return "", nil, err
	}
	return op, req, nil
}

// decodeThen decodes data into a new P and translates it with f.
func decodeThen[P, R any](data json.RawMessage, decode func(json.RawMessage, any) error, f func(*P) (R, error)) (any, error) {
	var p P
	if err := decode(data, &p); err != nil {
		return nil, err
	}
	return f(&p)
}

// decodeParams decodes the params object of a call into p.
func decodeParams(params json.RawMessage, p any) error {
	params = bytes.TrimSpace(params)
	if len(params) == 0 || bytes.Equal(params, []byte("null")) {
		return invalid("params", "params are required")
	}
	if params[0] != '{' {
		return invalid("params", "params must be an object")
	}
	if err := a2a.CheckMembers(params, p); err != nil {
		var me *a2a.MemberError
		if errors.As(err, &me) {
			return invalid(me.Field(), me.Reason)
		}
		return invalid("params", err.Error())
	}
	if err := json.Unmarshal(params, p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return invalid(te.Field, "a JSON "+te.Value+" cannot be this member's value")
		}
		return invalid("params", "params are not valid JSON: "+err.Error())
	}
	return nil
}

// FromV1Request returns the v0.3 JSON-RPC method and params of a v1.0
// operation's request (a pointer to its type, as [ToV1Request] returns
// it). The params are nil for agent/getAuthenticatedExtendedCard, which
// has none. ListTasks, and whatever the request holds that v0.3 cannot
// express, are UnsupportedOperation errors.
func FromV1Request(op string, req any) (method string, params any, err error) {
	method, err = FromV1Method(op)
	if err != nil {
		return "", nil, err
	}
	switch r := req.(type) {
	case *a2a.SendMessageRequest:
		if op == a2a.MethodSendMessage || op == a2a.MethodSendStreamingMessage {
			params, err = FromV1SendMessageRequest(r)
		}
	case *a2a.GetTaskRequest:
		if op == a2a.MethodGetTask {
			params, err = FromV1GetTaskRequest(r)
		}
	case *a2a.CancelTaskRequest:
		if op == a2a.MethodCancelTask {
			params, err = FromV1CancelTaskRequest(r)
		}
	case *a2a.SubscribeToTaskRequest:
		if op == a2a.MethodSubscribeToTask {
			params, err = FromV1SubscribeToTaskRequest(r)
		}
	case *a2a.TaskPushNotificationConfig:
		if op == a2a.MethodCreateTaskPushNotificationConfig {
			params, err = FromV1TaskPushNotificationConfig(r)
		}
	case *a2a.GetTaskPushNotificationConfigRequest:
		if op == a2a.MethodGetTaskPushNotificationConfig {
			params, err = FromV1GetTaskPushNotificationConfigRequest(r)
		}
	case *a2a.ListTaskPushNotificationConfigsRequest:
		if op == a2a.MethodListTaskPushNotificationConfigs {
			params, err = FromV1ListTaskPushNotificationConfigsRequest(r)
		}
	case *a2a.DeleteTaskPushNotificationConfigRequest:
		if op == a2a.MethodDeleteTaskPushNotificationConfig {
			params, err = FromV1DeleteTaskPushNotificationConfigRequest(r)
		}
	case *a2a.GetExtendedAgentCardRequest:
		if op == a2a.MethodGetExtendedAgentCard {
			if r != nil && r.Tenant != "" {
				return "", nil, noTenant("tenant")
			}
			return method, nil, nil
		}
	}
	if err != nil {
		return "", nil, err
	}
	if isNil(params) {
		return "", nil, invalid("", "the request of "+op+" must be a non-nil pointer to its request type, not "+typeName(req))
	}
	return method, params, nil
}

// FromV1Result returns the v0.3 result of a v1.0 operation's answer, the
// value a v0.3 server writes as the JSON-RPC result: for SendMessage a
// *a2a.SendMessageResponse, for the streaming operations one
// *a2a.StreamResponse (or a2a.Event) per event, for GetTask and CancelTask
// a *a2a.Task, for the push config operations a
// *a2a.TaskPushNotificationConfig or *a2a.ListTaskPushNotificationConfigsResponse,
// for DeleteTaskPushNotificationConfig nothing (nil, written as null), for
// GetExtendedAgentCard a *a2a.AgentCard (a dual card, see
// [FromV1AgentCard]).
func FromV1Result(op string, res any) (any, error) {
	var out any
	var err error
	switch op {
	case a2a.MethodSendMessage:
		if r, ok := res.(*a2a.SendMessageResponse); ok {
			out, err = FromV1SendMessageResponse(r)
		}
	case a2a.MethodSendStreamingMessage, a2a.MethodSubscribeToTask:
		switch r := res.(type) {
		case *a2a.StreamResponse:
			if r != nil {
				out, err = FromV1Event(r.Event)
			}
		case a2a.Event:
			out, err = FromV1Event(r)
		}
	case a2a.MethodGetTask, a2a.MethodCancelTask:
		if r, ok := res.(*a2a.Task); ok {
			out, err = FromV1Task(r)
		}
	case a2a.MethodCreateTaskPushNotificationConfig, a2a.MethodGetTaskPushNotificationConfig:
		if r, ok := res.(*a2a.TaskPushNotificationConfig); ok {
			out, err = FromV1TaskPushNotificationConfig(r)
		}
	case a2a.MethodListTaskPushNotificationConfigs:
		if r, ok := res.(*a2a.ListTaskPushNotificationConfigsResponse); ok {
			out, err = FromV1ListTaskPushNotificationConfigsResponse(r)
		}
	case a2a.MethodDeleteTaskPushNotificationConfig:
		return nil, nil
	case a2a.MethodGetExtendedAgentCard:
		if r, ok := res.(*a2a.AgentCard); ok {
			out, err = FromV1AgentCard(r)
		}
	default:
		_, err = FromV1Method(op)
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if isNil(out) {
		return nil, invalid("", "the answer of "+op+" cannot be "+typeName(res))
	}
	return out, nil
}

// ToV1Result reads the JSON-RPC result of a v0.3 call of the v1.0
// operation op and returns it as v1.0 answers it: the types
// [FromV1Result] takes (a *a2a.StreamResponse for each event of a
// stream, nil for DeleteTaskPushNotificationConfig).
func ToV1Result(op string, result json.RawMessage) (any, error) {
	var out any
	var err error
	switch op {
	case a2a.MethodSendMessage:
		var ev Event
		if ev, err = UnmarshalEvent(result); err == nil {
			out, err = ToV1SendMessageResponse(ev)
		}
	case a2a.MethodSendStreamingMessage, a2a.MethodSubscribeToTask:
		var ev Event
		if ev, err = UnmarshalEvent(result); err == nil {
			var v a2a.Event
			if v, err = ToV1Event(ev); err == nil {
				out = &a2a.StreamResponse{Event: v}
			}
		}
	case a2a.MethodGetTask, a2a.MethodCancelTask:
		out, err = decodeThen(result, decodeResult, ToV1Task)
	case a2a.MethodCreateTaskPushNotificationConfig, a2a.MethodGetTaskPushNotificationConfig:
		out, err = decodeThen(result, decodeResult, ToV1TaskPushNotificationConfig)
	case a2a.MethodListTaskPushNotificationConfigs:
		out, err = decodeThen(result, decodeResult, func(cs *[]TaskPushNotificationConfig) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
			return ToV1ListTaskPushNotificationConfigsResponse(*cs)
		})
	case a2a.MethodDeleteTaskPushNotificationConfig:
		return nil, nil
	case a2a.MethodGetExtendedAgentCard:
		out, err = decodeThen(result, decodeResult, ToV1AgentCard)
	default:
		_, err = FromV1Method(op)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// decodeResult decodes the result of a call into v.
func decodeResult(result json.RawMessage, v any) error {
	if err := json.Unmarshal(result, v); err != nil {
		return invalid("result", "the result does not have the shape of the method's: "+err.Error())
	}
	return nil
}

// isNil reports whether v is nil or holds a nil pointer.
func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	return v == nil || rv.Kind() == reflect.Pointer && rv.IsNil()
}

func typeName(v any) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprintf("%T", v)
}
