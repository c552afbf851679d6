package server_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

// TestIDLimits: ids, extension URIs and metadata keys beyond their maximum
// lengths are InvalidParams naming the field, on every operation that
// takes them; at the maximum they pass validation.
func TestIDLimits(t *testing.T) {
	h := newHandler(t, nil, scripted)
	ctx := v1(testCtx(t))
	long := strings.Repeat("x", server.MaxIDLength+1)
	atMax := strings.Repeat("x", server.MaxIDLength)
	msg := func(edit func(*a2a.Message)) *a2a.SendMessageRequest {
		m := newMessage("hi")
		edit(m)
		return &a2a.SendMessageRequest{Message: m}
	}
	for _, tc := range []struct {
		field string
		call  func() error
	}{
		{"message.messageId", func() error {
			_, err := h.SendMessage(ctx, msg(func(m *a2a.Message) { m.MessageID = long }))
			return err
		}},
		{"message.taskId", func() error {
			_, err := h.SendMessage(ctx, msg(func(m *a2a.Message) { m.TaskID = long }))
			return err
		}},
		{"message.contextId", func() error {
			_, err := h.SendMessage(ctx, msg(func(m *a2a.Message) { m.ContextID = long }))
			return err
		}},
		{"message.referenceTaskIds[0]", func() error {
			_, err := h.SendMessage(ctx, msg(func(m *a2a.Message) { m.ReferenceTaskIDs = []string{long} }))
			return err
		}},
		{"message.extensions[0]", func() error {
			_, err := h.SendMessage(ctx, msg(func(m *a2a.Message) {
				m.Extensions = []string{"https://example.com/" + strings.Repeat("e", server.MaxExtensionURILength)}
			}))
			return err
		}},
		{"message.metadata", func() error {
			_, err := h.SendMessage(ctx, msg(func(m *a2a.Message) {
				m.Metadata = map[string]any{strings.Repeat("k", server.MaxMetadataKeyLength+1): 1}
			}))
			return err
		}},
		{"message.parts[0].metadata", func() error {
			_, err := h.SendMessage(ctx, msg(func(m *a2a.Message) {
				m.Parts[0].Metadata = map[string]any{strings.Repeat("k", server.MaxMetadataKeyLength+1): 1}
			}))
			return err
		}},
		{"id", func() error { _, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: long}); return err }},
		{"id", func() error { _, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: long}); return err }},
		{"id", func() error {
			for _, err := range h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: long}) {
				return err
			}
			return nil
		}},
		{"contextId", func() error { _, err := h.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: long}); return err }},
		{"taskId", func() error {
			_, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: long, URL: "https://example.com/hook"})
			return err
		}},
		{"id", func() error {
			_, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: "t", ID: long, URL: "https://example.com/hook"})
			return err
		}},
		{"id", func() error {
			_, err := h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: "t", ID: long})
			return err
		}},
		{"taskId", func() error {
			_, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: long})
			return err
		}},
		{"id", func() error {
			return h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: "t", ID: long})
		}},
		{"A2A-Extensions[0]", func() error {
			ctx := server.WithServiceParams(testCtx(t), server.ServiceParams{Version: a2a.ProtocolVersion,
				Extensions: []string{strings.Repeat("e", server.MaxExtensionURILength+1)}})
			_, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: "t"})
			return err
		}},
	} {
		err := tc.call()
		var e *a2a.Error
		if !errors.As(err, &e) || e.Code != a2a.CodeInvalidParams || !hasViolation(e, tc.field) {
			t.Errorf("%s too long: %v, want InvalidParams naming %s", tc.field, err, tc.field)
		}
	}
	// At the maximum, an id is only unknown.
	if _, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: atMax}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("GetTask of an id of %d bytes: %v, want TaskNotFound", len(atMax), err)
	}
	res, err := h.SendMessage(ctx, msg(func(m *a2a.Message) { m.MessageID = atMax }))
	if err != nil || res == nil {
		t.Errorf("SendMessage with a messageId of %d bytes: %v", len(atMax), err)
	}
}

func hasViolation(e *a2a.Error, field string) bool {
	for _, v := range e.Violations {
		if v.Field == field {
			return true
		}
	}
	return false
}
