package a2a

// The A2A operations (A2A §3.1), by the names every binding uses for them:
// the JSON-RPC method, the gRPC method of service A2AService, and the
// name an interceptor or a metric gives the call.
const (
	MethodSendMessage                      = "SendMessage"
	MethodSendStreamingMessage             = "SendStreamingMessage"
	MethodGetTask                          = "GetTask"
	MethodListTasks                        = "ListTasks"
	MethodCancelTask                       = "CancelTask"
	MethodSubscribeToTask                  = "SubscribeToTask"
	MethodCreateTaskPushNotificationConfig = "CreateTaskPushNotificationConfig"
	MethodGetTaskPushNotificationConfig    = "GetTaskPushNotificationConfig"
	MethodListTaskPushNotificationConfigs  = "ListTaskPushNotificationConfigs"
	MethodDeleteTaskPushNotificationConfig = "DeleteTaskPushNotificationConfig"
	MethodGetExtendedAgentCard             = "GetExtendedAgentCard"
)

// Methods returns the names of the 11 operations, in the order of A2A
// §3.1. Each call returns a new slice.
func Methods() []string {
	return []string{
		MethodSendMessage, MethodSendStreamingMessage, MethodGetTask, MethodListTasks,
		MethodCancelTask, MethodSubscribeToTask,
		MethodCreateTaskPushNotificationConfig, MethodGetTaskPushNotificationConfig,
		MethodListTaskPushNotificationConfigs, MethodDeleteTaskPushNotificationConfig,
		MethodGetExtendedAgentCard,
	}
}

// IsStreamingMethod reports whether the operation answers with a stream
// of events rather than once.
func IsStreamingMethod(method string) bool {
	return method == MethodSendStreamingMessage || method == MethodSubscribeToTask
}

// The service parameters (A2A §3.2.6) as the HTTP bindings send them, as
// headers, and as the gRPC binding does, as metadata keys (A2A §10.2).
// Last-Event-ID is SSE's own header, which a client reconnecting to a
// stream sends with the id of the last event it received.
const (
	HeaderVersion      = "A2A-Version"
	HeaderExtensions   = "A2A-Extensions"
	HeaderLastEventID  = "Last-Event-ID"
	MetadataVersion    = "a2a-version"
	MetadataExtensions = "a2a-extensions"
)
