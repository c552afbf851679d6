// Package a2ago tests goa2a against the official Go SDK
// (github.com/a2aproject/a2a-go/v2), in a module of its own so that the
// library's go.mod does not list it. The main module's interop tests run
// it (interop/a2ago_test.go).
package a2ago

import (
	"context"
	"errors"
	"iter"
	"net/http/httptest"
	"testing"
	"time"

	ga2a "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	ggrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/serve"
	"github.com/goa2a/a2a/server"
)

// ourServer serves an agent that completes each task with "got TEXT",
// on the three bindings, until the test ends.
func ourServer(t *testing.T) *serve.Server {
	t.Helper()
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.Working(ctx, "working"); err != nil {
			return err
		}
		return w.Complete(ctx, "got "+req.Message.Text())
	})
	srv, err := serve.New(&a2a.AgentCard{Name: "goa2a", Version: "1.0.0", Description: "goa2a's side",
		Capabilities: a2a.AgentCapabilities{Streaming: a2a.Ptr(true)}}, agent,
		serve.WithAddr("127.0.0.1:0"), serve.WithGRPC("127.0.0.1:0"), serve.WithPush(serve.Push{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	for deadline := time.Now().Add(30 * time.Second); !srv.Ready(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not ready")
		}
	}
	return srv
}

// TestGoSDKClient: the official Go SDK's client runs the operations against
// our server on each binding (messages, streams, tasks, push configs), and
// reads our errors as its typed errors.
func TestGoSDKClient(t *testing.T) {
	srv := ourServer(t)
	for _, binding := range []ga2a.TransportProtocol{ga2a.TransportProtocolJSONRPC, ga2a.TransportProtocolHTTPJSON, ga2a.TransportProtocolGRPC} {
		t.Run(string(binding), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			card, err := agentcard.DefaultResolver.Resolve(ctx, srv.URL())
			if err != nil {
				t.Fatal(err)
			}
			c, err := a2aclient.NewFromCard(ctx, card,
				a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []ga2a.TransportProtocol{binding}}),
				ggrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Destroy()

			res, err := c.SendMessage(ctx, &ga2a.SendMessageRequest{Message: ga2a.NewMessage(ga2a.MessageRoleUser, ga2a.NewTextPart("hi"))})
			if err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			task, ok := res.(*ga2a.Task)
			if !ok || task.Status.State != ga2a.TaskStateCompleted {
				t.Fatalf("SendMessage answered %#v, want a completed task", res)
			}
			got, err := c.GetTask(ctx, &ga2a.GetTaskRequest{ID: task.ID})
			if err != nil || got.ID != task.ID || got.Status.State != ga2a.TaskStateCompleted {
				t.Errorf("GetTask: %+v, %v", got, err)
			}
			// With a page size: the SDK's gRPC transport sends page_size 0
			// when none is given (as present), which the spec refuses
			// (pageSize 1 to 100, REQUIREMENTS R142) and we do.
			list, err := c.ListTasks(ctx, &ga2a.ListTasksRequest{PageSize: 10})
			if err != nil || len(list.Tasks) == 0 {
				t.Errorf("ListTasks: %+v, %v", list, err)
			}
			var states []ga2a.TaskState
			for ev, err := range c.SendStreamingMessage(ctx, &ga2a.SendMessageRequest{Message: ga2a.NewMessage(ga2a.MessageRoleUser, ga2a.NewTextPart("stream"))}) {
				if err != nil {
					t.Fatalf("SendStreamingMessage: %v", err)
				}
				if st, ok := ev.(*ga2a.TaskStatusUpdateEvent); ok {
					states = append(states, st.Status.State)
				}
			}
			if len(states) == 0 || states[len(states)-1] != ga2a.TaskStateCompleted {
				t.Errorf("stream states %v, want them to end completed", states)
			}
			// Push configs: create, get, list and delete; a deleted config
			// is gone.
			cfg, err := c.CreateTaskPushConfig(ctx, &ga2a.PushConfig{TaskID: task.ID, URL: "https://hooks.example/a2a", Token: "tok-123"})
			if err != nil || cfg.ID == "" || cfg.TaskID != task.ID {
				t.Fatalf("CreateTaskPushConfig: %+v, %v", cfg, err)
			}
			if got, err := c.GetTaskPushConfig(ctx, &ga2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: cfg.ID}); err != nil || got.URL != cfg.URL {
				t.Errorf("GetTaskPushConfig: %+v, %v", got, err)
			}
			if all, err := c.ListTaskPushConfigs(ctx, &ga2a.ListTaskPushConfigRequest{TaskID: task.ID}); err != nil || len(all) != 1 {
				t.Errorf("ListTaskPushConfigs: %+v, %v", all, err)
			}
			if err := c.DeleteTaskPushConfig(ctx, &ga2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: cfg.ID}); err != nil {
				t.Errorf("DeleteTaskPushConfig: %v", err)
			}
			if _, err := c.GetTaskPushConfig(ctx, &ga2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: cfg.ID}); err == nil {
				t.Error("GetTaskPushConfig of a deleted config succeeded")
			}
			// The typical errors, typed.
			if _, err := c.GetTask(ctx, &ga2a.GetTaskRequest{ID: "missing"}); !errors.Is(err, ga2a.ErrTaskNotFound) {
				t.Errorf("GetTask of a missing task: %v, want ErrTaskNotFound", err)
			}
			if _, err := c.CancelTask(ctx, &ga2a.CancelTaskRequest{ID: task.ID}); !errors.Is(err, ga2a.ErrTaskNotCancelable) {
				t.Errorf("CancelTask of a completed task: %v, want ErrTaskNotCancelable", err)
			}
		})
	}
}

// theirExecutor answers each message with a direct reply.
type theirExecutor struct{}

func (theirExecutor) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[ga2a.Event, error] {
	return func(yield func(ga2a.Event, error) bool) {
		yield(ga2a.NewMessage(ga2a.MessageRoleAgent, ga2a.NewTextPart("hello from a2a-go")), nil)
	}
}

func (theirExecutor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[ga2a.Event, error] {
	return func(yield func(ga2a.Event, error) bool) {
		yield(ga2a.NewStatusUpdateEvent(ec, ga2a.TaskStateCanceled, nil), nil)
	}
}

// TestOurClientAgainstGoSDK: our client reads the official Go SDK server's
// card and answers over JSON-RPC and HTTP+JSON, errors included.
func TestOurClientAgainstGoSDK(t *testing.T) {
	h := a2asrv.NewHandler(theirExecutor{})
	for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON} {
		t.Run(binding, func(t *testing.T) {
			var srv *httptest.Server
			if binding == a2a.BindingJSONRPC {
				srv = httptest.NewServer(a2asrv.NewJSONRPCHandler(h))
			} else {
				srv = httptest.NewServer(a2asrv.NewRESTHandler(h))
			}
			defer srv.Close()
			card := &a2a.AgentCard{Name: "a2a-go", Version: "1.0.0", Description: "the official Go SDK",
				SupportedInterfaces: []a2a.AgentInterface{{URL: srv.URL, ProtocolBinding: binding, ProtocolVersion: a2a.ProtocolVersion}}}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			c, err := client.NewFromCard(ctx, card)
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("hi")})
			if err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			msg, ok := res.Result.(*a2a.Message)
			if !ok || msg.Text() != "hello from a2a-go" {
				t.Errorf("SendMessage answered %#v", res.Result)
			}
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "missing"}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("GetTask of a missing task: %v, want TaskNotFound", err)
			}
		})
	}
}
