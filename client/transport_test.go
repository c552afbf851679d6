package client_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
)

// fakeTransport records what the client hands a [client.Transport] and
// answers from its fields.
type fakeTransport struct {
	mu      sync.Mutex
	calls   []string // method names, in order
	reqs    []any
	headers []http.Header
	cfg     client.TransportConfig

	result func(method string, out any) error // fills out; nil answers nothing
	events []a2a.Event
	closed chan struct{} // closed by the stream's Close
}

func (f *fakeTransport) record(ctx context.Context, method string, req any) error {
	h, err := f.cfg.Header(ctx)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, method)
	f.reqs = append(f.reqs, req)
	f.headers = append(f.headers, h)
	return nil
}

func (f *fakeTransport) Call(ctx context.Context, method string, req, out any) error {
	if err := f.record(ctx, method, req); err != nil {
		return err
	}
	if f.result == nil {
		return nil
	}
	return f.result(method, out)
}

func (f *fakeTransport) Stream(ctx context.Context, method string, req any) (client.EventStream, error) {
	if err := f.record(ctx, method, req); err != nil {
		return nil, err
	}
	return &fakeStream{events: f.events, closed: f.closed}, nil
}

type fakeStream struct {
	events []a2a.Event
	closed chan struct{}
}

func (s *fakeStream) Next() (a2a.Event, error) {
	if len(s.events) == 0 {
		return nil, io.EOF
	}
	ev := s.events[0]
	s.events = s.events[1:]
	return ev, nil
}

func (s *fakeStream) Close() error {
	close(s.closed) // a second Close would panic: the client closes once
	return nil
}

// withFake installs f as the "GRPC" transport; dialled receives each
// interface dialled.
func withFake(f *fakeTransport, dialled *[]a2a.AgentInterface) client.Option {
	return client.WithTransport(a2a.BindingGRPC, func(_ context.Context, in a2a.AgentInterface, cfg client.TransportConfig) (client.Transport, error) {
		*dialled = append(*dialled, in)
		f.cfg = cfg
		return f, nil
	})
}

func grpcCard(ifaces ...a2a.AgentInterface) *a2a.AgentCard {
	card := testCard("https://agent.example.com")
	card.SupportedInterfaces = ifaces
	return card
}

