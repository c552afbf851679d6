package v03_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// canonical returns the JSON of v with object keys sorted and numbers
// written exactly, so that two encodings of one value compare equal and a
// changed digit does not.
func canonical(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encoding %T: %v", v, err)
	}
	return canonicalJSON(t, b)
}

func canonicalJSON(t testing.TB, b []byte) string {
	t.Helper()
	x := decodeJSON(t, b)
	out, err := json.Marshal(exactNumbers(x))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func decodeJSON(t testing.TB, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return x
}

func exactNumbers(x any) any {
	switch v := x.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = exactNumbers(e)
		}
	case []any:
		for i, e := range v {
			v[i] = exactNumbers(e)
		}
	case json.Number:
		r, ok := new(big.Rat).SetString(string(v))
		if !ok {
			return "bad number " + string(v)
		}
		return "#" + r.RatString()
	}
	return x
}

// wantRefusal checks that err is an *a2a.Error of the given kind whose
// first violation names field.
func wantRefusal(t *testing.T, err error, code a2a.Code, field string) {
	t.Helper()
	var e *a2a.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want an *a2a.Error %v naming %q", err, err, code, field)
	}
	if e.Code != code {
		t.Errorf("code = %v, want %v (%v)", e.Code, code, e)
	}
	if len(e.Violations) == 0 || e.Violations[0].Field != field {
		t.Errorf("violations = %+v, want the field %q (%v)", e.Violations, field, e)
	}
}

// Hand-built v1.0 values that v0.3 can express, with every member set
// somewhere.

var ts = a2a.TimestampOf(time.Date(2026, 10, 6, 9, 0, 1, 123_000_000, time.UTC))

var allBytes = func() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}()

func metadata() map[string]any {
	return map[string]any{"trace": "abc-123", "attempt": 2.0, "flags": []any{true, false}, "nested": map[string]any{"k": "v", "null": nil}}
}

// parts are parts of every kind v0.3 can express.
func parts() []a2a.Part {
	return []a2a.Part{
		a2a.TextPart("plain text"),
		{Content: a2a.Text(""), Metadata: map[string]any{"lang": "en"}},
		{Content: a2a.Text("escapes <&> \u2028 é ✓")},
		{Content: a2a.Raw(allBytes), Filename: "all.bin", MediaType: "application/octet-stream", Metadata: map[string]any{"size": 256.0}},
		{Content: a2a.Raw{}},
		{Content: a2a.URL("https://files.example.com/report.pdf"), Filename: "report.pdf", MediaType: "application/pdf"},
		{Content: a2a.URL("https://files.example.com/bare")},
		{Content: a2a.Data(`{"passed":11,"ratio":0.9166,"big":9007199254740993,"nested":{"list":[1,"two",true,null,{}]}}`), Metadata: map[string]any{"schema": "v2"}},
		{Content: a2a.Data(`{}`)},
		// Not objects: wrapped as {"value": ...} on the v0.3 side.
		{Content: a2a.Data(`[1,"a",null]`)},
		{Content: a2a.Data(`"just a string"`), Metadata: map[string]any{"k": "v"}},
		{Content: a2a.Data(`null`)},
		{Content: a2a.Data(`12345678901234567890`)},
	}
}

func userMessage() *a2a.Message {
	return &a2a.Message{
		MessageID: "m-user", ContextID: "ctx-1", TaskID: "task-1", Role: a2a.RoleUser,
		Parts: parts(), Metadata: metadata(),
		Extensions:       []string{"https://ext.example.com/trace/v1"},
		ReferenceTaskIDs: []string{"task-0", "task-00"},
	}
}

func agentMessage() *a2a.Message {
	return &a2a.Message{MessageID: "m-agent", ContextID: "ctx-1", TaskID: "task-1", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("working on it")}}
}

func artifact() *a2a.Artifact {
	return &a2a.Artifact{
		ArtifactID: "art-1", Name: "report", Description: "the report", Parts: parts(),
		Metadata: map[string]any{"size": 3.0}, Extensions: []string{"https://ext.example.com/a/v1"},
	}
}

func task() *a2a.Task {
	return &a2a.Task{
		ID: "task-1", ContextID: "ctx-1",
		Status:    a2a.TaskStatus{State: a2a.TaskStateWorking, Message: agentMessage(), Timestamp: ts},
		History:   []a2a.Message{*userMessage(), *agentMessage()},
		Artifacts: []a2a.Artifact{*artifact()},
		Metadata:  metadata(),
	}
}

func pushConfig() *a2a.TaskPushNotificationConfig {
	return &a2a.TaskPushNotificationConfig{
		ID: "cfg-1", TaskID: "task-1", URL: "https://hooks.example.com/a2a", Token: "tok-1",
		Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"},
	}
}

