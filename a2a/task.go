package a2a

// Task is the unit of work an agent tracks for a client (proto Task, A2A
// §4.1.1).
//
// Artifacts are emitted when the slice is non-nil, even when empty: a nil
// slice means "not included" (ListTasks without includeArtifacts, A2A §3.1.4)
// and an empty one means "included, none yet".
type Task struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId,omitempty"`
	Status    TaskStatus     `json:"status"`
	History   []Message      `json:"history,omitempty"`
	Artifacts []Artifact     `json:"artifacts,omitzero"`
	Metadata  map[string]any `json:"metadata,omitzero"`
}

// TaskStatus is a task's state, with an optional message from the agent and
// the time of the change (proto TaskStatus).
type TaskStatus struct {
	State     TaskState `json:"state"`
	Message   *Message  `json:"message,omitempty"`
	Timestamp Timestamp `json:"timestamp,omitzero"`
}

// Message is one turn of communication between client and agent (proto
// Message, A2A §4.1.4).
//
// Parts is REQUIRED with at least one part. A nil Parts is omitted, as
// ProtoJSON omits an empty repeated field; it is never written as null.
//
// Metadata fields throughout the package are google.protobuf.Struct
// messages: a nil map is unset and omitted, an empty non-nil map is set and
// written as {}, as ProtoJSON does.
type Message struct {
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             Role           `json:"role"`
	Parts            []Part         `json:"parts,omitzero"`
	Metadata         map[string]any `json:"metadata,omitzero"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

// Artifact is an output of a task (proto Artifact, A2A §4.1.7). Parts is
// REQUIRED with at least one part; a nil Parts is omitted, never null.
type Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part         `json:"parts,omitzero"`
	Metadata    map[string]any `json:"metadata,omitzero"`
	Extensions  []string       `json:"extensions,omitempty"`
}

// TaskStatusUpdateEvent reports a change of a task's status (proto
// TaskStatusUpdateEvent). v1.0 has no "final" member: the end of a stream is
// the completion signal.
type TaskStatusUpdateEvent struct {
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Metadata  map[string]any `json:"metadata,omitzero"`
}

// TaskArtifactUpdateEvent delivers an artifact or a chunk of one (proto
// TaskArtifactUpdateEvent). Append adds the parts to the artifact already
// received under the same id; LastChunk marks the artifact complete.
type TaskArtifactUpdateEvent struct {
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Artifact  Artifact       `json:"artifact"`
	Append    bool           `json:"append,omitempty"`
	LastChunk bool           `json:"lastChunk,omitempty"`
	Metadata  map[string]any `json:"metadata,omitzero"`
}

// NewTextMessage returns a message with one text part.
func NewTextMessage(role Role, messageID, text string) *Message {
	return &Message{MessageID: messageID, Role: role, Parts: []Part{TextPart(text)}}
}

// Text returns the concatenated text parts of m, the form most agents read.
func (m *Message) Text() string {
	if m == nil {
		return ""
	}
	return partsText(m.Parts)
}

// Text returns the concatenated text parts of a.
func (a *Artifact) Text() string { return partsText(a.Parts) }

func partsText(parts []Part) string {
	var s string
	for _, p := range parts {
		if t, ok := p.Content.(Text); ok {
			s += string(t)
		}
	}
	return s
}
