// Package a2a is the Agent2Agent (A2A) protocol v1.0 data model: tasks,
// messages, parts, artifacts, stream events, agent cards, every request and
// response message of the A2A service, and the protocol's error vocabulary.
//
// The types encode to and decode from ProtoJSON exactly as the normative
// a2a.proto asks (A2A §5.5): camelCase member names, enum value names such as
// "TASK_STATE_COMPLETED", oneofs written as a single member ("text", "task",
// "statusUpdate", ...), RFC 3339 timestamps in UTC with millisecond
// precision, base64 bytes, and presence kept for `optional` fields through
// pointers. Unknown members are ignored on input (A2A §5.7).
//
// Closed unions of the proto are sealed interfaces: [PartContent] (text, raw
// bytes, URL, structured data), [Event] (the members of StreamResponse) and
// [SendMessageResult] (a task or a direct message). Switch on them with a
// type switch.
//
// The package does no I/O. Servers live in package server, clients in
// package client.
package a2a

// ProtocolVersion is the A2A protocol version this module speaks, as sent in
// the A2A-Version service parameter and declared in agent cards (A2A §3.6).
const ProtocolVersion = "1.0"

// Binding names of AgentInterface.protocolBinding (A2A §5.8).
const (
	BindingJSONRPC  = "JSONRPC"
	BindingHTTPJSON = "HTTP+JSON"
	BindingGRPC     = "GRPC"
)

// Media types used by the bindings.
const (
	// MediaTypeA2AJSON is the content type of HTTP+JSON bodies (A2A §11.1).
	MediaTypeA2AJSON = "application/a2a+json"
)
