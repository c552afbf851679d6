package grpcclient_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/client/grpcclient"
	"github.com/goa2a/a2a/internal/grpcpb"
)

// fakeServer is a minimal A2AService: canned answers built from model
// values, the metadata and requests of every call recorded. Task id
// "missing" is not found (with ErrorInfo); "bare" is NOT_FOUND without
// details; "slow" waits for the call to end.
type fakeServer struct {
	grpcpb.UnimplementedA2AServiceServer
	card *a2a.AgentCard

	mu    sync.Mutex
	calls []call

	canceled chan struct{} // closed when SubscribeToTask "hold" ends by cancellation
}

type call struct {
	method string
	md     metadata.MD
	req    proto.Message
}

func (s *fakeServer) record(ctx context.Context, method string, req proto.Message) {
	md, _ := metadata.FromIncomingContext(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call{method, md, req})
}

func (s *fakeServer) all() []call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// pb converts a model value to its generated message.
func pb[M proto.Message](v any, m M) M {
	if err := grpcpb.ToProto(v, m); err != nil {
		panic(err)
	}
	return m
}

func task(id string, state a2a.TaskState) *a2a.Task {
	return &a2a.Task{ID: id, ContextID: "c1", Status: a2a.TaskStatus{State: state}}
}

func taskError(id string) error {
	switch id {
	case "missing":
		return grpcpb.Status(a2a.NewError(a2a.CodeTaskNotFound, "no task "+id)).Err()
	case "bare":
		return status.Error(codes.NotFound, "nothing here")
	}
	return nil
}

func (s *fakeServer) SendMessage(ctx context.Context, r *grpcpb.SendMessageRequest) (*grpcpb.SendMessageResponse, error) {
	s.record(ctx, "SendMessage", r)
	if strings.HasPrefix(r.GetMessage().GetParts()[0].GetText(), "reply") {
		msg := &a2a.Message{MessageID: "m2", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("re: " + r.GetMessage().GetParts()[0].GetText())}}
		return pb(&a2a.SendMessageResponse{Result: msg}, new(grpcpb.SendMessageResponse)), nil
	}
	return pb(&a2a.SendMessageResponse{Result: task("t1", a2a.TaskStateCompleted)}, new(grpcpb.SendMessageResponse)), nil
}

func (s *fakeServer) SendStreamingMessage(r *grpcpb.SendMessageRequest, st grpc.ServerStreamingServer[grpcpb.StreamResponse]) error {
	s.record(st.Context(), "SendStreamingMessage", r)
	if r.GetMessage().GetParts()[0].GetText() == "nostream" {
		return grpcpb.Status(a2a.NewError(a2a.CodeUnsupportedOperation, "no streaming here")).Err()
	}
	for _, ev := range []a2a.Event{
		task("t1", a2a.TaskStateSubmitted),
		&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c1", Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("out")}}},
		&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}},
	} {
		if err := st.Send(pb(&a2a.StreamResponse{Event: ev}, new(grpcpb.StreamResponse))); err != nil {
			return err
		}
	}
	return nil
}

func (s *fakeServer) GetTask(ctx context.Context, r *grpcpb.GetTaskRequest) (*grpcpb.Task, error) {
	s.record(ctx, "GetTask", r)
	if r.GetId() == "slow" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if err := taskError(r.GetId()); err != nil {
		return nil, err
	}
	return pb(task(r.GetId(), a2a.TaskStateWorking), new(grpcpb.Task)), nil
}

func (s *fakeServer) ListTasks(ctx context.Context, r *grpcpb.ListTasksRequest) (*grpcpb.ListTasksResponse, error) {
	s.record(ctx, "ListTasks", r)
	resp := &a2a.ListTasksResponse{Tasks: []a2a.Task{*task("t1", a2a.TaskStateWorking), *task("t2", a2a.TaskStateCompleted)}, NextPageToken: "p2", PageSize: 2, TotalSize: 3}
	return pb(resp, new(grpcpb.ListTasksResponse)), nil
}

func (s *fakeServer) CancelTask(ctx context.Context, r *grpcpb.CancelTaskRequest) (*grpcpb.Task, error) {
	s.record(ctx, "CancelTask", r)
	if err := taskError(r.GetId()); err != nil {
		return nil, err
	}
	return pb(task(r.GetId(), a2a.TaskStateCanceled), new(grpcpb.Task)), nil
}

