package server

import (
	"context"
	"errors"

	"github.com/goa2a/a2a/a2a"
)

// checkPush gates the push config operations on the card (A2A §3.3.4).
func (h *Handler) checkPush(ctx context.Context) error {
	if err := h.begin(ctx); err != nil {
		return err
	}
	if !h.card.Capabilities.SupportsPush() {
		return a2a.NewError(a2a.CodePushNotificationNotSupported, "")
	}
	return nil
}

// CreateTaskPushNotificationConfig registers a webhook for a task's updates
// (A2A §3.1.7). A config without an id gets a new one.
func (h *Handler) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	if err := h.checkPush(ctx); err != nil {
		return nil, err
	}
	v := pushConfigViolations("", req)
	if req.TaskID == "" {
		v = append([]a2a.FieldViolation{{Field: "taskId", Description: "taskId is required"}}, v...)
	}
	if len(v) > 0 {
		return nil, a2a.InvalidParams(v...)
	}
	scope := h.scope(ctx, req.Tenant)
	c := *req
	if c.ID == "" {
		c.ID = h.newID()
	}
	if err := h.store.PutPushConfig(ctx, scope, &c); err != nil {
		return nil, storeErr(err, req.TaskID)
	}
	return &c, nil
}

// GetTaskPushNotificationConfig returns one webhook config. A config that
// does not exist is reported as TaskNotFoundError (A2A §3.1.8).
func (h *Handler) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	if err := h.checkPush(ctx); err != nil {
		return nil, err
	}
	if err := requireIDs(req.TaskID, req.ID); err != nil {
		return nil, err
	}
	c, err := h.store.GetPushConfig(ctx, h.scope(ctx, req.Tenant), req.TaskID, req.ID)
	if err != nil {
		e := storeErr(err, req.TaskID)
		if ae, ok := e.(*a2a.Error); ok && ae.Code == a2a.CodeTaskNotFound {
			e = ae.With("configId", req.ID)
		}
		return nil, e
	}
	return c, nil
}

// pushTokenKind marks page tokens of push config lists, which are bound to
// their task and carry the last config id of the page.
const pushTokenKind = "push"

// ListTaskPushNotificationConfigs returns the webhook configs of a task
// (A2A §3.1.9), a page at a time when pageSize is set.
func (h *Handler) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	if err := h.checkPush(ctx); err != nil {
		return nil, err
	}
	if err := requireID("taskId", req.TaskID); err != nil {
		return nil, err
	}
	if req.PageSize < 0 || req.PageSize > MaxPageSize {
		return nil, a2a.InvalidParam("pageSize", "pageSize must be between 1 and 100 inclusive, or unset")
	}
	scope := h.scope(ctx, req.Tenant)
	after := ""
	if req.PageToken != "" {
		b, err := h.openToken(ctx, pushTokenKind, scope, req.TaskID, req.PageToken)
		switch {
		case errors.Is(err, errBadToken) || (err == nil && len(b) == 0):
			return nil, a2a.InvalidParam("pageToken", errBadToken.Error())
		case err != nil:
			return nil, a2a.AsError(err)
		}
		after = string(b)
	}
	limit := int(req.PageSize)
	fetch := 0
	if limit > 0 {
		fetch = limit + 1
	}
	cs, err := h.store.ListPushConfigs(ctx, scope, req.TaskID, after, fetch)
	if err != nil {
		return nil, storeErr(err, req.TaskID)
	}
	out := &a2a.ListTaskPushNotificationConfigsResponse{}
	if limit > 0 && len(cs) > limit {
		cs = cs[:limit]
		if out.NextPageToken, err = h.sealToken(ctx, pushTokenKind, scope, req.TaskID, []byte(cs[limit-1].ID)); err != nil {
			return nil, a2a.AsError(err)
		}
	}
	out.Configs = make([]a2a.TaskPushNotificationConfig, len(cs))
	for i, c := range cs {
		out.Configs[i] = *c
	}
	return out, nil
}

// DeleteTaskPushNotificationConfig removes a webhook config; deleting it
// again succeeds (A2A §3.1.10).
func (h *Handler) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	if err := h.checkPush(ctx); err != nil {
		return err
	}
	if err := requireIDs(req.TaskID, req.ID); err != nil {
		return err
	}
	if err := h.store.DeletePushConfig(ctx, h.scope(ctx, req.Tenant), req.TaskID, req.ID); err != nil {
		return storeErr(err, req.TaskID)
	}
	return nil
}

func requireIDs(taskID, id string) error {
	var v []a2a.FieldViolation
	if taskID == "" {
		v = append(v, a2a.FieldViolation{Field: "taskId", Description: "taskId is required"})
	}
	if id == "" {
		v = append(v, a2a.FieldViolation{Field: "id", Description: "id is required"})
	}
	if len(v) > 0 {
		return a2a.InvalidParams(v...)
	}
	return nil
}
