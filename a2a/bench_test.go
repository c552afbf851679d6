package a2a_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// benchSendMessageParams is the params of a SendMessage call as the capture
// kit sends it (15-push.http), with a raw part and metadata added.
const benchSendMessageParams = `{
  "message": {
    "messageId": "85750621-02fb-4d4f-b57f-bc5af71a1bfc",
    "contextId": "e051d022-3c39-4f5c-bd9c-7a902ae474cd",
    "role": "ROLE_USER",
    "parts": [
      {"text": "Run the unit tests for payments-api at commit 9f3c2e1"},
      {"raw": "LS0tIGEvcGF5bWVudHMvcmVmdW5kcy5weQorKysgYi9wYXltZW50cy9yZWZ1bmRzLnB5Cg==", "filename": "refunds.diff", "mediaType": "text/x-diff"}
    ],
    "metadata": {"traceId": "4bf92f3577b34da6a3ce929d0e0e4736"}
  },
  "configuration": {
    "returnImmediately": true,
    "historyLength": 2,
    "taskPushNotificationConfig": {
      "url": "http://localhost:41250/a2a-events",
      "token": "planner-run-0006",
      "authentication": {"scheme": "Bearer", "credentials": "hook_secret_91d2"}
    }
  }
}`

func BenchmarkDecodeSendMessageRequest(b *testing.B) {
	data := []byte(benchSendMessageParams)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var req a2a.SendMessageRequest
		if err := json.Unmarshal(data, &req); err != nil {
			b.Fatal(err)
		}
	}
}

func benchCompletedTask() *a2a.Task {
	ts := a2a.TimestampOf(time.Date(2026, 10, 6, 9, 0, 6, 0, time.UTC))
	const taskID, ctxID = "bbfb9ea5-50ea-4441-b991-2a8ba0d6f3f3", "41c0d462-fed8-4f6b-8569-6c9afe9497c3"
	msg := func(id string, role a2a.Role, text string) a2a.Message {
		return a2a.Message{MessageID: id, ContextID: ctxID, TaskID: taskID, Role: role, Parts: []a2a.Part{a2a.TextPart(text)}}
	}
	final := msg("722a91ae-18d4-44c4-84a5-94ba73685d3a", a2a.RoleAgent, "1 failed, 11 passed")
	return &a2a.Task{
		ID:        taskID,
		ContextID: ctxID,
		Status:    a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: &final, Timestamp: ts},
		History: []a2a.Message{
			msg("48f165d5-7b00-47f4-b81e-f86f5c8cc1ab", a2a.RoleUser, "Run the unit tests for payments-api at commit 9f3c2e1"),
			msg("43c01fc6-0420-49c3-bc96-d0b839234665", a2a.RoleAgent, "Checking out 9f3c2e1 and starting the suite"),
		},
		Artifacts: []a2a.Artifact{{
			ArtifactID: "test-log",
			Name:       "test-log.txt",
			Parts: []a2a.Part{
				a2a.TextPart("collected 12 items\ntests/test_charges.py ........  [ 66%]\ntests/test_refunds.py ..F.  [100%]\n"),
			},
		}},
	}
}

func BenchmarkEncodeCompletedTask(b *testing.B) {
	task := benchCompletedTask()
	out, err := json.Marshal(task)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(task); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeStreamResponseStatusUpdate(b *testing.B) {
	msg := a2a.NewTextMessage(a2a.RoleAgent, "c7174e70-2f83-4cef-8cc1-390c2b07a5eb", "Checking out 9f3c2e1 and starting the suite")
	msg.ContextID, msg.TaskID = "c026046c-6890-4830-9618-8fffa35cb080", "728ba084-97eb-422b-b94b-b0fe9153ce2c"
	ev := a2a.StreamResponse{Event: &a2a.TaskStatusUpdateEvent{
		TaskID:    "728ba084-97eb-422b-b94b-b0fe9153ce2c",
		ContextID: "c026046c-6890-4830-9618-8fffa35cb080",
		Status: a2a.TaskStatus{
			State:     a2a.TaskStateWorking,
			Message:   msg,
			Timestamp: a2a.TimestampOf(time.Date(2026, 10, 6, 9, 0, 2, 0, time.UTC)),
		},
	}}
	out, err := json.Marshal(ev)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(ev); err != nil {
			b.Fatal(err)
		}
	}
}
