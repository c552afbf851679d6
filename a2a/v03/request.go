package v03

import "github.com/goa2a/a2a/a2a"

// MessageSendParams is the params of message/send and message/stream (A2A
// v0.3 §7.1.1).
type MessageSendParams struct {
	Message       *Message                  `json:"message,omitempty"`
	Configuration *MessageSendConfiguration `json:"configuration,omitempty"`
	Metadata      map[string]any            `json:"metadata,omitzero"`
}

// MessageSendConfiguration tunes message/send (A2A v0.3 §7.1.2). Blocking
// nil means blocking, as the JS SDK 0.3 and a2a-go's v0.3 servers take it
// (and as v1.0's default is).
type MessageSendConfiguration struct {
	AcceptedOutputModes    []string                `json:"acceptedOutputModes,omitempty"`
	HistoryLength          *int32                  `json:"historyLength,omitempty"`
	PushNotificationConfig *PushNotificationConfig `json:"pushNotificationConfig,omitempty"`
	Blocking               *bool                   `json:"blocking,omitempty"`
}

// TaskQueryParams is the params of tasks/get (A2A v0.3 §7.3.1).
type TaskQueryParams struct {
	ID            string         `json:"id"`
	HistoryLength *int32         `json:"historyLength,omitempty"`
	Metadata      map[string]any `json:"metadata,omitzero"`
}

// TaskIDParams is the params of tasks/cancel and tasks/resubscribe (A2A
// v0.3 §7.4.1).
type TaskIDParams struct {
	ID       string         `json:"id"`
	Metadata map[string]any `json:"metadata,omitzero"`
}

// GetTaskPushNotificationConfigParams is the params of
// tasks/pushNotificationConfig/get (A2A v0.3 §7.6.1). Without a
// PushNotificationConfigID, v0.3 servers look for the config whose id is
// the task's (the id they give a config set without one).
type GetTaskPushNotificationConfigParams struct {
	ID                       string         `json:"id"`
	PushNotificationConfigID string         `json:"pushNotificationConfigId,omitempty"`
	Metadata                 map[string]any `json:"metadata,omitzero"`
}

// ListTaskPushNotificationConfigParams is the params of
// tasks/pushNotificationConfig/list (A2A v0.3 §7.7.1).
type ListTaskPushNotificationConfigParams struct {
	ID       string         `json:"id"`
	Metadata map[string]any `json:"metadata,omitzero"`
}

// DeleteTaskPushNotificationConfigParams is the params of
// tasks/pushNotificationConfig/delete (A2A v0.3 §7.8.1).
type DeleteTaskPushNotificationConfigParams struct {
	ID                       string         `json:"id"`
	PushNotificationConfigID string         `json:"pushNotificationConfigId"`
	Metadata                 map[string]any `json:"metadata,omitzero"`
}

// FromV1SendMessageRequest returns the v0.3 params of r. A tenant is an
// UnsupportedOperation error; so is a push config whose task id is not the
// message's (in v0.3 it is the message's task, so one equal to the
// message's task id is implied and left out). Blocking is always written
// when there is a configuration: v0.3 peers differ on what an absent one
// means.
func FromV1SendMessageRequest(r *a2a.SendMessageRequest) (*MessageSendParams, error) {
	if r == nil {
		return nil, nil
	}
	if r.Tenant != "" {
		return nil, noTenant("tenant")
	}
	out := &MessageSendParams{Metadata: r.Metadata}
	if r.Message != nil {
		m, err := fromV1Message(r.Message, "message")
		if err != nil {
			return nil, err
		}
		out.Message = &m
	}
	if c := r.Configuration; c != nil {
		blocking := !c.ReturnImmediately
		out.Configuration = &MessageSendConfiguration{
			AcceptedOutputModes: c.AcceptedOutputModes,
			HistoryLength:       c.HistoryLength,
			Blocking:            &blocking,
		}
		if pc := c.TaskPushNotificationConfig; pc != nil {
			const path = "configuration.taskPushNotificationConfig"
			if pc.Tenant != "" {
				return nil, noTenant(path + ".tenant")
			}
			if pc.TaskID != "" && (r.Message == nil || pc.TaskID != r.Message.TaskID) {
				return nil, notInV03(path+".taskId", "the push config of a v0.3 send is for the message's task")
			}
			p := fromV1PushConfig(pc)
			out.Configuration.PushNotificationConfig = &p
		}
	}
	return out, nil
}

