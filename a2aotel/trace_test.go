package a2aotel_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/a2aotel"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/client/grpcclient"
	"github.com/goa2a/a2a/internal/otlptest"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/serve"
	"github.com/goa2a/a2a/server"
)

// streamer works, streams an artifact in three chunks, and completes.
var streamer = server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
	if err := w.Working(ctx, "writing"); err != nil {
		return err
	}
	for i, text := range []string{"one ", "two ", "three"} {
		art := a2a.Artifact{ArtifactID: "answer", Parts: []a2a.Part{a2a.TextPart(text)}}
		if err := w.ArtifactChunk(ctx, art, i > 0, i == 2); err != nil {
			return err
		}
	}
	return w.Complete(ctx, "done")
})

// newProvider exports to rcv over OTLP/HTTP, as service.
func newProvider(t *testing.T, rcv *otlptest.Receiver, service string) *sdktrace.TracerProvider {
	t.Helper()
	exp, err := otlptracehttp.New(t.Context(), otlptracehttp.WithEndpointURL(rcv.URL()))
	if err != nil {
		t.Fatal(err)
	}
	res := resource.NewSchemaless(semconv.ServiceName(service))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp, sdktrace.WithBatchTimeout(50*time.Millisecond)), sdktrace.WithResource(res))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp
}

