package rest

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/goa2a/a2a/a2a"
)

// query reads the query parameters of GET requests (A2A §11.5): camelCase
// names, decimal numbers, true/false, enum names, RFC 3339 timestamps. Each
// malformed value is recorded as a field violation naming the parameter, so
// one answer lists them all. Parameters nobody asks for are ignored.
type query struct {
	values     url.Values
	violations []a2a.FieldViolation
}

// parseQuery parses a raw query string. A query that is not
// application/x-www-form-urlencoded (a bad percent-escape, a semicolon) is
// an InvalidRequest error.
func parseQuery(raw string) (*query, error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, a2a.NewError(a2a.CodeInvalidRequest, "malformed query string: "+err.Error())
	}
	return &query{values: v}, nil
}

func (q *query) bad(name, description string) {
	q.violations = append(q.violations, a2a.FieldViolation{Field: name, Description: description})
}

// one returns the single value of name. A parameter given twice is a
// violation: none of the request fields read from the query is repeated.
func (q *query) one(name string) (string, bool) {
	vs, ok := q.values[name]
	if !ok {
		return "", false
	}
	if len(vs) > 1 {
		q.bad(name, name+" must be given at most once")
		return "", false
	}
	return vs[0], true
}

// str reads a string; an empty value is the same as none.
func (q *query) str(name string) string {
	s, _ := q.one(name)
	return s
}

// int32p reads an optional number, keeping presence: nil when absent.
func (q *query) int32p(name string) *int32 {
	s, ok := q.one(name)
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		q.bad(name, name+" must be a decimal 32-bit integer, got "+strconv.Quote(s))
		return nil
	}
	v := int32(n)
	return &v
}

// int32 reads a number whose absence means 0.
func (q *query) int32(name string) int32 {
	if p := q.int32p(name); p != nil {
		return *p
	}
	return 0
}

// boolp reads an optional boolean, "true" or "false".
func (q *query) boolp(name string) *bool {
	s, ok := q.one(name)
	if !ok {
		return nil
	}
	switch s {
	case "true":
		return a2a.Ptr(true)
	case "false":
		return a2a.Ptr(false)
	}
	q.bad(name, name+` must be "true" or "false", got `+strconv.Quote(s))
	return nil
}

// state reads a task state by its enum name (or number, as ProtoJSON
// allows); absent is TASK_STATE_UNSPECIFIED.
func (q *query) state(name string) a2a.TaskState {
	s, ok := q.one(name)
	if !ok {
		return a2a.TaskStateUnspecified
	}
	st, err := a2a.ParseTaskState(s)
	if err != nil {
		q.bad(name, err.Error())
		return a2a.TaskStateUnspecified
	}
	return st
}

// timestamp reads an RFC 3339 time; absent is the zero Timestamp (unset).
func (q *query) timestamp(name string) a2a.Timestamp {
	s, ok := q.one(name)
	if !ok {
		return a2a.Timestamp{}
	}
	ts, err := a2a.ParseTimestamp(s)
	if err != nil && strings.Contains(s, " ") {
		// A "+hh:mm" offset sent without percent-encoding the plus
		// arrives as a space (form encoding); a timestamp never has one.
		ts, err = a2a.ParseTimestamp(strings.ReplaceAll(s, " ", "+"))
	}
	if err != nil {
		q.bad(name, name+" must be an RFC 3339 timestamp such as 2026-01-02T15:04:05.000Z, got "+strconv.Quote(s))
		return a2a.Timestamp{}
	}
	return ts
}

// err is the InvalidParams error listing every violation, or nil.
func (q *query) err() error {
	if len(q.violations) == 0 {
		return nil
	}
	return a2a.InvalidParams(q.violations...)
}

// getTaskRequest reads GET /tasks/{id}?historyLength=N.
func getTaskRequest(rt route, raw string) (*a2a.GetTaskRequest, error) {
	q, err := parseQuery(raw)
	if err != nil {
		return nil, err
	}
	req := &a2a.GetTaskRequest{Tenant: rt.tenant, ID: rt.taskID, HistoryLength: q.int32p("historyLength")}
	return req, q.err()
}

// listTasksRequest reads GET /tasks and its filters.
func listTasksRequest(rt route, raw string) (*a2a.ListTasksRequest, error) {
	q, err := parseQuery(raw)
	if err != nil {
		return nil, err
	}
	req := &a2a.ListTasksRequest{
		Tenant:               rt.tenant,
		ContextID:            q.str("contextId"),
		Status:               q.state("status"),
		PageSize:             q.int32p("pageSize"),
		PageToken:            q.str("pageToken"),
		HistoryLength:        q.int32p("historyLength"),
		StatusTimestampAfter: q.timestamp("statusTimestampAfter"),
		IncludeArtifacts:     q.boolp("includeArtifacts"),
	}
	return req, q.err()
}

// listPushConfigsRequest reads GET /tasks/{taskId}/pushNotificationConfigs.
func listPushConfigsRequest(rt route, raw string) (*a2a.ListTaskPushNotificationConfigsRequest, error) {
	q, err := parseQuery(raw)
	if err != nil {
		return nil, err
	}
	req := &a2a.ListTaskPushNotificationConfigsRequest{
		Tenant:    rt.tenant,
		TaskID:    rt.taskID,
		PageSize:  q.int32("pageSize"),
		PageToken: q.str("pageToken"),
	}
	return req, q.err()
}