// ToV1SendMessageRequest returns the v1.0 request of p. The push config
// of the configuration gets no task id: the server gives it the task the
// message creates or continues.
func ToV1SendMessageRequest(p *MessageSendParams) (*a2a.SendMessageRequest, error) {
	if p == nil {
		return nil, nil
	}
	out := &a2a.SendMessageRequest{Metadata: p.Metadata}
	if p.Message != nil {
		m, err := toV1Message(p.Message, "message")
		if err != nil {
			return nil, err
		}
		out.Message = &m
	}
	if c := p.Configuration; c != nil {
		out.Configuration = &a2a.SendMessageConfiguration{
			AcceptedOutputModes: c.AcceptedOutputModes,
			HistoryLength:       c.HistoryLength,
			ReturnImmediately:   c.Blocking != nil && !*c.Blocking,
		}
		if pc := c.PushNotificationConfig; pc != nil {
			v, err := toV1PushConfig(pc, "configuration.pushNotificationConfig")
			if err != nil {
				return nil, err
			}
			out.Configuration.TaskPushNotificationConfig = v
		}
	}
	return out, nil
}

// FromV1GetTaskRequest returns the v0.3 params of r; a tenant is an
// UnsupportedOperation error.
func FromV1GetTaskRequest(r *a2a.GetTaskRequest) (*TaskQueryParams, error) {
	if r == nil {
		return nil, nil
	}
	if r.Tenant != "" {
		return nil, noTenant("tenant")
	}
	return &TaskQueryParams{ID: r.ID, HistoryLength: r.HistoryLength}, nil
}

// ToV1GetTaskRequest returns the v1.0 request of p. Its metadata is not
// kept: GetTask has none in v1.0, and v0.3 defines none for tasks/get
// (its servers, the JS SDK's among them, ignore it).
func ToV1GetTaskRequest(p *TaskQueryParams) (*a2a.GetTaskRequest, error) {
	if p == nil {
		return nil, nil
	}
	return &a2a.GetTaskRequest{ID: p.ID, HistoryLength: p.HistoryLength}, nil
}

// FromV1CancelTaskRequest returns the v0.3 params of r; a tenant is an
// UnsupportedOperation error.
func FromV1CancelTaskRequest(r *a2a.CancelTaskRequest) (*TaskIDParams, error) {
	if r == nil {
		return nil, nil
	}
	if r.Tenant != "" {
		return nil, noTenant("tenant")
	}
	return &TaskIDParams{ID: r.ID, Metadata: r.Metadata}, nil
}

// ToV1CancelTaskRequest returns the v1.0 request of tasks/cancel params.
func ToV1CancelTaskRequest(p *TaskIDParams) (*a2a.CancelTaskRequest, error) {
	if p == nil {
		return nil, nil
	}
	return &a2a.CancelTaskRequest{ID: p.ID, Metadata: p.Metadata}, nil
}

// FromV1SubscribeToTaskRequest returns the v0.3 params of r
// (tasks/resubscribe); a tenant is an UnsupportedOperation error.
func FromV1SubscribeToTaskRequest(r *a2a.SubscribeToTaskRequest) (*TaskIDParams, error) {
	if r == nil {
		return nil, nil
	}
	if r.Tenant != "" {
		return nil, noTenant("tenant")
	}
	return &TaskIDParams{ID: r.ID}, nil
}

