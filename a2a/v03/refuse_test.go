package v03_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/a2a/v03"
)

// TestRefusedFromV1: what v0.3 cannot express is an error naming the
// field, never a silent loss.
func TestRefusedFromV1(t *testing.T) {
	msg := func(p a2a.Part) *a2a.Message {
		return &a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("ok"), p}}
	}
	send := func(m *a2a.Message) *a2a.SendMessageRequest { return &a2a.SendMessageRequest{Message: m} }
	withCard := func(f func(*a2a.AgentCard)) *a2a.AgentCard { c := card(); f(c); return c }
	cases := []struct {
		name  string
		op    string
		req   any
		code  a2a.Code
		field string
	}{
		{"ListTasks", a2a.MethodListTasks, &a2a.ListTasksRequest{}, a2a.CodeUnsupportedOperation, "method"},
		{"tenant/send", a2a.MethodSendMessage, &a2a.SendMessageRequest{Tenant: "acme", Message: agentMessage()}, a2a.CodeUnsupportedOperation, "tenant"},
		{"tenant/stream", a2a.MethodSendStreamingMessage, &a2a.SendMessageRequest{Tenant: "acme", Message: agentMessage()}, a2a.CodeUnsupportedOperation, "tenant"},
		{"tenant/get", a2a.MethodGetTask, &a2a.GetTaskRequest{Tenant: "acme", ID: "t"}, a2a.CodeUnsupportedOperation, "tenant"},
		{"tenant/cancel", a2a.MethodCancelTask, &a2a.CancelTaskRequest{Tenant: "acme", ID: "t"}, a2a.CodeUnsupportedOperation, "tenant"},
		{"tenant/subscribe", a2a.MethodSubscribeToTask, &a2a.SubscribeToTaskRequest{Tenant: "acme", ID: "t"}, a2a.CodeUnsupportedOperation, "tenant"},
		{"tenant/push-create", a2a.MethodCreateTaskPushNotificationConfig, &a2a.TaskPushNotificationConfig{Tenant: "acme", TaskID: "t", URL: "https://h"}, a2a.CodeUnsupportedOperation, "tenant"},
		{"tenant/push-get", a2a.MethodGetTaskPushNotificationConfig, &a2a.GetTaskPushNotificationConfigRequest{Tenant: "acme", TaskID: "t", ID: "c"}, a2a.CodeUnsupportedOperation, "tenant"},
		{"tenant/push-list", a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{Tenant: "acme", TaskID: "t"}, a2a.CodeUnsupportedOperation, "tenant"},
		{"tenant/push-delete", a2a.MethodDeleteTaskPushNotificationConfig, &a2a.DeleteTaskPushNotificationConfigRequest{Tenant: "acme", TaskID: "t", ID: "c"}, a2a.CodeUnsupportedOperation, "tenant"},
		{"tenant/extended-card", a2a.MethodGetExtendedAgentCard, &a2a.GetExtendedAgentCardRequest{Tenant: "acme"}, a2a.CodeUnsupportedOperation, "tenant"},
		{"tenant/send-push-config", a2a.MethodSendMessage, &a2a.SendMessageRequest{Message: agentMessage(), Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Tenant: "acme", URL: "https://h"}}}, a2a.CodeUnsupportedOperation, "configuration.taskPushNotificationConfig.tenant"},
		{"send-push-config/other-task", a2a.MethodSendMessage, &a2a.SendMessageRequest{Message: agentMessage(), Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{TaskID: "task-2", URL: "https://h"}}}, a2a.CodeUnsupportedOperation, "configuration.taskPushNotificationConfig.taskId"},
		{"push-list/page-size", a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t", PageSize: 10}, a2a.CodeUnsupportedOperation, "pageSize"},
		{"push-list/page-token", a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t", PageToken: "p2"}, a2a.CodeUnsupportedOperation, "pageToken"},
		{"text/media-type", a2a.MethodSendMessage, send(msg(a2a.Part{Content: a2a.Text("# hi"), MediaType: "text/markdown"})), a2a.CodeUnsupportedOperation, "message.parts[1].mediaType"},
		{"text/filename", a2a.MethodSendMessage, send(msg(a2a.Part{Content: a2a.Text("hi"), Filename: "hi.txt"})), a2a.CodeUnsupportedOperation, "message.parts[1].filename"},
		{"data/media-type", a2a.MethodSendMessage, send(msg(a2a.Part{Content: a2a.Data(`{}`), MediaType: "application/vnd.example+json"})), a2a.CodeUnsupportedOperation, "message.parts[1].mediaType"},
		{"data/filename", a2a.MethodSendMessage, send(msg(a2a.Part{Content: a2a.Data(`{}`), Filename: "d.json"})), a2a.CodeUnsupportedOperation, "message.parts[1].filename"},
		{"data/compat-marker-on-object", a2a.MethodSendMessage, send(msg(a2a.Part{Content: a2a.Data(`{"value":1}`), Metadata: map[string]any{v03.DataPartCompatKey: true}})), a2a.CodeUnsupportedOperation, "message.parts[1].metadata.data_part_compat"},
		{"data/compat-marker-on-wrapped", a2a.MethodSendMessage, send(msg(a2a.Part{Content: a2a.Data(`[1]`), Metadata: map[string]any{v03.DataPartCompatKey: false}})), a2a.CodeUnsupportedOperation, "message.parts[1].metadata.data_part_compat"},
		{"data/invalid", a2a.MethodSendMessage, send(msg(a2a.Part{Content: a2a.Data(`[1,`)})), a2a.CodeInvalidParams, "message.parts[1].data"},
		{"part/no-content", a2a.MethodSendMessage, send(msg(a2a.Part{Filename: "f"})), a2a.CodeInvalidParams, "message.parts[1]"},
		{"role/unspecified", a2a.MethodSendMessage, send(&a2a.Message{MessageID: "m", Parts: []a2a.Part{a2a.TextPart("x")}}), a2a.CodeInvalidParams, "message.role"},
		{"nil-request", a2a.MethodGetTask, (*a2a.GetTaskRequest)(nil), a2a.CodeInvalidParams, ""},
		{"wrong-request", a2a.MethodGetTask, &a2a.CancelTaskRequest{ID: "t"}, a2a.CodeInvalidParams, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, params, err := v03.FromV1Request(c.op, c.req)
			if err == nil {
				raw, _ := json.Marshal(params)
				t.Fatalf("no error; v0.3 params %s", raw)
			}
			wantRefusal(t, err, c.code, c.field)
		})
	}

	results := []struct {
		name  string
		op    string
		res   any
		code  a2a.Code
		field string
	}{
		{"push-list/next-page", a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsResponse{Configs: []a2a.TaskPushNotificationConfig{*pushConfig()}, NextPageToken: "n"}, a2a.CodeUnsupportedOperation, "nextPageToken"},
		{"push-list/tenant", a2a.MethodListTaskPushNotificationConfigs, &a2a.ListTaskPushNotificationConfigsResponse{Configs: []a2a.TaskPushNotificationConfig{*pushConfig(), {Tenant: "acme", URL: "https://h"}}}, a2a.CodeUnsupportedOperation, "configs[1].tenant"},
		{"push-get/tenant", a2a.MethodGetTaskPushNotificationConfig, &a2a.TaskPushNotificationConfig{Tenant: "acme", URL: "https://h"}, a2a.CodeUnsupportedOperation, "tenant"},
		{"task/state", a2a.MethodGetTask, &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: 42}}, a2a.CodeInvalidParams, "status.state"},
		{"task/timestamp", a2a.MethodGetTask, &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: 1, Timestamp: a2a.Timestamp{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}}, a2a.CodeInvalidParams, "status.timestamp"},
		{"task/history-role", a2a.MethodGetTask, &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: 1}, History: []a2a.Message{*agentMessage(), {MessageID: "m", Role: 7}}}, a2a.CodeInvalidParams, "history[1].role"},
		{"task/artifact-part", a2a.MethodGetTask, &a2a.Task{ID: "t", Status: a2a.TaskStatus{State: 1}, Artifacts: []a2a.Artifact{{ArtifactID: "a", Parts: []a2a.Part{{Content: a2a.Text("x"), Filename: "x.txt"}}}}}, a2a.CodeUnsupportedOperation, "artifacts[0].parts[0].filename"},
		{"status-message-part", a2a.MethodSendStreamingMessage, &a2a.StreamResponse{Event: &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: 2, Message: msg(a2a.Part{Content: a2a.Text("x"), MediaType: "text/html"})}}}, a2a.CodeUnsupportedOperation, "status.message.parts[1].mediaType"},
		{"artifact-update-part", a2a.MethodSubscribeToTask, &a2a.StreamResponse{Event: &a2a.TaskArtifactUpdateEvent{Artifact: a2a.Artifact{Parts: []a2a.Part{{}}}}}, a2a.CodeInvalidParams, "artifact.parts[0]"},
		{"stream/empty", a2a.MethodSendStreamingMessage, &a2a.StreamResponse{}, a2a.CodeInvalidParams, ""},
		{"send/empty", a2a.MethodSendMessage, &a2a.SendMessageResponse{}, a2a.CodeInvalidParams, ""},
		{"card/no-interface", a2a.MethodGetExtendedAgentCard, &a2a.AgentCard{Name: "n"}, a2a.CodeInvalidParams, "supportedInterfaces"},
		{"card/tenants-only", a2a.MethodGetExtendedAgentCard, withCard(func(c *a2a.AgentCard) {
			for i := range c.SupportedInterfaces {
				c.SupportedInterfaces[i].Tenant = "acme"
			}
		}), a2a.CodeUnsupportedOperation, "supportedInterfaces"},
		{"card/api-key-location", a2a.MethodGetExtendedAgentCard, withCard(func(c *a2a.AgentCard) {
			c.SecuritySchemes["key"] = a2a.SecurityScheme{APIKey: &a2a.APIKeySecurityScheme{Location: "body", Name: "k"}}
		}), a2a.CodeUnsupportedOperation, `securitySchemes["key"].apiKeySecurityScheme.location`},
		{"card/device-code", a2a.MethodGetExtendedAgentCard, withCard(func(c *a2a.AgentCard) {
			c.SecuritySchemes["device"] = a2a.SecurityScheme{OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{DeviceCode: &a2a.DeviceCodeOAuthFlow{DeviceAuthorizationURL: "https://a/d", TokenURL: "https://a/t"}}}}
		}), a2a.CodeUnsupportedOperation, `securitySchemes["device"].oauth2SecurityScheme.flows.deviceCode`},
		{"card/empty-scheme", a2a.MethodGetExtendedAgentCard, withCard(func(c *a2a.AgentCard) { c.SecuritySchemes["none"] = a2a.SecurityScheme{} }), a2a.CodeInvalidParams, `securitySchemes["none"]`},
		{"ListTasks", a2a.MethodListTasks, &a2a.ListTasksResponse{}, a2a.CodeUnsupportedOperation, "method"},
	}
	for _, c := range results {
		t.Run("result/"+c.name, func(t *testing.T) {
			res, err := v03.FromV1Result(c.op, c.res)
			if err == nil {
				raw, _ := json.Marshal(res)
				t.Fatalf("no error; v0.3 result %s", raw)
			}
			wantRefusal(t, err, c.code, c.field)
		})
	}
}

