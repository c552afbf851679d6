package rest

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		path string
		want route
		ok   bool
	}{
		{"/message:send", route{res: resMessageSend}, true},
		{"message:send", route{res: resMessageSend}, true}, // mounted with a trailing-slash prefix
		{"/message:stream", route{res: resMessageStream}, true},
		{"/tasks", route{res: resTasks}, true},
		{"/extendedAgentCard", route{res: resExtendedCard}, true},
		{"/tasks/abc", route{res: resTask, taskID: "abc"}, true},
		{"/tasks/abc:cancel", route{res: resTaskCancel, taskID: "abc"}, true},
		{"/tasks/abc:subscribe", route{res: resTaskSubscribe, taskID: "abc"}, true},
		{"/tasks/a:b:cancel", route{res: resTaskCancel, taskID: "a:b"}, true},
		{"/tasks/a:b", route{res: resTask, taskID: "a:b"}, true},
		{"/tasks/abc%3Acancel", route{res: resTask, taskID: "abc:cancel"}, true},
		{"/tasks/:cancel", route{res: resTaskCancel}, true}, // the handler reports the missing id
		{"/tasks/a%2Fb/pushNotificationConfigs", route{res: resPushConfigs, taskID: "a/b"}, true},
		{"/tasks/t/pushNotificationConfigs/c%20d", route{res: resPushConfig, taskID: "t", configID: "c d"}, true},

		{"/acme/message:send", route{res: resMessageSend, tenant: "acme", hasTenant: true}, true},
		{"/acme/message:stream", route{res: resMessageStream, tenant: "acme", hasTenant: true}, true},
		{"/acme/tasks", route{res: resTasks, tenant: "acme", hasTenant: true}, true},
		{"/acme/extendedAgentCard", route{res: resExtendedCard, tenant: "acme", hasTenant: true}, true},
		{"/acme/tasks/t", route{res: resTask, tenant: "acme", hasTenant: true, taskID: "t"}, true},
		{"/acme/tasks/t:cancel", route{res: resTaskCancel, tenant: "acme", hasTenant: true, taskID: "t"}, true},
		{"/acme/tasks/t:subscribe", route{res: resTaskSubscribe, tenant: "acme", hasTenant: true, taskID: "t"}, true},
		{"/acme/tasks/t/pushNotificationConfigs", route{res: resPushConfigs, tenant: "acme", hasTenant: true, taskID: "t"}, true},
		{"/acme/tasks/t/pushNotificationConfigs/c", route{res: resPushConfig, tenant: "acme", hasTenant: true, taskID: "t", configID: "c"}, true},
		{"/a%2Fb/tasks", route{res: resTasks, tenant: "a/b", hasTenant: true}, true},

		// Reserved words: the tenant reading comes first.
		{"/tasks/tasks", route{res: resTasks, tenant: "tasks", hasTenant: true}, true},
		{"/tasks/message:send", route{res: resMessageSend, tenant: "tasks", hasTenant: true}, true},
		{"/tasks/extendedAgentCard", route{res: resExtendedCard, tenant: "tasks", hasTenant: true}, true},
		{"/tasks/tasks/pushNotificationConfigs", route{res: resTask, tenant: "tasks", hasTenant: true, taskID: "pushNotificationConfigs"}, true},
		{"/tasks/tasks/t/pushNotificationConfigs", route{res: resPushConfigs, tenant: "tasks", hasTenant: true, taskID: "t"}, true},
		// When the rest is not a route, the path has no tenant.
		{"/tasks/tasks:cancel", route{res: resTaskCancel, taskID: "tasks"}, true},
		{"/tasks/message:send/pushNotificationConfigs", route{res: resPushConfigs, taskID: "message:send"}, true},
		{"/tasks/t/pushNotificationConfigs/pushNotificationConfigs", route{res: resPushConfig, taskID: "t", configID: "pushNotificationConfigs"}, true},
		{"/message:send/tasks", route{res: resTasks, tenant: "message:send", hasTenant: true}, true},
		// Literals are matched before decoding.
		{"/tasks/%74asks", route{res: resTask, taskID: "tasks"}, true},
		{"/message%3Asend", route{}, false},

		{"", route{}, false},
		{"/", route{}, false},
		{"//tasks", route{}, false},
		{"/tasks/", route{}, false},
		{"/acme//tasks", route{}, false},
		{"/tasks//pushNotificationConfigs", route{}, false},
		{"/nope", route{}, false},
		{"/tasks:cancel", route{}, false},
		{"/acme/tasks/t/x", route{}, false},
		{"/a/b/tasks", route{}, false},
		{"/acme/tasks/t/pushNotificationConfigs/c/d", route{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, ok, err := parsePath(tt.path)
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if ok != tt.ok || got != tt.want {
				t.Errorf("parsePath(%q) = %+v, %v; want %+v, %v", tt.path, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParsePathBadEscape(t *testing.T) {
	for _, p := range []string{"/tasks/a%zz", "/a%zz/tasks", "/tasks/t/pushNotificationConfigs/%"} {
		_, ok, err := parsePath(p)
		var e *a2a.Error
		if !ok || !errors.As(err, &e) || e.Code != a2a.CodeInvalidParams {
			t.Errorf("parsePath(%q): ok %v, err %v; want an InvalidParams error", p, ok, err)
		}
	}
}

func TestQueryPresence(t *testing.T) {
	rt := route{res: resTasks}
	req, err := listTasksRequest(rt, "")
	if err != nil {
		t.Fatal(err)
	}
	if req.PageSize != nil || req.HistoryLength != nil || req.IncludeArtifacts != nil || !req.StatusTimestampAfter.IsZero() || req.Status != 0 {
		t.Errorf("empty query: %+v", req)
	}
	req, err = listTasksRequest(rt, "pageSize=0&historyLength=0&includeArtifacts=false&status=TASK_STATE_WORKING&contextId=c&pageToken=p&statusTimestampAfter=2026-01-02T03:04:05.678Z&other=1")
	if err != nil {
		t.Fatal(err)
	}
	if req.PageSize == nil || *req.PageSize != 0 || req.HistoryLength == nil || *req.HistoryLength != 0 ||
		req.IncludeArtifacts == nil || *req.IncludeArtifacts || req.Status != a2a.TaskStateWorking ||
		req.ContextID != "c" || req.PageToken != "p" || req.StatusTimestampAfter.String() != "2026-01-02T03:04:05.678Z" {
		t.Errorf("full query: %+v", req)
	}
	g, err := getTaskRequest(route{res: resTask, taskID: "t", tenant: "x", hasTenant: true}, "historyLength=3")
	if err != nil || g.ID != "t" || g.Tenant != "x" || g.HistoryLength == nil || *g.HistoryLength != 3 {
		t.Errorf("get: %+v, %v", g, err)
	}
	g, err = getTaskRequest(route{res: resTask, taskID: "t"}, "")
	if err != nil || g.HistoryLength != nil {
		t.Errorf("get without historyLength: %+v, %v", g, err)
	}
}

// TestStreamErrorAfterStart checks REQUIREMENTS B2: an error after the
// first frame is one last frame holding the error body, then the end.
func TestStreamErrorAfterStart(t *testing.T) {
	rh := NewHandler(nil, WithKeepAlive(0))
	events := iter.Seq2[server.StreamEvent, error](func(yield func(server.StreamEvent, error) bool) {
		task := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
		if !yield(server.StreamEvent{ID: "t:1", Event: task}, nil) {
			return
		}
		yield(server.StreamEvent{}, a2a.NewError(a2a.CodeTaskNotFound, "").With("taskId", "t"))
	})
	w := httptest.NewRecorder()
	rh.stream(context.Background(), w, httptest.NewRequest("GET", "/", nil), func(context.Context) iter.Seq2[server.StreamEvent, error] { return events })
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, Content-Type %q", w.Code, w.Header().Get("Content-Type"))
	}
	frames := strings.Split(strings.TrimSuffix(w.Body.String(), "\n\n"), "\n\n")
	if len(frames) != 2 {
		t.Fatalf("frames %q, want 2", frames)
	}
	if want := "id: t:1\ndata: {\"task\":"; !strings.HasPrefix(frames[0], want) {
		t.Errorf("first frame %q, want prefix %q", frames[0], want)
	}
	data, ok := strings.CutPrefix(frames[1], "event: error\ndata: ")
	if !ok {
		t.Fatalf("last frame %q, want an error event", frames[1])
	}
	var got, want any
	if err := json.Unmarshal([]byte(data), &got); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(`{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[
		{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t"}}]}}`), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("error frame %s", data)
	}
}

// TestStreamErrorFirst checks that an error before any frame is a plain
// error response.
func TestStreamErrorFirst(t *testing.T) {
	rh := NewHandler(nil)
	w := httptest.NewRecorder()
	rh.stream(context.Background(), w, httptest.NewRequest("GET", "/", nil), func(context.Context) iter.Seq2[server.StreamEvent, error] {
		return func(yield func(server.StreamEvent, error) bool) {
			yield(server.StreamEvent{}, context.Canceled)
		}
	})
	if w.Code != 503 || w.Header().Get("Content-Type") != contentType {
		t.Fatalf("status %d, Content-Type %q", w.Code, w.Header().Get("Content-Type"))
	}
	if !strings.Contains(w.Body.String(), `"status":"UNAVAILABLE"`) {
		t.Errorf("body %s", w.Body)
	}
}
