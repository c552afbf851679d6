package rest

import (
	"net/http"
	"net/url"
	"strings"
)

// resource is what a request path names, before the HTTP method picks the
// operation.
type resource int

const (
	resNone          resource = iota
	resMessageSend            // /message:send
	resMessageStream          // /message:stream
	resTasks                  // /tasks
	resExtendedCard           // /extendedAgentCard
	resTask                   // /tasks/{id}
	resTaskCancel             // /tasks/{id}:cancel
	resTaskSubscribe          // /tasks/{id}:subscribe
	resPushConfigs            // /tasks/{taskId}/pushNotificationConfigs
	resPushConfig             // /tasks/{taskId}/pushNotificationConfigs/{configId}
)

// op is one of the eleven A2A operations.
type op int

const (
	opNone op = iota
	opSendMessage
	opSendStreamingMessage
	opGetTask
	opListTasks
	opCancelTask
	opSubscribeToTask
	opCreatePushConfig
	opGetPushConfig
	opListPushConfigs
	opDeletePushConfig
	opGetExtendedCard
)

type methodOp struct {
	method string
	op     op
}

// resourceInfo gives each resource its path template (for messages) and
// the methods it answers (REQUIREMENTS E2). SubscribeToTask takes GET (the
// proto) and POST (the spec text), REQUIREMENTS R217.
var resourceInfo = [...]struct {
	template string
	methods  []methodOp
	allow    string // the Allow header of a 405
}{
	resMessageSend:   {"/message:send", []methodOp{{http.MethodPost, opSendMessage}}, "POST"},
	resMessageStream: {"/message:stream", []methodOp{{http.MethodPost, opSendStreamingMessage}}, "POST"},
	resTasks:         {"/tasks", []methodOp{{http.MethodGet, opListTasks}}, "GET"},
	resExtendedCard:  {"/extendedAgentCard", []methodOp{{http.MethodGet, opGetExtendedCard}}, "GET"},
	resTask:          {"/tasks/{id}", []methodOp{{http.MethodGet, opGetTask}}, "GET"},
	resTaskCancel:    {"/tasks/{id}:cancel", []methodOp{{http.MethodPost, opCancelTask}}, "POST"},
	resTaskSubscribe: {"/tasks/{id}:subscribe", []methodOp{{http.MethodGet, opSubscribeToTask}, {http.MethodPost, opSubscribeToTask}}, "GET, POST"},
	resPushConfigs: {"/tasks/{taskId}/pushNotificationConfigs",
		[]methodOp{{http.MethodGet, opListPushConfigs}, {http.MethodPost, opCreatePushConfig}}, "GET, POST"},
	resPushConfig: {"/tasks/{taskId}/pushNotificationConfigs/{configId}",
		[]methodOp{{http.MethodGet, opGetPushConfig}, {http.MethodDelete, opDeletePushConfig}}, "GET, DELETE"},
}

// route is a parsed request path. Path values are percent-decoded.
type route struct {
	res       resource
	tenant    string
	hasTenant bool
	taskID    string
	configID  string
}

// op returns the operation for method, or opNone when the resource does not
// answer it.
func (rt route) op(method string) op {
	for _, m := range resourceInfo[rt.res].methods {
		if m.method == method {
			return m.op
		}
	}
	return opNone
}

// Path literals. They are compared with the path as sent, before
// percent-decoding, so an escaped character is always data: the colon of
// "abc%3Acancel" is part of a task id, not a custom verb.
const (
	litTasks         = "tasks"
	litMessageSend   = "message:send"
	litMessageStream = "message:stream"
	litExtendedCard  = "extendedAgentCard"
	litPushConfigs   = "pushNotificationConfigs"
	verbCancel       = ":cancel"
	verbSubscribe    = ":subscribe"
)

// parsePath routes an escaped path relative to the mount point (the leading
// slash is optional), by the rule in the package doc (REQUIREMENTS B11):
// every segment must be non-empty; a path of two or more segments is first
// read as /{tenant}/rest, and when rest alone is a route the first segment
// is the tenant; otherwise the whole path must be a route, without a
// tenant. The method plays no part, so a path always names the same
// resource.
//
// The returned bool is false when no route matches. A path value that does
// not percent-decode yields ok with an InvalidParams error; net/http never
// passes such a path on, as it rejects the request line.
func parsePath(escaped string) (rt route, ok bool, err error) {
	p := strings.TrimPrefix(escaped, "/")
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if s == "" {
			return route{}, false, nil
		}
	}
	if len(segs) >= 2 {
		if rt, ok := matchRoute(segs[1:]); ok {
			tenant, err := url.PathUnescape(segs[0])
			if err != nil {
				return rt, true, errBadEscape("tenant", segs[0])
			}
			rt.tenant, rt.hasTenant = tenant, true
			return rt.decode()
		}
	}
	rt, ok = matchRoute(segs)
	if !ok {
		return route{}, false, nil
	}
	return rt.decode()
}

// matchRoute matches segments without a tenant, leaving path values
// escaped.
func matchRoute(segs []string) (route, bool) {
	switch len(segs) {
	case 1:
		switch segs[0] {
		case litMessageSend:
			return route{res: resMessageSend}, true
		case litMessageStream:
			return route{res: resMessageStream}, true
		case litTasks:
			return route{res: resTasks}, true
		case litExtendedCard:
			return route{res: resExtendedCard}, true
		}
	case 2:
		if segs[0] != litTasks {
			break
		}
		id := segs[1]
		switch {
		case strings.HasSuffix(id, verbCancel):
			return route{res: resTaskCancel, taskID: strings.TrimSuffix(id, verbCancel)}, true
		case strings.HasSuffix(id, verbSubscribe):
			return route{res: resTaskSubscribe, taskID: strings.TrimSuffix(id, verbSubscribe)}, true
		}
		return route{res: resTask, taskID: id}, true
	case 3:
		if segs[0] == litTasks && segs[2] == litPushConfigs {
			return route{res: resPushConfigs, taskID: segs[1]}, true
		}
	case 4:
		if segs[0] == litTasks && segs[2] == litPushConfigs {
			return route{res: resPushConfig, taskID: segs[1], configID: segs[3]}, true
		}
	}
	return route{}, false
}

// decode percent-decodes the path values of a matched route.
func (rt route) decode() (route, bool, error) {
	id, err := unescape(rt.taskID)
	if err != nil {
		return rt, true, errBadEscape(rt.taskField(), rt.taskID)
	}
	cid, err := unescape(rt.configID)
	if err != nil {
		return rt, true, errBadEscape("id", rt.configID)
	}
	rt.taskID, rt.configID = id, cid
	return rt, true, nil
}

func unescape(s string) (string, error) {
	if s == "" || !strings.ContainsRune(s, '%') {
		return s, nil
	}
	return url.PathUnescape(s)
}

// taskField is the request field the task id of the path fills.
func (rt route) taskField() string {
	if rt.res == resPushConfigs || rt.res == resPushConfig {
		return "taskId"
	}
	return "id"
}
