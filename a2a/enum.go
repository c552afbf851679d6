package a2a

import (
	"fmt"
	"strconv"
)

// TaskState is the lifecycle state of a task (proto TaskState).
type TaskState int32

// Task states with their proto numbers (A2A §4.1.3).
const (
	TaskStateUnspecified   TaskState = 0
	TaskStateSubmitted     TaskState = 1
	TaskStateWorking       TaskState = 2
	TaskStateCompleted     TaskState = 3
	TaskStateFailed        TaskState = 4
	TaskStateCanceled      TaskState = 5
	TaskStateInputRequired TaskState = 6
	TaskStateRejected      TaskState = 7
	TaskStateAuthRequired  TaskState = 8
)

var taskStateNames = [...]string{
	"TASK_STATE_UNSPECIFIED",
	"TASK_STATE_SUBMITTED",
	"TASK_STATE_WORKING",
	"TASK_STATE_COMPLETED",
	"TASK_STATE_FAILED",
	"TASK_STATE_CANCELED",
	"TASK_STATE_INPUT_REQUIRED",
	"TASK_STATE_REJECTED",
	"TASK_STATE_AUTH_REQUIRED",
}

// String returns the ProtoJSON name, such as "TASK_STATE_WORKING".
func (s TaskState) String() string {
	if s >= 0 && int(s) < len(taskStateNames) {
		return taskStateNames[s]
	}
	return "TaskState(" + strconv.Itoa(int(s)) + ")"
}

// Terminal reports whether s is final: completed, failed, canceled or
// rejected. Nothing leaves a terminal state (A2A §3.2.2).
func (s TaskState) Terminal() bool {
	switch s {
	case TaskStateCompleted, TaskStateFailed, TaskStateCanceled, TaskStateRejected:
		return true
	}
	return false
}

// Interrupted reports whether s waits on the client: input-required or
// auth-required.
func (s TaskState) Interrupted() bool {
	return s == TaskStateInputRequired || s == TaskStateAuthRequired
}

// Valid reports whether s is one of the named states other than unspecified.
func (s TaskState) Valid() bool { return s > TaskStateUnspecified && int(s) < len(taskStateNames) }

// ParseTaskState parses a ProtoJSON enum name or its decimal number.
func ParseTaskState(s string) (TaskState, error) {
	for i, n := range taskStateNames {
		if n == s {
			return TaskState(i), nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 32); err == nil && n >= 0 && int(n) < len(taskStateNames) {
		return TaskState(n), nil
	}
	return 0, fmt.Errorf("unknown task state %q (want one of TASK_STATE_SUBMITTED, TASK_STATE_WORKING, TASK_STATE_COMPLETED, TASK_STATE_FAILED, TASK_STATE_CANCELED, TASK_STATE_INPUT_REQUIRED, TASK_STATE_REJECTED, TASK_STATE_AUTH_REQUIRED)", s)
}

// MarshalJSON writes the enum name.
func (s TaskState) MarshalJSON() ([]byte, error) {
	return appendQuoted(nil, s.String()), nil
}

// UnmarshalJSON accepts the enum name or its number, as ProtoJSON does.
func (s *TaskState) UnmarshalJSON(b []byte) error {
	v, err := parseEnumJSON(b, ParseTaskState)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Role says who sent a message (proto Role).
type Role int32

// Roles.
const (
	RoleUnspecified Role = 0
	RoleUser        Role = 1
	RoleAgent       Role = 2
)

var roleNames = [...]string{"ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"}

// String returns the ProtoJSON name, such as "ROLE_USER".
func (r Role) String() string {
	if r >= 0 && int(r) < len(roleNames) {
		return roleNames[r]
	}
	return "Role(" + strconv.Itoa(int(r)) + ")"
}

// ParseRole parses a ProtoJSON enum name or its decimal number.
func ParseRole(s string) (Role, error) {
	for i, n := range roleNames {
		if n == s {
			return Role(i), nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 32); err == nil && n >= 0 && int(n) < len(roleNames) {
		return Role(n), nil
	}
	return 0, fmt.Errorf("unknown role %q (want ROLE_USER or ROLE_AGENT)", s)
}

// MarshalJSON writes the enum name.
func (r Role) MarshalJSON() ([]byte, error) { return appendQuoted(nil, r.String()), nil }

// UnmarshalJSON accepts the enum name or its number.
func (r *Role) UnmarshalJSON(b []byte) error {
	v, err := parseEnumJSON(b, ParseRole)
	if err != nil {
		return err
	}
	*r = v
	return nil
}

func appendQuoted(dst []byte, s string) []byte {
	// Enum names are plain ASCII; no escaping needed.
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// parseEnumJSON decodes a JSON string or number through parse.
func parseEnumJSON[E ~int32](b []byte, parse func(string) (E, error)) (E, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		return parse(string(b[1 : len(b)-1]))
	}
	if string(b) == "null" {
		return 0, nil
	}
	return parse(string(b))
}
