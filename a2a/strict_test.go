package a2a_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/jsontest"
)

// TestCheckMembers: duplicate names and names that match a field only when
// case is ignored are refused, at any depth, naming where; free names
// (metadata, data) may differ in case but not repeat; unknown and valid
// documents pass.
func TestCheckMembers(t *testing.T) {
	for _, tc := range []struct {
		name, doc, field string // field "" means accepted
	}{
		{"valid", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, ""},
		{"unknown member", `{"message":{"messageId":"m","extra":1}}`, ""},
		{"duplicate", `{"message":{"messageId":"a","messageId":"b"}}`, "message.messageId"},
		{"case variant", `{"message":{"MessageId":"a"}}`, "message.MessageId"},
		{"case duplicate", `{"message":{"messageId":"a","MESSAGEID":"b"}}`, "message.MESSAGEID"},
		{"in a part", `{"message":{"parts":[{"text":"a"},{"Text":"b"}]}}`, "message.parts[1].Text"},
		{"in a part twice", `{"message":{"parts":[{"text":"a","text":"b"}]}}`, "message.parts[0].text"},
		{"metadata case differs", `{"metadata":{"k":1,"K":2}}`, ""},
		{"metadata twice", `{"metadata":{"k":1,"k":2}}`, "metadata.k"},
		{"inside data", `{"message":{"parts":[{"data":{"x":{"y":1,"y":2}}}]}}`, "message.parts[0].data.x.y"},
		{"escaped name", `{"message":{"messageId":"a","message\u0049d":"b"}}`, "message.messageId"},
		{"configuration", `{"configuration":{"returnImmediately":true,"ReturnImmediately":false}}`, "configuration.ReturnImmediately"},
		{"not JSON", `{"message":`, ""},
	} {
		var req a2a.SendMessageRequest
		err := a2a.CheckMembers([]byte(tc.doc), &req)
		var me *a2a.MemberError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v, want accepted", tc.name, err)
		case tc.field != "" && (!errors.As(err, &me) || me.Field() != tc.field):
			t.Errorf("%s: %v, want a member error at %s", tc.name, err, tc.field)
		}
	}
	// A card read by a client, and a stream event.
	var card a2a.AgentCard
	if err := a2a.CheckMembers([]byte(`{"name":"a","NAME":"b"}`), &card); err == nil || !strings.Contains(err.Error(), "case-sensitive") {
		t.Errorf("card: %v", err)
	}
	var ev a2a.StreamResponse
	if err := a2a.CheckMembers([]byte(`{"statusUpdate":{"taskId":"t","TaskId":"u"}}`), &ev); err == nil {
		t.Error("stream event with a case duplicate accepted")
	}
}

// FuzzCheckMembers: on any input CheckMembers does not panic, and it
// never accepts valid JSON in which a reference reader (encoding/json's
// tokenizer) finds a name twice in one object.
func FuzzCheckMembers(f *testing.F) {
	f.Add([]byte(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`))
	f.Add([]byte(`{"a":{"b":[1,{"c":"\u0041","c":2}]}}`))
	f.Add([]byte(`{"metadata":{"k":1,"\u006b":2}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		var req a2a.SendMessageRequest
		err := a2a.CheckMembers(doc, &req)
		if err == nil && jsontest.HasDuplicate(doc) {
			t.Fatalf("%q: accepted, but a name repeats", doc)
		}
	})
}
