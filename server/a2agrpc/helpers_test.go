package a2agrpc_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/grpcpb"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2agrpc"
)

const testTimeout = 20 * time.Second

// scripted is the test agent: what it does depends on the text of the
// message.
//
//	hello       replies "hello back", no task
//	extensions  replies with the extensions the client declared
//	task        working, an artifact, completed
//	input       input-required
//	wait        working, then completed once gate is closed; ends when cancelled
//	stuck       working, then waits for gate whatever happens
//	size TEXT   replies with the length of TEXT in bytes, no task
type scripted struct {
	gate     chan struct{}
	gateOnce sync.Once
}

func newScripted() *scripted { return &scripted{gate: make(chan struct{})} }

// release lets "wait" and "stuck" tasks go on.
func (a *scripted) release() { a.gateOnce.Do(func() { close(a.gate) }) }

func (a *scripted) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	text := req.Message.Text()
	if rest, ok := strings.CutPrefix(text, "size "); ok {
		return w.Reply(ctx, a2a.TextPart(strconv.Itoa(len(rest))))
	}
	switch text {
	case "hello":
		return w.Reply(ctx, a2a.TextPart("hello back"))
	case "extensions":
		return w.Reply(ctx, a2a.TextPart(strings.Join(req.Extensions, " ")))
	case "task":
		if err := w.Working(ctx, "working"); err != nil {
			return err
		}
		if err := w.Artifact(ctx, a2a.Artifact{ArtifactID: "a1", Parts: []a2a.Part{a2a.TextPart("result")}}); err != nil {
			return err
		}
		return w.Complete(ctx, "done")
	case "input":
		return w.RequireInput(ctx, "more?")
	case "wait":
		if err := w.Working(ctx, "waiting"); err != nil {
			return err
		}
		select {
		case <-a.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
		return w.Complete(ctx, "released")
	case "stuck":
		if err := w.Working(ctx, "stuck"); err != nil {
			return err
		}
		<-a.gate
		return nil
	default:
		return w.Fail(ctx, "no script for "+strconv.Quote(text))
	}
}

type fixture struct {
	h      *server.Handler
	agent  *scripted
	client grpcpb.A2AServiceClient
	addr   string
}

type setup struct {
	grpcOpts    []a2agrpc.Option
	handlerOpts []server.Option
	card        func(*a2a.AgentCard)
}

// start serves a Handler over the gRPC binding on 127.0.0.1 and returns a
// client of it.
func start(t *testing.T, s setup) *fixture {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	card := &a2a.AgentCard{
		Name:    "grpc test",
		Version: "1",
		SupportedInterfaces: []a2a.AgentInterface{{
			URL: ln.Addr().String(), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion,
		}},
		Capabilities: a2a.AgentCapabilities{
			Streaming: a2a.Ptr(true), PushNotifications: a2a.Ptr(true), ExtendedAgentCard: a2a.Ptr(true),
		},
	}
	if s.card != nil {
		s.card(card)
	}
	agent := newScripted()
	hopts := append([]server.Option{server.WithExtendedCard(func(ctx context.Context) (*a2a.AgentCard, error) {
		c := *card
		c.Name = "extended for " + server.PrincipalFrom(ctx)
		return &c, nil
	})}, s.handlerOpts...)
	h, err := server.NewHandler(card, agent, hopts...)
	if err != nil {
		t.Fatal(err)
	}
	srv := a2agrpc.NewServer(h, s.grpcOpts...)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		agent.release()
		srv.Stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &fixture{h: h, agent: agent, client: grpcpb.NewA2AServiceClient(conn), addr: ln.Addr().String()}
}

// call returns a context for a call with A2A-Version 1.0 and the metadata
// pairs kv.
func call(t *testing.T, kv ...string) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return metadata.NewOutgoingContext(ctx, metadata.Pairs(append([]string{"a2a-version", "1.0"}, kv...)...))
}

// noDeadline is call without a deadline, for a call whose time depends on
// the machine's speed rather than on the code under test; it still ends
// with the test.
func noDeadline(t *testing.T, kv ...string) context.Context {
	return metadata.NewOutgoingContext(t.Context(), metadata.Pairs(append([]string{"a2a-version", "1.0"}, kv...)...))
}

var messageIDs atomic.Int64

// send is a SendMessage request with one text part.
func send(text string) *grpcpb.SendMessageRequest {
	return &grpcpb.SendMessageRequest{Message: &grpcpb.Message{
		MessageId: "m-" + strconv.FormatInt(messageIDs.Add(1), 10),
		Role:      grpcpb.Role_ROLE_USER,
		Parts:     []*grpcpb.Part{{Content: &grpcpb.Part_Text{Text: text}}},
	}}
}

// sendNow is send with returnImmediately.
func sendNow(text string) *grpcpb.SendMessageRequest {
	r := send(text)
	r.Configuration = &grpcpb.SendMessageConfiguration{ReturnImmediately: true}
	return r
}

// drain receives a stream to its end, and returns the frames and the
// status it ended with (nil for OK).
func drain(t *testing.T, s grpc.ServerStreamingClient[grpcpb.StreamResponse]) ([]*grpcpb.StreamResponse, error) {
	t.Helper()
	var out []*grpcpb.StreamResponse
	for {
		m, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
}

// wantCode fails unless err is a gRPC status with code c, and returns it.
func wantCode(t *testing.T, err error, c codes.Code) *status.Status {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != c {
		t.Fatalf("error %v, want code %v", err, c)
	}
	return st
}

// errorInfo returns the ErrorInfo detail of st, failing without one.
func errorInfo(t *testing.T, st *status.Status) *errdetails.ErrorInfo {
	t.Helper()
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			return ei
		}
	}
	t.Fatalf("status %v has no ErrorInfo (details %v)", st, st.Details())
	return nil
}

// waitState polls GetTask until the task is in state, failing at the
// deadline.
func waitState(t *testing.T, f *fixture, id string, state grpcpb.TaskState) *grpcpb.Task {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		task, err := f.client.GetTask(call(t), &grpcpb.GetTaskRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		if task.GetStatus().GetState() == state {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %v, want %v", id, task.GetStatus().GetState(), state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
