package planner

import "github.com/goa2a/a2a/a2a"

// StepKind says what a [Step] reports.
type StepKind string

// The kinds of steps, in the order a run meets them.
const (
	// StepCard: an agent's card was read (Agent, URL, Card). A card that
	// could not be read is a StepError with URL set.
	StepCard StepKind = "card"
	// StepDelegate: a skill is delegated to an agent (Skill, Agent).
	StepDelegate StepKind = "delegate"
	// StepRetry: a send got no answer and is made again with the same
	// messageId (Agent, Text: the failure).
	StepRetry StepKind = "retry"
	// StepState: a task is in a new state, or has a new status message
	// (Agent, TaskID, State, Text: the status message).
	StepState StepKind = "state"
	// StepArtifact: an artifact, or a chunk of one, arrived (Agent,
	// TaskID, Artifact, Append for a chunk that adds to an earlier one).
	StepArtifact StepKind = "artifact"
	// StepAnswer: the planner answers a task that asked for input (Agent,
	// TaskID, Text: the answer).
	StepAnswer StepKind = "answer"
	// StepFollow: the planner follows a task that has not settled, over a
	// stream or by polling (Agent, TaskID, Text: "stream" or "poll").
	StepFollow StepKind = "follow"
	// StepApproval: the planner is following the task and now asks the
	// operator to approve it (Agent, TaskID, Text: what the agent asks).
	StepApproval StepKind = "approval"
	// StepError: a call failed (Agent or URL, Text: the error).
	StepError StepKind = "error"
	// StepDecision: the planner read a result and goes on (Text: the log
	// line, such as "tests: 13 passed"; the last one of a completed run
	// is "deploy: TASK_STATE_COMPLETED").
	StepDecision StepKind = "decision"
	// StepStop: the plan stops (Text: why).
	StepStop StepKind = "stop"
)

// Step is one thing that happened during a run, reported to the observer
// of [WithObserver] as it happens. Kind says which fields are set.
type Step struct {
	Kind     StepKind      `json:"kind"`
	Skill    string        `json:"skill,omitempty"`
	Agent    string        `json:"agent,omitempty"`
	URL      string        `json:"url,omitempty"`
	Card     *CardInfo     `json:"card,omitempty"`
	TaskID   string        `json:"taskId,omitempty"`
	State    a2a.TaskState `json:"state,omitempty"`
	Text     string        `json:"text,omitempty"`
	Artifact *a2a.Artifact `json:"artifact,omitempty"`
	Append   bool          `json:"append,omitempty"`
}

// CardInfo is what the planner took from an agent's card.
type CardInfo struct {
	Skills    []string `json:"skills"`
	Binding   string   `json:"binding"`   // of the interface chosen
	Interface string   `json:"interface"` // its URL
	Streaming bool     `json:"streaming,omitempty"`
	Push      bool     `json:"push,omitempty"`
	Auth      bool     `json:"auth,omitempty"` // the card asks for credentials
}