// ToV1SubscribeToTaskRequest returns the v1.0 request of tasks/resubscribe
// params. Their metadata is not kept: SubscribeToTask has none, and v0.3
// servers ignore it.
func ToV1SubscribeToTaskRequest(p *TaskIDParams) (*a2a.SubscribeToTaskRequest, error) {
	if p == nil {
		return nil, nil
	}
	return &a2a.SubscribeToTaskRequest{ID: p.ID}, nil
}

// FromV1GetTaskPushNotificationConfigRequest returns the v0.3 params of r;
// a tenant is an UnsupportedOperation error.
func FromV1GetTaskPushNotificationConfigRequest(r *a2a.GetTaskPushNotificationConfigRequest) (*GetTaskPushNotificationConfigParams, error) {
	if r == nil {
		return nil, nil
	}
	if r.Tenant != "" {
		return nil, noTenant("tenant")
	}
	return &GetTaskPushNotificationConfigParams{ID: r.TaskID, PushNotificationConfigID: r.ID}, nil
}

// ToV1GetTaskPushNotificationConfigRequest returns the v1.0 request of p.
// An absent config id stays empty; its v0.3 meaning (the config whose id
// is the task's) is the server's to apply. Metadata is not kept, as for
// [ToV1GetTaskRequest].
func ToV1GetTaskPushNotificationConfigRequest(p *GetTaskPushNotificationConfigParams) (*a2a.GetTaskPushNotificationConfigRequest, error) {
	if p == nil {
		return nil, nil
	}
	return &a2a.GetTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}, nil
}

// FromV1ListTaskPushNotificationConfigsRequest returns the v0.3 params of
// r. A tenant, a page size or a page token is an UnsupportedOperation
// error: v0.3 lists every config at once.
func FromV1ListTaskPushNotificationConfigsRequest(r *a2a.ListTaskPushNotificationConfigsRequest) (*ListTaskPushNotificationConfigParams, error) {
	if r == nil {
		return nil, nil
	}
	switch {
	case r.Tenant != "":
		return nil, noTenant("tenant")
	case r.PageSize != 0:
		return nil, notInV03("pageSize", "v0.3 has no paging of push notification configs")
	case r.PageToken != "":
		return nil, notInV03("pageToken", "v0.3 has no paging of push notification configs")
	}
	return &ListTaskPushNotificationConfigParams{ID: r.TaskID}, nil
}

// ToV1ListTaskPushNotificationConfigsRequest returns the v1.0 request of
// p, for every config (no page size). Metadata is not kept, as for
// [ToV1GetTaskRequest].
func ToV1ListTaskPushNotificationConfigsRequest(p *ListTaskPushNotificationConfigParams) (*a2a.ListTaskPushNotificationConfigsRequest, error) {
	if p == nil {
		return nil, nil
	}
	return &a2a.ListTaskPushNotificationConfigsRequest{TaskID: p.ID}, nil
}

// FromV1DeleteTaskPushNotificationConfigRequest returns the v0.3 params of
// r; a tenant is an UnsupportedOperation error.
func FromV1DeleteTaskPushNotificationConfigRequest(r *a2a.DeleteTaskPushNotificationConfigRequest) (*DeleteTaskPushNotificationConfigParams, error) {
	if r == nil {
		return nil, nil
	}
	if r.Tenant != "" {
		return nil, noTenant("tenant")
	}
	return &DeleteTaskPushNotificationConfigParams{ID: r.TaskID, PushNotificationConfigID: r.ID}, nil
}

// ToV1DeleteTaskPushNotificationConfigRequest returns the v1.0 request of
// p. Metadata is not kept, as for [ToV1GetTaskRequest].
func ToV1DeleteTaskPushNotificationConfigRequest(p *DeleteTaskPushNotificationConfigParams) (*a2a.DeleteTaskPushNotificationConfigRequest, error) {
	if p == nil {
		return nil, nil
	}
	return &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: p.ID, ID: p.PushNotificationConfigID}, nil
}
