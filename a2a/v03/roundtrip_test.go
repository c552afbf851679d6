package v03_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/a2a/v03"
)

// coverage records, across all cases, every field of the v0.3 types that
// some v0.3 value sets, and the values of their enumerations.
type coverage struct {
	fields map[string]bool
	values map[string]bool
}

func newCoverage() *coverage {
	return &coverage{fields: map[string]bool{}, values: map[string]bool{}}
}

var v03Path = reflect.TypeOf(v03.Task{}).PkgPath()

func (c *coverage) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			c.walk(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			c.walk(v.Index(i))
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			c.walk(v.MapIndex(k))
		}
	case reflect.Struct:
		t := v.Type()
		if t.PkgPath() != v03Path {
			return // a2a's and the standard library's types
		}
		for i := range t.NumField() {
			f := v.Field(i)
			if !f.IsZero() {
				c.fields[t.Name()+"."+t.Field(i).Name] = true
			}
			switch name := t.Field(i).Name; {
			case f.Kind() == reflect.String && (name == "Kind" || name == "Role" || name == "State" || name == "Type" || name == "Transport" || name == "PreferredTransport"):
				c.values[name+"="+f.String()] = true
			case f.Kind() == reflect.Bool:
				c.values[t.Name()+"."+name+"="+fmt.Sprint(f.Bool())] = true
			}
			c.walk(f)
		}
	}
}

// v03Types are the v0.3 types whose every field some case must set.
var v03Types = []any{
	v03.Part{}, v03.File{}, v03.Message{}, v03.Artifact{}, v03.Task{}, v03.TaskStatus{},
	v03.TaskStatusUpdateEvent{}, v03.TaskArtifactUpdateEvent{},
	v03.PushNotificationConfig{}, v03.PushNotificationAuthenticationInfo{}, v03.TaskPushNotificationConfig{},
	v03.MessageSendParams{}, v03.MessageSendConfiguration{}, v03.TaskQueryParams{}, v03.TaskIDParams{},
	v03.GetTaskPushNotificationConfigParams{}, v03.ListTaskPushNotificationConfigParams{}, v03.DeleteTaskPushNotificationConfigParams{},
	v03.AgentCard{}, v03.AgentInterface{}, v03.AgentCapabilities{}, v03.AgentSkill{},
	v03.SecurityScheme{}, v03.OAuthFlows{}, v03.OAuthFlow{},
}

// fieldsNotCovered are fields no v1.0 value translates into, each with
// the reason; TestDropped shows what becomes of them.
var fieldsNotCovered = map[string]string{
	"TaskQueryParams.Metadata":                        "v1.0 GetTask has no metadata",
	"GetTaskPushNotificationConfigParams.Metadata":    "v1.0 has no metadata here",
	"ListTaskPushNotificationConfigParams.Metadata":   "v1.0 has no metadata here",
	"DeleteTaskPushNotificationConfigParams.Metadata": "v1.0 has no metadata here",
	"AgentCapabilities.StateTransitionHistory":        "v1.0 removed it",
}

// wantValues are enumeration values some case must produce.
var wantValues = []string{
	"Kind=message", "Kind=task", "Kind=status-update", "Kind=artifact-update", "Kind=text", "Kind=file", "Kind=data",
	"Role=user", "Role=agent",
	"State=submitted", "State=working", "State=input-required", "State=completed", "State=canceled",
	"State=failed", "State=rejected", "State=auth-required", "State=unknown",
	"Type=apiKey", "Type=http", "Type=oauth2", "Type=openIdConnect", "Type=mutualTLS",
	"Transport=HTTP+JSON", "Transport=GRPC", "PreferredTransport=JSONRPC",
	"TaskStatusUpdateEvent.Final=true", "TaskStatusUpdateEvent.Final=false",
	"TaskArtifactUpdateEvent.Append=true", "TaskArtifactUpdateEvent.Append=false",
	"TaskArtifactUpdateEvent.LastChunk=true", "TaskArtifactUpdateEvent.LastChunk=false",
}

func (c *coverage) check(t *testing.T) {
	t.Helper()
	for _, v := range v03Types {
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			name := rt.Name() + "." + rt.Field(i).Name
			_, skip := fieldsNotCovered[name]
			switch {
			case skip && c.fields[name]:
				t.Errorf("field %s is listed in fieldsNotCovered but some case sets it", name)
			case !skip && !c.fields[name]:
				t.Errorf("field %s is set by no case", name)
			}
		}
	}
	for _, v := range wantValues {
		if !c.values[v] {
			t.Errorf("no case produces %s", v)
		}
	}
}

