package v03

import (
	"encoding/json"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// The kinds of the v0.3 objects a result or a stream carries (A2A v0.3
// §6): the "kind" member that v1.0 replaced by the name of a wrapping
// member (A2A §A.2.1).
const (
	KindMessage        = "message"
	KindTask           = "task"
	KindStatusUpdate   = "status-update"
	KindArtifactUpdate = "artifact-update"
)

// TaskState is a v0.3 task state, such as "input-required".
type TaskState string

// The v0.3 task states (A2A v0.3 §6.3). TaskStateUnknown is v1.0's
// TASK_STATE_UNSPECIFIED.
const (
	TaskStateSubmitted     TaskState = "submitted"
	TaskStateWorking       TaskState = "working"
	TaskStateInputRequired TaskState = "input-required"
	TaskStateCompleted     TaskState = "completed"
	TaskStateCanceled      TaskState = "canceled"
	TaskStateFailed        TaskState = "failed"
	TaskStateRejected      TaskState = "rejected"
	TaskStateAuthRequired  TaskState = "auth-required"
	TaskStateUnknown       TaskState = "unknown"
)

// FromV1TaskState returns the v0.3 name of s; a state with no name (a
// number v1.0 does not define) is an InvalidParams error.
func FromV1TaskState(s a2a.TaskState) (TaskState, error) {
	switch s {
	case a2a.TaskStateUnspecified:
		return TaskStateUnknown, nil
	case a2a.TaskStateSubmitted:
		return TaskStateSubmitted, nil
	case a2a.TaskStateWorking:
		return TaskStateWorking, nil
	case a2a.TaskStateCompleted:
		return TaskStateCompleted, nil
	case a2a.TaskStateFailed:
		return TaskStateFailed, nil
	case a2a.TaskStateCanceled:
		return TaskStateCanceled, nil
	case a2a.TaskStateInputRequired:
		return TaskStateInputRequired, nil
	case a2a.TaskStateRejected:
		return TaskStateRejected, nil
	case a2a.TaskStateAuthRequired:
		return TaskStateAuthRequired, nil
	}
	return "", invalid("state", "unknown task state "+s.String())
}

// ToV1TaskState returns the v1.0 state named s; another name is an
// InvalidParams error.
func ToV1TaskState(s TaskState) (a2a.TaskState, error) {
	switch s {
	case TaskStateUnknown:
		return a2a.TaskStateUnspecified, nil
	case TaskStateSubmitted:
		return a2a.TaskStateSubmitted, nil
	case TaskStateWorking:
		return a2a.TaskStateWorking, nil
	case TaskStateCompleted:
		return a2a.TaskStateCompleted, nil
	case TaskStateFailed:
		return a2a.TaskStateFailed, nil
	case TaskStateCanceled:
		return a2a.TaskStateCanceled, nil
	case TaskStateInputRequired:
		return a2a.TaskStateInputRequired, nil
	case TaskStateRejected:
		return a2a.TaskStateRejected, nil
	case TaskStateAuthRequired:
		return a2a.TaskStateAuthRequired, nil
	}
	return 0, invalid("state", "unknown task state "+string(s))
}

// Task is a v0.3 task (A2A v0.3 §6.1), of kind "task" (set and read as
// for [Message]). As in v1.0, a nil Artifacts is omitted and an empty one
// written as [].
type Task struct {
	Kind      string         `json:"kind"`
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	History   []Message      `json:"history,omitempty"`
	Artifacts []Artifact     `json:"artifacts,omitzero"`
	Metadata  map[string]any `json:"metadata,omitzero"`
}

// TaskStatus is a v0.3 task status. Timestamp is an ISO 8601 time; v0.3
// peers write RFC 3339 times in UTC, as v1.0 does, and this package reads
// one without an offset as UTC.
type TaskStatus struct {
	State     TaskState `json:"state"`
	Message   *Message  `json:"message,omitempty"`
	Timestamp string    `json:"timestamp,omitempty"`
}

// TaskStatusUpdateEvent is a v0.3 status update, kind "status-update".
// Final marks the last event of a stream (v1.0 ends the stream instead).
type TaskStatusUpdateEvent struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Final     bool           `json:"final"`
	Metadata  map[string]any `json:"metadata,omitzero"`
}

