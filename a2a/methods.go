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

// RequestTask returns the tenant of an operation's request (a pointer to
// its request type, as [Methods] lists the operations) and the task it
// names, "" for none.
func RequestTask(req any) (tenant, taskID string) {
	switch r := req.(type) {
	case *SendMessageRequest:
		if r != nil {
			tenant = r.Tenant
			if r.Message != nil {
				taskID = r.Message.TaskID
			}
		}
	case *GetTaskRequest:
		if r != nil {
			tenant, taskID = r.Tenant, r.ID
		}
	case *ListTasksRequest:
		if r != nil {
			tenant = r.Tenant
		}
	case *CancelTaskRequest:
		if r != nil {
			tenant, taskID = r.Tenant, r.ID
		}
	case *SubscribeToTaskRequest:
		if r != nil {
			tenant, taskID = r.Tenant, r.ID
		}
	case *TaskPushNotificationConfig:
		if r != nil {
			tenant, taskID = r.Tenant, r.TaskID
		}
	case *GetTaskPushNotificationConfigRequest:
		if r != nil {
			tenant, taskID = r.Tenant, r.TaskID
		}
	case *ListTaskPushNotificationConfigsRequest:
		if r != nil {
			tenant, taskID = r.Tenant, r.TaskID
		}
	case *DeleteTaskPushNotificationConfigRequest:
		if r != nil {
			tenant, taskID = r.Tenant, r.TaskID
		}
	case *GetExtendedAgentCardRequest:
		if r != nil {
			tenant = r.Tenant
		}
	}
	return tenant, taskID
}

// AnswerTaskID is the task an operation's answer is about (a *Task, a
// *SendMessageResponse holding one, a *TaskPushNotificationConfig), "" for
// none.
func AnswerTaskID(res any) string {
	switch r := res.(type) {
	case *Task:
		if r != nil {
			return r.ID
		}
	case *SendMessageResponse:
		if r != nil {
			if t, ok := r.Result.(*Task); ok && t != nil {
				return t.ID
			}
		}
	case *TaskPushNotificationConfig:
		if r != nil {
			return r.TaskID
		}
	}
	return ""
}

// EventTaskID is the task a stream's event is about, "" for a message.
func EventTaskID(ev Event) string {
	switch e := ev.(type) {
	case *Task:
		return e.ID
	case *TaskStatusUpdateEvent:
		return e.TaskID
	case *TaskArtifactUpdateEvent:
		return e.TaskID
	}
	return ""
}