type requestCase struct {
	name string
	op   string
	req  any
}

type resultCase struct {
	name string
	op   string
	res  any
}

func requestCases() []requestCase {
	noTask := pushConfig()
	noTask.TaskID = ""
	return []requestCase{
		{"full", a2a.MethodSendMessage, &a2a.SendMessageRequest{
			Message: userMessage(), Metadata: metadata(),
			Configuration: &a2a.SendMessageConfiguration{
				AcceptedOutputModes: []string{"text/plain", "application/json"}, TaskPushNotificationConfig: noTask,
				HistoryLength: a2a.Ptr(int32(3)), ReturnImmediately: true,
			},
		}},
		{"minimal", a2a.MethodSendMessage, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "m", "hi")}},
		{"blocking", a2a.MethodSendMessage, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "m", "hi"),
			Configuration: &a2a.SendMessageConfiguration{HistoryLength: a2a.Ptr(int32(0))}}},
		{"empty-metadata", a2a.MethodSendStreamingMessage, &a2a.SendMessageRequest{Message: userMessage(), Metadata: map[string]any{}}},
		{"history", a2a.MethodGetTask, &a2a.GetTaskRequest{ID: "task-1", HistoryLength: a2a.Ptr(int32(5))}},
		{"zero-history", a2a.MethodGetTask, &a2a.GetTaskRequest{ID: "task-1", HistoryLength: a2a.Ptr(int32(0))}},
		{"no-history", a2a.MethodGetTask, &a2a.GetTaskRequest{ID: "task-1"}},
		{"metadata", a2a.MethodCancelTask, &a2a.CancelTaskRequest{ID: "task-1", Metadata: metadata()}},
		{"bare", a2a.MethodCancelTask, &a2a.CancelTaskRequest{ID: "task-1"}},
		{"", a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{ID: "task-1"}},
		{"full", a2a.MethodCreateTaskPushNotificationConfig, pushConfig()},
		{"url-only", a2a.MethodCreateTaskPushNotificationConfig, &a2a.TaskPushNotificationConfig{TaskID: "t", URL: "https://hooks.example.com"}},
		{"no-scheme", a2a.MethodCreateTaskPushNotificationConfig, &a2a.TaskPushNotificationConfig{TaskID: "t", URL: "https://h.example.com", Authentication: &a2a.AuthenticationInfo{}}},
		{"id", a2a.MethodGetTaskPushNotificationConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskID: "task-1", ID: "cfg-1"}},
		{"no-id", a2a.MethodGetTaskPushNotificationConfig, &a2a.GetTaskPushNotificationConfigRequest{TaskID: "task-1"}},
		{"", a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: "task-1"}},
		{"", a2a.MethodDeleteTaskPushNotificationConfig, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: "task-1", ID: "cfg-1"}},
		{"", a2a.MethodGetExtendedAgentCard, &a2a.GetExtendedAgentCardRequest{}},
	}
}