// TestRefusedToV1: v0.3 values that v1.0 cannot express, or that are not
// v0.3, are errors naming the field.
func TestRefusedToV1(t *testing.T) {
	const okMsg = `{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}`
	withPart := func(p string) string {
		return `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"},` + p + `]}}`
	}
	requests := []struct {
		name, method, params string
		code                 a2a.Code
		field                string
	}{
		{"method", "tasks/list", `{}`, a2a.CodeMethodNotFound, ""},
		{"no-params", v03.MethodMessageSend, ``, a2a.CodeInvalidParams, "params"},
		{"null-params", v03.MethodTasksGet, `null`, a2a.CodeInvalidParams, "params"},
		{"array-params", v03.MethodTasksGet, `["t"]`, a2a.CodeInvalidParams, "params"},
		{"no-message", v03.MethodMessageSend, `{}`, a2a.CodeInvalidParams, "message"},
		{"wrong-shape", v03.MethodTasksGet, `{"id":7}`, a2a.CodeInvalidParams, "id"},
		{"repeated-member", v03.MethodTasksGet, `{"id":"a","id":"b"}`, a2a.CodeInvalidParams, "id"},
		{"case-variant", v03.MethodTasksCancel, `{"ID":"a"}`, a2a.CodeInvalidParams, "ID"},
		{"part/kind", v03.MethodMessageSend, withPart(`{"kind":"image","url":"x"}`), a2a.CodeInvalidParams, "message.parts[1].kind"},
		{"part/no-kind", v03.MethodMessageSend, withPart(`{"text":"x"}`), a2a.CodeInvalidParams, "message.parts[1].kind"},
		{"part/no-text", v03.MethodMessageSend, withPart(`{"kind":"text"}`), a2a.CodeInvalidParams, "message.parts[1].text"},
		{"file/none", v03.MethodMessageSend, withPart(`{"kind":"file"}`), a2a.CodeInvalidParams, "message.parts[1].file"},
		{"file/both", v03.MethodMessageSend, withPart(`{"kind":"file","file":{"bytes":"AA==","uri":"https://x"}}`), a2a.CodeInvalidParams, "message.parts[1].file"},
		{"file/neither", v03.MethodMessageSend, withPart(`{"kind":"file","file":{"name":"f"}}`), a2a.CodeInvalidParams, "message.parts[1].file"},
		{"file/base64", v03.MethodMessageSend, withPart(`{"kind":"file","file":{"bytes":"not base64!"}}`), a2a.CodeInvalidParams, "message.parts[1].file.bytes"},
		{"data/array", v03.MethodMessageSend, withPart(`{"kind":"data","data":[1,2]}`), a2a.CodeInvalidParams, "message.parts[1].data"},
		{"data/null", v03.MethodMessageSend, withPart(`{"kind":"data","data":null}`), a2a.CodeInvalidParams, "message.parts[1].data"},
		{"data/compat-shape", v03.MethodMessageSend, withPart(`{"kind":"data","data":{"value":1,"more":2},"metadata":{"data_part_compat":true}}`), a2a.CodeInvalidParams, "message.parts[1].data"},
		{"role", v03.MethodMessageSend, `{"message":{"kind":"message","messageId":"m","role":"system","parts":[]}}`, a2a.CodeInvalidParams, "message.role"},
		{"message-kind", v03.MethodMessageSend, `{"message":{"kind":"task","messageId":"m","role":"user","parts":[]}}`, a2a.CodeInvalidParams, "message.kind"},
		{"push/schemes", v03.MethodPushConfigSet, `{"taskId":"t","pushNotificationConfig":{"url":"https://h","authentication":{"schemes":["Bearer","Basic"]}}}`, a2a.CodeUnsupportedOperation, "pushNotificationConfig.authentication.schemes"},
		{"send-push/schemes", v03.MethodMessageSend, `{"message":` + okMsg + `,"configuration":{"pushNotificationConfig":{"url":"https://h","authentication":{"schemes":["Bearer","Basic"]}}}}`, a2a.CodeUnsupportedOperation, "configuration.pushNotificationConfig.authentication.schemes"},
	}
	for _, c := range requests {
		t.Run(c.name, func(t *testing.T) {
			_, req, err := v03.ToV1Request(c.method, json.RawMessage(c.params))
			if err == nil {
				t.Fatalf("no error; v1.0 request %s", canonical(t, req))
			}
			if c.code == a2a.CodeMethodNotFound {
				if a2a.AsError(err).Code != c.code {
					t.Errorf("error %v, want %v", err, c.code)
				}
				return
			}
			wantRefusal(t, err, c.code, c.field)
		})
	}

	const status = `"status":{"state":"working"}`
	results := []struct {
		name, method, result string
		code                 a2a.Code
		field                string
	}{
		{"event-kind", v03.MethodMessageStream, `{"kind":"progress"}`, a2a.CodeInvalidParams, "kind"},
		{"event-no-kind", v03.MethodMessageStream, `{"taskId":"t"}`, a2a.CodeInvalidParams, "kind"},
		{"send-result/update", v03.MethodMessageSend, `{"kind":"status-update","taskId":"t","contextId":"c",` + status + `,"final":false}`, a2a.CodeInvalidParams, "kind"},
		{"state", v03.MethodTasksGet, `{"kind":"task","id":"t","contextId":"c","status":{"state":"paused"}}`, a2a.CodeInvalidParams, "status.state"},
		{"timestamp", v03.MethodTasksGet, `{"kind":"task","id":"t","contextId":"c","status":{"state":"working","timestamp":"yesterday"}}`, a2a.CodeInvalidParams, "status.timestamp"},
		{"task-kind", v03.MethodTasksGet, `{"kind":"message","id":"t","contextId":"c",` + status + `}`, a2a.CodeInvalidParams, "kind"},
		{"history-part", v03.MethodTasksGet, `{"kind":"task","id":"t","contextId":"c",` + status + `,"history":[` + okMsg + `,{"kind":"message","messageId":"m2","role":"agent","parts":[{"kind":"file","file":{}}]}]}`, a2a.CodeInvalidParams, "history[1].parts[0].file"},
		{"status-message-role", v03.MethodTasksResubscribe, `{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working","message":{"kind":"message","messageId":"m","role":"bot","parts":[]}},"final":false}`, a2a.CodeInvalidParams, "status.message.role"},
		{"artifact-part", v03.MethodMessageStream, `{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"kind":"data","data":"x"}]}}`, a2a.CodeInvalidParams, "artifact.parts[0].data"},
		{"push-list/schemes", v03.MethodPushConfigList, `[{"taskId":"t","pushNotificationConfig":{"url":"https://h"}},{"taskId":"t","pushNotificationConfig":{"url":"https://h","authentication":{"schemes":["a","b"]}}}]`, a2a.CodeUnsupportedOperation, "[1].pushNotificationConfig.authentication.schemes"},
		{"result-shape", v03.MethodTasksGet, `[]`, a2a.CodeInvalidParams, "result"},
		{"card/scheme-type", v03.MethodGetAuthenticatedExtendedCard, `{"url":"https://a","securitySchemes":{"x":{"type":"magic"}}}`, a2a.CodeInvalidParams, `securitySchemes["x"].type`},
		{"card/oauth2-no-flows", v03.MethodGetAuthenticatedExtendedCard, `{"url":"https://a","securitySchemes":{"o":{"type":"oauth2"}}}`, a2a.CodeInvalidParams, `securitySchemes["o"].flows`},
		{"card/oauth2-empty-flows", v03.MethodGetAuthenticatedExtendedCard, `{"url":"https://a","securitySchemes":{"o":{"type":"oauth2","flows":{}}}}`, a2a.CodeInvalidParams, `securitySchemes["o"].flows`},
		{"card/oauth2-two-flows", v03.MethodGetAuthenticatedExtendedCard, `{"url":"https://a","securitySchemes":{"o":{"type":"oauth2","flows":{"implicit":{"authorizationUrl":"https://a/a","scopes":{}},"password":{"tokenUrl":"https://a/t","scopes":{}}}}}}`, a2a.CodeUnsupportedOperation, `securitySchemes["o"].flows`},
		{"card/v1-scheme-two-members", v03.MethodGetAuthenticatedExtendedCard, `{"url":"https://a","securitySchemes":{"x":{"type":"mutualTLS","mtlsSecurityScheme":{},"httpAuthSecurityScheme":{"scheme":"Basic"}}}}`, a2a.CodeInvalidParams, `securitySchemes["x"]`},
	}
	for _, c := range results {
		t.Run("result/"+c.name, func(t *testing.T) {
			op, _ := v03.ToV1Method(c.method)
			res, err := v03.ToV1Result(op, json.RawMessage(c.result))
			if err == nil {
				t.Fatalf("no error; v1.0 result %s", canonical(t, res))
			}
			wantRefusal(t, err, c.code, c.field)
		})
	}
}

