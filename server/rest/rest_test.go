package rest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/rest"
)

// mount is where the fixture mounts the binding, as the package doc shows.
const mount = "/a2a/rest"

// fixture is a server.Handler with a test agent behind the REST binding,
// served on 127.0.0.1.
type fixture struct {
	srv     *httptest.Server
	h       *server.Handler
	release chan struct{} // closing it lets "wait" tasks finish
}

// testAgent reports working, then (for the text "wait") waits to be
// released, emits one artifact and completes.
func testAgent(release <-chan struct{}) server.Agent {
	return server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		text := req.Message.Text()
		if err := w.Working(ctx, "working on it"); err != nil {
			return err
		}
		if text == "wait" {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		art := a2a.Artifact{ArtifactID: "echo", Name: "echo", Parts: []a2a.Part{a2a.TextPart("echo: " + text)}}
		if err := w.Artifact(ctx, art); err != nil {
			return err
		}
		return w.Complete(ctx, "done")
	})
}

func testCard() *a2a.AgentCard {
	card := echo.Card("http://127.0.0.1/a2a/jsonrpc", "http://127.0.0.1"+mount)
	card.Capabilities.ExtendedAgentCard = a2a.Ptr(true)
	return card
}

func newFixture(t *testing.T, opts ...rest.Option) *fixture {
	t.Helper()
	return newFixtureWith(t, testCard(), []server.Option{
		server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) {
			c := testCard()
			c.Description = "extended"
			return c, nil
		}),
	}, opts...)
}

func newFixtureWith(t *testing.T, card *a2a.AgentCard, hopts []server.Option, opts ...rest.Option) *fixture {
	t.Helper()
	release := make(chan struct{})
	h, err := server.NewHandler(card, testAgent(release), hopts...)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(mount+"/", http.StripPrefix(mount, asTestPrincipal(rest.NewHandler(h, opts...))))
	srv := httptest.NewServer(mux) // binds 127.0.0.1
	f := &fixture{srv: srv, h: h, release: release}
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return f
}

// request is one HTTP request to the binding. Unless headers says
// otherwise, it carries A2A-Version: 1.0 and, with a body,
// Content-Type: application/a2a+json.
type request struct {
	method  string
	path    string // relative to the mount point
	body    string
	headers map[string]string
}

type response struct {
	status    int
	header    http.Header
	body      []byte
	mediaType string // the Content-Type the answer must have
}

func (f *fixture) open(t *testing.T, rq request) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	var body io.Reader
	if rq.body != "" {
		body = strings.NewReader(rq.body)
	}
	req, err := http.NewRequestWithContext(ctx, rq.method, f.srv.URL+mount+rq.path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	if rq.body != "" {
		req.Header.Set("Content-Type", "application/a2a+json")
	}
	for k, v := range rq.headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (f *fixture) do(t *testing.T, rq request) response {
	t.Helper()
	resp := f.open(t, rq)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	// The answer's media type follows the request's: plain JSON for a
	// plain JSON body or Accept, A2A's otherwise.
	want := "application/a2a+json"
	if ct, accept := rq.headers["Content-Type"], rq.headers["Accept"]; strings.HasPrefix(ct, "application/json") ||
		accept == "application/json" {
		want = "application/json"
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b, mediaType: want}
}

// ok checks a 200 answer of the negotiated media type and decodes it into
// v.
func (r response) ok(t *testing.T, v any) {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("status %d, want 200; body %s", r.status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != r.mediaType {
		t.Errorf("Content-Type %q, want %s", ct, r.mediaType)
	}
	if v != nil {
		if err := json.Unmarshal(r.body, v); err != nil {
			t.Fatalf("decoding %s: %v", r.body, err)
		}
	}
}

type wireErrorBody struct {
	Error struct {
		Code    int              `json:"code"`
		Status  string           `json:"status"`
		Message string           `json:"message"`
		Details []map[string]any `json:"details"`
	} `json:"error"`
}

// fail checks an error answer: the HTTP status, the body's code equal to
// it, the gRPC status name, and, unless reason is "", an ErrorInfo with that
// reason. It returns the decoded body.
func (r response) fail(t *testing.T, status int, grpcStatus, reason string) wireErrorBody {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != r.mediaType {
		t.Errorf("Content-Type %q, want %s", ct, r.mediaType)
	}
	return checkErrorBody(t, r.body, status, grpcStatus, reason)
}

func checkErrorBody(t *testing.T, body []byte, status int, grpcStatus, reason string) wireErrorBody {
	t.Helper()
	var e wireErrorBody
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("error body %s: %v", body, err)
	}
	if e.Error.Code != status {
		t.Errorf("error.code %d, want %d", e.Error.Code, status)
	}
	if e.Error.Status != grpcStatus {
		t.Errorf("error.status %q, want %q", e.Error.Status, grpcStatus)
	}
	if e.Error.Message == "" {
		t.Error("error.message is empty")
	}
	for _, d := range e.Error.Details {
		if _, ok := d["@type"].(string); !ok {
			t.Errorf("detail without @type: %v", d)
		}
	}
	if reason != "" {
		if got := errorReason(e); got != reason {
			t.Errorf("ErrorInfo reason %q, want %q; body %s", got, reason, body)
		}
	}
	return e
}

func errorReason(e wireErrorBody) string {
	for _, d := range e.Error.Details {
		if d["@type"] == a2a.ErrorInfoType {
			r, _ := d["reason"].(string)
			return r
		}
	}
	return ""
}

// violationFields lists the fields of a google.rpc.BadRequest detail.
func violationFields(e wireErrorBody) []string {
	var out []string
	for _, d := range e.Error.Details {
		if d["@type"] != a2a.BadRequestType {
			continue
		}
		fvs, _ := d["fieldViolations"].([]any)
		for _, fv := range fvs {
			m, _ := fv.(map[string]any)
			f, _ := m["field"].(string)
			out = append(out, f)
		}
	}
	return out
}

// sendBody returns the body of a SendMessage of a new message with text:
// its messageId is new, since a messageId sent again is a retry of the
// first message with it, answered with that message's task.
func sendBody(text string, returnImmediately bool) string {
	req := map[string]any{"message": map[string]any{
		"messageId": "m-" + text + "-" + strconv.FormatInt(messageIDs.Add(1), 10), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}},
	}}
	if returnImmediately {
		req["configuration"] = map[string]any{"returnImmediately": true}
	}
	b, _ := json.Marshal(req)
	return string(b)
}