// TaskArtifactUpdateEvent is a v0.3 artifact update, kind
// "artifact-update". Append and LastChunk are always written, as the JS
// SDK writes them.
type TaskArtifactUpdateEvent struct {
	Kind      string         `json:"kind"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Artifact  Artifact       `json:"artifact"`
	Append    bool           `json:"append"`
	LastChunk bool           `json:"lastChunk"`
	Metadata  map[string]any `json:"metadata,omitzero"`
}

// Event is what a v0.3 stream, push notification or message/send result
// carries: a [*Task], [*Message], [*TaskStatusUpdateEvent] or
// [*TaskArtifactUpdateEvent], told apart on the wire by its "kind".
type Event interface {
	isEvent()
}

func (*Task) isEvent()                    {}
func (*Message) isEvent()                 {}
func (*TaskStatusUpdateEvent) isEvent()   {}
func (*TaskArtifactUpdateEvent) isEvent() {}

// UnmarshalEvent decodes a v0.3 event by its kind.
func UnmarshalEvent(data []byte) (Event, error) {
	var k struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &k); err != nil {
		return nil, invalid("", "not a v0.3 event: "+err.Error())
	}
	var ev Event
	switch k.Kind {
	case KindTask:
		ev = new(Task)
	case KindMessage:
		ev = new(Message)
	case KindStatusUpdate:
		ev = new(TaskStatusUpdateEvent)
	case KindArtifactUpdate:
		ev = new(TaskArtifactUpdateEvent)
	default:
		return nil, invalid("kind", "an event's kind is task, message, status-update or artifact-update, not "+quoteOrNone(k.Kind))
	}
	if err := json.Unmarshal(data, ev); err != nil {
		return nil, invalid("", "not a v0.3 "+k.Kind+": "+err.Error())
	}
	return ev, nil
}

func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return `"` + s + `"`
}

// FromV1Task returns the v0.3 form of t: its history, artifacts and status
// message translated as [FromV1Message] and [FromV1Part] say, its
// timestamp written as RFC 3339 in UTC with milliseconds.
func FromV1Task(t *a2a.Task) (*Task, error) {
	if t == nil {
		return nil, nil
	}
	status, err := fromV1Status(&t.Status, "status")
	if err != nil {
		return nil, err
	}
	out := &Task{Kind: KindTask, ID: t.ID, ContextID: t.ContextID, Status: status, Metadata: t.Metadata}
	if len(t.History) > 0 {
		out.History = make([]Message, len(t.History))
		for i := range t.History {
			if out.History[i], err = fromV1Message(&t.History[i], index("history", i)); err != nil {
				return nil, err
			}
		}
	}
	if t.Artifacts != nil {
		out.Artifacts = make([]Artifact, len(t.Artifacts))
		for i := range t.Artifacts {
			if out.Artifacts[i], err = fromV1Artifact(&t.Artifacts[i], index("artifacts", i)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// ToV1Task returns the v1.0 form of t. A timestamp must be an RFC 3339
// time; it is kept to the millisecond, the precision of v1.0 (A2A
// §5.6.1).
func ToV1Task(t *Task) (*a2a.Task, error) {
	if t == nil {
		return nil, nil
	}
	if err := checkKind(t.Kind, KindTask, ""); err != nil {
		return nil, err
	}
	status, err := toV1Status(&t.Status, "status")
	if err != nil {
		return nil, err
	}
	out := &a2a.Task{ID: t.ID, ContextID: t.ContextID, Status: status, Metadata: t.Metadata}
	if len(t.History) > 0 {
		out.History = make([]a2a.Message, len(t.History))
		for i := range t.History {
			if out.History[i], err = toV1Message(&t.History[i], index("history", i)); err != nil {
				return nil, err
			}
		}
	}
	if t.Artifacts != nil {
		out.Artifacts = make([]a2a.Artifact, len(t.Artifacts))
		for i := range t.Artifacts {
			if out.Artifacts[i], err = toV1Artifact(&t.Artifacts[i], index("artifacts", i)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func fromV1Status(s *a2a.TaskStatus, path string) (TaskStatus, error) {
	state, err := FromV1TaskState(s.State)
	if err != nil {
		return TaskStatus{}, invalid(join(path, "state"), "unknown task state "+s.State.String())
	}
	out := TaskStatus{State: state}
	if s.Message != nil {
		m, err := fromV1Message(s.Message, join(path, "message"))
		if err != nil {
			return TaskStatus{}, err
		}
		out.Message = &m
	}
	if !s.Timestamp.IsZero() {
		if y := s.Timestamp.UTC().Year(); y < 1 || y > 9999 {
			return TaskStatus{}, invalid(join(path, "timestamp"), "a timestamp's year is 0001 to 9999")
		}
		out.Timestamp = s.Timestamp.String()
	}
	return out, nil
}

func toV1Status(s *TaskStatus, path string) (a2a.TaskStatus, error) {
	state, err := ToV1TaskState(s.State)
	if err != nil {
		return a2a.TaskStatus{}, invalid(join(path, "state"), "unknown task state "+quoteOrNone(string(s.State)))
	}
	out := a2a.TaskStatus{State: state}
	if s.Message != nil {
		m, err := toV1Message(s.Message, join(path, "message"))
		if err != nil {
			return a2a.TaskStatus{}, err
		}
		out.Message = &m
	}
	if s.Timestamp != "" {
		ts, err := parseTimestamp(s.Timestamp)
		if err != nil {
			return a2a.TaskStatus{}, invalid(join(path, "timestamp"), err.Error())
		}
		out.Timestamp = ts
	}
	return out, nil
}

// parseTimestamp reads a v0.3 timestamp: an RFC 3339 time, or one without
// an offset, taken as UTC. The examples of the v0.3 specification write
// the latter ("2025-04-02T16:59:25.331844", Python's isoformat of a naive
// time). Either is kept to the millisecond.
func parseTimestamp(s string) (a2a.Timestamp, error) {
	ts, err := a2a.ParseTimestamp(s)
	if err != nil {
		t, err2 := time.Parse("2006-01-02T15:04:05.999999999", s)
		if err2 != nil || t.Year() < 1 {
			return a2a.Timestamp{}, err
		}
		ts.Time = t
	}
	return a2a.TimestampOf(ts.Time), nil
}

// FromV1TaskStatusUpdateEvent returns the v0.3 form of e. Final is set for
// a terminal or interrupted state (input-required, auth-required), the
// states after which a v0.3 server ends the stream of the call; v1.0 has
// no such member and ends the stream itself.
func FromV1TaskStatusUpdateEvent(e *a2a.TaskStatusUpdateEvent) (*TaskStatusUpdateEvent, error) {
	if e == nil {
		return nil, nil
	}
	status, err := fromV1Status(&e.Status, "status")
	if err != nil {
		return nil, err
	}
	return &TaskStatusUpdateEvent{
		Kind: KindStatusUpdate, TaskID: e.TaskID, ContextID: e.ContextID, Status: status,
		Final:    finalState(e.Status.State),
		Metadata: e.Metadata,
	}, nil
}

// finalState reports whether a v0.3 server ends a stream at state s: a
// terminal or interrupted one.
func finalState(s a2a.TaskState) bool { return s.Terminal() || s.Interrupted() }

// EndsStream reports whether a v0.3 stream (message/stream,
// tasks/resubscribe) ends after the v0.3 form of ev: a message, a status
// update that [FromV1TaskStatusUpdateEvent] writes with final true, and a
// task in such a state (the snapshot a resubscription to a task that has
// stopped begins with). A v1.0 stream stays open through auth-required
// (A2A §7.6.1); a v0.3 client takes final as the end of the call, so a
// v0.3 server ends it there.
func EndsStream(ev a2a.Event) bool {
	switch e := ev.(type) {
	case *a2a.Message:
		return e != nil
	case *a2a.TaskStatusUpdateEvent:
		return e != nil && finalState(e.Status.State)
	case *a2a.Task:
		return e != nil && finalState(e.Status.State)
	}
	return false
}

// ToV1TaskStatusUpdateEvent returns the v1.0 form of e. Final is not
// kept: in v1.0 the end of the stream says it.
func ToV1TaskStatusUpdateEvent(e *TaskStatusUpdateEvent) (*a2a.TaskStatusUpdateEvent, error) {
	if e == nil {
		return nil, nil
	}
	if err := checkKind(e.Kind, KindStatusUpdate, ""); err != nil {
		return nil, err
	}
	status, err := toV1Status(&e.Status, "status")
	if err != nil {
		return nil, err
	}
	return &a2a.TaskStatusUpdateEvent{TaskID: e.TaskID, ContextID: e.ContextID, Status: status, Metadata: e.Metadata}, nil
}

// FromV1TaskArtifactUpdateEvent returns the v0.3 form of e.
func FromV1TaskArtifactUpdateEvent(e *a2a.TaskArtifactUpdateEvent) (*TaskArtifactUpdateEvent, error) {
	if e == nil {
		return nil, nil
	}
	a, err := fromV1Artifact(&e.Artifact, "artifact")
	if err != nil {
		return nil, err
	}
	return &TaskArtifactUpdateEvent{
		Kind: KindArtifactUpdate, TaskID: e.TaskID, ContextID: e.ContextID, Artifact: a,
		Append: e.Append, LastChunk: e.LastChunk, Metadata: e.Metadata,
	}, nil
}

// ToV1TaskArtifactUpdateEvent returns the v1.0 form of e.
func ToV1TaskArtifactUpdateEvent(e *TaskArtifactUpdateEvent) (*a2a.TaskArtifactUpdateEvent, error) {
	if e == nil {
		return nil, nil
	}
	if err := checkKind(e.Kind, KindArtifactUpdate, ""); err != nil {
		return nil, err
	}
	a, err := toV1Artifact(&e.Artifact, "artifact")
	if err != nil {
		return nil, err
	}
	return &a2a.TaskArtifactUpdateEvent{
		TaskID: e.TaskID, ContextID: e.ContextID, Artifact: a,
		Append: e.Append, LastChunk: e.LastChunk, Metadata: e.Metadata,
	}, nil
}

// FromV1Event returns the v0.3 form of a stream event: of a
// StreamResponse member, or of a push notification, whose v0.3 body is the
// bare event.
func FromV1Event(ev a2a.Event) (Event, error) {
	var out Event
	var err error
	switch e := ev.(type) {
	case *a2a.Task:
		if e != nil {
			out, err = FromV1Task(e)
		}
	case *a2a.Message:
		if e != nil {
			out, err = FromV1Message(e)
		}
	case *a2a.TaskStatusUpdateEvent:
		if e != nil {
			out, err = FromV1TaskStatusUpdateEvent(e)
		}
	case *a2a.TaskArtifactUpdateEvent:
		if e != nil {
			out, err = FromV1TaskArtifactUpdateEvent(e)
		}
	}
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, invalid("", "no event")
	}
	return out, nil
}

// ToV1Event returns the v1.0 form of a v0.3 event.
func ToV1Event(ev Event) (a2a.Event, error) {
	var out a2a.Event
	var err error
	switch e := ev.(type) {
	case *Task:
		if e != nil {
			out, err = ToV1Task(e)
		}
	case *Message:
		if e != nil {
			out, err = ToV1Message(e)
		}
	case *TaskStatusUpdateEvent:
		if e != nil {
			out, err = ToV1TaskStatusUpdateEvent(e)
		}
	case *TaskArtifactUpdateEvent:
		if e != nil {
			out, err = ToV1TaskArtifactUpdateEvent(e)
		}
	}
	if err != nil {
		return nil, err
	}
	if out == nil {
		return nil, invalid("", "no event")
	}
	return out, nil
}

// FromV1SendMessageResponse returns the v0.3 result of message/send: the
// bare task or message.
func FromV1SendMessageResponse(r *a2a.SendMessageResponse) (Event, error) {
	if r == nil {
		return nil, invalid("", "no result")
	}
	switch v := r.Result.(type) {
	case *a2a.Task:
		return FromV1Event(v)
	case *a2a.Message:
		return FromV1Event(v)
	}
	return nil, invalid("", "a SendMessage result is a task or a message")
}

// ToV1SendMessageResponse returns the v1.0 form of a message/send result,
// which must be a task or a message.
func ToV1SendMessageResponse(ev Event) (*a2a.SendMessageResponse, error) {
	switch ev.(type) {
	case *Task, *Message:
	default:
		return nil, invalid("kind", "a message/send result is a task or a message")
	}
	v, err := ToV1Event(ev)
	if err != nil {
		return nil, err
	}
	return &a2a.SendMessageResponse{Result: v.(a2a.SendMessageResult)}, nil
}