func (s *fakeServer) SubscribeToTask(r *grpcpb.SubscribeToTaskRequest, st grpc.ServerStreamingServer[grpcpb.StreamResponse]) error {
	s.record(st.Context(), "SubscribeToTask", r)
	if err := taskError(r.GetId()); err != nil {
		return err
	}
	for _, ev := range []a2a.Event{
		task(r.GetId(), a2a.TaskStateWorking),
		&a2a.TaskStatusUpdateEvent{TaskID: r.GetId(), ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}},
	} {
		if err := st.Send(pb(&a2a.StreamResponse{Event: ev}, new(grpcpb.StreamResponse))); err != nil {
			return err
		}
	}
	if r.GetId() == "hold" {
		<-st.Context().Done()
		if errors.Is(st.Context().Err(), context.Canceled) {
			close(s.canceled)
		}
		return st.Context().Err()
	}
	return nil
}

func pushConfig(taskID, id string) *a2a.TaskPushNotificationConfig {
	return &a2a.TaskPushNotificationConfig{TaskID: taskID, ID: id, URL: "https://hooks.example.com/a2a"}
}

func (s *fakeServer) CreateTaskPushNotificationConfig(ctx context.Context, r *grpcpb.TaskPushNotificationConfig) (*grpcpb.TaskPushNotificationConfig, error) {
	s.record(ctx, "CreateTaskPushNotificationConfig", r)
	out := proto.Clone(r).(*grpcpb.TaskPushNotificationConfig)
	out.Id = "p1"
	return out, nil
}

func (s *fakeServer) GetTaskPushNotificationConfig(ctx context.Context, r *grpcpb.GetTaskPushNotificationConfigRequest) (*grpcpb.TaskPushNotificationConfig, error) {
	s.record(ctx, "GetTaskPushNotificationConfig", r)
	return pb(pushConfig(r.GetTaskId(), r.GetId()), new(grpcpb.TaskPushNotificationConfig)), nil
}

func (s *fakeServer) ListTaskPushNotificationConfigs(ctx context.Context, r *grpcpb.ListTaskPushNotificationConfigsRequest) (*grpcpb.ListTaskPushNotificationConfigsResponse, error) {
	s.record(ctx, "ListTaskPushNotificationConfigs", r)
	resp := &a2a.ListTaskPushNotificationConfigsResponse{Configs: []a2a.TaskPushNotificationConfig{*pushConfig(r.GetTaskId(), "p1"), *pushConfig(r.GetTaskId(), "p2")}}
	return pb(resp, new(grpcpb.ListTaskPushNotificationConfigsResponse)), nil
}

func (s *fakeServer) DeleteTaskPushNotificationConfig(ctx context.Context, r *grpcpb.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	s.record(ctx, "DeleteTaskPushNotificationConfig", r)
	return &emptypb.Empty{}, nil
}

func (s *fakeServer) GetExtendedAgentCard(ctx context.Context, r *grpcpb.GetExtendedAgentCardRequest) (*grpcpb.AgentCard, error) {
	s.record(ctx, "GetExtendedAgentCard", r)
	ext := *s.card
	ext.Description = "the extended card"
	return pb(&ext, new(grpcpb.AgentCard)), nil
}

// serve starts the fake on 127.0.0.1 with the server options (TLS
// credentials, say) and returns it and its address.
func serve(t *testing.T, opts ...grpc.ServerOption) (*fakeServer, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	fake := &fakeServer{canceled: make(chan struct{})}
	grpcpb.RegisterA2AServiceServer(srv, fake)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return fake, lis.Addr().String()
}

