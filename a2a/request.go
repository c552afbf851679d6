package a2a

import "encoding/json"

// SendMessageRequest is the input of SendMessage and SendStreamingMessage
// (proto SendMessageRequest, A2A §3.1.1). Message is REQUIRED; a nil Message
// is omitted rather than written as null.
type SendMessageRequest struct {
	Tenant        string                    `json:"tenant,omitempty"`
	Message       *Message                  `json:"message,omitempty"`
	Configuration *SendMessageConfiguration `json:"configuration,omitempty"`
	Metadata      map[string]any            `json:"metadata,omitzero"`
}

// SendMessageConfiguration tunes a SendMessage call (proto
// SendMessageConfiguration, A2A §3.2.2).
type SendMessageConfiguration struct {
	AcceptedOutputModes        []string                    `json:"acceptedOutputModes,omitempty"`
	TaskPushNotificationConfig *TaskPushNotificationConfig `json:"taskPushNotificationConfig,omitempty"`
	// HistoryLength limits the history of the returned task; nil means no
	// limit and 0 means no history.
	HistoryLength *int32 `json:"historyLength,omitempty"`
	// ReturnImmediately returns as soon as the task exists instead of
	// waiting for a terminal or interrupted state (blocking is the default).
	ReturnImmediately bool `json:"returnImmediately,omitempty"`
}

// GetTaskRequest is the input of GetTask.
type GetTaskRequest struct {
	Tenant        string `json:"tenant,omitempty"`
	ID            string `json:"id"`
	HistoryLength *int32 `json:"historyLength,omitempty"`
}

// ListTasksRequest is the input of ListTasks (A2A §3.1.4).
type ListTasksRequest struct {
	Tenant               string    `json:"tenant,omitempty"`
	ContextID            string    `json:"contextId,omitempty"`
	Status               TaskState `json:"status,omitempty"`
	PageSize             *int32    `json:"pageSize,omitempty"`
	PageToken            string    `json:"pageToken,omitempty"`
	HistoryLength        *int32    `json:"historyLength,omitempty"`
	StatusTimestampAfter Timestamp `json:"statusTimestampAfter,omitzero"`
	IncludeArtifacts     *bool     `json:"includeArtifacts,omitempty"`
}

// ListTasksResponse is one page of ListTasks. Every member is always
// written: nextPageToken is "" on the last page (A2A §3.1.4).
type ListTasksResponse struct {
	Tasks         []Task `json:"tasks"`
	NextPageToken string `json:"nextPageToken"`
	PageSize      int32  `json:"pageSize"`
	TotalSize     int32  `json:"totalSize"`
}

// MarshalJSON writes tasks as [] when there are none.
func (r ListTasksResponse) MarshalJSON() ([]byte, error) {
	type plain ListTasksResponse
	p := plain(r)
	p.Tasks = nonNil(p.Tasks)
	return json.Marshal(p)
}

// CancelTaskRequest is the input of CancelTask.
type CancelTaskRequest struct {
	Tenant   string         `json:"tenant,omitempty"`
	ID       string         `json:"id"`
	Metadata map[string]any `json:"metadata,omitzero"`
}

// SubscribeToTaskRequest is the input of SubscribeToTask.
type SubscribeToTaskRequest struct {
	Tenant string `json:"tenant,omitempty"`
	ID     string `json:"id"`
}

// TaskPushNotificationConfig is a webhook registered for a task's updates.
// It is both the input and the output of CreateTaskPushNotificationConfig
// (proto TaskPushNotificationConfig, A2A §4.3).
type TaskPushNotificationConfig struct {
	Tenant         string              `json:"tenant,omitempty"`
	ID             string              `json:"id,omitempty"`
	TaskID         string              `json:"taskId,omitempty"`
	URL            string              `json:"url"`
	Token          string              `json:"token,omitempty"`
	Authentication *AuthenticationInfo `json:"authentication,omitempty"`
}

// AuthenticationInfo is the credential a server presents when it calls a
// webhook: "Authorization: <scheme> <credentials>".
type AuthenticationInfo struct {
	Scheme      string `json:"scheme"`
	Credentials string `json:"credentials,omitempty"`
}

// GetTaskPushNotificationConfigRequest is the input of
// GetTaskPushNotificationConfig.
type GetTaskPushNotificationConfigRequest struct {
	Tenant string `json:"tenant,omitempty"`
	TaskID string `json:"taskId"`
	ID     string `json:"id"`
}

// DeleteTaskPushNotificationConfigRequest is the input of
// DeleteTaskPushNotificationConfig.
type DeleteTaskPushNotificationConfigRequest struct {
	Tenant string `json:"tenant,omitempty"`
	TaskID string `json:"taskId"`
	ID     string `json:"id"`
}

// ListTaskPushNotificationConfigsRequest is the input of
// ListTaskPushNotificationConfigs.
type ListTaskPushNotificationConfigsRequest struct {
	Tenant    string `json:"tenant,omitempty"`
	TaskID    string `json:"taskId"`
	PageSize  int32  `json:"pageSize,omitempty"`
	PageToken string `json:"pageToken,omitempty"`
}

// ListTaskPushNotificationConfigsResponse is one page of push configs.
type ListTaskPushNotificationConfigsResponse struct {
	Configs       []TaskPushNotificationConfig `json:"configs,omitempty"`
	NextPageToken string                       `json:"nextPageToken,omitempty"`
}

// GetExtendedAgentCardRequest is the input of GetExtendedAgentCard.
type GetExtendedAgentCardRequest struct {
	Tenant string `json:"tenant,omitempty"`
}