func resultCases() []resultCase {
	tk := task()
	cases := []resultCase{
		{"task", a2a.MethodSendMessage, &a2a.SendMessageResponse{Result: tk}},
		{"message", a2a.MethodSendMessage, &a2a.SendMessageResponse{Result: agentMessage()}},
		{"task", a2a.MethodSendStreamingMessage, &a2a.StreamResponse{Event: tk}},
		{"message", a2a.MethodSendStreamingMessage, &a2a.StreamResponse{Event: agentMessage()}},
		{"artifact-append", a2a.MethodSendStreamingMessage, &a2a.StreamResponse{Event: &a2a.TaskArtifactUpdateEvent{TaskID: "task-1", ContextID: "ctx-1", Artifact: *artifact(), Append: true, Metadata: metadata()}}},
		{"artifact-last", a2a.MethodSubscribeToTask, &a2a.StreamResponse{Event: &a2a.TaskArtifactUpdateEvent{TaskID: "task-1", ContextID: "ctx-1", Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("end")}}, LastChunk: true}}},
		{"artifact-whole", a2a.MethodSubscribeToTask, &a2a.StreamResponse{Event: &a2a.TaskArtifactUpdateEvent{TaskID: "task-1", ContextID: "ctx-1", Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("all")}}, Append: true, LastChunk: true}}},
		{"minimal", a2a.MethodGetTask, &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}},
		{"empty-artifacts", a2a.MethodGetTask, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}, Artifacts: []a2a.Artifact{}, Metadata: map[string]any{}}},
		{"canceled", a2a.MethodCancelTask, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: ts}}},
		{"full", a2a.MethodCreateTaskPushNotificationConfig, pushConfig()},
		{"full", a2a.MethodGetTaskPushNotificationConfig, pushConfig()},
		{"some", a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsResponse{Configs: []a2a.TaskPushNotificationConfig{*pushConfig(), {ID: "cfg-2", TaskID: "task-1", URL: "https://h2.example.com"}}}},
		{"none", a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsResponse{}},
		{"", a2a.MethodDeleteTaskPushNotificationConfig, nil},
		{"full", a2a.MethodGetExtendedAgentCard, card()},
		{"minimal", a2a.MethodGetExtendedAgentCard, &a2a.AgentCard{Name: "n", Description: "d", Version: "1",
			SupportedInterfaces: []a2a.AgentInterface{{URL: "https://a.example.com", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"}}}},
	}
	for s := a2a.TaskStateUnspecified; s <= a2a.TaskStateAuthRequired; s++ {
		st := a2a.TaskStatus{State: s, Timestamp: ts}
		if s == a2a.TaskStateInputRequired {
			st.Message = agentMessage()
		}
		cases = append(cases,
			resultCase{"status-" + s.String(), a2a.MethodSendStreamingMessage, &a2a.StreamResponse{Event: &a2a.TaskStatusUpdateEvent{TaskID: "task-1", ContextID: "ctx-1", Status: st, Metadata: metadata()}}},
			resultCase{"task-" + s.String(), a2a.MethodGetTask, &a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: st}},
		)
	}
	return cases
}

// TestRequestRoundTrip sends every request through the v0.3 wire and back:
// v1.0 → v0.3 params → JSON → v1.0 gives the same operation and request.
func TestRequestRoundTrip(t *testing.T) {
	cov := newCoverage()
	for _, c := range requestCases() {
		t.Run(c.op+"/"+c.name, func(t *testing.T) {
			method, params, err := v03.FromV1Request(c.op, c.req)
			if err != nil {
				t.Fatalf("FromV1Request: %v", err)
			}
			cov.walk(reflect.ValueOf(params))
			raw, err := json.Marshal(params)
			if err != nil {
				t.Fatal(err)
			}
			op, back, err := v03.ToV1Request(method, raw)
			if err != nil {
				t.Fatalf("ToV1Request(%s, %s): %v", method, raw, err)
			}
			if op != c.op {
				t.Errorf("operation %s came back as %s", c.op, op)
			}
			if got, want := canonical(t, back), canonical(t, c.req); got != want {
				t.Errorf("v1.0 → v0.3 → v1.0 changed the request:\n got %s\nwant %s\nv0.3 %s", got, want, raw)
			}
		})
	}
	for _, c := range resultCases() {
		t.Run(c.op+"/result/"+c.name, func(t *testing.T) {
			res, err := v03.FromV1Result(c.op, c.res)
			if err != nil {
				t.Fatalf("FromV1Result: %v", err)
			}
			cov.walk(reflect.ValueOf(res))
			raw, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			back, err := v03.ToV1Result(c.op, raw)
			if err != nil {
				t.Fatalf("ToV1Result(%s, %s): %v", c.op, raw, err)
			}
			if got, want := canonical(t, back), canonical(t, c.res); got != want {
				t.Errorf("v1.0 → v0.3 → v1.0 changed the result:\n got %s\nwant %s\nv0.3 %s", got, want, raw)
			}
		})
	}
	cov.check(t)
}

// TestEveryOperation: every operation but ListTasks has a v0.3 method, and
// the names map both ways.
func TestEveryOperation(t *testing.T) {
	seen := map[string]bool{}
	for _, op := range a2a.Methods() {
		m, err := v03.FromV1Method(op)
		if op == a2a.MethodListTasks {
			wantRefusal(t, err, a2a.CodeUnsupportedOperation, "method")
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		back, ok := v03.ToV1Method(m)
		if !ok || back != op {
			t.Errorf("%s → %s → %s, %v", op, m, back, ok)
		}
		seen[m] = true
	}
	if len(seen) != 10 {
		t.Errorf("%d v0.3 methods, want 10: %v", len(seen), seen)
	}
	if _, ok := v03.ToV1Method("tasks/list"); ok {
		t.Error("tasks/list is not a v0.3 method")
	}
	if _, err := v03.FromV1Method("Nope"); err == nil || a2a.AsError(err).Code != a2a.CodeMethodNotFound {
		t.Errorf("unknown operation: %v", err)
	}
}

// TestFinal: v0.3's final is true exactly for terminal and interrupted
// states, and v0.3 → v1.0 does not read it.
func TestFinal(t *testing.T) {
	for s := a2a.TaskStateUnspecified; s <= a2a.TaskStateAuthRequired; s++ {
		e, err := v03.FromV1TaskStatusUpdateEvent(&a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: s}})
		if err != nil {
			t.Fatal(err)
		}
		if want := s.Terminal() || s.Interrupted(); e.Final != want {
			t.Errorf("%s: final = %v, want %v", s, e.Final, want)
		}
		e.Final = !e.Final
		back, err := v03.ToV1TaskStatusUpdateEvent(e)
		if err != nil || back.Status.State != s {
			t.Errorf("%s with final %v: %v, %v", s, e.Final, back, err)
		}
	}
}