// cardFor is a card whose only interface is the gRPC one at url.
func cardFor(url, tenant string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:                "fake",
		Description:         "A fake gRPC agent.",
		Version:             "1.0.0",
		SupportedInterfaces: []a2a.AgentInterface{{URL: url, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0", Tenant: tenant}},
		Capabilities:        a2a.AgentCapabilities{Streaming: a2a.Ptr(true)},
		DefaultInputModes:   []string{"text/plain"},
		DefaultOutputModes:  []string{"text/plain"},
		Skills:              []a2a.AgentSkill{{ID: "s", Name: "S", Description: "S.", Tags: []string{"t"}}},
	}
}

func newClient(t *testing.T, fake *fakeServer, url string, opts ...client.Option) *client.Client {
	t.Helper()
	card := cardFor(url, "acme")
	if fake != nil {
		fake.card = card
	}
	c, err := client.NewFromCard(t.Context(), card, append([]client.Option{grpcclient.Transport()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if c.Binding() != a2a.BindingGRPC {
		t.Fatalf("binding %s", c.Binding())
	}
	return c
}

func events(t *testing.T, seq func(func(a2a.Event, error) bool)) []string {
	t.Helper()
	var out []string
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("after %v: %v", out, err)
		}
		out = append(out, describe(ev))
	}
	return out
}

func describe(ev a2a.Event) string {
	switch e := ev.(type) {
	case *a2a.Task:
		return "task " + e.ID + " " + e.Status.State.String()
	case *a2a.Message:
		return "message " + e.Text()
	case *a2a.TaskStatusUpdateEvent:
		return "status " + e.Status.State.String()
	case *a2a.TaskArtifactUpdateEvent:
		return "artifact " + e.Artifact.ArtifactID + " " + e.Artifact.Text()
	}
	return "?"
}

// result is the result of a SendMessage, if it is a T.
func result[T any](resp *a2a.SendMessageResponse) (T, bool) {
	var zero T
	if resp == nil {
		return zero, false
	}
	v, ok := resp.Result.(T)
	return v, ok
}

// TestRoundTrip runs every operation through client.Client over gRPC:
// the requests arrive as sent (the interface's tenant included), the
// results come back as the server built them.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	fake, addr := serve(t)
	c := newClient(t, fake, addr)
	ctx := t.Context()

	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("hello")})
	if tk, ok := result[*a2a.Task](resp); err != nil || !ok || tk.ID != "t1" || tk.Status.State != a2a.TaskStateCompleted {
		t.Errorf("SendMessage = %+v, %v", resp, err)
	}
	resp, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("reply hi")})
	if m, ok := result[*a2a.Message](resp); err != nil || !ok || m.Text() != "re: reply hi" {
		t.Errorf("SendMessage (direct reply) = %+v, %v", resp, err)
	}
	if got := events(t, c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("go")})); !slices.Equal(got, []string{
		"task t1 TASK_STATE_SUBMITTED", "status TASK_STATE_WORKING", "artifact a out", "status TASK_STATE_COMPLETED",
	}) {
		t.Errorf("SendStreamingMessage = %v", got)
	}
	if tk, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "t7", HistoryLength: a2a.Ptr[int32](3)}); err != nil || tk.ID != "t7" || tk.Status.State != a2a.TaskStateWorking {
		t.Errorf("GetTask = %+v, %v", tk, err)
	}
	list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: "c1", PageSize: a2a.Ptr[int32](2)})
	if err != nil || len(list.Tasks) != 2 || list.Tasks[1].ID != "t2" || list.NextPageToken != "p2" || list.TotalSize != 3 {
		t.Errorf("ListTasks = %+v, %v", list, err)
	}
	if tk, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: "t8"}); err != nil || tk.Status.State != a2a.TaskStateCanceled {
		t.Errorf("CancelTask = %+v, %v", tk, err)
	}
	if got := events(t, c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: "t9"})); !slices.Equal(got, []string{"task t9 TASK_STATE_WORKING", "status TASK_STATE_INPUT_REQUIRED"}) {
		t.Errorf("SubscribeToTask = %v", got)
	}
	pc, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: "t1", URL: "https://hooks.example.com/x", Token: "tok"})
	if err != nil || pc.ID != "p1" || pc.URL != "https://hooks.example.com/x" || pc.Token != "tok" {
		t.Errorf("CreateTaskPushNotificationConfig = %+v, %v", pc, err)
	}
	if pc, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: "t1", ID: "p1"}); err != nil || pc.ID != "p1" || pc.TaskID != "t1" {
		t.Errorf("GetTaskPushNotificationConfig = %+v, %v", pc, err)
	}
	pl, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t1"})
	if err != nil || len(pl.Configs) != 2 || pl.Configs[1].ID != "p2" {
		t.Errorf("ListTaskPushNotificationConfigs = %+v, %v", pl, err)
	}
	if err := c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: "t1", ID: "p1"}); err != nil {
		t.Errorf("DeleteTaskPushNotificationConfig: %v", err)
	}
	card, err := c.GetExtendedAgentCard(ctx)
	if err != nil || card.Description != "the extended card" || c.Card().Description != "the extended card" {
		t.Errorf("GetExtendedAgentCard = %+v, %v", card, err)
	}

	calls := fake.all()
	var methods []string
	for _, cl := range calls {
		methods = append(methods, cl.method)
		// Every request carries the interface's tenant.
		if tr, ok := cl.req.(interface{ GetTenant() string }); !ok || tr.GetTenant() != "acme" {
			t.Errorf("%s: tenant missing: %v", cl.method, cl.req)
		}
	}
	want := []string{"SendMessage", "SendMessage", "SendStreamingMessage", "GetTask", "ListTasks", "CancelTask", "SubscribeToTask",
		"CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig", "GetExtendedAgentCard"}
	if !slices.Equal(methods, want) {
		t.Fatalf("server saw %v\nwant %v", methods, want)
	}
	if r := calls[0].req.(*grpcpb.SendMessageRequest); r.GetMessage().GetParts()[0].GetText() != "hello" || r.GetMessage().GetRole() != grpcpb.Role_ROLE_USER {
		t.Errorf("SendMessage request = %v", r)
	}
	if r := calls[3].req.(*grpcpb.GetTaskRequest); r.GetId() != "t7" || r.GetHistoryLength() != 3 {
		t.Errorf("GetTask request = %v", r)
	}
	if r := calls[4].req.(*grpcpb.ListTasksRequest); r.GetContextId() != "c1" || r.GetPageSize() != 2 {
		t.Errorf("ListTasks request = %v", r)
	}
	if r := calls[10].req.(*grpcpb.DeleteTaskPushNotificationConfigRequest); r.GetTaskId() != "t1" || r.GetId() != "p1" {
		t.Errorf("Delete request = %v", r)
	}
}

