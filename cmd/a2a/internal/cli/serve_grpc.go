package cli

import (
	"context"
	"path"
	"slices"

	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/grpcpb"
)

// The gRPC binding of a2a serve (--grpc-addr) is package serve's: its own
// listener, the same Handler, the same authentication and the same TLS as
// the HTTP bindings. What is left here is its metrics.

// bindingGRPC labels gRPC streams in /metrics.
const bindingGRPC = "grpc"

// grpcStats records the gRPC calls in /metrics, as a gRPC stats handler:
// each call's method, code and duration, and the streams while they are
// open. Names outside the A2A service count as "unknown", so that a
// client cannot grow the label set.
type grpcStats struct{ m *metrics }

type grpcCallKey struct{}

// grpcCall is what TagRPC learns of a call for HandleRPC.
type grpcCall struct {
	method string
	stream bool
}

func (g grpcStats) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	method := path.Base(info.FullMethodName)
	if path.Dir(info.FullMethodName) != "/"+grpcpb.A2AService_ServiceDesc.ServiceName || !slices.Contains(a2a.Methods(), method) {
		method = methodUnknown
	}
	return context.WithValue(ctx, grpcCallKey{}, &grpcCall{method: method})
}

func (g grpcStats) HandleRPC(ctx context.Context, st stats.RPCStats) {
	c, ok := ctx.Value(grpcCallKey{}).(*grpcCall)
	if !ok {
		return
	}
	switch st := st.(type) {
	case *stats.Begin:
		c.stream = st.IsServerStream
		g.m.requestStarted()
		if c.stream {
			g.m.streamOpened(bindingGRPC)
		}
	case *stats.End:
		if c.stream {
			g.m.streamClosed(bindingGRPC)
		}
		g.m.grpcDone(c.method, status.Code(st.Error).String(), st.EndTime.Sub(st.BeginTime))
	}
}

func (grpcStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (grpcStats) HandleConn(context.Context, stats.ConnStats)                       {}
