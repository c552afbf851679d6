package serve_test

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/client/grpcclient"
	"github.com/goa2a/a2a/internal/grpcpb"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/serve"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// testCard is a card as a user writes it: no interfaces (the Server
// fills them in).
func testCard() *a2a.AgentCard {
	return &a2a.AgentCard{Name: "tester", Version: "1.0.0", Description: "replies",
		Capabilities: a2a.AgentCapabilities{Streaming: a2a.Ptr(true)}}
}

var reply = server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
	return w.Complete(ctx, "got "+req.Message.Text())
})

// run starts srv and stops it, and checks it stopped cleanly, when the
// test ends.
func run(t *testing.T, srv *serve.Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("Run did not return a minute after its context ended")
		}
	})
	waitReady(t, srv)
}

func waitReady(t *testing.T, srv *serve.Server) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !srv.Ready(); {
		if time.Now().After(deadline) {
			t.Fatal("the server is not ready after 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func newServer(t *testing.T, card *a2a.AgentCard, opts ...serve.Option) *serve.Server {
	t.Helper()
	srv, err := serve.New(card, reply, append([]serve.Option{serve.WithAddr("127.0.0.1:0")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

func TestPushPromisedWithoutDelivery(t *testing.T) {
	card := testCard()
	card.Capabilities.PushNotifications = a2a.Ptr(true)
	_, err := serve.New(card, reply, serve.WithAddr("127.0.0.1:0"))
	if err == nil {
		t.Fatal("a card promising push notifications with no delivery was accepted")
	}
	for _, want := range []string{"pushNotifications", "serve.WithPush", "set capabilities.pushNotifications to false"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	// With delivery it is accepted, and the card keeps its promise.
	srv := newServer(t, card, serve.WithPush(serve.Push{}))
	defer srv.Close()
	if !srv.Card().Capabilities.SupportsPush() {
		t.Error("the served card does not declare push notifications")
	}
}

func TestStoreGivenTwice(t *testing.T) {
	a, b := memory.New(), memory.New()
	_, err := serve.New(testCard(), reply, serve.WithAddr("127.0.0.1:0"), serve.WithStore(a),
		serve.WithHandlerOptions(server.WithStore(b)))
	if err == nil || !strings.Contains(err.Error(), "two different stores") || !strings.Contains(err.Error(), "serve.WithStore") {
		t.Fatalf("two stores: err = %v, want one saying the stores differ and naming serve.WithStore", err)
	}
	// The same store twice is one store.
	srv := newServer(t, testCard(), serve.WithStore(a), serve.WithHandlerOptions(server.WithStore(a)))
	defer srv.Close()
	if srv.Handler().Store() != a {
		t.Error("the Handler does not use the store given")
	}
	// A pusher of the caller's beside the Server's delivery.
	d, err := push.NewDeliverer(a)
	if err != nil {
		t.Fatal(err)
	}
	_, err = serve.New(testCard(), reply, serve.WithAddr("127.0.0.1:0"), serve.WithStore(a), serve.WithPush(serve.Push{}),
		serve.WithHandlerOptions(server.WithPusher(d)))
	if err == nil || !strings.Contains(err.Error(), "two different pushers") {
		t.Fatalf("two pushers: err = %v, want one saying the pushers differ", err)
	}
}

func TestCardDerived(t *testing.T) {
	in := testCard()
	in.SupportedInterfaces = []a2a.AgentInterface{{URL: "http://elsewhere/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}}
	srv := newServer(t, in, serve.WithGRPC("127.0.0.1:0"), serve.WithBindings(a2a.BindingHTTPJSON),
		serve.WithPublicURL("https://agents.example/"), serve.WithPush(serve.Push{}), serve.WithAPIKeys(map[string]string{"k-123456789012": "alice"}))
	defer srv.Close()
	card := srv.Card()
	var got []string
	for _, i := range card.SupportedInterfaces {
		got = append(got, i.ProtocolBinding+" "+i.URL)
	}
	_, port, _ := strings.Cut(srv.GRPCAddr().String(), ":")
	want := []string{a2a.BindingHTTPJSON + " https://agents.example/a2a/rest", a2a.BindingGRPC + " agents.example:" + port}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("interfaces:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !card.Capabilities.SupportsPush() {
		t.Error("push is configured but the card does not declare it")
	}
	var ext bool
	for _, e := range card.Capabilities.Extensions {
		ext = ext || e.URI == server.PushDeliveryExtension
	}
	if !ext {
		t.Error("the card does not declare the push delivery extension")
	}
	if _, ok := card.SecuritySchemes[serve.APIKeyScheme]; !ok || len(card.SecurityRequirements) != 1 {
		t.Errorf("security: %v %v, want the API key scheme required", card.SecuritySchemes, card.SecurityRequirements)
	}
	if len(in.SupportedInterfaces) != 1 || in.Capabilities.PushNotifications != nil || in.SecuritySchemes != nil {
		t.Error("New modified the caller's card")
	}
}

// TestAuthenticatedBindings: with API keys, every binding refuses a call
// without one, the card and the probes stay open, and a call with the key
// works on each binding as its principal.
func TestAuthenticatedBindings(t *testing.T) {
	const key = "key-0123456789abcdef"
	srv := newServer(t, testCard(), serve.WithGRPC("127.0.0.1:0"), serve.WithAPIKeys(map[string]string{key: "alice"}))
	run(t, srv)
	ctx := t.Context()

	for _, path := range []string{server.WellKnownCardPath, serve.HealthPath, serve.ReadyPath} {
		if code := get(t, srv.URL()+path); code != http.StatusOK {
			t.Errorf("GET %s without a key: %d, want 200", path, code)
		}
	}
	if code := get(t, srv.URL()+"/a2a/rest/tasks"); code != http.StatusUnauthorized {
		t.Errorf("GET /a2a/rest/tasks without a key: %d, want 401", code)
	}
	conn, err := grpc.NewClient(srv.GRPCAddr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = grpcpb.NewA2AServiceClient(conn).GetTask(ctx, &grpcpb.GetTaskRequest{Id: "x"})
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("gRPC GetTask without a key: %v, want Unauthenticated", err)
	}

	for _, b := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
		c, err := client.New(ctx, srv.URL(), client.WithBindings(b), grpcclient.Transport(), client.WithHeader("X-API-Key", key))
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("hi")})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		task, ok := res.Result.(*a2a.Task)
		if !ok || task.Status.State != a2a.TaskStateCompleted || task.Status.Message.Text() != "got hi" {
			t.Errorf("%s: answer %+v, want a completed task saying \"got hi\"", b, res.Result)
		}
	}
}

func get(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// TestPushDelivered: the Server runs delivery by itself, signs with the key
// it publishes, and a receiver that verifies against that key gets the
// task's final status.
func TestPushDelivered(t *testing.T) {
	srv := newServer(t, testCard(), serve.WithPush(serve.Push{Allow: []string{"127.0.0.1"}}))
	got := make(chan push.Event, 16)
	recv, err := push.NewReceiver(func(ctx context.Context, ev push.Event) error {
		got <- ev
		return nil
	}, push.WithJWKSURL(srv.URL()+push.JWKSPath), push.WithExpectedIssuer(srv.URL()), push.WithToken("secret-token"),
		push.WithTaskFilter(func(context.Context, string) bool { return true }))
	if err != nil {
		t.Fatal(err)
	}
	hook := httptest.NewServer(recv)
	defer hook.Close()
	run(t, srv)

	ctx := t.Context()
	c, err := client.New(ctx, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("ping"),
		Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: hook.URL, Token: "secret-token"}}})
	if err != nil {
		t.Fatal(err)
	}
	task := res.Result.(*a2a.Task)
	timeout := time.After(time.Minute)
	for {
		select {
		case ev := <-got:
			if ev.TaskID != task.ID || ev.Signature == nil {
				t.Fatalf("notification %+v: want one of task %s, signed", ev, task.ID)
			}
			if st, ok := ev.Event.(*a2a.TaskStatusUpdateEvent); ok && st.Status.State == a2a.TaskStateCompleted {
				return
			}
			if tk, ok := ev.Event.(*a2a.Task); ok && tk.Status.State == a2a.TaskStateCompleted {
				return
			}
		case <-timeout:
			t.Fatal("no notification of the completed task within a minute")
		}
	}
}

// TestGracefulShutdown: a task running when the context ends may finish
// within the grace period, /readyz turns 503 meanwhile, and Run returns
// cleanly once it has.
func TestGracefulShutdown(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	slow := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.Working(ctx, "working"); err != nil {
			return err
		}
		close(started)
		<-release
		return w.Complete(ctx, "finished")
	})
	st := memory.New()
	stopping := make(chan int, 1)
	srv, err := serve.New(testCard(), slow, serve.WithAddr("127.0.0.1:0"), serve.WithOps("127.0.0.1:0"), serve.WithStore(st),
		serve.WithGrace(time.Minute), serve.WithOnShutdown(func(running int) { stopping <- running }))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	waitReady(t, srv)

	c, err := client.New(t.Context(), srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("go"),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
	if err != nil {
		t.Fatal(err)
	}
	taskID := res.Result.(*a2a.Task).ID
	<-started
	cancel()
	if n := <-stopping; n != 1 {
		t.Errorf("shutdown started with %d running tasks, want 1", n)
	}
	ops := "http://" + srv.OpsAddr().String()
	if code := get(t, ops+serve.ReadyPath); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz while shutting down: %d, want 503", code)
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Run did not return a minute after the task finished")
	}
	task, _, err := st.Get(context.Background(), store.Scope{}, taskID)
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != a2a.TaskStateCompleted {
		t.Errorf("the task running at shutdown ended %s, want completed within the grace period", task.Status.State)
	}
}

// TestAuthLimitSparesCard: an address out of authentication attempts gets
// 429 on the bindings, and still reads the card and the probes.
func TestAuthLimitSparesCard(t *testing.T) {
	srv := newServer(t, testCard(), serve.WithAPIKeys(map[string]string{"key-0123456789abcdef": "alice"}), serve.WithAuthFailureLimit(1))
	defer srv.Close()
	call := func(path string) int {
		req := httptest.NewRequest("GET", path, nil)
		req.RemoteAddr = "203.0.113.7:1234"
		req.Header.Set("X-API-Key", "wrong-0123456789abcdef")
		rec := httptest.NewRecorder()
		srv.HTTPHandler().ServeHTTP(rec, req)
		return rec.Code
	}
	if code := call("/a2a/rest/tasks"); code != http.StatusUnauthorized {
		t.Fatalf("first wrong key: %d, want 401", code)
	}
	if code := call("/a2a/rest/tasks"); code != http.StatusTooManyRequests {
		t.Fatalf("second wrong key: %d, want 429", code)
	}
	for _, path := range []string{server.WellKnownCardPath, serve.HealthPath} {
		if code := call(path); code != http.StatusOK {
			t.Errorf("%s from the limited address: %d, want 200", path, code)
		}
	}
}

func TestRefusedAtNew(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []serve.Option
		want string
	}{
		{"mutual TLS without TLS", []serve.Option{serve.WithMutualTLS(auth.MutualTLSConfig{})}, "WithMutualTLS needs WithTLS"},
		{"TLS without a certificate", []serve.Option{serve.WithTLS(&tls.Config{})}, "no certificate"},
		{"relative public URL", []serve.Option{serve.WithPublicURL("agents.example")}, "absolute http:// or https:// URL"},
		{"gRPC given as an HTTP binding", []serve.Option{serve.WithBindings(a2a.BindingGRPC)}, "is not an HTTP binding"},
		{"no API key", []serve.Option{serve.WithAPIKeys(nil)}, "no key given"},
		{"negative grace", []serve.Option{serve.WithGrace(-time.Second)}, "not a positive duration"},
	} {
		_, err := serve.New(testCard(), reply, append([]serve.Option{serve.WithAddr("127.0.0.1:0")}, tc.opts...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
