package main

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/internal/grpcpb"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2agrpc"
)

// The goa2a-grpc target: the goa2a target's Handler (echo agent, default
// memory store) served by a2agrpc.NewServer on 127.0.0.1, called with the
// generated client. Each closed-loop client makes the same blocking
// SendMessage as the JSON targets (same text, same role, a fresh message
// id each time), with the a2a-version metadata, over one of -grpcconns
// grpc.ClientConns the clients share (client i uses connection i mod n).
//
// A ClientConn is one HTTP/2 connection that carries any number of calls
// at once, so the gRPC clients need not have a connection each, as the
// HTTP/1.1 clients of the JSON targets do: what makes the comparison fair
// is the same number of requests in flight (-c), not the same number of
// connections. One shared ClientConn (the default) is how a Go program
// usually talks to one server.

// grpcConns is the -grpcconns flag.
var grpcConns = 1

// grpcWorkers is the -grpcworkers flag, a diagnostic: with n > 0 the
// server runs calls on n long-lived goroutines (grpc.NumStreamWorkers,
// experimental in grpc-go) instead of a new goroutine per call, whose
// stack grows again on every call.
var grpcWorkers uint

// startGoa2aGRPC serves the echo agent through server.Handler behind the
// gRPC binding.
func startGoa2aGRPC() (*testServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	card := echo.Card("", "")
	// Only the binding this target serves; the interface URL of gRPC is
	// host:port.
	card.SupportedInterfaces = []a2a.AgentInterface{{URL: addr, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion}}
	h, err := server.NewHandler(card, echo.Agent{})
	if err != nil {
		ln.Close()
		return nil, err
	}
	var opts []a2agrpc.Option
	if grpcWorkers > 0 {
		opts = append(opts, a2agrpc.WithServerOptions(grpc.NumStreamWorkers(uint32(grpcWorkers))))
	}
	srv := a2agrpc.NewServer(h, opts...)
	go func() {
		if err := srv.Serve(ln); err != nil {
			panic(fmt.Sprintf("goa2a-grpc server: %v", err))
		}
	}()
	ts := &testServer{name: "goa2a-grpc", url: addr, binding: bindGRPC, a2a: h}
	ts.close = func(ctx context.Context) error {
		stopped := make(chan struct{})
		go func() {
			srv.GracefulStop()
			close(stopped)
		}()
		select {
		case <-stopped:
		case <-ctx.Done():
			srv.Stop()
			<-stopped
		}
		return h.Close(ctx)
	}
	return ts, nil
}

// dialGRPC opens n client connections to addr, each one HTTP/2
// connection once used. passthrough: hands the address to the dialer as
// it is, with no resolver in between.
func dialGRPC(addr string, n int) ([]*grpc.ClientConn, error) {
	conns := make([]*grpc.ClientConn, 0, n)
	for range n {
		cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			closeGRPC(conns)
			return nil, err
		}
		conns = append(conns, cc)
	}
	return conns, nil
}

func closeGRPC(conns []*grpc.ClientConn) {
	for _, cc := range conns {
		cc.Close()
	}
}

// grpcCaller is the gRPC side of a worker: its client, a context carrying
// the a2a-version metadata, and the request it sends again and again with
// a new message id.
type grpcCaller struct {
	client grpcpb.A2AServiceClient
	ctx    context.Context
	req    *grpcpb.SendMessageRequest
}

func newGRPCCaller(ctx context.Context, cc *grpc.ClientConn, text string) *grpcCaller {
	return &grpcCaller{
		client: grpcpb.NewA2AServiceClient(cc),
		ctx:    metadata.NewOutgoingContext(ctx, metadata.Pairs(a2agrpc.MetadataVersion, a2a.ProtocolVersion)),
		req: &grpcpb.SendMessageRequest{Message: &grpcpb.Message{
			Role:  grpcpb.Role_ROLE_USER,
			Parts: []*grpcpb.Part{{Content: &grpcpb.Part_Text{Text: text}}},
		}},
	}
}

// doGRPC sends one SendMessage and checks its response. The request is
// reused: gRPC has encoded it by the time the call returns. full converts
// the response to the model, as the JSON targets decode theirs, and checks
// it there; otherwise the generated message is checked field by field.
func (w *worker) doGRPC(full bool) error {
	g := w.grpc
	w.nextID()
	g.req.Message.MessageId = string(w.idBuf)
	w.sent++
	res, err := g.client.SendMessage(g.ctx, g.req)
	if err != nil {
		return err
	}
	if full {
		w.respBytes = proto.Size(res)
		var m a2a.SendMessageResponse
		if err := grpcpb.FromProto(res, &m); err != nil {
			return fmt.Errorf("converting the response: %w", err)
		}
		return w.checkResponse(&m)
	}
	t := res.GetTask()
	switch {
	case t == nil:
		return fmt.Errorf("result is not a task: %.300v", res)
	case t.GetStatus().GetState() != grpcpb.TaskState_TASK_STATE_COMPLETED:
		return fmt.Errorf("task state %v, want completed", t.GetStatus().GetState())
	case len(t.GetArtifacts()) != 1 || len(t.Artifacts[0].GetParts()) != 1 || t.Artifacts[0].Parts[0].GetText() != w.art:
		return fmt.Errorf("artifacts %.300v, want one with %q", t.GetArtifacts(), w.art)
	case len(t.GetHistory()) == 0 || t.History[0].GetMessageId() != g.req.Message.MessageId:
		return fmt.Errorf("history does not start with the user message %s", g.req.Message.MessageId)
	}
	return nil
}