// TestErrors: an A2A error comes back with its kind, from the ErrorInfo
// or the code alone, on unary calls and before a stream's first event; a
// dead server and an ended context are not A2A errors.
func TestErrors(t *testing.T) {
	t.Parallel()
	fake, addr := serve(t)
	c := newClient(t, fake, addr)

	_, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "missing"})
	var ae *a2a.Error
	if !errors.Is(err, a2a.ErrTaskNotFound) || !errors.As(err, &ae) || ae.Text() != "no task missing" {
		t.Errorf("GetTask(missing) = %v, want TaskNotFound", err)
	}
	if _, err := c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: "bare"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("CancelTask(bare) = %v, want TaskNotFound from NOT_FOUND", err)
	}
	n := 0
	for _, err := range c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: "missing"}) {
		n++
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("SubscribeToTask(missing) = %v", err)
		}
	}
	if n != 1 {
		t.Errorf("SubscribeToTask(missing) yielded %d items", n)
	}

	// The caller's deadline: a context error, not an A2A one.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: "slow"})
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ae) {
		t.Errorf("GetTask past the deadline = %v", err)
	}

	// Nothing listens: a transport error, not an A2A one.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := lis.Addr().String()
	_ = lis.Close()
	dc := newClient(t, nil, dead)
	_, err = dc.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t1"})
	if err == nil || errors.As(err, &ae) {
		t.Errorf("GetTask on a closed port = %v (%T), want a transport error", err, err)
	}
}

// TestMetadata: the service parameters and the client's headers and
// credentials arrive as metadata, on unary and streaming calls.
func TestMetadata(t *testing.T) {
	t.Parallel()
	fake, addr := serve(t)
	card := cardFor(addr, "")
	card.SecuritySchemes = map[string]a2a.SecurityScheme{"key": {APIKey: &a2a.APIKeySecurityScheme{Location: "header", Name: "X-API-Key"}}}
	fake.card = card
	c, err := client.NewFromCard(t.Context(), card, grpcclient.Transport(),
		client.WithBearerToken("tok"), client.WithHeader("X-Trace", "7"),
		client.WithCredentials("key", func(context.Context) (string, error) { return "k1", nil }),
		client.WithExtensions("https://example.com/ext/a", "https://example.com/ext/b"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := metadata.AppendToOutgoingContext(t.Context(), "x-caller", "c", "a2a-version", "0.3")
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "t1"}); err != nil {
		t.Fatal(err)
	}
	events(t, c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: "t1"}))
	calls := fake.all()
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	for _, cl := range calls {
		for key, want := range map[string]string{
			"a2a-version":    "1.0",
			"a2a-extensions": "https://example.com/ext/a,https://example.com/ext/b",
			"authorization":  "Bearer tok",
			"x-api-key":      "k1",
			"x-trace":        "7",
			"x-caller":       "c",
		} {
			if got := cl.md.Get(key); len(got) != 1 || got[0] != want {
				t.Errorf("%s: metadata %s = %q, want %q", cl.method, key, got, want)
			}
		}
	}
}

