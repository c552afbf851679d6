package interop

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/client/grpcclient"
)

// artifactText joins the text of every part of every artifact.
func artifactText(arts []a2a.Artifact) string {
	var b strings.Builder
	for _, a := range arts {
		b.WriteString(a.Text())
	}
	return b.String()
}

// TestGoClientAgainstJSServer runs our client against the official
// JavaScript SDK's server over JSON-RPC, HTTP+JSON and gRPC (the SDK's
// grpcService on @grpc/grpc-js, with grpcclient.Transport): every
// operation, a stream, a follow after a deliberately dropped stream, and
// typed errors.
func TestGoClientAgainstJSServer(t *testing.T) {
	base := startJSServer(t)
	for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
		t.Run(binding, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			// grpcclient.Transport makes the card's GRPC interface usable;
			// it changes nothing for the JSON bindings. Over gRPC the SDK's
			// service needs no tolerance from us: it refuses a call without
			// "a2a-version: 1.0", and its errors carry the codes of A2A
			// §5.4 (NOT_FOUND, FAILED_PRECONDITION) with a
			// google.rpc.ErrorInfo of domain a2a-protocol.org.
			c, err := client.New(ctx, base, grpcclient.Transport(), client.WithBindings(binding))
			if err != nil {
				t.Fatal(err)
			}
			if c.Binding() != binding || !c.Card().Capabilities.SupportsStreaming() {
				t.Fatalf("binding %s, card %+v", c.Binding(), c.Card().Capabilities)
			}

			// SendMessage, blocking.
			res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("hello")})
			if err != nil {
				t.Fatalf("SendMessage: %v", err)
			}
			task, ok := res.Result.(*a2a.Task)
			if !ok || task.Status.State != a2a.TaskStateCompleted || artifactText(task.Artifacts) != "echo: hello" {
				t.Fatalf("SendMessage result %+v", res.Result)
			}

			// SendStreamingMessage: task, working, two chunks, completed.
			var kinds []string
			var streamed string
			for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("stream me")}) {
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				switch e := ev.(type) {
				case *a2a.Task:
					kinds = append(kinds, "task")
				case *a2a.TaskStatusUpdateEvent:
					kinds = append(kinds, stateWord(e.Status.State))
				case *a2a.TaskArtifactUpdateEvent:
					kinds = append(kinds, "artifact")
					streamed += e.Artifact.Text()
				}
			}
			if got := strings.Join(kinds, ","); got != "task,working,artifact,artifact,completed" || streamed != "echo: stream me" {
				t.Fatalf("stream %s, text %q", got, streamed)
			}

			// GetTask with historyLength.
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: a2a.Ptr(int32(1))})
			if err != nil || got.ID != task.ID || len(got.History) > 1 {
				t.Fatalf("GetTask: %+v %v", got, err)
			}

			// ListTasks filtered by context.
			list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: task.ContextID})
			if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID {
				t.Fatalf("ListTasks: %+v %v", list, err)
			}

			// Typed errors.
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "00000000-0000-4000-8000-000000000000"}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("GetTask unknown: %v, want TaskNotFound", err)
			}
			if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotCancelable) {
				t.Errorf("CancelTask finished: %v, want TaskNotCancelable", err)
			}
			for _, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
				if !errors.Is(err, a2a.ErrUnsupportedOperation) {
					t.Errorf("SubscribeToTask finished: %v, want UnsupportedOperation", err)
				}
				break
			}
			if _, err := c.GetExtendedAgentCard(ctx); !errors.Is(err, a2a.ErrUnsupportedOperation) {
				t.Errorf("GetExtendedAgentCard: %v, want UnsupportedOperation", err)
			}

			// CancelTask of a running task.
			res, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("wait for me"),
				Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
			if err != nil {
				t.Fatalf("SendMessage returnImmediately: %v", err)
			}
			canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: res.Result.(*a2a.Task).ID})
			if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("CancelTask: %+v %v", canceled, err)
			}

			// The four push config operations.
			cfg, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, URL: "http://127.0.0.1:9/hook", Token: "t"})
			if err != nil || cfg.ID == "" || cfg.URL != "http://127.0.0.1:9/hook" {
				t.Fatalf("Create push config: %+v %v", cfg, err)
			}
			if g, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: cfg.ID}); err != nil || g.URL != cfg.URL {
				t.Fatalf("Get push config: %+v %v", g, err)
			}
			if l, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID}); err != nil || len(l.Configs) != 1 {
				t.Fatalf("List push configs: %+v %v", l, err)
			}
			if err := c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: cfg.ID}); err != nil {
				t.Fatalf("Delete push config: %v", err)
			}
			if _, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: cfg.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("Get deleted push config: %v, want TaskNotFound", err)
			}

			// Follow after a deliberately dropped stream: the transport cuts
			// the first stream after three events (SSE frames, or gRPC
			// messages: the stream then fails with UNAVAILABLE, as when the
			// connection goes). The JS server has no Last-Event-ID
			// resumption, so SendAndFollow resubscribes and de-duplicates
			// the snapshot against what it already yielded.
			var drop interface{ streams() int }
			var dropOpt client.Option
			if binding == a2a.BindingGRPC {
				d := &dropInterceptor{msgs: 3}
				drop = d
				dropOpt = grpcclient.Transport(grpcclient.WithDialOptions(grpc.WithChainStreamInterceptor(d.intercept)))
			} else {
				d := &dropTransport{frames: 3}
				drop = d
				dropOpt = client.WithHTTPClient(&http.Client{Transport: d})
			}
			dc, err := client.New(ctx, base, client.WithBindings(binding), dropOpt)
			if err != nil {
				t.Fatal(err)
			}
			var text string
			tasks := 0
			last := a2a.TaskStateUnspecified
			for ev, err := range dc.SendAndFollow(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("slow one")}) {
				if err != nil {
					t.Fatalf("SendAndFollow: %v", err)
				}
				switch e := ev.(type) {
				case *a2a.Task:
					tasks++
				case *a2a.TaskStatusUpdateEvent:
					last = e.Status.State
				case *a2a.TaskArtifactUpdateEvent:
					text += e.Artifact.Text()
				}
			}
			if drop.streams() < 2 {
				t.Fatalf("the stream was not resumed (%d stream requests)", drop.streams())
			}
			if tasks != 1 || last != a2a.TaskStateCompleted || text != "echo: slow one" {
				t.Fatalf("after the drop: %d task events, last state %v, artifact text %q", tasks, last, text)
			}
		})
	}
}

