package a2agrpc_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/grpcpb"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2agrpc"
)

func TestUnaryRPCs(t *testing.T) {
	t.Parallel()
	f := start(t, setup{})

	res, err := f.client.SendMessage(call(t), send("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if m := res.GetMessage(); m == nil || m.GetRole() != grpcpb.Role_ROLE_AGENT || m.GetParts()[0].GetText() != "hello back" {
		t.Fatalf("SendMessage(hello) = %v, want the direct reply", res)
	}

	res, err = f.client.SendMessage(call(t), send("task"))
	if err != nil {
		t.Fatal(err)
	}
	task := res.GetTask()
	if task.GetStatus().GetState() != grpcpb.TaskState_TASK_STATE_COMPLETED || len(task.GetArtifacts()) != 1 ||
		task.GetArtifacts()[0].GetParts()[0].GetText() != "result" || len(task.GetHistory()) == 0 {
		t.Fatalf("SendMessage(task) = %v, want the completed task with its artifact and history", res)
	}

	got, err := f.client.GetTask(call(t), &grpcpb.GetTaskRequest{Id: task.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, task) {
		t.Errorf("GetTask = %v\nwant %v", got, task)
	}

	list, err := f.client.ListTasks(call(t), &grpcpb.ListTasksRequest{Status: grpcpb.TaskState_TASK_STATE_COMPLETED})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetTasks()) != 1 || list.GetTasks()[0].GetId() != task.GetId() || list.GetTotalSize() != 1 {
		t.Errorf("ListTasks(completed) = %v, want the one task", list)
	}

	res, err = f.client.SendMessage(call(t), send("input"))
	if err != nil {
		t.Fatal(err)
	}
	open := res.GetTask()
	if open.GetStatus().GetState() != grpcpb.TaskState_TASK_STATE_INPUT_REQUIRED {
		t.Fatalf("SendMessage(input) = %v, want input-required", res)
	}

	created, err := f.client.CreateTaskPushNotificationConfig(call(t), &grpcpb.TaskPushNotificationConfig{
		TaskId: open.GetId(), Url: "https://example.com/hook", Token: "tok",
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.GetId() == "" || created.GetTaskId() != open.GetId() || created.GetUrl() != "https://example.com/hook" || created.GetToken() != "tok" {
		t.Errorf("created %v", created)
	}
	cfg, err := f.client.GetTaskPushNotificationConfig(call(t), &grpcpb.GetTaskPushNotificationConfigRequest{TaskId: open.GetId(), Id: created.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(cfg, created) {
		t.Errorf("GetTaskPushNotificationConfig = %v, want %v", cfg, created)
	}
	configs, err := f.client.ListTaskPushNotificationConfigs(call(t), &grpcpb.ListTaskPushNotificationConfigsRequest{TaskId: open.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if len(configs.GetConfigs()) != 1 || !proto.Equal(configs.GetConfigs()[0], created) {
		t.Errorf("ListTaskPushNotificationConfigs = %v, want the one config", configs)
	}
	if _, err := f.client.DeleteTaskPushNotificationConfig(call(t), &grpcpb.DeleteTaskPushNotificationConfigRequest{TaskId: open.GetId(), Id: created.GetId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.GetTaskPushNotificationConfig(call(t), &grpcpb.GetTaskPushNotificationConfigRequest{TaskId: open.GetId(), Id: created.GetId()}); err == nil {
		t.Error("the deleted config is still there")
	}

	canceled, err := f.client.CancelTask(call(t), &grpcpb.CancelTaskRequest{Id: open.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if canceled.GetId() != open.GetId() || canceled.GetStatus().GetState() != grpcpb.TaskState_TASK_STATE_CANCELED {
		t.Errorf("CancelTask = %v, want the canceled task", canceled)
	}

	// No authenticator: the Handler refuses the extended card to an
	// anonymous caller.
	_, err = f.client.GetExtendedAgentCard(call(t), &grpcpb.GetExtendedAgentCardRequest{})
	wantCode(t, err, codes.Unauthenticated)
}

func TestStreams(t *testing.T) {
	t.Parallel()
	f := start(t, setup{})

	s, err := f.client.SendStreamingMessage(call(t), send("task"))
	if err != nil {
		t.Fatal(err)
	}
	frames, err := drain(t, s)
	if err != nil {
		t.Fatalf("stream ended with %v", err)
	}
	if len(frames) < 3 || frames[0].GetTask() == nil {
		t.Fatalf("frames %v, want the task first", frames)
	}
	last := frames[len(frames)-1].GetStatusUpdate()
	if last == nil || last.GetStatus().GetState() != grpcpb.TaskState_TASK_STATE_COMPLETED || last.GetTaskId() != frames[0].GetTask().GetId() {
		t.Errorf("last frame %v, want the completed status of the task", frames[len(frames)-1])
	}
	if !slices.ContainsFunc(frames, func(m *grpcpb.StreamResponse) bool {
		return m.GetArtifactUpdate().GetArtifact().GetArtifactId() == "a1"
	}) {
		t.Errorf("frames %v, want the artifact", frames)
	}

	s, err = f.client.SendStreamingMessage(call(t), send("hello"))
	if err != nil {
		t.Fatal(err)
	}
	frames, err = drain(t, s)
	if err != nil || len(frames) != 1 || frames[0].GetMessage().GetParts()[0].GetText() != "hello back" {
		t.Errorf("direct reply stream: %v, %v; want the one message", frames, err)
	}

	// An error before the first frame: the status, and no frame.
	sub, err := f.client.SubscribeToTask(call(t), &grpcpb.SubscribeToTaskRequest{Id: "nope"})
	if err != nil {
		t.Fatal(err)
	}
	frames, err = drain(t, sub)
	st := wantCode(t, err, codes.NotFound)
	if len(frames) != 0 || errorInfo(t, st).GetReason() != "TASK_NOT_FOUND" {
		t.Errorf("frames %v, status %v", frames, st)
	}
}

// Every subscriber of a task gets the same frames.
func TestSubscribersSeeTheSameFrames(t *testing.T) {
	t.Parallel()
	f := start(t, setup{})
	res, err := f.client.SendMessage(call(t), sendNow("wait"))
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetTask().GetId()
	waitState(t, f, id, grpcpb.TaskState_TASK_STATE_WORKING)

	const n = 5
	streams := make([]grpc.ServerStreamingClient[grpcpb.StreamResponse], n)
	firsts := make([]*grpcpb.StreamResponse, n)
	for i := range streams {
		s, err := f.client.SubscribeToTask(call(t), &grpcpb.SubscribeToTaskRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		// The snapshot is sent once the subscription is in place.
		if firsts[i], err = s.Recv(); err != nil {
			t.Fatal(err)
		}
		streams[i] = s
	}
	f.agent.release()
	var wg sync.WaitGroup
	got := make([][]*grpcpb.StreamResponse, n)
	errs := make([]error, n)
	for i, s := range streams {
		wg.Go(func() {
			rest, err := drain(t, s)
			got[i], errs[i] = append([]*grpcpb.StreamResponse{firsts[i]}, rest...), err
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("subscriber %d: %v", i, errs[i])
		}
	}
	if len(got[0]) != 2 || got[0][0].GetTask().GetId() != id ||
		got[0][1].GetStatusUpdate().GetStatus().GetState() != grpcpb.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("subscriber 0 got %v, want the working task, then completed", got[0])
	}
	for i := 1; i < n; i++ {
		if len(got[i]) != len(got[0]) {
			t.Fatalf("subscriber %d got %d frames, subscriber 0 %d", i, len(got[i]), len(got[0]))
		}
		for j := range got[i] {
			if !proto.Equal(got[i][j], got[0][j]) {
				t.Errorf("subscriber %d frame %d = %v\nsubscriber 0: %v", i, j, got[i][j], got[0][j])
			}
		}
	}
}

// ended reports the streaming calls whose server handler returned, with
// the status they returned.
func ended() (grpc.ServerOption, chan *status.Status) {
	ch := make(chan *status.Status, 16)
	return grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		err := handler(srv, ss)
		ch <- status.Convert(err)
		return err
	}), ch
}

// A client that cancels its stream ends the server's side of it; the task
// carries on to its end.
func TestCancelledStreamLeavesTheTask(t *testing.T) {
	t.Parallel()
	observe, endedCh := ended()
	f := start(t, setup{grpcOpts: []a2agrpc.Option{a2agrpc.WithServerOptions(observe)}})
	ctx, cancel := context.WithCancel(call(t))
	s, err := f.client.SendStreamingMessage(ctx, send("wait"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	id := first.GetTask().GetId()
	if id == "" {
		t.Fatalf("first frame %v, want the task", first)
	}
	cancel()
	select {
	case <-endedCh:
	case <-time.After(testTimeout):
		t.Fatal("the server's stream did not end when the client cancelled it")
	}
	waitState(t, f, id, grpcpb.TaskState_TASK_STATE_WORKING) // not canceled, not failed
	f.agent.release()
	waitState(t, f, id, grpcpb.TaskState_TASK_STATE_COMPLETED)
}

// A client that stops waiting for a blocking SendMessage leaves the task
// running.
func TestCancelledSendMessageLeavesTheTask(t *testing.T) {
	t.Parallel()
	done := make(chan error, 1)
	observe := grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		res, err := handler(ctx, req)
		if info.FullMethod == grpcpb.A2AService_SendMessage_FullMethodName {
			done <- err
		}
		return res, err
	})
	f := start(t, setup{grpcOpts: []a2agrpc.Option{a2agrpc.WithServerOptions(observe)}})
	ctx, cancel := context.WithCancel(call(t))
	defer cancel()
	callErr := make(chan error, 1)
	go func() {
		_, err := f.client.SendMessage(ctx, send("wait"))
		callErr <- err
	}()
	// Find the task once it is working, while the call waits on it.
	var id string
	deadline := time.Now().Add(testTimeout)
	for id == "" {
		list, err := f.client.ListTasks(call(t), &grpcpb.ListTasksRequest{Status: grpcpb.TaskState_TASK_STATE_WORKING})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.GetTasks()) == 1 {
			id = list.GetTasks()[0].GetId()
		} else if time.Now().After(deadline) {
			t.Fatal("no working task")
		} else {
			time.Sleep(5 * time.Millisecond)
		}
	}
	cancel()
	wantCode(t, <-callErr, codes.Canceled)
	select {
	case err := <-done:
		wantCode(t, err, codes.Canceled)
	case <-time.After(testTimeout):
		t.Fatal("SendMessage kept waiting after the client cancelled")
	}
	waitState(t, f, id, grpcpb.TaskState_TASK_STATE_WORKING)
	f.agent.release()
	waitState(t, f, id, grpcpb.TaskState_TASK_STATE_COMPLETED)
}

func TestErrors(t *testing.T) {
	t.Parallel()
	f := start(t, setup{})

	_, err := f.client.GetTask(call(t), &grpcpb.GetTaskRequest{Id: "nope"})
	st := wantCode(t, err, codes.NotFound)
	if ei := errorInfo(t, st); ei.GetReason() != "TASK_NOT_FOUND" || ei.GetDomain() != "a2a-protocol.org" || ei.GetMetadata()["taskId"] != "nope" {
		t.Errorf("ErrorInfo %v", ei)
	}

	bad := send("x")
	bad.Message.MessageId = ""
	bad.Message.Parts = nil
	_, err = f.client.SendMessage(call(t), bad)
	st = wantCode(t, err, codes.InvalidArgument)
	var fields []string
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				fields = append(fields, v.GetField())
			}
		}
	}
	slices.Sort(fields)
	if !slices.Equal(fields, []string{"message.messageId", "message.parts"}) {
		t.Errorf("BadRequest fields %v, want message.messageId and message.parts (status %v)", fields, st.Proto())
	}

	// Up to 10 MiB by default, more than gRPC's own 4 MiB. The call has no
	// deadline: under -race on a loaded machine, moving 5 MiB through
	// HTTP/2 flow control and decoding it takes seconds, and this is a test
	// of the size limit, not of speed (go test's -timeout bounds a hang).
	// The agent answers with the size it got, so nothing 5 MiB long is
	// stored, failed or sent back.
	const size = 5 << 20
	res, err := f.client.SendMessage(noDeadline(t), send("size "+strings.Repeat("x", size)))
	if err != nil {
		t.Errorf("5 MiB message: %v", err)
	} else if parts := res.GetMessage().GetParts(); len(parts) != 1 || parts[0].GetText() != strconv.Itoa(size) {
		t.Errorf("5 MiB message: reply %v, want the %d bytes the agent got", res, size)
	}

	// A Handler refusal before the first frame of a stream.
	s, err := f.client.SendStreamingMessage(call(t), bad)
	if err != nil {
		t.Fatal(err)
	}
	frames, err := drain(t, s)
	wantCode(t, err, codes.InvalidArgument)
	if len(frames) != 0 {
		t.Errorf("frames %v before the error", frames)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	f := start(t, setup{})
	at := func(version ...string) context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
		t.Cleanup(cancel)
		if len(version) == 0 {
			return ctx
		}
		return metadata.AppendToOutgoingContext(ctx, "a2a-version", version[0])
	}
	for _, tc := range []struct {
		ctx       context.Context
		requested string
	}{
		{at("0.3"), "0.3"},
		{at(), "0.3 (no header)"}, // the Handler's reading of a missing version
	} {
		_, err := f.client.GetTask(tc.ctx, &grpcpb.GetTaskRequest{Id: "any"})
		st := wantCode(t, err, codes.FailedPrecondition)
		if ei := errorInfo(t, st); ei.GetReason() != "VERSION_NOT_SUPPORTED" || ei.GetMetadata()["requested"] != tc.requested {
			t.Errorf("ErrorInfo %v, want VERSION_NOT_SUPPORTED for %q", ei, tc.requested)
		}
		s, err := f.client.SubscribeToTask(tc.ctx, &grpcpb.SubscribeToTaskRequest{Id: "any"})
		if err != nil {
			t.Fatal(err)
		}
		frames, err := drain(t, s)
		st = wantCode(t, err, codes.FailedPrecondition)
		if len(frames) != 0 || errorInfo(t, st).GetReason() != "VERSION_NOT_SUPPORTED" {
			t.Errorf("stream: frames %v, status %v", frames, st)
		}
	}
	// A patch version counts as its Major.Minor.
	if _, err := f.client.SendMessage(at("1.0.3"), send("hello")); err != nil {
		t.Errorf("A2A-Version 1.0.3: %v", err)
	}
}

func TestExtensions(t *testing.T) {
	t.Parallel()
	const required = "https://example.com/ext/required/v1"
	f := start(t, setup{card: func(c *a2a.AgentCard) {
		c.Capabilities.Extensions = []a2a.AgentExtension{{URI: required, Required: true}}
	}})
	_, err := f.client.SendMessage(call(t), send("extensions"))
	st := wantCode(t, err, codes.FailedPrecondition)
	if ei := errorInfo(t, st); ei.GetReason() != "EXTENSION_SUPPORT_REQUIRED" || ei.GetMetadata()["extension"] != required {
		t.Errorf("ErrorInfo %v", ei)
	}
	// Comma-separated, and repeated: all of them reach the agent.
	res, err := f.client.SendMessage(call(t, "a2a-extensions", "urn:a, "+required, "a2a-extensions", "urn:b"), send("extensions"))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.GetMessage().GetParts()[0].GetText(); got != "urn:a "+required+" urn:b" {
		t.Errorf("the agent saw extensions %q", got)
	}
}

// nested is a data value of depth structs, one inside the other.
func nested(depth int) *structpb.Value {
	v := structpb.NewStringValue("bottom")
	for range depth {
		v = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"in": v}})
	}
	return v
}

func TestLimits(t *testing.T) {
	t.Parallel()
	f := start(t, setup{
		handlerOpts: []server.Option{server.WithLimits(server.Limits{MaxDepth: 8, MaxStreams: 1})},
		grpcOpts:    []a2agrpc.Option{a2agrpc.WithMaxRecvMsgSize(4096)},
	})
	// SendMessageRequest, message, parts, part: four levels before the data.
	withData := func(depth int) *grpcpb.SendMessageRequest {
		r := send("hello")
		r.Message.Parts = append(r.Message.Parts, &grpcpb.Part{Content: &grpcpb.Part_Data{Data: nested(depth)}})
		return r
	}
	if _, err := f.client.SendMessage(call(t), withData(4)); err != nil {
		t.Errorf("eight levels: %v", err)
	}
	_, err := f.client.SendMessage(call(t), withData(5))
	if st := wantCode(t, err, codes.InvalidArgument); !strings.Contains(st.Message(), "8 levels") {
		t.Errorf("nine levels: %v", st)
	}

	big := send(strings.Repeat("x", 5000))
	_, err = f.client.SendMessage(call(t), big)
	wantCode(t, err, codes.ResourceExhausted)

	// The Handler's stream limit, passed through.
	s, err := f.client.SendStreamingMessage(call(t), send("wait"))
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Recv()
	if err != nil {
		t.Fatal(err)
	}
	sub, err := f.client.SubscribeToTask(call(t), &grpcpb.SubscribeToTaskRequest{Id: first.GetTask().GetId()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = drain(t, sub)
	if ei := errorInfo(t, wantCode(t, err, codes.ResourceExhausted)); ei.GetReason() != "RESOURCE_EXHAUSTED" {
		t.Errorf("ErrorInfo %v", ei)
	}
	f.agent.release()
	if _, err := drain(t, s); err != nil {
		t.Errorf("first stream: %v", err)
	}
}

// An error after the first frame ends the stream with its status.
func TestErrorMidStream(t *testing.T) {
	t.Parallel()
	f := start(t, setup{})
	s, err := f.client.SendStreamingMessage(call(t), send("stuck"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	// Close ends the Handler's streams at once; the stuck agent keeps it
	// from returning until the test ends.
	closeCtx, stopClose := context.WithCancel(context.Background())
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = f.h.Close(closeCtx)
	}()
	t.Cleanup(func() {
		stopClose()
		<-closed
	})
	frames, err := drain(t, s)
	st := wantCode(t, err, codes.Unavailable)
	if !strings.Contains(st.Message(), "shutting down") {
		t.Errorf("status %v, frames before it %v", st, frames)
	}
}

// Header fields the Handler adds to an answer (here the delivery state of
// a webhook, for a client that declared the goa2a push-delivery
// extension) come as header metadata; other calls get none.
func TestResponseHeader(t *testing.T) {
	t.Parallel()
	f := start(t, setup{})
	res, err := f.client.SendMessage(call(t), send("input"))
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetTask().GetId()
	cfg, err := f.client.CreateTaskPushNotificationConfig(call(t), &grpcpb.TaskPushNotificationConfig{TaskId: id, Url: "https://example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	get := func(kv ...string) metadata.MD {
		t.Helper()
		var hdr metadata.MD
		if _, err := f.client.GetTaskPushNotificationConfig(call(t, kv...),
			&grpcpb.GetTaskPushNotificationConfigRequest{TaskId: id, Id: cfg.GetId()}, grpc.Header(&hdr)); err != nil {
			t.Fatal(err)
		}
		return hdr
	}
	hdr := get("a2a-extensions", server.PushDeliveryExtension)
	if got := hdr.Get("a2a-push-delivery"); len(got) != 1 || !strings.HasPrefix(got[0], "delivered=") {
		t.Errorf("a2a-push-delivery %q", got)
	}
	if got := hdr.Get("a2a-extensions"); len(got) != 1 || got[0] != server.PushDeliveryExtension {
		t.Errorf("a2a-extensions %q, want the extension echoed", got)
	}
	hdr = get()
	if len(hdr.Get("a2a-push-delivery")) != 0 || len(hdr.Get("a2a-extensions")) != 0 {
		t.Errorf("without the extension: header %v", hdr)
	}
}
