package a2a

import (
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

// MarshalJSON writes the single member. A nil event, or a nil pointer in
// it, is an error.
func (r StreamResponse) MarshalJSON() ([]byte, error) {
	// One wrapper struct per member: a single json.Marshal writes the
	// final bytes.
	switch e := r.Event.(type) {
	case *Task:
		if e != nil {
			return json.Marshal(struct {
				V *Task `json:"task"`
			}{e})
		}
	case *Message:
		if e != nil {
			return json.Marshal(struct {
				V *Message `json:"message"`
			}{e})
		}
	case *TaskStatusUpdateEvent:
		if e != nil {
			return json.Marshal(struct {
				V *TaskStatusUpdateEvent `json:"statusUpdate"`
			}{e})
		}
	case *TaskArtifactUpdateEvent:
		if e != nil {
			return json.Marshal(struct {
				V *TaskArtifactUpdateEvent `json:"artifactUpdate"`
			}{e})
		}
	}
	return nil, fmt.Errorf("a2a: StreamResponse: %w", errEmptyOneof)
}

// AppendJSON appends the encoding of r to dst. It writes the same bytes as
// MarshalJSON, faster: encoding/json re-validates whatever a MarshalJSON
// method returns, which for a whole task is a second pass over it.
func (r StreamResponse) AppendJSON(dst []byte) ([]byte, error) {
	var key string
	switch e := r.Event.(type) {
	case *Task:
		if e != nil {
			key = "task"
		}
	case *Message:
		if e != nil {
			key = "message"
		}
	case *TaskStatusUpdateEvent:
		if e != nil {
			key = "statusUpdate"
		}
	case *TaskArtifactUpdateEvent:
		if e != nil {
			key = "artifactUpdate"
		}
	}
	if key == "" {
		return dst, fmt.Errorf("a2a: StreamResponse: %w", errEmptyOneof)
	}
	return appendMember(dst, key, r.Event)
}

// appendMember appends {"key":<v>}.
func appendMember(dst []byte, key string, v any) ([]byte, error) {
	inner, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	dst = append(dst, `{"`...)
	dst = append(dst, key...)
	dst = append(dst, `":`...)
	dst = append(dst, inner...)
	return append(dst, '}'), nil
}

// streamResponseWire is the JSON form of a StreamResponse.
type streamResponseWire struct {
	Task           *Task                    `json:"task"`
	Message        *Message                 `json:"message"`
	StatusUpdate   *TaskStatusUpdateEvent   `json:"statusUpdate"`
	ArtifactUpdate *TaskArtifactUpdateEvent `json:"artifactUpdate"`
}

// UnmarshalJSON reads a StreamResponse, rejecting zero or several members.
func (r *StreamResponse) UnmarshalJSON(b []byte) error {
	var w streamResponseWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var ev Event
	n := 0
	if w.Task != nil {
		ev, n = w.Task, n+1
	}
	if w.Message != nil {
		ev, n = w.Message, n+1
	}
	if w.StatusUpdate != nil {
		ev, n = w.StatusUpdate, n+1
	}
	if w.ArtifactUpdate != nil {
		ev, n = w.ArtifactUpdate, n+1
	}
	if n != 1 {
		return fmt.Errorf("stream response: one of task, message, statusUpdate or artifactUpdate is required, got %d", n)
	}
	r.Event = ev
	return nil
}

// MarshalJSON writes {"task": ...} or {"message": ...}. A nil result, or a
// nil pointer in it, is an error.
func (r SendMessageResponse) MarshalJSON() ([]byte, error) {
	switch v := r.Result.(type) {
	case *Task:
		if v != nil {
			return json.Marshal(struct {
				V *Task `json:"task"`
			}{v})
		}
	case *Message:
		if v != nil {
			return json.Marshal(struct {
				V *Message `json:"message"`
			}{v})
		}
	}
	return nil, fmt.Errorf("a2a: SendMessageResponse: %w", errEmptyOneof)
}

// AppendJSON appends the encoding of r to dst; see
// [StreamResponse.AppendJSON].
func (r SendMessageResponse) AppendJSON(dst []byte) ([]byte, error) {
	switch v := r.Result.(type) {
	case *Task:
		if v != nil {
			return appendMember(dst, "task", v)
		}
	case *Message:
		if v != nil {
			return appendMember(dst, "message", v)
		}
	}
	return dst, fmt.Errorf("a2a: SendMessageResponse: %w", errEmptyOneof)
}

// sendMessageResponseWire is the JSON form of a SendMessageResponse.
type sendMessageResponseWire struct {
	Task    *Task    `json:"task"`
	Message *Message `json:"message"`
}

// UnmarshalJSON reads {"task": ...} or {"message": ...}.
func (r *SendMessageResponse) UnmarshalJSON(b []byte) error {
	var w sendMessageResponseWire
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
