package cli

import (
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/internal/otlptest"
)

// TestServeOTLP: with --otlp-endpoint, a2a serve exports the spans of what
// it serves over OTLP/HTTP, named after the card, and flushes them at
// shutdown; the banner says where they go.
func TestServeOTLP(t *testing.T) {
	t.Parallel()
	rcv := otlptest.New(t)
	ts := startServe(t, "--store", "memory", "--otlp-endpoint", rcv.BaseURL())
	c := ts.client(t, a2a.BindingJSONRPC)
	if _, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("hi")}); err != nil {
		t.Fatal(err)
	}
	if code := ts.stop(t); code != ExitOK {
		t.Fatalf("exit %d: %s", code, ts.stderr.String())
	}
	if !strings.Contains(ts.stdout.String(), "  traces      OTLP/HTTP to "+rcv.URL()) {
		t.Errorf("the banner does not say where traces go:\n%s", ts.stdout.String())
	}
	spans := rcv.Spans() // shutdown flushed them
	var server, agent bool
	for _, s := range spans {
		if s.Service != "echo" {
			t.Errorf("span %s of service %q, want echo (the card's name)", s.Name, s.Service)
		}
		server = server || s.Name == "lf.a2a.v1.A2AService/SendMessage" && s.Attrs["rpc.system"] == "jsonrpc"
		agent = agent || s.Name == "a2a.agent.execute"
	}
	if !server || !agent {
		t.Errorf("spans %v: want the SendMessage server span and the agent's", spans)
	}
}

// TestServeOTLPFromEnv: the standard OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// and OTEL_SERVICE_NAME variables work without the flag.
func TestServeOTLPFromEnv(t *testing.T) {
	rcv := otlptest.New(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.URL())
	t.Setenv("OTEL_SERVICE_NAME", "from-env")
	ts := startServe(t, "--store", "memory")
	c := ts.client(t, a2a.BindingHTTPJSON)
	if _, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "missing"}); err == nil {
		t.Fatal("GetTask of a missing task succeeded")
	}
	if code := ts.stop(t); code != ExitOK {
		t.Fatalf("exit %d: %s", code, ts.stderr.String())
	}
	var found bool
	for _, s := range rcv.Spans() {
		if s.Name == "lf.a2a.v1.A2AService/GetTask" {
			found = true
			if s.Service != "from-env" || !s.Error || s.Attrs["a2a.error.code"] != "TaskNotFoundError" {
				t.Errorf("span %+v: want service from-env, an error status and a2a.error.code TaskNotFoundError", s)
			}
		}
	}
	if !found {
		t.Errorf("no GetTask span in %v", rcv.Spans())
	}
}

func TestServeOTLPBadEndpoint(t *testing.T) {
	t.Parallel()
	var stderr strings.Builder
	cfg, code := parseServeArgs([]string{"--otlp-endpoint", "127.0.0.1:4318"}, &stderr)
	if cfg != nil || code != ExitUsage || !strings.Contains(stderr.String(), "--otlp-endpoint \"127.0.0.1:4318\": want an http:// or https:// URL") {
		t.Errorf("exit %d, %q", code, stderr.String())
	}
}

// TestDemoOTLP: a2a demo --otlp-endpoint traces the run as one trace: the
// planner's span, its calls, and each agent's server and execution spans,
// each agent a service of its own.
func TestDemoOTLP(t *testing.T) {
	t.Parallel()
	rcv := otlptest.New(t)
	out, errOut, code := runDemo(t, "--otlp-endpoint", rcv.BaseURL(), "--store", "memory")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	spans := rcv.Spans() // the demo flushed them before it returned
	var root otlptest.Span
	for _, s := range spans {
		if s.Name == "a2a demo" {
			root = s
		}
	}
	if root.TraceID == "" {
		t.Fatalf("no span of the run in %v", spans)
	}
	services := map[string]map[string]bool{} // service -> span names in the run's trace
	for _, s := range spans {
		if s.TraceID != root.TraceID {
			continue
		}
		if services[s.Service] == nil {
			services[s.Service] = map[string]bool{}
		}
		services[s.Service][s.Name] = true
	}
	for _, agent := range []string{"test-runner", "code-reviewer", "deployer"} {
		if !services[agent]["lf.a2a.v1.A2AService/SendMessage"] && !services[agent]["lf.a2a.v1.A2AService/SendStreamingMessage"] {
			t.Errorf("%s: no server span of a send in the run's trace: %v", agent, services[agent])
		}
		if !services[agent]["a2a.agent.execute"] {
			t.Errorf("%s: no execution span in the run's trace: %v", agent, services[agent])
		}
	}
	if len(services["planner"]) < 2 {
		t.Errorf("planner: spans %v, want the run's and its calls'", services["planner"])
	}
}
