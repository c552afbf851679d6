package v03

import "github.com/goa2a/a2a/a2a"

// Version is the protocol version of v0.3 peers in Major.Minor form: the
// A2A-Version a v1.0 client sends to ask for v0.3 (A2A §3.6; an empty
// A2A-Version also means v0.3) and the protocolVersion of the card
// interfaces this package derives from a v0.3 card.
const Version = "0.3"

// CardProtocolVersion is the protocolVersion member a v0.3 card declares
// (A2A v0.3 §5.5).
const CardProtocolVersion = "0.3.0"

// The v0.3 JSON-RPC methods (A2A v0.3 §7).
const (
	MethodMessageSend                  = "message/send"
	MethodMessageStream                = "message/stream"
	MethodTasksGet                     = "tasks/get"
	MethodTasksCancel                  = "tasks/cancel"
	MethodTasksResubscribe             = "tasks/resubscribe"
	MethodPushConfigSet                = "tasks/pushNotificationConfig/set"
	MethodPushConfigGet                = "tasks/pushNotificationConfig/get"
	MethodPushConfigList               = "tasks/pushNotificationConfig/list"
	MethodPushConfigDelete             = "tasks/pushNotificationConfig/delete"
	MethodGetAuthenticatedExtendedCard = "agent/getAuthenticatedExtendedCard"
)

// ToV1Method returns the v1.0 operation (one of the a2a.Method* names) that
// a v0.3 JSON-RPC method is, and false for a name that is not a v0.3
// method.
func ToV1Method(method string) (string, bool) {
	switch method {
	case MethodMessageSend:
		return a2a.MethodSendMessage, true
	case MethodMessageStream:
		return a2a.MethodSendStreamingMessage, true
	case MethodTasksGet:
		return a2a.MethodGetTask, true
	case MethodTasksCancel:
		return a2a.MethodCancelTask, true
	case MethodTasksResubscribe:
		return a2a.MethodSubscribeToTask, true
	case MethodPushConfigSet:
		return a2a.MethodCreateTaskPushNotificationConfig, true
	case MethodPushConfigGet:
		return a2a.MethodGetTaskPushNotificationConfig, true
	case MethodPushConfigList:
		return a2a.MethodListTaskPushNotificationConfigs, true
	case MethodPushConfigDelete:
		return a2a.MethodDeleteTaskPushNotificationConfig, true
	case MethodGetAuthenticatedExtendedCard:
		return a2a.MethodGetExtendedAgentCard, true
	}
	return "", false
}

// FromV1Method returns the v0.3 JSON-RPC method of a v1.0 operation.
// ListTasks, which v0.3 does not have, is an UnsupportedOperation error;
// a name that is no operation is MethodNotFound.
func FromV1Method(op string) (string, error) {
	switch op {
	case a2a.MethodSendMessage:
		return MethodMessageSend, nil
	case a2a.MethodSendStreamingMessage:
		return MethodMessageStream, nil
	case a2a.MethodGetTask:
		return MethodTasksGet, nil
	case a2a.MethodCancelTask:
		return MethodTasksCancel, nil
	case a2a.MethodSubscribeToTask:
		return MethodTasksResubscribe, nil
	case a2a.MethodCreateTaskPushNotificationConfig:
		return MethodPushConfigSet, nil
	case a2a.MethodGetTaskPushNotificationConfig:
		return MethodPushConfigGet, nil
	case a2a.MethodListTaskPushNotificationConfigs:
		return MethodPushConfigList, nil
	case a2a.MethodDeleteTaskPushNotificationConfig:
		return MethodPushConfigDelete, nil
	case a2a.MethodGetExtendedAgentCard:
		return MethodGetAuthenticatedExtendedCard, nil
	case a2a.MethodListTasks:
		return "", notInV03("method", "ListTasks has no v0.3 method")
	}
	return "", a2a.NewError(a2a.CodeMethodNotFound, "no A2A operation "+op)
}
