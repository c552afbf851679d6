package jsonrpc_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/jsonrpc"
)

func newEcho(t testing.TB, opts ...jsonrpc.Option) (*server.Handler, http.Handler) {
	t.Helper()
	h, err := server.NewHandler(echo.Card("http://127.0.0.1/a2a/jsonrpc", "http://127.0.0.1/a2a/rest"), echo.Agent{})
	if err != nil {
		t.Fatal(err)
	}
	return h, jsonrpc.NewHandler(h, opts...)
}

type rpcError struct {
	Code    int              `json:"code"`
	Message string           `json:"message"`
	Data    []map[string]any `json:"data"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

func post(t testing.TB, h http.Handler, body string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/a2a/jsonrpc", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func decode(t testing.TB, rec *httptest.ResponseRecorder) rpcResponse {
	t.Helper()
	var r rpcResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("response is not JSON: %v\n%s", err, rec.Body)
	}
	if r.JSONRPC != "2.0" {
		t.Errorf("jsonrpc = %q, want 2.0", r.JSONRPC)
	}
	return r
}

const sendHello = `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}`

func TestSendMessage(t *testing.T) {
	_, h := newEcho(t)
	rec := post(t, h, sendHello, nil)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	r := decode(t, rec)
	if string(r.ID) != "7" || r.Error != nil {
		t.Fatalf("id %s error %+v", r.ID, r.Error)
	}
	var res a2a.SendMessageResponse
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	task, ok := res.Result.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Text() != "echo: hello" {
		t.Fatalf("result %s", r.Result)
	}
}

// TestEnvelopeErrors: bad input gets the JSON-RPC error it deserves and
// creates nothing.
func TestEnvelopeErrors(t *testing.T) {
	cases := []struct {
		name   string
		body   string
		header map[string]string
		status int
		code   int
		id     string
		reason string
	}{
		{"malformed JSON", `{"jsonrpc": "2.0", "method": `, nil, 200, -32700, "null", ""},
		{"not JSON at all", `hello`, nil, 200, -32700, "null", ""},
		{"batch", `[` + sendHello + `]`, nil, 200, -32600, "null", ""},
		{"empty batch", `[]`, nil, 200, -32600, "null", ""},
		{"not an object", `42`, nil, 200, -32600, "null", ""},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"GetTask","params":{"id":"x"}}`, nil, 200, -32600, "1", ""},
		{"notification", `{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}`, nil, 200, -32600, "null", ""},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"GetTask","params":{"id":"x"}}`, nil, 200, -32600, "null", ""},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, nil, 200, -32600, "null", ""},
		{"unknown method", `{"jsonrpc":"2.0","id":"a","method":"message/send","params":{}}`, nil, 200, -32601, `"a"`, ""},
		{"params an array", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":["x"]}`, nil, 200, -32602, "1", ""},
		{"wrong param type", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":5}}`, nil, 200, -32602, "1", ""},
		{"historyLength a string", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","historyLength":"many"}}`, nil, 200, -32602, "1", ""},
		{"unknown enum", `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"status":"TASK_STATE_SLEEPING"}}`, nil, 200, -32602, "1", ""},
		{"v0.3 enum", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"user","parts":[{"text":"x"}]}}}`, nil, 200, -32602, "1", ""},
		{"part with two members", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x","url":"http://a"}]}}}`, nil, 200, -32602, "1", ""},
		{"no version header", sendHello, map[string]string{"A2A-Version": ""}, 200, -32009, "7", "VERSION_NOT_SUPPORTED"},
		{"old version", sendHello, map[string]string{"A2A-Version": "0.3"}, 200, -32009, "7", "VERSION_NOT_SUPPORTED"},
		{"task not found", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`, nil, 200, -32001, "1", "TASK_NOT_FOUND"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hd, h := newEcho(t)
			rec := post(t, h, c.body, c.header)
			if rec.Code != c.status {
				t.Errorf("status %d, want %d", rec.Code, c.status)
			}
			r := decode(t, rec)
			if r.Error == nil {
				t.Fatalf("no error: %s", rec.Body)
			}
			if r.Error.Code != c.code || string(r.ID) != c.id || r.Error.Message == "" {
				t.Errorf("got code %d id %s message %q, want code %d id %s\n%s", r.Error.Code, r.ID, r.Error.Message, c.code, c.id, rec.Body)
			}
			if c.reason != "" {
				if len(r.Error.Data) == 0 || r.Error.Data[0]["reason"] != c.reason || r.Error.Data[0]["domain"] != "a2a-protocol.org" {
					t.Errorf("data %v, want ErrorInfo reason %s", r.Error.Data, c.reason)
				}
			}
			if c.code == -32602 && (len(r.Error.Data) == 0 || r.Error.Data[0]["@type"] != a2a.BadRequestType) {
				t.Errorf("invalid params without a BadRequest detail: %s", rec.Body)
			}
			list, err := hd.ListTasks(t.Context(), &a2a.ListTasksRequest{})
			if err != nil || list.TotalSize != 0 {
				t.Errorf("bad input created tasks: %v %v", list, err)
			}
		})
	}
}

func TestOversizeBody(t *testing.T) {
	hd, h := newEcho(t, jsonrpc.WithMaxBodyBytes(64))
	rec := post(t, h, sendHello, nil)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", rec.Code)
	}
	if r := decode(t, rec); r.Error == nil || r.Error.Code != -32600 {
		t.Fatalf("error %+v", r.Error)
	}
	// Without a Content-Length the limit still holds.
	req := httptest.NewRequest(http.MethodPost, "/", io.MultiReader(strings.NewReader(sendHello)))
	req.ContentLength = -1
	req.Header.Set("A2A-Version", "1.0")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked: status %d, want 413", rec.Code)
	}
	if list, _ := hd.ListTasks(t.Context(), &a2a.ListTasksRequest{}); list.TotalSize != 0 {
		t.Fatal("an oversize request created a task")
	}
}

func TestMethodNotAllowed(t *testing.T) {
	_, h := newEcho(t)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/a2a/jsonrpc", nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "POST" {
		t.Fatalf("status %d allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}

// TestStreamFrames: every SSE frame is a full JSON-RPC response with the
// request id and an id line; the stream ends after the terminal status.
func TestStreamFrames(t *testing.T) {
	_, h := newEcho(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := strings.Replace(sendHello, `"SendMessage"`, `"SendStreamingMessage"`, 1)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
	req.Header.Set("A2A-Version", "1.0")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var kinds, ids []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			ids = append(ids, id)
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var r rpcResponse
		if err := json.Unmarshal([]byte(data), &r); err != nil || string(r.ID) != "7" || r.Error != nil {
			t.Fatalf("frame %s: %v", data, err)
		}
		var m map[string]json.RawMessage
		_ = json.Unmarshal(r.Result, &m)
		for k := range m {
			kinds = append(kinds, k)
		}
	}
	want := []string{"task", "statusUpdate", "artifactUpdate", "statusUpdate"}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Fatalf("frames %v, want %v", kinds, want)
	}
	if len(ids) != 4 || !strings.HasSuffix(ids[0], ":1") || !strings.HasSuffix(ids[3], ":4") {
		t.Fatalf("ids %v", ids)
	}
}

// TestStreamErrorBeforeStart: an error detected before the first frame is
// a plain JSON-RPC error response, not a stream.
func TestStreamErrorBeforeStart(t *testing.T) {
	_, h := newEcho(t)
	rec := post(t, h, `{"jsonrpc":"2.0","id":3,"method":"SubscribeToTask","params":{"id":"missing"}}`, nil)
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	if r := decode(t, rec); r.Error == nil || r.Error.Code != -32001 {
		t.Fatalf("%s", rec.Body)
	}
}

func TestDeletePushConfigResultIsEmptyObject(t *testing.T) {
	hd, h := newEcho(t)
	res, err := hd.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("x")}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Result.(*a2a.Task).ID
	rec := post(t, h, `{"jsonrpc":"2.0","id":1,"method":"DeleteTaskPushNotificationConfig","params":{"taskId":"`+id+`","id":"nothing"}}`, nil)
	if r := decode(t, rec); r.Error != nil || !bytes.Equal(r.Result, []byte("{}")) {
		t.Fatalf("%s", rec.Body)
	}
}