func scopes() map[string]string {
	return map[string]string{"read": "read tasks", "write": "send messages"}
}

// card is a v1.0 card with every member v0.3 can carry alongside.
func card() *a2a.AgentCard {
	reqs := []a2a.SecurityRequirement{
		{Schemes: map[string]a2a.StringList{"oauth": {List: []string{"read", "write"}}, "mtls": {}}},
		{Schemes: map[string]a2a.StringList{"key": {List: []string{}}}},
	}
	return &a2a.AgentCard{
		Name: "everything", Description: "a card with every member",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "https://agent.example.com/a2a/rest", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"},
			{URL: "https://agent.example.com/a2a/jsonrpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
			{URL: "agent.example.com:443", ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"},
			{URL: "https://agent.example.com/acme/jsonrpc", ProtocolBinding: a2a.BindingJSONRPC, Tenant: "acme", ProtocolVersion: "1.0"},
		},
		Provider:         &a2a.AgentProvider{URL: "https://example.com", Organization: "Example"},
		Version:          "2.1.0",
		DocumentationURL: a2a.Ptr("https://docs.example.com"),
		Capabilities: a2a.AgentCapabilities{
			Streaming: a2a.Ptr(true), PushNotifications: a2a.Ptr(false), ExtendedAgentCard: a2a.Ptr(true),
			Extensions: []a2a.AgentExtension{
				{URI: "https://ext.example.com/trace/v1", Description: "tracing", Required: true, Params: map[string]any{"level": "debug", "sample": 0.5}},
				{URI: "https://ext.example.com/bare/v1"},
			},
		},
		SecuritySchemes: map[string]a2a.SecurityScheme{
			"key":  {APIKey: &a2a.APIKeySecurityScheme{Description: "an API key", Location: "header", Name: "X-API-Key"}},
			"q":    {APIKey: &a2a.APIKeySecurityScheme{Location: "query", Name: "key"}},
			"c":    {APIKey: &a2a.APIKeySecurityScheme{Location: "cookie", Name: ""}},
			"http": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Description: "bearer", Scheme: "Bearer", BearerFormat: "JWT"}},
			"oauth": {OAuth2: &a2a.OAuth2SecurityScheme{Description: "code", OAuth2MetadataURL: "https://auth.example.com/.well-known/oauth-authorization-server",
				Flows: a2a.OAuthFlows{AuthorizationCode: &a2a.AuthorizationCodeOAuthFlow{AuthorizationURL: "https://auth.example.com/authorize", TokenURL: "https://auth.example.com/token", RefreshURL: "https://auth.example.com/refresh", Scopes: scopes(), PKCERequired: true}}}},
			"cc":       {OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{ClientCredentials: &a2a.ClientCredentialsOAuthFlow{TokenURL: "https://auth.example.com/token", RefreshURL: "https://auth.example.com/refresh", Scopes: scopes()}}}},
			"implicit": {OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{Implicit: &a2a.ImplicitOAuthFlow{AuthorizationURL: "https://auth.example.com/authorize", RefreshURL: "https://auth.example.com/refresh", Scopes: scopes()}}}},
			"password": {OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{Password: &a2a.PasswordOAuthFlow{TokenURL: "https://auth.example.com/token", RefreshURL: "https://auth.example.com/refresh", Scopes: scopes()}}}},
			"noscopes": {OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{ClientCredentials: &a2a.ClientCredentialsOAuthFlow{TokenURL: "https://auth.example.com/token"}}}},
			"oidc":     {OpenIDConnect: &a2a.OpenIDConnectSecurityScheme{Description: "oidc", OpenIDConnectURL: "https://auth.example.com/.well-known/openid-configuration"}},
			"mtls":     {MutualTLS: &a2a.MutualTLSSecurityScheme{Description: "client certificates"}},
			"mtls2":    {MutualTLS: &a2a.MutualTLSSecurityScheme{}},
		},
		SecurityRequirements: reqs,
		DefaultInputModes:    []string{"text/plain", "application/json"},
		DefaultOutputModes:   []string{"text/plain"},
		Skills: []a2a.AgentSkill{
			{ID: "run", Name: "Run", Description: "runs things", Tags: []string{"ci", "tests"},
				Examples: []string{"run the tests"}, InputModes: []string{"text/plain"}, OutputModes: []string{"application/json"},
				SecurityRequirements: reqs[:1]},
			{ID: "bare", Name: "Bare", Description: "no tags", Tags: nil},
		},
		Signatures: []a2a.AgentCardSignature{
			{Protected: "eyJhbGciOiJFUzI1NiJ9", Signature: "c2lnbmF0dXJl", Header: map[string]any{"kid": "key-1"}},
		},
		IconURL: a2a.Ptr("https://example.com/icon.png"),
	}
}