// TestTransportSelection: a binding of WithTransport joins the card's
// order, and WithBindings accepts it only when its transport is given.
func TestTransportSelection(t *testing.T) {
	t.Parallel()
	rpc := iface(a2a.BindingJSONRPC, "1.0", "https://agent.example.com/rpc")
	grpc := iface("grpc", "1.0", "127.0.0.1:5000") // any case, no scheme

	_, err := client.NewFromCard(t.Context(), grpcCard(grpc, rpc), client.WithBindings("GRPC"))
	if !errors.Is(err, client.ErrInvalidOption) || !strings.Contains(err.Error(), `"GRPC"`) || !strings.Contains(err.Error(), "WithTransport") {
		t.Errorf("WithBindings(GRPC) without a transport: %v", err)
	}
	// Without the transport, a GRPC interface listed first is passed over.
	c, err := client.NewFromCard(t.Context(), grpcCard(grpc, rpc))
	if err != nil || c.Binding() != a2a.BindingJSONRPC {
		t.Fatalf("no transport: %v, binding %v", err, c)
	}
	_, err = client.NewFromCard(t.Context(), grpcCard(grpc))
	if !errors.Is(err, client.ErrNoSupportedInterface) {
		t.Errorf("only GRPC, no transport: %v", err)
	}

	cases := []struct {
		name  string
		card  *a2a.AgentCard
		opts  func(client.Option) []client.Option
		want  string
		dials int
	}{
		{"card order, GRPC first", grpcCard(grpc, rpc), func(o client.Option) []client.Option { return []client.Option{o} }, a2a.BindingGRPC, 1},
		{"card order, JSONRPC first", grpcCard(rpc, grpc), func(o client.Option) []client.Option { return []client.Option{o} }, a2a.BindingJSONRPC, 0},
		{"preferred, given before WithTransport", grpcCard(rpc, grpc), func(o client.Option) []client.Option { return []client.Option{client.WithBindings("GRPC"), o} }, a2a.BindingGRPC, 1},
		{"preferred, given after", grpcCard(rpc, grpc), func(o client.Option) []client.Option { return []client.Option{o, client.WithBindings("grpc")} }, a2a.BindingGRPC, 1},
		{"preference falls back", grpcCard(rpc), func(o client.Option) []client.Option {
			return []client.Option{o, client.WithBindings("GRPC", "JSONRPC")}
		}, a2a.BindingJSONRPC, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var dialled []a2a.AgentInterface
			c, err := client.NewFromCard(t.Context(), tc.card, tc.opts(withFake(&fakeTransport{}, &dialled))...)
			if err != nil {
				t.Fatal(err)
			}
			if c.Binding() != tc.want || len(dialled) != tc.dials {
				t.Errorf("binding %s, %d dials; want %s, %d", c.Binding(), len(dialled), tc.want, tc.dials)
			}
			if tc.dials > 0 && (dialled[0].URL != grpc.URL || c.Interface().URL != grpc.URL) {
				t.Errorf("dialled %+v, interface %+v", dialled[0], c.Interface())
			}
		})
	}

	var dialled []a2a.AgentInterface
	_, err = client.NewFromCard(t.Context(), grpcCard(grpc), withFake(&fakeTransport{}, &dialled), client.WithBindings("HTTP+JSON"))
	if !errors.Is(err, client.ErrNoSupportedInterface) || len(dialled) != 0 {
		t.Errorf("restricted to HTTP+JSON: %v, %d dials", err, len(dialled))
	}
	// An empty URL is not an interface to dial.
	_, err = client.NewFromCard(t.Context(), grpcCard(iface("GRPC", "1.0", ""), rpc), withFake(&fakeTransport{}, &dialled), client.WithBindings("GRPC"))
	if !errors.Is(err, client.ErrNoSupportedInterface) || len(dialled) != 0 {
		t.Errorf("empty URL: %v, %d dials", err, len(dialled))
	}
}

// TestTransportOptionErrors: WithTransport refuses the built-in bindings
// and a nil dial function, and a dial error fails the client.
func TestTransportOptionErrors(t *testing.T) {
	t.Parallel()
	card := grpcCard(iface("GRPC", "1.0", "127.0.0.1:5000"))
	dial := func(context.Context, a2a.AgentInterface, client.TransportConfig) (client.Transport, error) {
		return nil, errors.New("no route")
	}
	for name, o := range map[string]client.Option{
		"built in":   client.WithTransport("jsonrpc", dial),
		"empty name": client.WithTransport("", dial),
		"nil dial":   client.WithTransport("GRPC", nil),
	} {
		if _, err := client.NewFromCard(t.Context(), card, o); !errors.Is(err, client.ErrInvalidOption) {
			t.Errorf("%s: %v, want ErrInvalidOption", name, err)
		}
	}
	_, err := client.NewFromCard(t.Context(), card, client.WithTransport("GRPC", dial))
	if err == nil || !strings.Contains(err.Error(), "no route") || !strings.Contains(err.Error(), "127.0.0.1:5000") {
		t.Errorf("dial error: %v", err)
	}
	// An API key in the query cannot travel on a binding without URLs.
	card.SecuritySchemes = map[string]a2a.SecurityScheme{"q": {APIKey: &a2a.APIKeySecurityScheme{Location: "query", Name: "key"}}}
	var dialled []a2a.AgentInterface
	_, err = client.NewFromCard(t.Context(), card, withFake(&fakeTransport{}, &dialled),
		client.WithCredentials("q", func(context.Context) (string, error) { return "k", nil }))
	if !errors.Is(err, client.ErrInvalidOption) || !strings.Contains(err.Error(), "query") || len(dialled) != 0 {
		t.Errorf("query API key: %v, %d dials", err, len(dialled))
	}
}