// TestTrace: a planner-style client calls an agent that streams and has a
// webhook; the OTLP receiver gets the client's, the server's, the agent's
// and the push delivery's spans in one trace, and the webhook request
// carries its traceparent. On each binding.
func TestTrace(t *testing.T) {
	for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
		t.Run(binding, func(t *testing.T) {
			rcv := otlptest.New(t)
			agentTP, plannerTP := newProvider(t, rcv, "agent"), newProvider(t, rcv, "planner")
			tracing := a2aotel.New(a2aotel.WithTracerProvider(agentTP))

			var mu sync.Mutex
			var hookTraceparents []string
			var completed bool
			recv, err := push.NewReceiver(func(ctx context.Context, ev push.Event) error {
				if st, ok := ev.Event.(*a2a.TaskStatusUpdateEvent); ok && st.Status.State == a2a.TaskStateCompleted {
					mu.Lock()
					completed = true
					mu.Unlock()
				}
				return nil
			},
				push.WithToken("hook-token"), push.WithTaskFilter(func(context.Context, string) bool { return true }))
			if err != nil {
				t.Fatal(err)
			}
			hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				hookTraceparents = append(hookTraceparents, r.Header.Get("Traceparent"))
				mu.Unlock()
				recv.ServeHTTP(w, r)
			}))
			defer hook.Close()

			srv, err := serve.New(&a2a.AgentCard{Name: "streamer", Version: "1.0.0", Description: "streams",
				Capabilities: a2a.AgentCapabilities{Streaming: a2a.Ptr(true)}}, streamer,
				serve.WithAddr("127.0.0.1:0"), serve.WithGRPC("127.0.0.1:0"),
				serve.WithPush(serve.Push{Allow: []string{"127.0.0.1"}}), serve.WithOptions(tracing.ServeOptions()...))
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx) }()
			defer func() {
				stop()
				if err := <-done; err != nil {
					t.Errorf("Run: %v", err)
				}
			}()
			for deadline := time.Now().Add(30 * time.Second); !srv.Ready(); time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("not ready")
				}
			}

			// The planner: a span of its own around the delegation.
			planner := a2aotel.New(a2aotel.WithTracerProvider(plannerTP))
			pctx, root := plannerTP.Tracer("planner").Start(t.Context(), "plan")
			c, err := client.New(pctx, srv.URL(), client.WithBindings(binding), grpcclient.Transport(),
				client.WithInterceptors(planner.ClientInterceptor()))
			if err != nil {
				t.Fatal(err)
			}
			var taskID string
			var last a2a.TaskState
			for ev, err := range c.SendStreamingMessage(pctx, &a2a.SendMessageRequest{Message: client.TextMessage("go"),
				Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: hook.URL, Token: "hook-token"}}}) {
				if err != nil {
					t.Fatal(err)
				}
				switch e := ev.(type) {
				case *a2a.Task:
					taskID = e.ID
				case *a2a.TaskStatusUpdateEvent:
					last = e.Status.State
				}
			}
			root.End()
			if last != a2a.TaskStateCompleted {
				t.Fatalf("the stream ended at %s", last)
			}
			traceID := root.SpanContext().TraceID().String()

			// The task's events reach the webhook up to its completion, each
			// with the trace's context.
			deadline := time.Now().Add(time.Minute)
			for {
				mu.Lock()
				done := completed
				mu.Unlock()
				if done {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the webhook did not get the task's completion within a minute")
				}
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			calls := len(hookTraceparents)
			for i, tp := range hookTraceparents {
				if !strings.HasPrefix(tp, "00-"+traceID+"-") {
					t.Errorf("webhook call %d: traceparent %q, want one in trace %s", i+1, tp, traceID)
				}
			}
			mu.Unlock()

			if err := agentTP.ForceFlush(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := plannerTP.ForceFlush(t.Context()); err != nil {
				t.Fatal(err)
			}
			method := a2aotel.Service + "/" + a2a.MethodSendStreamingMessage
			spans := rcv.WaitFor(t, "client, server, agent and push spans", func(spans []otlptest.Span) bool {
				var clientSpan, serverSpan, agentSpan bool
				pushes := 0
				for _, s := range spans {
					if s.TraceID != traceID {
						continue
					}
					clientSpan = clientSpan || s.Name == method && s.Kind == tracepb.Span_SPAN_KIND_CLIENT
					serverSpan = serverSpan || s.Name == method && s.Kind == tracepb.Span_SPAN_KIND_SERVER
					agentSpan = agentSpan || s.Name == "a2a.agent.execute"
					if s.Name == "a2a.push.deliver" {
						pushes++
					}
				}
				return clientSpan && serverSpan && agentSpan && pushes >= calls
			})
			byName := map[string]otlptest.Span{}
			for _, s := range spans {
				if s.TraceID == traceID {
					byName[s.Name+"/"+s.Kind.String()] = s
				}
			}
			cs := byName[method+"/"+tracepb.Span_SPAN_KIND_CLIENT.String()]
			ss := byName[method+"/"+tracepb.Span_SPAN_KIND_SERVER.String()]
			as := byName["a2a.agent.execute/"+tracepb.Span_SPAN_KIND_INTERNAL.String()]
			ps := byName["a2a.push.deliver/"+tracepb.Span_SPAN_KIND_CLIENT.String()]
			// The chain: plan -> client -> server -> agent -> push.
			if cs.ParentID != root.SpanContext().SpanID().String() || ss.ParentID != cs.SpanID || as.ParentID != ss.SpanID || ps.ParentID != as.SpanID {
				t.Errorf("parents: client %s (want the plan's %s), server %s (want %s), agent %s (want %s), push %s (want %s)",
					cs.ParentID, root.SpanContext().SpanID(), ss.ParentID, cs.SpanID, as.ParentID, ss.SpanID, ps.ParentID, as.SpanID)
			}
			if cs.Service != "planner" || ss.Service != "agent" {
				t.Errorf("services: client %q, server %q", cs.Service, ss.Service)
			}
			for _, s := range []otlptest.Span{cs, ss, as, ps} {
				if s.Attrs["a2a.task.id"] != taskID {
					t.Errorf("%s: a2a.task.id %q, want %q", s.Name, s.Attrs["a2a.task.id"], taskID)
				}
				if strings.Contains(s.Name, taskID) {
					t.Errorf("span name %q holds the task id", s.Name)
				}
			}
			wantSystem := map[string]string{a2a.BindingJSONRPC: "jsonrpc", a2a.BindingGRPC: "grpc", a2a.BindingHTTPJSON: "a2a"}[binding]
			for _, s := range []otlptest.Span{cs, ss} {
				if s.Attrs["rpc.system"] != wantSystem || s.Attrs["rpc.method"] != a2a.MethodSendStreamingMessage || s.Attrs["rpc.service"] != a2aotel.Service {
					t.Errorf("%s %s: rpc attributes %v", s.Name, s.Kind, s.Attrs)
				}
				if len(s.Events) < 5 {
					t.Errorf("%s %s: %d events, want one per stream event", s.Name, s.Kind, len(s.Events))
				}
			}
		})
	}
}
