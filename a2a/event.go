package a2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Event is a member of the StreamResponse oneof: [*Task], [*Message],
// [*TaskStatusUpdateEvent] or [*TaskArtifactUpdateEvent]. Streams
// (SendStreamingMessage, SubscribeToTask) and push notifications carry
// events.
type Event interface {
	isEvent()
}

func (*Task) isEvent()                    {}
func (*Message) isEvent()                 {}
func (*TaskStatusUpdateEvent) isEvent()   {}
func (*TaskArtifactUpdateEvent) isEvent() {}

// SendMessageResult is the SendMessageResponse oneof: a [*Task] or a direct
// [*Message] reply.
type SendMessageResult interface {
	isSendMessageResult()
}

func (*Task) isSendMessageResult()    {}
func (*Message) isSendMessageResult() {}

// StreamResponse wraps one stream event; on the wire it is an object with a
// single member "task", "message", "statusUpdate" or "artifactUpdate"
// (proto StreamResponse).
type StreamResponse struct {
	Event Event
}

// SendMessageResponse wraps the result of SendMessage; on the wire it is
// {"task": ...} or {"message": ...} (proto SendMessageResponse).
type SendMessageResponse struct {
	Result SendMessageResult
}

var errEmptyOneof = errors.New("exactly one member is required")

// MarshalJSON writes the single member.
func (r StreamResponse) MarshalJSON() ([]byte, error) {
	var key string
	switch r.Event.(type) {
	case *Task:
		key = "task"
	case *Message:
		key = "message"
	case *TaskStatusUpdateEvent:
		key = "statusUpdate"
	case *TaskArtifactUpdateEvent:
		key = "artifactUpdate"
	default:
		return nil, fmt.Errorf("a2a: StreamResponse: %w", errEmptyOneof)
	}
	return wrapMember(key, r.Event)
}

// UnmarshalJSON reads a StreamResponse, rejecting zero or several members.
func (r *StreamResponse) UnmarshalJSON(b []byte) error {
	var w struct {
		Task           *Task                    `json:"task"`
		Message        *Message                 `json:"message"`
		StatusUpdate   *TaskStatusUpdateEvent   `json:"statusUpdate"`
		ArtifactUpdate *TaskArtifactUpdateEvent `json:"artifactUpdate"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var evs []Event
	if w.Task != nil {
		evs = append(evs, w.Task)
	}
	if w.Message != nil {
		evs = append(evs, w.Message)
	}
	if w.StatusUpdate != nil {
		evs = append(evs, w.StatusUpdate)
	}
	if w.ArtifactUpdate != nil {
		evs = append(evs, w.ArtifactUpdate)
	}
	if len(evs) != 1 {
		return fmt.Errorf("stream response: one of task, message, statusUpdate or artifactUpdate is required, got %d", len(evs))
	}
	r.Event = evs[0]
	return nil
}

// MarshalJSON writes {"task": ...} or {"message": ...}.
func (r SendMessageResponse) MarshalJSON() ([]byte, error) {
	switch v := r.Result.(type) {
	case *Task:
		return wrapMember("task", v)
	case *Message:
		return wrapMember("message", v)
	}
	return nil, fmt.Errorf("a2a: SendMessageResponse: %w", errEmptyOneof)
}

// UnmarshalJSON reads {"task": ...} or {"message": ...}.
func (r *SendMessageResponse) UnmarshalJSON(b []byte) error {
	var w struct {
		Task    *Task    `json:"task"`
		Message *Message `json:"message"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	switch {
	case w.Task != nil && w.Message == nil:
		r.Result = w.Task
	case w.Message != nil && w.Task == nil:
		r.Result = w.Message
	default:
		return errors.New("send message response: exactly one of task or message is required")
	}
	return nil
}

func wrapMember(key string, v any) ([]byte, error) {
	inner, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(key) + len(inner) + 5)
	buf.WriteString(`{"`)
	buf.WriteString(key)
	buf.WriteString(`":`)
	buf.Write(inner)
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
