package a2a

import (
	"bytes"
	"encoding/json"
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

// ParseTaskState parses a ProtoJSON enum name or a decimal number. Like
// ProtoJSON, which treats proto3 enums as open, it accepts any int32 number;
// [TaskState.Valid] tells whether the state is a known one.
func ParseTaskState(s string) (TaskState, error) {
	return parseEnum[TaskState](s, taskStateNames[:], errTaskState)
}

func errTaskState(s string) error {
	return fmt.Errorf("unknown task state %q (want one of TASK_STATE_SUBMITTED, TASK_STATE_WORKING, TASK_STATE_COMPLETED, TASK_STATE_FAILED, TASK_STATE_CANCELED, TASK_STATE_INPUT_REQUIRED, TASK_STATE_REJECTED, TASK_STATE_AUTH_REQUIRED)", s)
}

var taskStateJSON = quotedNames(taskStateNames[:])

// MarshalJSON writes the enum name, or the number of a value that has none,
// as ProtoJSON does.
func (s TaskState) MarshalJSON() ([]byte, error) {
	return marshalEnum(s, taskStateJSON), nil
}

// UnmarshalJSON accepts the enum name or its number, as ProtoJSON does. An
// unknown name, or a number written as a string, is an error.
func (s *TaskState) UnmarshalJSON(b []byte) error {
	v, err := parseEnumJSON[TaskState](b, taskStateNames[:], errTaskState)
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

// ParseRole parses a ProtoJSON enum name or a decimal number (any int32,
// as for [ParseTaskState]).
func ParseRole(s string) (Role, error) {
	return parseEnum[Role](s, roleNames[:], errRole)
}

func errRole(s string) error {
	return fmt.Errorf("unknown role %q (want ROLE_USER or ROLE_AGENT)", s)
}

var roleJSON = quotedNames(roleNames[:])

// MarshalJSON writes the enum name, or the number of a value that has none.
func (r Role) MarshalJSON() ([]byte, error) { return marshalEnum(r, roleJSON), nil }

// UnmarshalJSON accepts the enum name or its number. An unknown name, or a
// number written as a string, is an error.
func (r *Role) UnmarshalJSON(b []byte) error {
	v, err := parseEnumJSON[Role](b, roleNames[:], errRole)
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// quotedNames returns the JSON strings of enum names (plain ASCII, nothing
// to escape). Each slice is capped at its length, so that appending to one
// copies it.
func quotedNames(names []string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		b := []byte(`"` + n + `"`)
		out[i] = b[:len(b):len(b)]
	}
	return out
}

// marshalEnum returns the quoted name of v, shared and without allocating
// (as json.RawMessage.MarshalJSON returns itself; encoding/json only reads
// it), or its number when it has no name.
func marshalEnum[E ~int32](v E, quoted [][]byte) []byte {
	if v >= 0 && int(v) < len(quoted) {
		return quoted[v]
	}
	return strconv.AppendInt(nil, int64(v), 10)
}

func enumByName[E ~int32](s string, names []string) (E, bool) {
	for i, n := range names {
		if n == s {
			return E(i), true
		}
	}
	return 0, false
}

func parseEnum[E ~int32](s string, names []string, unknown func(string) error) (E, error) {
	if v, ok := enumByName[E](s, names); ok {
		return v, nil
	}
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		return E(n), nil
	}
	return 0, unknown(s)
}

// parseEnumJSON decodes a JSON enum: a string holding a value name, or an
// int32 number. null is the zero value (unset).
func parseEnumJSON[E ~int32](b []byte, names []string, unknown func(string) error) (E, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		// string(bytes) == string compares without allocating.
		for i, n := range names {
			if string(b[1:len(b)-1]) == n {
				return E(i), nil
			}
		}
		s, err := unquoteJSON(b)
		if err != nil {
			return 0, err
		}
		if v, ok := enumByName[E](s, names); ok {
			return v, nil
		}
		return 0, unknown(s)
	}
	if string(b) == "null" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(string(b), 10, 32); err == nil {
		return E(n), nil
	}
	return 0, unknown(string(b))
}

// unquoteJSON returns the contents of the JSON string b, decoding escapes
// only when there are any.
func unquoteJSON(b []byte) (string, error) {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b[1 : len(b)-1]), nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}