// TestStreamClose: a stream yields its events in order, and stopping the
// loop cancels the call on the server.
func TestStreamClose(t *testing.T) {
	t.Parallel()
	fake, addr := serve(t)
	c := newClient(t, fake, addr)
	var got []string
	for ev, err := range c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: "hold"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, describe(ev))
		if len(got) == 2 {
			break // the server is now waiting for the call to end
		}
	}
	if !slices.Equal(got, []string{"task hold TASK_STATE_WORKING", "status TASK_STATE_INPUT_REQUIRED"}) {
		t.Errorf("events = %v", got)
	}
	select {
	case <-fake.canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the server's call was not canceled after the loop stopped")
	}
}

// TestURLs: the three URL forms, TLS by scheme or by the client's TLS
// settings, and the URLs refused.
func TestURLs(t *testing.T) {
	t.Parallel()
	// A certificate for 127.0.0.1 that the test trusts.
	hs := httptest.NewUnstartedServer(http.NotFoundHandler())
	hs.StartTLS()
	cert, roots := hs.TLS.Certificates[0], x509.NewCertPool()
	roots.AddCert(hs.Certificate())
	hs.Close()
	trust := &tls.Config{RootCAs: roots}

	fake, plain := serve(t)
	tfake, secure := serve(t, grpc.Creds(credentials.NewServerTLSFromCert(&cert)))
	_, port, _ := net.SplitHostPort(secure)

	cases := []struct {
		name string
		fake *fakeServer
		url  string
		opts []client.Option
	}{
		{"host:port, plaintext", fake, plain, nil},
		{"http://", fake, "http://" + plain, nil},
		{"https://, WithTLS", tfake, "https://" + secure, []client.Option{grpcclient.Transport(grpcclient.WithTLS(trust))}},
		{"https://, the HTTP client's TLS", tfake, "https://" + secure + "/", []client.Option{client.WithHTTPClient(&http.Client{Transport: &http.Transport{TLSClientConfig: trust}})}},
		{"host:port, the HTTP client's TLS", tfake, "127.0.0.1:" + port, []client.Option{client.WithHTTPClient(&http.Client{Transport: &http.Transport{TLSClientConfig: trust}})}},
		{"host:port, WithTLS", tfake, secure, []client.Option{grpcclient.Transport(grpcclient.WithTLS(trust))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.fake, tc.url, tc.opts...)
			if _, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t1"}); err != nil {
				t.Errorf("GetTask: %v", err)
			}
		})
	}
	// Plaintext to the TLS server, and TLS without trusting its
	// certificate, fail without an answer.
	var ae *a2a.Error
	for name, c := range map[string]*client.Client{
		"plaintext to TLS": newClient(t, nil, secure),
		"untrusted":        newClient(t, nil, "https://"+secure),
	} {
		if _, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t1"}); err == nil || errors.As(err, &ae) {
			t.Errorf("%s: %v, want a transport error", name, err)
		}
	}

	for _, bad := range []string{"127.0.0.1", "https://127.0.0.1:1/a2a", "ftp://127.0.0.1:1", "https://u@127.0.0.1:1", "http://127.0.0.1:1?x=1", ":1"} {
		_, err := client.NewFromCard(t.Context(), cardFor(bad, ""), grpcclient.Transport())
		if err == nil || !strings.Contains(err.Error(), "grpcclient: interface URL") {
			t.Errorf("URL %q: %v", bad, err)
		}
	}
}

// TestSendAndFollowFallback: a streaming call refused before its first
// event is an error of the call itself, so SendAndFollow sends the
// message again without streaming, as on the JSON bindings.
func TestSendAndFollowFallback(t *testing.T) {
	t.Parallel()
	fake, addr := serve(t)
	c := newClient(t, fake, addr)
	got := events(t, c.SendAndFollow(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("nostream")}))
	if !slices.Equal(got, []string{"task t1 TASK_STATE_COMPLETED"}) {
		t.Errorf("events = %v", got)
	}
	var methods []string
	for _, cl := range fake.all() {
		methods = append(methods, cl.method)
	}
	if !slices.Equal(methods, []string{"SendStreamingMessage", "SendMessage"}) {
		t.Errorf("server saw %v", methods)
	}
}