// messageIDs numbers the messages of sendBody.
var messageIDs atomic.Int64

// send creates a task through POST {prefix}/message:send.
func (f *fixture) send(t *testing.T, prefix, text string, returnImmediately bool) *a2a.Task {
	t.Helper()
	var res a2a.SendMessageResponse
	f.do(t, request{method: "POST", path: prefix + "/message:send", body: sendBody(text, returnImmediately)}).ok(t, &res)
	task, ok := res.Result.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage returned %T, want a task", res.Result)
	}
	return task
}

func TestSendMessage(t *testing.T) {
	f := newFixture(t)
	for _, ct := range []string{"application/a2a+json", "application/json", "application/json; charset=utf-8", ""} {
		t.Run("content type "+ct, func(t *testing.T) {
			var res a2a.SendMessageResponse
			f.do(t, request{method: "POST", path: "/message:send", body: sendBody("hi", false),
				headers: map[string]string{"Content-Type": ct}}).ok(t, &res)
			task, ok := res.Result.(*a2a.Task)
			if !ok {
				t.Fatalf("got %T, want a task", res.Result)
			}
			if task.Status.State != a2a.TaskStateCompleted {
				t.Errorf("state %v, want completed (blocking by default)", task.Status.State)
			}
			if len(task.Artifacts) != 1 || task.Artifacts[0].Text() != "echo: hi" {
				t.Errorf("artifacts %+v", task.Artifacts)
			}
		})
	}
	t.Run("other content type", func(t *testing.T) {
		r := f.do(t, request{method: "POST", path: "/message:send", body: sendBody("hi", false),
			headers: map[string]string{"Content-Type": "text/plain"}})
		e := r.fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")
		if !strings.Contains(e.Error.Message, `"text/plain"`) {
			t.Errorf("message %q does not name the content type", e.Error.Message)
		}
	})
	t.Run("missing message", func(t *testing.T) {
		r := f.do(t, request{method: "POST", path: "/message:send"})
		e := r.fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")
		if got := violationFields(e); !reflect.DeepEqual(got, []string{"message"}) {
			t.Errorf("violations %v, want [message]", got)
		}
	})
}

func TestGetTaskHistoryLength(t *testing.T) {
	f := newFixture(t)
	task := f.send(t, "", "hello", false)
	tests := []struct {
		query   string
		history int // -1: the history member must be absent
	}{
		{"", 2},
		{"?historyLength=0", -1},
		{"?historyLength=1", 1},
		{"?historyLength=5", 2},
		{"?historyLength=1&unknown=x", 1},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			var raw map[string]json.RawMessage
			r := f.do(t, request{method: "GET", path: "/tasks/" + task.ID + tt.query})
			r.ok(t, &raw)
			var got a2a.Task
			r.ok(t, &got)
			if got.ID != task.ID {
				t.Errorf("id %q, want %q", got.ID, task.ID)
			}
			if tt.history < 0 {
				if _, ok := raw["history"]; ok {
					t.Errorf("history present with historyLength=0: %s", r.body)
				}
				return
			}
			if len(got.History) != tt.history {
				t.Errorf("%d history messages, want %d", len(got.History), tt.history)
			}
		})
	}
	for _, q := range []string{"historyLength=abc", "historyLength=", "historyLength=1.5", "historyLength=1&historyLength=2", "historyLength=99999999999"} {
		t.Run(q, func(t *testing.T) {
			e := f.do(t, request{method: "GET", path: "/tasks/" + task.ID + "?" + q}).fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")
			if got := violationFields(e); !reflect.DeepEqual(got, []string{"historyLength"}) {
				t.Errorf("violations %v, want [historyLength]", got)
			}
		})
	}
	t.Run("negative is the handler's rule", func(t *testing.T) {
		e := f.do(t, request{method: "GET", path: "/tasks/" + task.ID + "?historyLength=-1"}).fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")
		if got := violationFields(e); !reflect.DeepEqual(got, []string{"historyLength"}) {
			t.Errorf("violations %v, want [historyLength]", got)
		}
	})
}