// TestTransportCalls: the operations reach the transport with their A2A
// names and requests (the interface's tenant filled in), results come
// back, errors keep their kind, streams are read in order and closed.
func TestTransportCalls(t *testing.T) {
	t.Parallel()
	in := iface("GRPC", "1.0", "127.0.0.1:5000")
	in.Tenant = "acme"
	card := grpcCard(in)
	card.SecuritySchemes = map[string]a2a.SecurityScheme{"key": {APIKey: &a2a.APIKeySecurityScheme{Location: "header", Name: "x-api-key"}}}
	tlsConf := &tls.Config{ServerName: "agent.example.com"}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf}}

	f := &fakeTransport{closed: make(chan struct{})}
	f.result = func(method string, out any) error {
		switch method {
		case "GetTask":
			*out.(*a2a.Task) = a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
		case "CancelTask":
			return a2a.NewError(a2a.CodeTaskNotFound, "no task t2")
		case "GetExtendedAgentCard":
			ext := *card
			ext.Description = "extended"
			b, err := json.Marshal(&ext)
			if err != nil {
				return err
			}
			*out.(*json.RawMessage) = b
		}
		return nil
	}
	f.events = []a2a.Event{
		&a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}},
		&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
		&a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}},
	}
	var dialled []a2a.AgentInterface
	c, err := client.NewFromCard(t.Context(), card, withFake(f, &dialled),
		client.WithHTTPClient(hc), client.WithHeader("X-Trace", "7"), client.WithBearerToken("tok"),
		client.WithCredentials("key", func(context.Context) (string, error) { return "k1", nil }),
		client.WithExtensions("https://example.com/ext/a", "https://example.com/ext/b"), client.WithTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if f.cfg.TLS != tlsConf || f.cfg.Timeout != 3*time.Second || !slices.Equal(f.cfg.Extensions, []string{"https://example.com/ext/a", "https://example.com/ext/b"}) {
		t.Errorf("config = %+v", f.cfg)
	}

	task, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t1"})
	if err != nil || task.ID != "t1" || task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("GetTask = %+v, %v", task, err)
	}
	if r := f.reqs[0].(*a2a.GetTaskRequest); r.ID != "t1" || r.Tenant != "acme" {
		t.Errorf("GetTask request = %+v", r)
	}
	h := f.headers[0]
	if h.Get("Authorization") != "Bearer tok" || h.Get("X-Api-Key") != "k1" || h.Get("X-Trace") != "7" || h.Get("A2A-Version") != "" {
		t.Errorf("header = %v", h)
	}

	_, err = c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: "t2"})
	if !errors.Is(err, a2a.ErrTaskNotFound) || errorKind(t, err) != a2a.CodeTaskNotFound {
		t.Errorf("CancelTask = %v, want TaskNotFound", err)
	}
	if err := c.DeleteTaskPushNotificationConfig(t.Context(), &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: "t1", ID: "p"}); err != nil {
		t.Errorf("Delete: %v", err)
	}

	var got []a2a.Event
	for ev, err := range c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: "t1"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
		if len(got) == 2 {
			break
		}
	}
	if d := describe(got); !slices.Equal(d, []string{"task SUBMITTED", "status WORKING"}) {
		t.Errorf("events = %v", d)
	}
	select {
	case <-f.closed:
	default:
		t.Error("the stream was not closed when the loop stopped")
	}

	ext, err := c.GetExtendedAgentCard(t.Context())
	if err != nil || ext.Description != "extended" || c.Card().Description != "extended" {
		t.Errorf("extended card = %v, %v", ext, err)
	}
	if want := []string{"GetTask", "CancelTask", "DeleteTaskPushNotificationConfig", "SubscribeToTask", "GetExtendedAgentCard"}; !slices.Equal(f.calls, want) {
		t.Errorf("calls = %v, want %v", f.calls, want)
	}

	// A credential that fails fails the call before the transport sends.
	card.SecuritySchemes["key"] = a2a.SecurityScheme{APIKey: &a2a.APIKeySecurityScheme{Location: "header", Name: "x-api-key"}}
	c2, err := client.NewFromCard(t.Context(), card, withFake(&fakeTransport{}, &dialled),
		client.WithCredentials("key", func(context.Context) (string, error) { return "", errors.New("vault sealed") }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t1"}); err == nil || !strings.Contains(err.Error(), "vault sealed") {
		t.Errorf("failing credential: %v", err)
	}
}
