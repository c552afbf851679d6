// Package echo is the smallest useful A2A agent: for each message it creates
// a task, reports working, emits one artifact whose text is "echo: " and the
// message text, and completes. It serves `a2a serve --agent echo`, the
// benchmarks, and as an example of the agent API.
package echo

import (
	"context"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

// Agent is the echo agent.
type Agent struct{}

// Execute implements [server.Agent].
func (Agent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	if err := w.Working(ctx, ""); err != nil {
		return err
	}
	art := a2a.Artifact{ArtifactID: "echo", Name: "echo", Parts: []a2a.Part{a2a.TextPart("echo: " + req.Message.Text())}}
	if err := w.Artifact(ctx, art); err != nil {
		return err
	}
	return w.Complete(ctx, "")
}

// Card returns the echo agent's card for a server whose JSON-RPC endpoint is
// jsonrpcURL and HTTP+JSON endpoint restURL.
func Card(jsonrpcURL, restURL string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "echo",
		Description: "Echoes each message back as an artifact of a completed task.",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: jsonrpcURL, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
			{URL: restURL, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
		},
		Version: "1.0.0",
		Capabilities: a2a.AgentCapabilities{
			Streaming:         a2a.Ptr(true),
			PushNotifications: a2a.Ptr(true),
		},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{
			ID: "echo", Name: "Echo", Description: "Repeats the text of a message.",
			Tags: []string{"test"}, Examples: []string{"hello"},
		}},
	}
}