func TestListTasks(t *testing.T) {
	f := newFixture(t)
	task := f.send(t, "", "one", false)
	f.send(t, "", "two", false)

	list := func(t *testing.T, q string) (a2a.ListTasksResponse, map[string]json.RawMessage) {
		t.Helper()
		var res a2a.ListTasksResponse
		r := f.do(t, request{method: "GET", path: "/tasks" + q})
		r.ok(t, &res)
		var raw map[string]json.RawMessage
		r.ok(t, &raw)
		return res, raw
	}
	t.Run("all", func(t *testing.T) {
		res, raw := list(t, "")
		if len(res.Tasks) != 2 || res.TotalSize != 2 {
			t.Errorf("%d tasks, total %d; want 2, 2", len(res.Tasks), res.TotalSize)
		}
		if _, ok := raw["nextPageToken"]; !ok {
			t.Error("nextPageToken missing")
		}
		for _, tk := range res.Tasks {
			if tk.Artifacts != nil {
				t.Error("artifacts present without includeArtifacts")
			}
		}
	})
	t.Run("filters", func(t *testing.T) {
		cases := []struct {
			q    string
			want int
		}{
			{"?contextId=" + url.QueryEscape(task.ContextID), 1},
			{"?status=TASK_STATE_COMPLETED", 2},
			{"?status=TASK_STATE_WORKING", 0},
			{"?status=3", 2},
			{"?pageSize=1", 1},
			{"?statusTimestampAfter=2000-01-01T00:00:00Z", 2},
			{"?statusTimestampAfter=2999-01-01T00:00:00.000Z", 0},
			{"?statusTimestampAfter=2999-01-01T02:00:00%2B02:00", 0},
			{"?statusTimestampAfter=2999-01-01T02:00:00+02:00", 0}, // "+" arrives as a space
			{"?includeArtifacts=false", 2},
		}
		for _, c := range cases {
			res, _ := list(t, c.q)
			if len(res.Tasks) != c.want {
				t.Errorf("%s: %d tasks, want %d", c.q, len(res.Tasks), c.want)
			}
		}
	})
	t.Run("includeArtifacts", func(t *testing.T) {
		res, _ := list(t, "?includeArtifacts=true&historyLength=0")
		for _, tk := range res.Tasks {
			if len(tk.Artifacts) != 1 || tk.History != nil {
				t.Errorf("task %s: %d artifacts, %d history; want 1, 0", tk.ID, len(tk.Artifacts), len(tk.History))
			}
		}
	})
	t.Run("paging", func(t *testing.T) {
		first, _ := list(t, "?pageSize=1")
		if first.NextPageToken == "" {
			t.Fatal("no nextPageToken on a first page of 1 of 2")
		}
		second, _ := list(t, "?pageSize=1&pageToken="+url.QueryEscape(first.NextPageToken))
		if len(second.Tasks) != 1 || second.Tasks[0].ID == first.Tasks[0].ID {
			t.Errorf("second page %+v", second.Tasks)
		}
	})
	bad := []struct {
		q      string
		fields []string
	}{
		{"?pageSize=ten", []string{"pageSize"}},
		{"?pageSize=0", []string{"pageSize"}}, // the handler's range check
		{"?pageSize=1&pageSize=2", []string{"pageSize"}},
		{"?historyLength=x", []string{"historyLength"}},
		{"?status=TASK_STATE_BOGUS", []string{"status"}},
		{"?status=", []string{"status"}},
		{"?statusTimestampAfter=yesterday", []string{"statusTimestampAfter"}},
		{"?includeArtifacts=yes", []string{"includeArtifacts"}},
		{"?includeArtifacts=TRUE", []string{"includeArtifacts"}},
		{"?pageSize=x&includeArtifacts=1", []string{"pageSize", "includeArtifacts"}},
		{"?pageToken=not-a-token", []string{"pageToken"}},
	}
	for _, b := range bad {
		t.Run(b.q, func(t *testing.T) {
			e := f.do(t, request{method: "GET", path: "/tasks" + b.q}).fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")
			if got := violationFields(e); !reflect.DeepEqual(got, b.fields) {
				t.Errorf("violations %v, want %v", got, b.fields)
			}
		})
	}
	t.Run("malformed query", func(t *testing.T) {
		f.do(t, request{method: "GET", path: "/tasks?a=%zz"}).fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")
	})
}

