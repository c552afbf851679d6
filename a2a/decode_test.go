package a2a_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/goa2a/a2a/a2a"
)

func TestUnmarshalLenient(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string // the camelCase equivalent
	}{
		{"snake_case names",
			`{"message":{"message_id":"m","context_id":"c","task_id":"t","role":"ROLE_USER","reference_task_ids":["x"],"parts":[{"text":"hi","media_type":"text/plain"}]},"configuration":{"history_length":2,"return_immediately":true,"accepted_output_modes":["text/plain"]}}`,
			`{"message":{"messageId":"m","contextId":"c","taskId":"t","role":"ROLE_USER","referenceTaskIds":["x"],"parts":[{"text":"hi","mediaType":"text/plain"}]},"configuration":{"historyLength":2,"returnImmediately":true,"acceptedOutputModes":["text/plain"]}}`},
		{"free-form values keep their keys",
			`{"message":{"message_id":"m","role":"ROLE_USER","metadata":{"trace_id":"x"},"parts":[{"data":{"file_name":"a"}}]}}`,
			`{"message":{"messageId":"m","role":"ROLE_USER","metadata":{"trace_id":"x"},"parts":[{"data":{"file_name":"a"}}]}}`},
		{"quoted int32",
			`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"historyLength":"3"}}`,
			`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"historyLength":3}}`},
		{"underscore only in a value",
			`{"message":{"messageId":"m_1","role":"ROLE_USER","parts":[{"text":"snake_case"}]}}`,
			`{"message":{"messageId":"m_1","role":"ROLE_USER","parts":[{"text":"snake_case"}]}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got, want a2a.SendMessageRequest
			if err := a2a.Unmarshal([]byte(c.in), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(c.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestUnmarshalLenientCardMapKeys(t *testing.T) {
	in := `{"name":"n","description":"d","version":"1","supported_interfaces":[{"url":"u","protocol_binding":"JSONRPC","protocol_version":"1.0"}],
	"capabilities":{"push_notifications":true},"default_input_modes":[],"default_output_modes":[],"skills":[],
	"security_schemes":{"my_oauth":{"oauth2_security_scheme":{"flows":{"client_credentials":{"token_url":"t","scopes":{"read_all":"read"}}}}}},
	"security_requirements":[{"schemes":{"my_oauth":{"list":["read_all"]}}}]}`
	var c a2a.AgentCard
	if err := a2a.Unmarshal([]byte(in), &c); err != nil {
		t.Fatal(err)
	}
	s, ok := c.SecuritySchemes["my_oauth"]
	if !ok || s.OAuth2 == nil || s.OAuth2.Flows.ClientCredentials == nil || s.OAuth2.Flows.ClientCredentials.Scopes["read_all"] != "read" {
		t.Fatalf("schemes %+v", c.SecuritySchemes)
	}
	if !c.Capabilities.SupportsPush() || len(c.SupportedInterfaces) != 1 || c.SupportedInterfaces[0].ProtocolBinding != "JSONRPC" {
		t.Fatalf("card %+v", c)
	}
	if got := c.SecurityRequirements[0].Schemes["my_oauth"].List; len(got) != 1 || got[0] != "read_all" {
		t.Fatalf("requirements %+v", c.SecurityRequirements)
	}
}

func TestUnmarshalLenientRejects(t *testing.T) {
	for _, in := range []string{
		`{"configuration":{"historyLength":"three"}}`,
		`{"message":{"message_id":`,
	} {
		var r a2a.SendMessageRequest
		if err := a2a.Unmarshal([]byte(in), &r); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func BenchmarkUnmarshalCamel(b *testing.B) {
	body := []byte(`{"message":{"messageId":"9f3c2e1a-0000-4000-8000-000000000001","role":"ROLE_USER","parts":[{"text":"Run the unit tests for payments-api at commit 9f3c2e1"}]},"configuration":{"historyLength":3}}`)
	b.ReportAllocs()
	for b.Loop() {
		var r a2a.SendMessageRequest
		if err := a2a.Unmarshal(body, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStdUnmarshal(b *testing.B) {
	body := []byte(`{"message":{"messageId":"9f3c2e1a-0000-4000-8000-000000000001","role":"ROLE_USER","parts":[{"text":"Run the unit tests for payments-api at commit 9f3c2e1"}]},"configuration":{"historyLength":3}}`)
	b.ReportAllocs()
	for b.Loop() {
		var r a2a.SendMessageRequest
		if err := json.Unmarshal(body, &r); err != nil {
			b.Fatal(err)
		}
	}
}