// TestDropped: the v0.3 members that v0.3 → v1.0 drops, each where v0.3
// peers ignore them or v1.0 removed them.
func TestDropped(t *testing.T) {
	for method, params := range map[string]string{
		v03.MethodTasksGet:         `{"id":"t","historyLength":1,"metadata":{"a":1}}`,
		v03.MethodTasksResubscribe: `{"id":"t","metadata":{"a":1}}`,
		v03.MethodPushConfigGet:    `{"id":"t","pushNotificationConfigId":"c","metadata":{"a":1}}`,
		v03.MethodPushConfigList:   `{"id":"t","metadata":{"a":1}}`,
		v03.MethodPushConfigDelete: `{"id":"t","pushNotificationConfigId":"c","metadata":{"a":1}}`,
	} {
		op, req, err := v03.ToV1Request(method, json.RawMessage(params))
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		_, back, err := v03.FromV1Request(op, req)
		if err != nil {
			t.Fatal(err)
		}
		var p map[string]any
		raw, _ := json.Marshal(back)
		if json.Unmarshal(raw, &p); p["metadata"] != nil || p["id"] != "t" {
			t.Errorf("%s: %s came back as %s", method, params, raw)
		}
	}

	var c v03.AgentCard
	if err := json.Unmarshal([]byte(`{"url":"https://a","capabilities":{"streaming":true,"stateTransitionHistory":true}}`), &c); err != nil {
		t.Fatal(err)
	}
	v1, err := v03.ToV1AgentCard(&c)
	if err != nil {
		t.Fatal(err)
	}
	dual, err := v03.FromV1AgentCard(v1)
	if err != nil {
		t.Fatal(err)
	}
	if dual.Capabilities.StateTransitionHistory != nil || !*dual.Capabilities.Streaming {
		t.Errorf("capabilities %+v", dual.Capabilities)
	}
}