// readCapture reads a response body captured from the reference server
// (A2A 101 kit, capture/out/16-rest-binding.http).
func readCapture(t *testing.T, name string) any {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

func TestTaskNotFoundMatchesCapture(t *testing.T) {
	f := newFixture(t)
	r := f.do(t, request{method: "GET", path: "/tasks/00000000-0000-4000-8000-000000000000"})
	r.fail(t, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	if got, want := jsonValue(t, r.body), readCapture(t, "capture_task_not_found.json"); !reflect.DeepEqual(got, want) {
		t.Errorf("body %s\ndiffers from the capture %v", r.body, want)
	}
}

func TestCancelTask(t *testing.T) {
	f := newFixture(t)
	t.Run("not cancelable matches capture", func(t *testing.T) {
		task := f.send(t, "", "done already", false)
		r := f.do(t, request{method: "POST", path: "/tasks/" + task.ID + ":cancel", body: "{}"})
		r.fail(t, http.StatusBadRequest, "FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")
		b, _ := os.ReadFile("testdata/capture_task_not_cancelable.json")
		want := jsonValue(t, []byte(strings.ReplaceAll(string(b), "bbfb9ea5-50ea-4441-b991-2a8ba0d6f3f3", task.ID)))
		if got := jsonValue(t, r.body); !reflect.DeepEqual(got, want) {
			t.Errorf("body %s\ndiffers from the capture %v", r.body, want)
		}
	})
	for _, body := range []string{"", "{}", `{"metadata":{"why":"test"}}`} {
		t.Run("body "+body, func(t *testing.T) {
			task := f.send(t, "", "wait", true)
			var got a2a.Task
			f.do(t, request{method: "POST", path: "/tasks/" + task.ID + ":cancel", body: body}).ok(t, &got)
			if got.ID != task.ID || got.Status.State != a2a.TaskStateCanceled {
				t.Errorf("task %s in %v, want %s canceled", got.ID, got.Status.State, task.ID)
			}
		})
	}
	t.Run("body id disagrees with path", func(t *testing.T) {
		task := f.send(t, "", "wait", true)
		e := f.do(t, request{method: "POST", path: "/tasks/" + task.ID + ":cancel", body: `{"id":"other"}`}).
			fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")
		if got := violationFields(e); !reflect.DeepEqual(got, []string{"id"}) {
			t.Errorf("violations %v, want [id]", got)
		}
		// The same id in the body is fine.
		f.do(t, request{method: "POST", path: "/tasks/" + task.ID + ":cancel", body: `{"id":"` + task.ID + `"}`}).ok(t, nil)
	})
	t.Run("unknown task", func(t *testing.T) {
		f.do(t, request{method: "POST", path: "/tasks/nope:cancel"}).fail(t, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	})
}

// frame is one SSE event.
type frame struct {
	id, event, data string
}

type frameReader struct{ sc *bufio.Scanner }

func newFrameReader(r io.Reader) *frameReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	return &frameReader{sc: sc}
}

// next returns the next event, or false at the end of the stream.
func (fr *frameReader) next() (frame, bool) {
	var f frame
	seen := false
	for fr.sc.Scan() {
		line := fr.sc.Text()
		switch {
		case line == "":
			if seen {
				return f, true
			}
		case strings.HasPrefix(line, ":"): // comment (keep-alive)
		case strings.HasPrefix(line, "id: "):
			f.id, seen = strings.TrimPrefix(line, "id: "), true
		case strings.HasPrefix(line, "event: "):
			f.event, seen = strings.TrimPrefix(line, "event: "), true
		case strings.HasPrefix(line, "data: "):
			f.data, seen = f.data+strings.TrimPrefix(line, "data: "), true
		default:
			f.data, seen = f.data+"?"+line, true // unexpected; fails the JSON check
		}
	}
	return f, seen
}

// event decodes a frame holding a bare StreamResponse.
func (f frame) decode(t *testing.T) a2a.Event {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(f.data), &raw); err != nil {
		t.Fatalf("frame data %q: %v", f.data, err)
	}
	if len(raw) != 1 {
		t.Fatalf("frame %s has %d members, want one StreamResponse member", f.data, len(raw))
	}
	var sr a2a.StreamResponse
	if err := json.Unmarshal([]byte(f.data), &sr); err != nil {
		t.Fatalf("frame %s: %v", f.data, err)
	}
	return sr.Event
}

// readStream checks an SSE answer and returns all its events in order.
func readStream(t *testing.T, resp *http.Response) []frame {
	t.Helper()
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d; body %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	fr := newFrameReader(resp.Body)
	var out []frame
	for {
		f, ok := fr.next()
		if !ok {
			return out
		}
		out = append(out, f)
	}
}

// checkTaskStream checks the frames of a task stream: a task first (in a
// non-terminal state), then updates of that task with increasing
// "taskId:seq" ids, ending with completed.
func checkTaskStream(t *testing.T, frames []frame) {
	t.Helper()
	if len(frames) < 2 {
		t.Fatalf("%d frames, want at least 2", len(frames))
	}
	first, ok := frames[0].decode(t).(*a2a.Task)
	if !ok {
		t.Fatalf("first frame %s is not a task", frames[0].data)
	}
	if first.Status.State.Terminal() {
		t.Errorf("first frame state %v, want a non-terminal state", first.Status.State)
	}
	sawArtifact := false
	lastSeq := 0
	for i, f := range frames {
		if f.event != "" {
			t.Errorf("frame %d has event type %q", i, f.event)
		}
		seqText, ok := strings.CutPrefix(f.id, first.ID+":")
		seq, err := strconv.Atoi(seqText)
		if !ok || err != nil {
			t.Errorf("frame %d id %q, want %q:seq", i, f.id, first.ID)
		}
		if seq <= lastSeq {
			t.Errorf("frame %d id %q does not follow seq %d", i, f.id, lastSeq)
		}
		lastSeq = seq
		if _, ok := f.decode(t).(*a2a.TaskArtifactUpdateEvent); ok {
			sawArtifact = true
		}
	}
	if !sawArtifact {
		t.Error("no artifactUpdate frame")
	}
	last, ok := frames[len(frames)-1].decode(t).(*a2a.TaskStatusUpdateEvent)
	if !ok || last.Status.State != a2a.TaskStateCompleted {
		t.Errorf("last frame %s, want a completed statusUpdate", frames[len(frames)-1].data)
	}
}

func TestSendStreamingMessage(t *testing.T) {
	f := newFixture(t)
	for _, prefix := range []string{"", "/acme"} {
		t.Run("prefix "+prefix, func(t *testing.T) {
			resp := f.open(t, request{method: "POST", path: prefix + "/message:stream", body: sendBody("stream me", false)})
			frames := readStream(t, resp) // returns at the end of the stream
			checkTaskStream(t, frames)
		})
	}
	t.Run("error before the first frame", func(t *testing.T) {
		f.do(t, request{method: "POST", path: "/message:stream", body: `{"message":{"role":"ROLE_USER"}}`}).
			fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")
	})
}

func TestSubscribeToTask(t *testing.T) {
	for _, method := range []string{"GET", "POST"} {
		t.Run(method, func(t *testing.T) {
			f := newFixture(t)
			task := f.send(t, "", "wait", true)
			resp := f.open(t, request{method: method, path: "/tasks/" + task.ID + ":subscribe"})
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d %s; body %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			fr := newFrameReader(resp.Body)
			first, ok := fr.next()
			if !ok {
				t.Fatal("stream ended before the snapshot")
			}
			if snap, ok := first.decode(t).(*a2a.Task); !ok || snap.Status.State != a2a.TaskStateWorking {
				t.Errorf("first frame %s, want the working task", first.data)
			}
			frames := []frame{first}
			close(f.release) // the agent finishes only after we subscribed
			for {
				fm, ok := fr.next()
				if !ok {
					break
				}
				frames = append(frames, fm)
			}
			checkTaskStream(t, frames)
		})
	}
	t.Run("finished task", func(t *testing.T) {
		f := newFixture(t)
		task := f.send(t, "", "done", false)
		for _, method := range []string{"GET", "POST"} {
			r := f.do(t, request{method: method, path: "/tasks/" + task.ID + ":subscribe"})
			r.fail(t, http.StatusBadRequest, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
		}
	})
	t.Run("unknown task", func(t *testing.T) {
		f := newFixture(t)
		f.do(t, request{method: "GET", path: "/tasks/nope:subscribe"}).fail(t, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	})
}

func TestPushNotificationConfigs(t *testing.T) {
	f := newFixture(t)
	for _, prefix := range []string{"", "/acme"} {
		t.Run("prefix "+prefix, func(t *testing.T) {
			task := f.send(t, prefix, "push", false)
			base := prefix + "/tasks/" + task.ID + "/pushNotificationConfigs"

			var created a2a.TaskPushNotificationConfig
			f.do(t, request{method: "POST", path: base, body: `{"url":"https://example.com/hook","token":"tok"}`}).ok(t, &created)
			if created.ID == "" || created.TaskID != task.ID || created.URL != "https://example.com/hook" {
				t.Fatalf("created %+v", created)
			}
			// A client-chosen id with characters that must be escaped in a path.
			var named a2a.TaskPushNotificationConfig
			f.do(t, request{method: "POST", path: base, body: `{"id":"cfg/1:x y","url":"https://example.com/other","taskId":"` + task.ID + `"}`}).ok(t, &named)

			var got a2a.TaskPushNotificationConfig
			f.do(t, request{method: "GET", path: base + "/" + url.PathEscape(created.ID)}).ok(t, &got)
			if got != created {
				t.Errorf("got %+v, want %+v", got, created)
			}
			f.do(t, request{method: "GET", path: base + "/cfg%2F1%3Ax%20y"}).ok(t, &got)
			if got.ID != "cfg/1:x y" {
				t.Errorf("got %+v, want id %q", got, "cfg/1:x y")
			}

			var list a2a.ListTaskPushNotificationConfigsResponse
			f.do(t, request{method: "GET", path: base}).ok(t, &list)
			if len(list.Configs) != 2 {
				t.Errorf("%d configs, want 2", len(list.Configs))
			}
			var page1, page2 a2a.ListTaskPushNotificationConfigsResponse
			f.do(t, request{method: "GET", path: base + "?pageSize=1"}).ok(t, &page1)
			if len(page1.Configs) != 1 || page1.NextPageToken == "" {
				t.Errorf("page of 1: %+v", page1)
			}
			f.do(t, request{method: "GET", path: base + "?pageSize=1&pageToken=" + url.QueryEscape(page1.NextPageToken)}).ok(t, &page2)
			if len(page2.Configs) != 1 || page2.NextPageToken != "" || page2.Configs[0].ID == page1.Configs[0].ID {
				t.Errorf("second page of 1: %+v", page2)
			}
			f.do(t, request{method: "GET", path: base + "?pageSize=many"}).fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")

			r := f.do(t, request{method: "DELETE", path: base + "/" + created.ID})
			r.ok(t, nil)
			if string(r.body) != "{}" {
				t.Errorf("delete body %q, want {}", r.body)
			}
			f.do(t, request{method: "DELETE", path: base + "/" + created.ID}).ok(t, nil) // idempotent
			f.do(t, request{method: "GET", path: base + "/" + created.ID}).fail(t, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
		})
	}
	t.Run("body taskId disagrees with path", func(t *testing.T) {
		task := f.send(t, "", "push", false)
		e := f.do(t, request{method: "POST", path: "/tasks/" + task.ID + "/pushNotificationConfigs",
			body: `{"taskId":"other","url":"https://example.com/hook"}`}).fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")
		if got := violationFields(e); !reflect.DeepEqual(got, []string{"taskId"}) {
			t.Errorf("violations %v, want [taskId]", got)
		}
	})
	t.Run("unknown task", func(t *testing.T) {
		f.do(t, request{method: "POST", path: "/tasks/nope/pushNotificationConfigs", body: `{"url":"https://example.com/hook"}`}).
			fail(t, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	})
}

func TestTenant(t *testing.T) {
	f := newFixture(t)
	task := f.send(t, "/acme", "tenant", false)

	f.do(t, request{method: "GET", path: "/tasks/" + task.ID}).fail(t, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	f.do(t, request{method: "GET", path: "/other/tasks/" + task.ID}).fail(t, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	var got a2a.Task
	f.do(t, request{method: "GET", path: "/acme/tasks/" + task.ID}).ok(t, &got)
	if got.ID != task.ID {
		t.Errorf("got task %q", got.ID)
	}

	var list a2a.ListTasksResponse
	f.do(t, request{method: "GET", path: "/acme/tasks"}).ok(t, &list)
	if len(list.Tasks) != 1 {
		t.Errorf("tenant acme lists %d tasks, want 1", len(list.Tasks))
	}
	f.do(t, request{method: "GET", path: "/tasks"}).ok(t, &list)
	if len(list.Tasks) != 0 {
		t.Errorf("no tenant lists %d tasks, want 0", len(list.Tasks))
	}

	t.Run("percent-encoded tenant", func(t *testing.T) {
		task := f.send(t, "/a%2Fb%20c", "tenant", false)
		f.do(t, request{method: "GET", path: "/a%2Fb%20c/tasks/" + task.ID}).ok(t, nil)
		// The tenant in the body must agree with the path.
		body := `{"tenant":"a/b c","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`
		f.do(t, request{method: "POST", path: "/a%2Fb%20c/message:send", body: body}).ok(t, nil)
		e := f.do(t, request{method: "POST", path: "/acme/message:send", body: body}).fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")
		if got := violationFields(e); !reflect.DeepEqual(got, []string{"tenant"}) {
			t.Errorf("violations %v, want [tenant]", got)
		}
	})
	t.Run("tenant in the body of an unprefixed path", func(t *testing.T) {
		body := `{"tenant":"bodytenant","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}`
		var res a2a.SendMessageResponse
		f.do(t, request{method: "POST", path: "/message:send", body: body}).ok(t, &res)
		id := res.Result.(*a2a.Task).ID
		f.do(t, request{method: "GET", path: "/bodytenant/tasks/" + id}).ok(t, nil)
	})
	t.Run("cancel and subscribe", func(t *testing.T) {
		task := f.send(t, "/acme", "wait", true)
		f.do(t, request{method: "POST", path: "/tasks/" + task.ID + ":cancel"}).fail(t, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
		f.do(t, request{method: "GET", path: "/tasks/" + task.ID + ":subscribe"}).fail(t, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
		var got a2a.Task
		f.do(t, request{method: "POST", path: "/acme/tasks/" + task.ID + ":cancel"}).ok(t, &got)
		if got.Status.State != a2a.TaskStateCanceled {
			t.Errorf("state %v, want canceled", got.Status.State)
		}
	})
}

// TestTenantNamedTasks checks the routing rule for reserved words
// (REQUIREMENTS B11): a path is read as /{tenant}/... first, so a tenant
// called "tasks" works on every route.
func TestTenantNamedTasks(t *testing.T) {
	f := newFixture(t)
	task := f.send(t, "/tasks", "reserved", false) // SendMessage for tenant "tasks"

	var list a2a.ListTasksResponse
	f.do(t, request{method: "GET", path: "/tasks/tasks"}).ok(t, &list) // ListTasks of tenant "tasks"
	if len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
		t.Errorf("tenant tasks lists %+v, want the one task", list.Tasks)
	}
	f.do(t, request{method: "GET", path: "/tasks/tasks/" + task.ID}).ok(t, nil)
	f.do(t, request{method: "GET", path: "/tasks/" + task.ID}).fail(t, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
	f.do(t, request{method: "POST", path: "/tasks/tasks/" + task.ID + "/pushNotificationConfigs", body: `{"url":"https://example.com/h"}`}).ok(t, nil)
	f.do(t, request{method: "GET", path: "/tasks/tasks/" + task.ID + "/pushNotificationConfigs"}).ok(t, nil)
	f.do(t, request{method: "GET", path: "/tasks/extendedAgentCard", headers: alice}).ok(t, nil) // tenant "tasks"
	// An escaped character makes a segment data, never a literal.
	f.do(t, request{method: "GET", path: "/tasks/%74asks"}).fail(t, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
}

func TestExtendedAgentCard(t *testing.T) {
	f := newFixture(t)
	var card a2a.AgentCard
	f.do(t, request{method: "GET", path: "/extendedAgentCard", headers: alice}).ok(t, &card)
	if card.Description != "extended" {
		t.Errorf("description %q, want the extended card", card.Description)
	}
	f.do(t, request{method: "GET", path: "/acme/extendedAgentCard", headers: alice}).ok(t, &card)

	plain := newFixtureWith(t, echo.Card("http://127.0.0.1/a2a/jsonrpc", "http://127.0.0.1"+mount), nil)
	plain.do(t, request{method: "GET", path: "/extendedAgentCard"}).fail(t, http.StatusBadRequest, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
}

func TestMethodNotAllowed(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		method, path, allow string
	}{
		{"GET", "/message:send", "POST"},
		{"PUT", "/acme/message:stream", "POST"},
		{"POST", "/tasks", "GET"},
		{"DELETE", "/tasks/abc", "GET"},
		{"GET", "/tasks/abc:cancel", "POST"},
		{"DELETE", "/tasks/abc:subscribe", "GET, POST"},
		{"DELETE", "/tasks/abc/pushNotificationConfigs", "GET, POST"},
		{"POST", "/tasks/abc/pushNotificationConfigs/c", "GET, DELETE"},
		{"POST", "/extendedAgentCard", "GET"},
		{"HEAD", "/tasks", "GET"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := f.do(t, request{method: tt.method, path: tt.path})
			if got := r.header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow %q, want %q", got, tt.allow)
			}
			if tt.method == "HEAD" {
				if r.status != http.StatusMethodNotAllowed {
					t.Errorf("status %d, want 405", r.status)
				}
				return
			}
			r.fail(t, http.StatusMethodNotAllowed, "UNIMPLEMENTED", "")
		})
	}
}

func TestUnknownRoute(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/", "/nope", "/message:receive", "/tasks/", "/tasks/a/b",
		"/tasks/a/pushNotificationConfigs/", "/a/b/c", "/acme/tasks/a/pushNotificationConfigs/c/d", "/v1/message:send/x"} {
		t.Run(p, func(t *testing.T) {
			f.do(t, request{method: "GET", path: p}).fail(t, http.StatusNotFound, "UNIMPLEMENTED", "")
		})
	}
}

func TestMalformedBody(t *testing.T) {
	f := newFixture(t)
	for _, body := range []string{`{"message":`, `{"message":{}} trailing`, `nope`} {
		t.Run(body, func(t *testing.T) {
			e := f.do(t, request{method: "POST", path: "/message:send", body: body}).fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")
			if e.Error.Message != a2a.CodeParseError.DefaultMessage() {
				t.Errorf("message %q, want the ParseError message", e.Error.Message)
			}
		})
	}
	t.Run("wrong shape", func(t *testing.T) {
		e := f.do(t, request{method: "POST", path: "/message:send", body: `{"message":"hello"}`}).fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")
		if got := violationFields(e); !reflect.DeepEqual(got, []string{"message"}) {
			t.Errorf("violations %v, want [message]", got)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		f.do(t, request{method: "POST", path: "/tasks/x:cancel", body: `{`}).fail(t, http.StatusBadRequest, "INVALID_ARGUMENT", "")
	})
}

func TestOversizeBody(t *testing.T) {
	f := newFixture(t, rest.WithMaxBodyBytes(64))
	big := sendBody(strings.Repeat("x", 100), false)
	f.do(t, request{method: "POST", path: "/message:send", body: big}).fail(t, http.StatusRequestEntityTooLarge, "INVALID_ARGUMENT", "")

	// Without a Content-Length the limit still holds.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", f.srv.URL+mount+"/message:send", io.MultiReader(strings.NewReader(big)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if req.ContentLength != 0 || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked: content length %d, status %d", req.ContentLength, resp.StatusCode)
	}
	checkErrorBody(t, b, http.StatusRequestEntityTooLarge, "INVALID_ARGUMENT", "")

	// A small body is fine.
	f.do(t, request{method: "POST", path: "/tasks/x:cancel", body: "{}"}).fail(t, http.StatusNotFound, "NOT_FOUND", "TASK_NOT_FOUND")
}

func TestVersion(t *testing.T) {
	f := newFixture(t)
	noVersion := map[string]string{"A2A-Version": ""}
	for _, rq := range []request{
		{method: "GET", path: "/tasks", headers: noVersion},
		{method: "GET", path: "/tasks/x", headers: noVersion},
		{method: "POST", path: "/message:send", body: sendBody("v", false), headers: noVersion},
		{method: "GET", path: "/tasks/x:subscribe", headers: noVersion},
		{method: "GET", path: "/tasks", headers: map[string]string{"A2A-Version": "0.3"}},
	} {
		t.Run(rq.method+" "+rq.path, func(t *testing.T) {
			f.do(t, rq).fail(t, http.StatusBadRequest, "FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")
		})
	}
	t.Run("query parameter", func(t *testing.T) {
		f.do(t, request{method: "GET", path: "/tasks?A2A-Version=1.0", headers: noVersion}).ok(t, nil)
	})
}

func TestStreamingNotSupported(t *testing.T) {
	card := testCard()
	card.Capabilities.Streaming = nil
	f := newFixtureWith(t, card, nil)
	f.do(t, request{method: "POST", path: "/message:stream", body: sendBody("x", false)}).
		fail(t, http.StatusBadRequest, "FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")
}

// TestMediaTypeNegotiation: answers, errors and a stream's error before its
// first frame come in the media type the client sent or accepts, so that a
// client reading only application/json (the official Go SDK's) reads our
// errors; by default they are application/a2a+json.
func TestMediaTypeNegotiation(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		rq   request
		want int
	}{
		{"GET a missing task, accepting JSON", request{method: "GET", path: "/tasks/missing", headers: map[string]string{"Accept": "application/json"}}, http.StatusNotFound},
		{"GET a missing task, accepting anything", request{method: "GET", path: "/tasks/missing", headers: map[string]string{"Accept": "*/*"}}, http.StatusNotFound},
		{"cancel a missing task with a JSON body", request{method: "POST", path: "/tasks/missing:cancel", body: `{}`, headers: map[string]string{"Content-Type": "application/json"}}, http.StatusNotFound},
		{"subscribe to a missing task with a JSON body", request{method: "POST", path: "/tasks/missing:subscribe", body: `{}`, headers: map[string]string{"Content-Type": "application/json", "Accept": "text/event-stream"}}, http.StatusNotFound},
		{"send with a JSON body", request{method: "POST", path: "/message:send", body: sendBody("hi", true), headers: map[string]string{"Content-Type": "application/json"}}, http.StatusOK},
		{"send with A2A's", request{method: "POST", path: "/message:send", body: sendBody("hi", true)}, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do(t, tc.rq)
			if tc.want == http.StatusOK {
				r.ok(t, nil)
			} else {
				r.fail(t, tc.want, "NOT_FOUND", "TASK_NOT_FOUND")
			}
		})
	}
}
