package v03_test

import (
	"encoding/json"
	"fmt"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/a2a/v03"
)

// A server answering a v0.3 client: the call is translated to a v1.0
// request, and the v1.0 answer back to what the v0.3 client expects.
func ExampleToV1Request() {
	params := `{"message":{"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"text","text":"tell me a joke"}]},"configuration":{"blocking":true}}`
	op, req, err := v03.ToV1Request("message/send", json.RawMessage(params))
	if err != nil {
		fmt.Println(err)
		return
	}
	send := req.(*a2a.SendMessageRequest)
	fmt.Println(op, send.Message.Role, send.Message.Text())

	// What the v1.0 handler answered.
	answer := &a2a.SendMessageResponse{Result: &a2a.Task{
		ID: "task-1", ContextID: "ctx-1",
		Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: a2a.NewTextMessage(a2a.RoleAgent, "m-2", "About what?")},
	}}
	result, err := v03.FromV1Result(op, answer)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(result)
	fmt.Println(string(b))
	// Output:
	// SendMessage ROLE_USER tell me a joke
	// {"kind":"task","id":"task-1","contextId":"ctx-1","status":{"state":"input-required","message":{"kind":"message","messageId":"m-2","role":"agent","parts":[{"kind":"text","text":"About what?"}]}}}
}

// What v0.3 cannot express is refused, naming the field.
func ExampleFromV1Request() {
	_, _, err := v03.FromV1Request(a2a.MethodGetTask, &a2a.GetTaskRequest{Tenant: "acme", ID: "task-1"})
	fmt.Println(err)
	_, _, err = v03.FromV1Request(a2a.MethodListTasks, &a2a.ListTasksRequest{})
	fmt.Println(err)
	// Output:
	// a2a: UnsupportedOperationError: not expressible in A2A v0.3; tenant: v0.3 has no tenants
	// a2a: UnsupportedOperationError: not expressible in A2A v0.3; method: ListTasks has no v0.3 method
}

// One card for both generations of clients.
func ExampleFromV1AgentCard() {
	card := &a2a.AgentCard{
		Name: "joker", Description: "tells jokes", Version: "1.0.0",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "https://joker.example.com/rest", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"},
			{URL: "https://joker.example.com/rpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
		},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
	}
	dual, err := v03.FromV1AgentCard(card)
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.MarshalIndent(dual, "", "  ")
	fmt.Println(string(b))
	// Output:
	// {
	//   "protocolVersion": "0.3.0",
	//   "name": "joker",
	//   "description": "tells jokes",
	//   "url": "https://joker.example.com/rpc",
	//   "preferredTransport": "JSONRPC",
	//   "additionalInterfaces": [
	//     {
	//       "url": "https://joker.example.com/rest",
	//       "transport": "HTTP+JSON"
	//     }
	//   ],
	//   "version": "1.0.0",
	//   "capabilities": {},
	//   "defaultInputModes": [
	//     "text/plain"
	//   ],
	//   "defaultOutputModes": [
	//     "text/plain"
	//   ],
	//   "skills": [],
	//   "supportedInterfaces": [
	//     {
	//       "url": "https://joker.example.com/rest",
	//       "protocolBinding": "HTTP+JSON",
	//       "protocolVersion": "1.0"
	//     },
	//     {
	//       "url": "https://joker.example.com/rpc",
	//       "protocolBinding": "JSONRPC",
	//       "protocolVersion": "1.0"
	//     }
	//   ]
	// }
}