func stateWord(s a2a.TaskState) string {
	return strings.ToLower(strings.TrimPrefix(s.String(), "TASK_STATE_"))
}

// dropTransport cuts the first SSE response it carries after a number of
// frames, as a flaky network would.
type dropTransport struct {
	frames int
	mu     sync.Mutex
	n      int // SSE responses seen
}

func (d *dropTransport) streams() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

func (d *dropTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	d.mu.Lock()
	d.n++
	first := d.n == 1
	d.mu.Unlock()
	if first {
		resp.Body = &cutBody{rc: resp.Body, frames: d.frames}
	}
	return resp, nil
}

// cutBody passes through whole frames until it has passed enough, then
// fails as a dropped connection does.
type cutBody struct {
	rc     io.ReadCloser
	frames int
	buf    bytes.Buffer
}

func (c *cutBody) Read(p []byte) (int, error) {
	for c.frames > 0 && c.buf.Len() == 0 {
		chunk := make([]byte, 4096)
		n, err := c.rc.Read(chunk)
		c.buf.Write(chunk[:n])
		c.frames -= bytes.Count(chunk[:n], []byte("\n\n"))
		if err != nil {
			break
		}
	}
	if c.buf.Len() > 0 {
		return c.buf.Read(p)
	}
	return 0, io.ErrUnexpectedEOF
}

func (c *cutBody) Close() error { return c.rc.Close() }

// dropInterceptor cuts the first gRPC stream it carries after a number of
// messages, as a lost connection would: the call is canceled and RecvMsg
// fails with UNAVAILABLE.
type dropInterceptor struct {
	msgs int
	mu   sync.Mutex
	n    int // streams seen
}

func (d *dropInterceptor) streams() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

func (d *dropInterceptor) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	d.mu.Lock()
	d.n++
	first := d.n == 1
	d.mu.Unlock()
	if !first {
		return streamer(ctx, desc, cc, method, opts...)
	}
	ctx, cancel := context.WithCancel(ctx)
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		cancel()
		return nil, err
	}
	return &cutStream{ClientStream: cs, left: d.msgs, cancel: cancel}, nil
}

// cutStream passes through left messages, then cancels the call and fails.
type cutStream struct {
	grpc.ClientStream
	left   int
	cancel context.CancelFunc
}

func (c *cutStream) RecvMsg(m any) error {
	if c.left == 0 {
		c.cancel()
		return status.Error(codes.Unavailable, "stream cut by the test")
	}
	c.left--
	return c.ClientStream.RecvMsg(m)
}
