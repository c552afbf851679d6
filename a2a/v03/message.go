package v03

import "github.com/goa2a/a2a/a2a"

// The roles of a v0.3 message.
const (
	RoleUser  = "user"
	RoleAgent = "agent"
)

// Message is a v0.3 message (A2A v0.3 §6.4). Kind is "message"; the
// FromV1 functions set it, and the ToV1 ones take an absent one for it.
type Message struct {
	Kind             string         `json:"kind"`
	MessageID        string         `json:"messageId"`
	ContextID        string         `json:"contextId,omitempty"`
	TaskID           string         `json:"taskId,omitempty"`
	Role             string         `json:"role"`
	Parts            []Part         `json:"parts"`
	Metadata         map[string]any `json:"metadata,omitzero"`
	Extensions       []string       `json:"extensions,omitempty"`
	ReferenceTaskIDs []string       `json:"referenceTaskIds,omitempty"`
}

// Artifact is a v0.3 artifact (A2A v0.3 §6.7).
type Artifact struct {
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part         `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitzero"`
	Extensions  []string       `json:"extensions,omitempty"`
}

// FromV1Message returns the v0.3 form of m. Every member has a v0.3 twin;
// a role other than user or agent, which v0.3 cannot name, is an
// InvalidParams error, and parts are translated as [FromV1Part] says.
func FromV1Message(m *a2a.Message) (*Message, error) {
	if m == nil {
		return nil, nil
	}
	out, err := fromV1Message(m, "")
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func fromV1Message(m *a2a.Message, path string) (Message, error) {
	var role string
	switch m.Role {
	case a2a.RoleUser:
		role = RoleUser
	case a2a.RoleAgent:
		role = RoleAgent
	default:
		return Message{}, invalid(join(path, "role"), "a message is from the user or the agent, not "+m.Role.String())
	}
	parts, err := fromV1Parts(m.Parts, join(path, "parts"))
	if err != nil {
		return Message{}, err
	}
	return Message{
		Kind: KindMessage, MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID,
		Role: role, Parts: parts, Metadata: m.Metadata,
		Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs,
	}, nil
}

// ToV1Message returns the v1.0 form of m. Its kind must be "message" (or
// absent) and its role user or agent.
func ToV1Message(m *Message) (*a2a.Message, error) {
	if m == nil {
		return nil, nil
	}
	out, err := toV1Message(m, "")
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func toV1Message(m *Message, path string) (a2a.Message, error) {
	if err := checkKind(m.Kind, KindMessage, path); err != nil {
		return a2a.Message{}, err
	}
	var role a2a.Role
	switch m.Role {
	case RoleUser:
		role = a2a.RoleUser
	case RoleAgent:
		role = a2a.RoleAgent
	default:
		return a2a.Message{}, invalid(join(path, "role"), `role must be "user" or "agent"`)
	}
	parts, err := toV1Parts(m.Parts, join(path, "parts"))
	if err != nil {
		return a2a.Message{}, err
	}
	return a2a.Message{
		MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID,
		Role: role, Parts: parts, Metadata: m.Metadata,
		Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs,
	}, nil
}

// checkKind refuses a kind discriminator other than want; an absent one is
// taken as want, since the type is known from where the object is.
func checkKind(kind, want, path string) error {
	if kind != "" && kind != want {
		return invalid(join(path, "kind"), "kind must be "+want+", not "+kind)
	}
	return nil
}

// FromV1Artifact returns the v0.3 form of a; its parts are translated as
// [FromV1Part] says.
func FromV1Artifact(a *a2a.Artifact) (*Artifact, error) {
	if a == nil {
		return nil, nil
	}
	out, err := fromV1Artifact(a, "")
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func fromV1Artifact(a *a2a.Artifact, path string) (Artifact, error) {
	parts, err := fromV1Parts(a.Parts, join(path, "parts"))
	if err != nil {
		return Artifact{}, err
	}
	return Artifact{
		ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description,
		Parts: parts, Metadata: a.Metadata, Extensions: a.Extensions,
	}, nil
}

// ToV1Artifact returns the v1.0 form of a.
func ToV1Artifact(a *Artifact) (*a2a.Artifact, error) {
	if a == nil {
		return nil, nil
	}
	out, err := toV1Artifact(a, "")
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func toV1Artifact(a *Artifact, path string) (a2a.Artifact, error) {
	parts, err := toV1Parts(a.Parts, join(path, "parts"))
	if err != nil {
		return a2a.Artifact{}, err
	}
	return a2a.Artifact{
		ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description,
		Parts: parts, Metadata: a.Metadata, Extensions: a.Extensions,
	}, nil
}
