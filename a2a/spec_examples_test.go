package a2a_test

// The JSON examples of REQUIREMENTS.md D9 (taken from the A2A spec, with the
// corrections D9 marks), round-tripped through the Go types.

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
)

const specTask = `{
  "id": "43667960-d455-4453-b0cf-1bae4955270d",
  "contextId": "c295ea44-7543-4f78-b524-7a38915ad6e4",
  "status": { "state": "TASK_STATE_COMPLETED", "timestamp": "2024-03-15T12:05:00.000Z" },
  "artifacts": [
    {
      "artifactId": "9b6934dd-37e3-4eb1-8766-962efaab63a1",
      "name": "processed_image_with_faces.png",
      "parts": [
        { "url": "https://storage.example.com/processed/task-bbb/output.png?token=xyz",
          "filename": "output.png", "mediaType": "image/png" }
      ]
    }
  ]
}`

const specMessage = `{
  "messageId": "6dbc13b5-bd57-4c2b-b503-24e381b6c8d6",
  "role": "ROLE_USER",
  "contextId": "c295ea44-7543-4f78-b524-7a38915ad6e4",
  "parts": [
    { "text": "Analyze this image and highlight any faces." },
    { "raw": "iVBORw0KGgo=", "filename": "input_image.png", "mediaType": "image/png" },
    { "url": "https://example.com/doc.pdf", "filename": "doc.pdf", "mediaType": "application/pdf" },
    { "data": { "key": "value" }, "mediaType": "application/json" }
  ]
}`

const specAgentCard = `{
  "name": "GeoSpatial Route Planner Agent",
  "description": "Provides advanced route planning…",
  "supportedInterfaces": [
    {"url": "https://georoute-agent.example.com/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
    {"url": "https://georoute-agent.example.com/a2a/json", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
  ],
  "provider": {"organization": "Example Geo Services Inc.", "url": "https://www.examplegeoservices.com"},
  "version": "1.2.0",
  "capabilities": {"streaming": true, "pushNotifications": true, "extendedAgentCard": true},
  "securitySchemes": {"google": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://accounts.google.com/.well-known/openid-configuration"}}},
  "securityRequirements": [{"schemes": {"google": {"list": ["openid", "profile", "email"]}}}],
  "defaultInputModes": ["application/json", "text/plain"],
  "defaultOutputModes": ["application/json", "image/png"],
  "skills": [{"id": "route-optimizer-traffic", "name": "Traffic-Aware Route Optimizer",
              "description": "Calculates the optimal driving route…", "tags": ["maps", "routing"]}]
}`

// specSSE are the data: lines of the D9 stream examples (HTTP+JSON SSE:
// bare StreamResponse objects).
var specSSE = []string{
	`{"task": {"id": "task-uuid", "contextId": "context-uuid", "status": {"state": "TASK_STATE_WORKING"}}}`,
	`{"artifactUpdate": {"taskId": "task-uuid", "contextId": "context-uuid", "artifact": {"artifactId": "report-1", "parts": [{"text": "# Climate Change Report\n\n"}]}}}`,
	`{"artifactUpdate": {"taskId": "task-uuid", "contextId": "context-uuid", "artifact": {"artifactId": "report-1", "parts": [{"text": "More text"}]}, "append": true, "lastChunk": true}}`,
	`{"statusUpdate": {"taskId": "task-uuid", "contextId": "context-uuid", "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2025-10-28T10:30:00.000Z"}}}`,
	`{"message": {"messageId": "msg-2", "contextId": "context-uuid", "role": "ROLE_AGENT", "parts": [{"text": "Hello!"}]}}`,
}

// specJSONRPCSSE is the same kind of event on JSON-RPC SSE.
const specJSONRPCSSE = `{"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "task-uuid", "contextId": "context-uuid", "status": {"state": "TASK_STATE_COMPLETED"}}}}`

// specPush is the push-notification POST body of §6.6. Its timestamp has
// no fraction; the encoder writes milliseconds (A2A §5.6.1).
const (
	specPush = `{"statusUpdate": {"taskId": "43667960-…", "contextId": "c295ea44-…",
  "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2024-03-15T18:30:00Z"}}}`
	specPushOut = `{"statusUpdate": {"taskId": "43667960-…", "contextId": "c295ea44-…",
  "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2024-03-15T18:30:00.000Z"}}}`
)

// specPushConfig is the configuration of SendMessage with a webhook (§6.6).
const specPushConfig = `{"taskPushNotificationConfig": {"url": "https://client.example.com/webhook/a2a-notifications", "authentication": {"scheme": "Bearer", "credentials": "secure-client-token-for-task-aaa"}}}`

// assertRoundTrip decodes in into a new T, encodes it, and compares the
// result with want (in when want is "") as JSON values.
func assertRoundTrip[T any](t *testing.T, in, want string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, in)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	if want == "" {
		want = in
	}
	assertJSONEqual(t, want, string(out))
	return v
}

// assertJSONEqual compares two JSON texts as values.
func assertJSONEqual(t *testing.T, want, got string) {
	t.Helper()
	w, err := jsonValue([]byte(want))
	if err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	g, err := jsonValue([]byte(got))
	if err != nil {
		t.Fatalf("got is not JSON: %v\n%s", err, got)
	}
	if !reflect.DeepEqual(w, g) {
		t.Errorf("JSON differs\n--- want\n%s\n--- got\n%s", pretty(w), pretty(g))
	}
}

