// Package bare is the baseline of the SendMessage benchmarks: the least any
// A2A server must do for a blocking SendMessage over JSON-RPC. It reads the
// body, decodes the request with encoding/json into the model types, and
// encodes a canned completed task (the user message in history, one
// "echo: <text>" artifact) as the JSON-RPC result. No validation, no store,
// no agent, no goroutine.
//
// DESIGN.md holds our stack (server.Handler with the echo agent behind
// server/jsonrpc) to at least half of its throughput. The harness
// (go run ./bench) and BenchmarkJSONRPCSendMessage in server/jsonrpc both
// measure against it.
package bare

import (
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// request is the smallest JSON-RPC envelope that carries a SendMessage
// request into the model types.
type request struct {
	JSONRPC string                 `json:"jsonrpc"`
	ID      json.RawMessage        `json:"id"`
	Method  string                 `json:"method"`
	Params  a2a.SendMessageRequest `json:"params"`
}

type response struct {
	JSONRPC string                  `json:"jsonrpc"`
	ID      json.RawMessage         `json:"id"`
	Result  a2a.SendMessageResponse `json:"result"`
}

// The canned ids have the length of real UUIDs, so responses are as long as
// those of a real server.
const (
	TaskID    = "00000000-0000-4000-8000-000000000001"
	ContextID = "00000000-0000-4000-8000-000000000002"
)

// Handler answers a JSON-RPC SendMessage request with a completed task.
func Handler(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "reading body", http.StatusBadRequest)
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil || req.Method != "SendMessage" || req.Params.Message == nil {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`)
		return
	}
	msg := *req.Params.Message
	msg.TaskID, msg.ContextID = TaskID, ContextID
	task := &a2a.Task{
		ID:        TaskID,
		ContextID: ContextID,
		Status:    a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: a2a.TimestampOf(time.Now())},
		History:   []a2a.Message{msg},
		Artifacts: []a2a.Artifact{{
			ArtifactID: "echo",
			Name:       "echo",
			Parts:      []a2a.Part{a2a.TextPart("echo: " + msg.Text())},
		}},
	}
	b, err := json.Marshal(response{JSONRPC: "2.0", ID: req.ID, Result: a2a.SendMessageResponse{Result: task}})
	if err != nil {
		http.Error(w, "encoding response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}
