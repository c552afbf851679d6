package a2aprom_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/a2aprom"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/serve"
	"github.com/goa2a/a2a/server"
)

// TestServeMetrics: with its ServeOptions, a serve.Server counts what it
// answers and serves /metrics beside its probes: requests by binding,
// method and status, errors by kind, task transitions, readiness.
func TestServeMetrics(t *testing.T) {
	m := a2aprom.New()
	srv, err := serve.New(&a2a.AgentCard{Name: "m", Version: "1", Description: "d"},
		server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error { return w.Complete(ctx, "ok") }),
		serve.WithAddr("127.0.0.1:0"), serve.WithOptions(m.ServeOptions()...))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); !srv.Ready(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not ready")
		}
	}
	c, err := client.New(t.Context(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("hi")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "missing"}); err == nil {
		t.Fatal("GetTask of a missing task succeeded")
	}
	res, err := http.Get(srv.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`a2a_http_requests_total{binding="jsonrpc",code="200",method="SendMessage"} 1`,
		`a2a_http_requests_total{binding="card",code="200",method="GetAgentCard"} 1`,
		`a2a_http_request_errors_total{binding="jsonrpc",error="TaskNotFoundError",method="GetTask"} 1`,
		`a2a_task_transitions_total{state="TASK_STATE_COMPLETED"} 1`,
		`a2a_agent_executions 0`,
		`a2a_ready 1`,
		`go_goroutines `,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