func TestSpecExamples(t *testing.T) {
	t.Run("Task", func(t *testing.T) {
		task := assertRoundTrip[a2a.Task](t, specTask, "")
		if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
			t.Errorf("decoded %+v", task)
		}
		if u, ok := task.Artifacts[0].Parts[0].Content.(a2a.URL); !ok || !strings.HasPrefix(string(u), "https://storage.example.com/") {
			t.Errorf("artifact part %#v", task.Artifacts[0].Parts[0])
		}
	})
	t.Run("MessageWithEveryPartKind", func(t *testing.T) {
		m := assertRoundTrip[a2a.Message](t, specMessage, "")
		var kinds []string
		for i := range m.Parts {
			kinds = append(kinds, m.Parts[i].Kind())
		}
		if got := strings.Join(kinds, ","); got != "text,raw,url,data" {
			t.Errorf("part kinds %s", got)
		}
		if raw := m.Parts[1].Content.(a2a.Raw); string(raw) != "\x89PNG\r\n\x1a\n" {
			t.Errorf("raw part decoded to %q", raw)
		}
	})
	t.Run("SendMessageResponse", func(t *testing.T) {
		r := assertRoundTrip[a2a.SendMessageResponse](t, `{"task":`+specTask+`}`, "")
		if _, ok := r.Result.(*a2a.Task); !ok {
			t.Errorf("result %T", r.Result)
		}
		r = assertRoundTrip[a2a.SendMessageResponse](t, `{"message":`+specMessage+`}`, "")
		if _, ok := r.Result.(*a2a.Message); !ok {
			t.Errorf("result %T", r.Result)
		}
	})
	t.Run("StreamEvents", func(t *testing.T) {
		want := []string{"*a2a.Task", "*a2a.TaskArtifactUpdateEvent", "*a2a.TaskArtifactUpdateEvent", "*a2a.TaskStatusUpdateEvent", "*a2a.Message"}
		for i, ev := range specSSE {
			r := assertRoundTrip[a2a.StreamResponse](t, ev, "")
			if got := reflect.TypeOf(r.Event).String(); got != want[i] {
				t.Errorf("event %d is %s, want %s", i+1, got, want[i])
			}
		}
	})
	t.Run("JSONRPCStreamEvent", func(t *testing.T) {
		var env struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(specJSONRPCSSE), &env); err != nil {
			t.Fatal(err)
		}
		assertRoundTrip[a2a.StreamResponse](t, string(env.Result), "")
	})
	t.Run("PushNotification", func(t *testing.T) {
		r := assertRoundTrip[a2a.StreamResponse](t, specPush, specPushOut)
		if ev := r.Event.(*a2a.TaskStatusUpdateEvent); ev.Status.Timestamp.Format("15:04:05") != "18:30:00" {
			t.Errorf("timestamp %v", ev.Status.Timestamp)
		}
	})
	t.Run("PushConfigInSendMessage", func(t *testing.T) {
		c := assertRoundTrip[a2a.SendMessageConfiguration](t, specPushConfig, "")
		if p := c.TaskPushNotificationConfig; p == nil || p.Authentication == nil || p.Authentication.Scheme != "Bearer" {
			t.Errorf("decoded %+v", c)
		}
	})
	t.Run("ListTasksResponse", func(t *testing.T) {
		assertRoundTrip[a2a.ListTasksResponse](t, `{"tasks":[], "totalSize": 5, "pageSize": 10, "nextPageToken": ""}`, "")
		assertRoundTrip[a2a.ListTasksResponse](t, `{"tasks":[`+specTask+`], "totalSize": 5, "pageSize": 10, "nextPageToken": ""}`, "")
	})
	t.Run("AgentCard", func(t *testing.T) {
		c := assertRoundTrip[a2a.AgentCard](t, specAgentCard, "")
		if s := c.SecuritySchemes["google"]; s.OpenIDConnect == nil {
			t.Errorf("security scheme %+v", s)
		}
		if l := c.SecurityRequirements[0].Schemes["google"].List; len(l) != 3 {
			t.Errorf("requirement scopes %v", l)
		}
	})
	t.Run("JSONRPCError", func(t *testing.T) {
		const body = `{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"Task not found","data":[
  {"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org",
   "metadata":{"taskId":"nonexistent-task-id"}}]}}`
		var env struct {
			Error struct {
				Code    int              `json:"code"`
				Message string           `json:"message"`
				Data    []map[string]any `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &env); err != nil {
			t.Fatal(err)
		}
		kind, ok := a2a.CodeFromJSONRPC(env.Error.Code)
		if !ok || kind != a2a.CodeTaskNotFound {
			t.Fatalf("CodeFromJSONRPC(%d) = %v, %v", env.Error.Code, kind, ok)
		}
		e := a2a.ErrorFromWire(kind, env.Error.Message, env.Error.Data)
		if e.Code != a2a.CodeTaskNotFound || e.Metadata["taskId"] != "nonexistent-task-id" {
			t.Errorf("ErrorFromWire = %+v", e)
		}
		data, _ := json.Marshal(env.Error.Data)
		details, _ := json.Marshal(e.WireDetails())
		assertJSONEqual(t, string(data), string(details))
	})
	t.Run("RESTError", func(t *testing.T) {
		const body = `{"error":{"code":404,"status":"NOT_FOUND","message":"The specified task ID does not exist or is not accessible",
 "details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}`
		var sb statusBody
		if err := json.Unmarshal([]byte(body), &sb); err != nil {
			t.Fatal(err)
		}
		e := a2a.ErrorFromWire(a2a.CodeFromHTTPStatus(sb.Error.Code), sb.Error.Message, sb.Error.Details)
		if e.Code != a2a.CodeTaskNotFound || e.Code.HTTPStatus() != 404 || e.Code.GRPCStatusName() != sb.Error.Status {
			t.Errorf("ErrorFromWire = %+v", e)
		}
		details, _ := json.Marshal(e.WireDetails())
		data, _ := json.Marshal(sb.Error.Details)
		assertJSONEqual(t, string(data), string(details))
	})
}
