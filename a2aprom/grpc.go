package a2aprom

import (
	"context"
	"path"
	"slices"

	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/grpcpb"
)

// grpcStats records the gRPC calls in /metrics, as a gRPC stats handler:
// each call's method, code and duration, and the streams while they are
// open. Names outside the A2A service count as "unknown", so that a
// client cannot grow the label set.
type grpcStats struct{ m *Metrics }

// GRPCStatsHandler returns the gRPC stats handler that records the calls
// of a gRPC server (grpc.StatsHandler).
func (m *Metrics) GRPCStatsHandler() stats.Handler { return grpcStats{m} }

type grpcCallKey struct{}

// grpcCall is what TagRPC learns of a call for HandleRPC.
type grpcCall struct {
	method string
	stream bool
}

func (g grpcStats) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	method := path.Base(info.FullMethodName)
	if path.Dir(info.FullMethodName) != "/"+grpcpb.A2AService_ServiceDesc.ServiceName || !slices.Contains(a2a.Methods(), method) {
		method = MethodUnknown
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
			g.m.streamOpened(BindingGRPC)
		}
	case *stats.End:
		if c.stream {
			g.m.streamClosed(BindingGRPC)
		}
		g.m.grpcDone(c.method, status.Code(st.Error).String(), st.EndTime.Sub(st.BeginTime))
	}
}

func (grpcStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (grpcStats) HandleConn(context.Context, stats.ConnStats)                       {}