// TestDefaultMediaTypes: a text or data part's default media type is not
// written (v0.3 has no member for it) and its effective media type is
// unchanged.
func TestDefaultMediaTypes(t *testing.T) {
	dp, err := a2a.DataPart(map[string]any{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []a2a.Part{{Content: a2a.Text("x"), MediaType: "text/plain"}, dp} {
		v, err := v03.FromV1Part(&p)
		if err != nil {
			t.Fatalf("%s: %v", p.Kind(), err)
		}
		back, err := v03.ToV1Part(v)
		if err != nil {
			t.Fatal(err)
		}
		if back.MediaType != "" || back.EffectiveMediaType() != p.EffectiveMediaType() {
			t.Errorf("%s: media type %q, effective %q, want %q", p.Kind(), back.MediaType, back.EffectiveMediaType(), p.EffectiveMediaType())
		}
	}
}

// TestBlocking: v0.3's blocking, absent, true and false, against v1.0's
// returnImmediately.
func TestBlocking(t *testing.T) {
	for _, c := range []struct {
		config string
		ri     bool
	}{{`{}`, false}, {`{"blocking":true}`, false}, {`{"blocking":false}`, true}} {
		raw := `{"message":{"kind":"message","messageId":"m","role":"user","parts":[]},"configuration":` + c.config + `}`
		_, req, err := v03.ToV1Request(v03.MethodMessageSend, json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		if got := req.(*a2a.SendMessageRequest).Configuration.ReturnImmediately; got != c.ri {
			t.Errorf("%s: returnImmediately = %v, want %v", c.config, got, c.ri)
		}
		p, err := v03.FromV1SendMessageRequest(req.(*a2a.SendMessageRequest))
		if err != nil {
			t.Fatal(err)
		}
		if b := p.Configuration.Blocking; b == nil || *b == c.ri {
			t.Errorf("%s: blocking written back as %v", c.config, b)
		}
	}
}

// TestPushConfigOfTheMessagesTask: in a send, a push config for the
// message's own task is implied in v0.3 and not written.
func TestPushConfigOfTheMessagesTask(t *testing.T) {
	m := a2a.NewTextMessage(a2a.RoleUser, "m", "hi")
	m.TaskID = "task-1"
	p, err := v03.FromV1SendMessageRequest(&a2a.SendMessageRequest{Message: m, Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: pushConfig()}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := canonical(t, p.Configuration.PushNotificationConfig), `{"authentication":{"credentials":"secret","schemes":["Bearer"]},"id":"cfg-1","token":"tok-1","url":"https://hooks.example.com/a2a"}`; got != want {
		t.Errorf("push config = %s, want %s", got, want)
	}
}

// TestErrorRoundTrip: every kind of error survives v1.0 → v0.3 → v1.0 with
// its message and details; Unknown and Unavailable arrive as Internal, as
// over v1.0 JSON-RPC.
func TestErrorRoundTrip(t *testing.T) {
	for c := a2a.CodeUnknown; c <= a2a.CodeResourceExhausted; c++ {
		for _, full := range []bool{false, true} {
			in := &a2a.Error{Code: c, Message: "something about " + c.String()}
			if full {
				in.Violations = []a2a.FieldViolation{{Field: "message.parts[0]", Description: "bad"}}
				in.RetryAfter = 1500_000_000
				in.Details = []map[string]any{{"@type": "type.example.com/Extra", "n": 1.0}}
				if c.Reason() != "" {
					in.Metadata = map[string]string{"taskId": "task-1"}
				}
			}
			t.Run(fmt.Sprintf("%s/full=%v", c, full), func(t *testing.T) {
				v := v03.FromV1Error(in)
				if v.Code != c.JSONRPCCode() {
					t.Errorf("code = %d, want %d", v.Code, c.JSONRPCCode())
				}
				if !full && v.Data != nil {
					t.Errorf("data %s for an error with nothing to carry", v.Data)
				}
				raw, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				var w v03.Error
				if err := json.Unmarshal(raw, &w); err != nil {
					t.Fatal(err)
				}
				back := v03.ToV1Error(&w)
				want := *in
				if c == a2a.CodeUnknown || c == a2a.CodeUnavailable {
					want.Code = a2a.CodeInternal
				}
				if got, want := canonical(t, errorValue(back)), canonical(t, errorValue(&want)); got != want {
					t.Errorf("v1.0 → v0.3 → v1.0 changed the error:\n got %s\nwant %s\nv0.3 %s", got, want, raw)
				}
			})
		}
	}
}

func errorValue(e *a2a.Error) map[string]any {
	return map[string]any{"code": e.Code.String(), "message": e.Message, "metadata": e.Metadata, "violations": e.Violations, "retry": e.RetryAfter.String(), "details": e.Details}
}

// TestV03CodesAreV1Numbers pins what lets the error codes go untranslated:
// each v0.3 code is the v1.0 JSON-RPC code of the same kind.
func TestV03CodesAreV1Numbers(t *testing.T) {
	for n, want := range map[int]a2a.Code{
		v03.CodeParseError: a2a.CodeParseError, v03.CodeInvalidRequest: a2a.CodeInvalidRequest,
		v03.CodeMethodNotFound: a2a.CodeMethodNotFound, v03.CodeInvalidParams: a2a.CodeInvalidParams,
		v03.CodeInternalError: a2a.CodeInternal, v03.CodeTaskNotFound: a2a.CodeTaskNotFound,
		v03.CodeTaskNotCancelable: a2a.CodeTaskNotCancelable, v03.CodePushNotificationNotSupported: a2a.CodePushNotificationNotSupported,
		v03.CodeUnsupportedOperation: a2a.CodeUnsupportedOperation, v03.CodeContentTypeNotSupported: a2a.CodeContentTypeNotSupported,
		v03.CodeInvalidAgentResponse:                   a2a.CodeInvalidAgentResponse,
		v03.CodeAuthenticatedExtendedCardNotConfigured: a2a.CodeExtendedAgentCardNotConfigured,
	} {
		if got := v03.ToV1Error(&v03.Error{Code: n, Message: "m"}).Code; got != want {
			t.Errorf("v0.3 code %d is %v, want %v", n, got, want)
		}
		if want.JSONRPCCode() != n {
			t.Errorf("%v has JSON-RPC code %d in v1.0, %d in v0.3", want, want.JSONRPCCode(), n)
		}
	}
}

func TestEndsStream(t *testing.T) {
	status := func(s a2a.TaskState) *a2a.TaskStatusUpdateEvent {
		return &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: s}}
	}
	for _, tc := range []struct {
		name string
		ev   a2a.Event
		want bool
	}{
		{"message", &a2a.Message{MessageID: "m", Role: a2a.RoleAgent}, true},
		{"working", status(a2a.TaskStateWorking), false},
		{"completed", status(a2a.TaskStateCompleted), true},
		{"input-required", status(a2a.TaskStateInputRequired), true},
		{"auth-required", status(a2a.TaskStateAuthRequired), true},
		{"task working", &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}, false},
		{"task canceled", &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateCanceled}}, true},
		{"artifact", &a2a.TaskArtifactUpdateEvent{TaskID: "t"}, false},
		{"nil", nil, false},
	} {
		if got := v03.EndsStream(tc.ev); got != tc.want {
			t.Errorf("%s: EndsStream = %v, want %v", tc.name, got, tc.want)
		}
		// EndsStream and final say the same.
		if st, ok := tc.ev.(*a2a.TaskStatusUpdateEvent); ok {
			out, err := v03.FromV1TaskStatusUpdateEvent(st)
			if err != nil || out.Final != tc.want {
				t.Errorf("%s: final = %v (%v), want %v", tc.name, out.Final, err, tc.want)
			}
		}
	}
}