// TestTimestamps: v0.3 times with an offset are converted to UTC, times
// without one (the v0.3 specification's examples) are taken as UTC, and
// both keep milliseconds.
func TestTimestamps(t *testing.T) {
	for in, want := range map[string]string{
		"2025-04-02T16:59:25.331Z":         "2025-04-02T16:59:25.331Z",
		"2025-04-02T18:59:25.331844+02:00": "2025-04-02T16:59:25.331Z",
		"2025-04-02T16:59:25.331844":       "2025-04-02T16:59:25.331Z",
		"2025-04-02T16:59:25":              "2025-04-02T16:59:25.000Z",
	} {
		v1, err := v03.ToV1Task(&v03.Task{ID: "t", Status: v03.TaskStatus{State: v03.TaskStateWorking, Timestamp: in}})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		back, err := v03.FromV1Task(v1)
		if err != nil {
			t.Fatal(err)
		}
		if back.Status.Timestamp != want {
			t.Errorf("%s came back as %s, want %s", in, back.Status.Timestamp, want)
		}
	}
}

// TestCardInterfaces: how a card's interfaces map between v0.3's main URL
// with additionalInterfaces and v1.0's list.
func TestCardInterfaces(t *testing.T) {
	read := func(s string) *a2a.AgentCard {
		t.Helper()
		var c v03.AgentCard
		if err := json.Unmarshal([]byte(s), &c); err != nil {
			t.Fatal(err)
		}
		v1, err := v03.ToV1AgentCard(&c)
		if err != nil {
			t.Fatal(err)
		}
		return v1
	}
	ifs := func(v1 *a2a.AgentCard) string { return canonical(t, v1.SupportedInterfaces) }

	// The main interface listed again (as v0.3 advises) is kept once;
	// preferredTransport absent is JSON-RPC.
	v1 := read(`{"url":"https://a/rpc","additionalInterfaces":[{"url":"https://a/rpc","transport":"JSONRPC"},{"url":"https://a/rest","transport":"HTTP+JSON"},{"url":"https://a/rest","transport":"HTTP+JSON"}]}`)
	if got, want := ifs(v1), `[{"protocolBinding":"JSONRPC","protocolVersion":"0.3","url":"https://a/rpc"},{"protocolBinding":"HTTP+JSON","protocolVersion":"0.3","url":"https://a/rest"}]`; got != want {
		t.Errorf("interfaces %s, want %s", got, want)
	}

	// A card that prefers gRPC keeps that order in v1.0; served back to
	// v0.3 clients, its main URL is the JSON-RPC one.
	v1 = read(`{"url":"grpc.example.com:443","preferredTransport":"GRPC","additionalInterfaces":[{"url":"https://a/rpc","transport":"JSONRPC"}]}`)
	if v1.SupportedInterfaces[0].ProtocolBinding != a2a.BindingGRPC {
		t.Errorf("interfaces %s: gRPC first", ifs(v1))
	}
	dual, err := v03.FromV1AgentCard(v1)
	if err != nil {
		t.Fatal(err)
	}
	if dual.URL != "https://a/rpc" || dual.PreferredTransport != "JSONRPC" || len(dual.AdditionalInterfaces) != 1 || dual.AdditionalInterfaces[0].Transport != "GRPC" {
		t.Errorf("dual card: %s %s %+v", dual.URL, dual.PreferredTransport, dual.AdditionalInterfaces)
	}

	// Interfaces declared for v0.3 are the only ones a v0.3 client sees;
	// without a JSON-RPC one, the first is the main one.
	dual, err = v03.FromV1AgentCard(&a2a.AgentCard{Name: "n", SupportedInterfaces: []a2a.AgentInterface{
		{URL: "https://a/v1/rpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
		{URL: "https://a/v03/rest", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "0.3"},
		{URL: "https://a/v03/grpc", ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "0.3.0"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if dual.URL != "https://a/v03/rest" || dual.PreferredTransport != "HTTP+JSON" || len(dual.AdditionalInterfaces) != 1 || dual.AdditionalInterfaces[0].URL != "https://a/v03/grpc" {
		t.Errorf("dual card: %s %s %+v", dual.URL, dual.PreferredTransport, dual.AdditionalInterfaces)
	}
}

// TestExtendedCardFlag: v0.3's supportsAuthenticatedExtendedCard is v1.0's
// capabilities.extendedAgentCard, absent, true or false.
func TestExtendedCardFlag(t *testing.T) {
	for _, v := range []*bool{nil, a2a.Ptr(true), a2a.Ptr(false)} {
		c := v03.AgentCard{URL: "https://a", SupportsAuthenticatedExtendedCard: v}
		v1, err := v03.ToV1AgentCard(&c)
		if err != nil {
			t.Fatal(err)
		}
		got := v1.Capabilities.ExtendedAgentCard
		if (got == nil) != (v == nil) || (got != nil && *got != *v) {
			t.Errorf("%v: extendedAgentCard %v", v, got)
		}
	}
}
