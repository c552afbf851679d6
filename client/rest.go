package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/sse"
)

// restTransport speaks the HTTP+JSON binding (A2A §11): resource paths
// relative to the interface URL, ProtoJSON bodies as application/a2a+json,
// GET and DELETE parameters in the query.
type restTransport struct {
	cn   *conn
	base string // the interface URL without a trailing slash
}

// restCall is one HTTP+JSON request before it is sent.
type restCall struct {
	method string
	path   string // escaped, relative to the base, tenant prefix included
	query  []string
	body   any // nil for none
}

// pathSegment escapes one path value. Unlike url.PathEscape it also
// escapes ':', since a literal colon at the end of a task id would read as
// a custom verb such as ":cancel" (A2A §11.3).
func pathSegment(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), ":", "%3A")
}

// queryParam is one percent-encoded name=value pair (A2A §11.5; RFC 3986,
// so a space is %20, not +).
func queryParam(name, value string) string {
	return name + "=" + strings.ReplaceAll(url.QueryEscape(value), "+", "%20")
}

// requireID refuses an empty path value locally: the path would otherwise
// name another resource.
func requireID(field, v string) error {
	if v == "" {
		return a2a.InvalidParam(field, field+" is required")
	}
	return nil
}

// build maps an operation and its request to a REST call (REQUIREMENTS
// E2). The tenant, when set, is the /{tenant} path prefix and is left out
// of the body.
func build(o op, req any) (restCall, error) {
	var (
		rc     restCall
		tenant string
		err    error
	)
	switch r := req.(type) {
	case *a2a.SendMessageRequest:
		tenant = r.Tenant
		b := *r
		b.Tenant = ""
		rc = restCall{method: http.MethodPost, path: "/message:send", body: &b}
		if o == opSendStreamingMessage {
			rc.path = "/message:stream"
		}
	case *a2a.GetTaskRequest:
		tenant, err = r.Tenant, requireID("id", r.ID)
		rc = restCall{method: http.MethodGet, path: "/tasks/" + pathSegment(r.ID)}
		if r.HistoryLength != nil {
			rc.query = append(rc.query, queryParam("historyLength", strconv.Itoa(int(*r.HistoryLength))))
		}
	case *a2a.ListTasksRequest:
		tenant = r.Tenant
		rc = restCall{method: http.MethodGet, path: "/tasks", query: listTasksQuery(r)}
	case *a2a.CancelTaskRequest:
		tenant, err = r.Tenant, requireID("id", r.ID)
		rc = restCall{method: http.MethodPost, path: "/tasks/" + pathSegment(r.ID) + ":cancel", body: &struct {
			Metadata map[string]any `json:"metadata,omitzero"`
		}{r.Metadata}}
	case *a2a.SubscribeToTaskRequest:
		tenant, err = r.Tenant, requireID("id", r.ID)
		rc = restCall{method: http.MethodPost, path: "/tasks/" + pathSegment(r.ID) + ":subscribe"}
	case *a2a.TaskPushNotificationConfig:
		tenant, err = r.Tenant, requireID("taskId", r.TaskID)
		b := *r
		b.Tenant = ""
		rc = restCall{method: http.MethodPost, path: "/tasks/" + pathSegment(r.TaskID) + "/pushNotificationConfigs", body: &b}
	case *a2a.GetTaskPushNotificationConfigRequest:
		tenant, err = r.Tenant, firstErr(requireID("taskId", r.TaskID), requireID("id", r.ID))
		rc = restCall{method: http.MethodGet, path: "/tasks/" + pathSegment(r.TaskID) + "/pushNotificationConfigs/" + pathSegment(r.ID)}
	case *a2a.DeleteTaskPushNotificationConfigRequest:
		tenant, err = r.Tenant, firstErr(requireID("taskId", r.TaskID), requireID("id", r.ID))
		rc = restCall{method: http.MethodDelete, path: "/tasks/" + pathSegment(r.TaskID) + "/pushNotificationConfigs/" + pathSegment(r.ID)}
	case *a2a.ListTaskPushNotificationConfigsRequest:
		tenant, err = r.Tenant, requireID("taskId", r.TaskID)
		rc = restCall{method: http.MethodGet, path: "/tasks/" + pathSegment(r.TaskID) + "/pushNotificationConfigs"}
		if r.PageSize != 0 {
			rc.query = append(rc.query, queryParam("pageSize", strconv.Itoa(int(r.PageSize))))
		}
		if r.PageToken != "" {
			rc.query = append(rc.query, queryParam("pageToken", r.PageToken))
		}
	case *a2a.GetExtendedAgentCardRequest:
		tenant = r.Tenant
		rc = restCall{method: http.MethodGet, path: "/extendedAgentCard"}
	default:
		return restCall{}, fmt.Errorf("client: %s: unexpected request type %T", o, req)
	}
	if err != nil {
		return restCall{}, err
	}
	if tenant != "" {
		rc.path = "/" + pathSegment(tenant) + rc.path
	}
	return rc, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// listTasksQuery writes the ListTasks filters as query parameters.
func listTasksQuery(r *a2a.ListTasksRequest) []string {
	var q []string
	if r.ContextID != "" {
		q = append(q, queryParam("contextId", r.ContextID))
	}
	if r.Status != a2a.TaskStateUnspecified {
		q = append(q, queryParam("status", r.Status.String()))
	}
	if r.PageSize != nil {
		q = append(q, queryParam("pageSize", strconv.Itoa(int(*r.PageSize))))
	}
	if r.PageToken != "" {
		q = append(q, queryParam("pageToken", r.PageToken))
	}
	if r.HistoryLength != nil {
		q = append(q, queryParam("historyLength", strconv.Itoa(int(*r.HistoryLength))))
	}
	if !r.StatusTimestampAfter.IsZero() {
		q = append(q, queryParam("statusTimestampAfter", r.StatusTimestampAfter.String()))
	}
	if r.IncludeArtifacts != nil {
		q = append(q, queryParam("includeArtifacts", strconv.FormatBool(*r.IncludeArtifacts)))
	}
	return q
}

// send makes and sends the HTTP request of rc.
func (t *restTransport) send(ctx context.Context, o op, rc restCall, accept, lastEventID string) (*http.Response, error) {
	target := t.base + rc.path
	if len(rc.query) > 0 {
		target += "?" + strings.Join(rc.query, "&")
	}
	var (
		body        io.Reader
		contentType string
	)
	if rc.body != nil {
		b, err := json.Marshal(rc.body)
		if err != nil {
			return nil, fmt.Errorf("client: %s: encoding the request: %w", o, err)
		}
		body, contentType = bytes.NewReader(b), mediaA2AJSON
	}
	req, err := t.cn.newRequest(ctx, rc.method, target, body, contentType, accept)
	if err != nil {
		return nil, err
	}
	if lastEventID != "" {
		req.Header.Set(headerLastEventID, lastEventID)
	}
	return t.cn.do(o.String(), req)
}

func (t *restTransport) call(ctx context.Context, o op, req, out any) error {
	rc, err := build(o, req)
	if err != nil {
		return err
	}
	resp, err := t.send(ctx, o, rc, mediaA2AJSON+", "+mediaJSON, "")
	if err != nil {
		return err
	}
	data, err := readBody(o.String(), resp, maxResponseBytes)
	if err != nil {
		return err
	}
	if !success(resp) {
		return restError(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if err := unmarshal(data, out); err != nil {
		return invalidResponseCause(err, "%s: malformed response: %v", o, err)
	}
	return nil
}

// restError decodes an HTTP+JSON error answer.
func restError(httpStatus int, data []byte) *a2a.Error {
	if e, ok := statusError(httpStatus, data); ok {
		return e
	}
	return httpError(httpStatus, data)
}

func (t *restTransport) open(ctx context.Context, o op, req any, lastEventID string) (*eventStream, error) {
	rc, err := build(o, req)
	if err != nil {
		return nil, err
	}
	resp, err := t.send(ctx, o, rc, mediaEventStream, lastEventID)
	if err != nil {
		return nil, err
	}
	if o == opSubscribeToTask && resp.StatusCode == http.StatusMethodNotAllowed {
		// The spec text says POST, the proto says GET (REQUIREMENTS C11):
		// a server that routes only GET answers 405.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		rc.method = http.MethodGet
		if resp, err = t.send(ctx, o, rc, mediaEventStream, lastEventID); err != nil {
			return nil, err
		}
	}
	if success(resp) && isEventStream(resp) {
		return newEventStream(o.String(), resp.Body, func(f sse.Event) (a2a.Event, error) {
			return decodeRESTFrame(o, f)
		}), nil
	}
	data, err := readBody(o.String(), resp, maxResponseBytes)
	if err != nil {
		return nil, err
	}
	if !success(resp) {
		return nil, restError(resp.StatusCode, data)
	}
	// A lone JSON answer instead of a stream: one event.
	ev, err := decodeStreamResponse(o.String(), data)
	if err != nil {
		return nil, err
	}
	return singleEvent(o.String(), ev), nil
}

// decodeRESTFrame decodes one HTTP+JSON stream frame: a bare
// StreamResponse, or an error body after the stream started, marked
// "event: error" or recognised by its "error" member (REQUIREMENTS B2).
func decodeRESTFrame(o op, f sse.Event) (a2a.Event, error) {
	if f.Type == "error" || bytes.Contains(f.Data, []byte(`"error"`)) {
		if e, ok := statusError(0, f.Data); ok {
			return nil, e
		}
		if f.Type == "error" {
			return nil, invalidResponse("%s: malformed error event: %s", o, snippet(f.Data))
		}
	}
	return decodeStreamResponse(o.String(), f.Data)
}
