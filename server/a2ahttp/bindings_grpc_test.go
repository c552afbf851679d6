package a2ahttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/grpcpb"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2agrpc"
)

// The gRPC side of TestBindingsAgree: a third deterministic server, served
// over the gRPC binding on 127.0.0.1 and driven with the generated client.
// A request is the ProtoJSON of the call's JSON-RPC params (they are the
// same proto messages), and every answer goes back to the model through
// grpcpb.FromProto, then to JSON, so it compares with what the JSON
// bindings sent.

// callTimeout bounds every call of the test, on every binding.
const callTimeout = 20 * time.Second

// newGRPCServer serves a deterministic Handler (see newHandler) over the
// gRPC binding and returns a client of it. Every call is authenticated as
// the same principal as on the HTTP servers, through the binding's own
// authentication hook.
func newGRPCServer(t *testing.T) *grpc.ClientConn {
	t.Helper()
	h := newHandler(t)
	principal := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(server.WithPrincipal(r.Context(), "tester")))
		})
	}
	srv := a2agrpc.NewServer(h, a2agrpc.WithHTTPAuth(principal))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		srv.Stop()
		if err := <-served; err != nil {
			t.Errorf("gRPC server: %v", err)
		}
		_ = h.Close(context.Background())
	})
	return conn
}

// grpcOp is one RPC of the service: it sends params (ProtoJSON of the
// request message) and returns the answer in the model's JSON form: the
// result, or the stream's frames.
type grpcOp struct {
	unary  func(ctx context.Context, cl grpcpb.A2AServiceClient, params []byte) (any, error)
	stream func(ctx context.Context, cl grpcpb.A2AServiceClient, params []byte) (grpc.ServerStreamingClient[grpcpb.StreamResponse], error)
}

// unaryOp makes the grpcOp of a unary RPC whose request is a Req and
// whose answer converts to the model value Model.
func unaryOp[Req any, PReq interface {
	*Req
	proto.Message
}, Res proto.Message, Model any](rpc func(grpcpb.A2AServiceClient, context.Context, PReq, ...grpc.CallOption) (Res, error)) grpcOp {
	return grpcOp{unary: func(ctx context.Context, cl grpcpb.A2AServiceClient, params []byte) (any, error) {
		req := PReq(new(Req))
		if err := protojson.Unmarshal(params, req); err != nil {
			return nil, fmt.Errorf("test bug: params %s are not a %T: %w", params, req, err)
		}
		res, err := rpc(cl, ctx, req)
		if err != nil {
			return nil, err
		}
		var m Model
		if err := grpcpb.FromProto(res, &m); err != nil {
			return nil, fmt.Errorf("converting %T: %w", res, err)
		}
		return modelJSON(m)
	}}
}

// streamOp makes the grpcOp of a server-streaming RPC.
func streamOp[Req any, PReq interface {
	*Req
	proto.Message
}](rpc func(grpcpb.A2AServiceClient, context.Context, PReq, ...grpc.CallOption) (grpc.ServerStreamingClient[grpcpb.StreamResponse], error)) grpcOp {
	return grpcOp{stream: func(ctx context.Context, cl grpcpb.A2AServiceClient, params []byte) (grpc.ServerStreamingClient[grpcpb.StreamResponse], error) {
		req := PReq(new(Req))
		if err := protojson.Unmarshal(params, req); err != nil {
			return nil, fmt.Errorf("test bug: params %s are not a %T: %w", params, req, err)
		}
		return rpc(cl, ctx, req)
	}}
}

// grpcOps holds the 11 RPCs, by the JSON-RPC method name of the call
// (the same as the gRPC method name).
var grpcOps = map[string]grpcOp{
	"SendMessage":                      unaryOp[grpcpb.SendMessageRequest, *grpcpb.SendMessageRequest, *grpcpb.SendMessageResponse, a2a.SendMessageResponse](grpcpb.A2AServiceClient.SendMessage),
	"SendStreamingMessage":             streamOp[grpcpb.SendMessageRequest](grpcpb.A2AServiceClient.SendStreamingMessage),
	"GetTask":                          unaryOp[grpcpb.GetTaskRequest, *grpcpb.GetTaskRequest, *grpcpb.Task, a2a.Task](grpcpb.A2AServiceClient.GetTask),
	"ListTasks":                        unaryOp[grpcpb.ListTasksRequest, *grpcpb.ListTasksRequest, *grpcpb.ListTasksResponse, a2a.ListTasksResponse](grpcpb.A2AServiceClient.ListTasks),
	"CancelTask":                       unaryOp[grpcpb.CancelTaskRequest, *grpcpb.CancelTaskRequest, *grpcpb.Task, a2a.Task](grpcpb.A2AServiceClient.CancelTask),
	"SubscribeToTask":                  streamOp[grpcpb.SubscribeToTaskRequest](grpcpb.A2AServiceClient.SubscribeToTask),
	"CreateTaskPushNotificationConfig": unaryOp[grpcpb.TaskPushNotificationConfig, *grpcpb.TaskPushNotificationConfig, *grpcpb.TaskPushNotificationConfig, a2a.TaskPushNotificationConfig](grpcpb.A2AServiceClient.CreateTaskPushNotificationConfig),
	"GetTaskPushNotificationConfig":    unaryOp[grpcpb.GetTaskPushNotificationConfigRequest, *grpcpb.GetTaskPushNotificationConfigRequest, *grpcpb.TaskPushNotificationConfig, a2a.TaskPushNotificationConfig](grpcpb.A2AServiceClient.GetTaskPushNotificationConfig),
	"ListTaskPushNotificationConfigs":  unaryOp[grpcpb.ListTaskPushNotificationConfigsRequest, *grpcpb.ListTaskPushNotificationConfigsRequest, *grpcpb.ListTaskPushNotificationConfigsResponse, a2a.ListTaskPushNotificationConfigsResponse](grpcpb.A2AServiceClient.ListTaskPushNotificationConfigs),
	"GetExtendedAgentCard":             unaryOp[grpcpb.GetExtendedAgentCardRequest, *grpcpb.GetExtendedAgentCardRequest, *grpcpb.AgentCard, a2a.AgentCard](grpcpb.A2AServiceClient.GetExtendedAgentCard),
	// google.protobuf.Empty has no model type: its ProtoJSON, {}, decoded
	// into a map, is compared with what the JSON bindings answer.
	"DeleteTaskPushNotificationConfig": unaryOp[grpcpb.DeleteTaskPushNotificationConfigRequest, *grpcpb.DeleteTaskPushNotificationConfigRequest, *emptypb.Empty, map[string]any](grpcpb.A2AServiceClient.DeleteTaskPushNotificationConfig),
}

// modelJSON encodes a model value and decodes it as the JSON bindings'
// answers are decoded.
func modelJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeJSON(b)
}

// rawCodec sends a request's bytes as they are: the gRPC form of a body
// that is not valid JSON is a message that is not valid protobuf.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return v.([]byte), nil }
func (rawCodec) Unmarshal([]byte, any) error   { return errors.New("rawCodec decodes nothing") }
func (rawCodec) Name() string                  { return "proto" }

// viaGRPC makes call c over gRPC. Its params are c.grpcParams when set,
// else c.params; c.grpcRaw, when set, is sent as the request's bytes.
func viaGRPC(t *testing.T, conn *grpc.ClientConn, c call) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if !c.noVer {
		ctx = metadata.AppendToOutgoingContext(ctx, a2agrpc.MetadataVersion, "1.0")
	}
	cl := grpcpb.NewA2AServiceClient(conn)
	op, ok := grpcOps[c.method]
	if !ok {
		t.Fatalf("%s: no gRPC operation %s", c.name, c.method)
	}
	params := c.params
	if c.grpcParams != "" {
		params = c.grpcParams
	}
	if c.grpcRaw != nil {
		if op.unary == nil {
			t.Fatalf("%s: raw requests are sent to unary RPCs only", c.name)
		}
		var out []byte
		err := conn.Invoke(ctx, "/lf.a2a.v1.A2AService/"+c.method, c.grpcRaw, &out, grpc.ForceCodec(rawCodec{}))
		if err == nil {
			t.Fatalf("%s: a malformed request succeeded", c.name)
		}
		return grpcErr(t, c, err)
	}
	if op.unary != nil {
		v, err := op.unary(ctx, cl, []byte(params))
		if err != nil {
			return grpcErr(t, c, err)
		}
		return outcome{result: v}
	}
	st, err := op.stream(ctx, cl, []byte(params))
	if err != nil {
		return grpcErr(t, c, err)
	}
	var frames []any
	var mid *outcome
	for {
		msg, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			// An error ends a stream, before any frame or after some. The
			// JSON bindings send an error before the first frame as the
			// answer, which is the only kind the calls here meet.
			if len(frames) > 0 {
				t.Fatalf("%s: stream failed after %d frames: %v", c.name, len(frames), err)
			}
			return grpcErr(t, c, err)
		}
		var ev a2a.StreamResponse
		if err := grpcpb.FromProto(msg, &ev); err != nil {
			t.Fatalf("%s: frame %d: %v", c.name, len(frames), err)
		}
		v, err := modelJSON(ev)
		if err != nil {
			t.Fatalf("%s: frame %d: %v", c.name, len(frames), err)
		}
		frames = append(frames, v)
		if len(frames) == 1 && c.midStream != nil {
			o := viaGRPC(t, conn, *c.midStream)
			mid = &o
		}
	}
	return outcome{result: frames, mid: mid}
}

// grpcErr is the outcome of a call that failed with err: the A2A error of
// its status. The status must be a well-formed one: its gRPC code the
// one of its kind in the spec's table.
func grpcErr(t *testing.T, c call, err error) outcome {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("%s: not a gRPC status: %v", c.name, err)
	}
	e := grpcpb.Error(st)
	if e == nil {
		t.Fatalf("%s: status OK as an error", c.name)
	}
	if st.Code() != codes.Code(e.Code.GRPCCode()) {
		t.Errorf("%s: gRPC code %v for an error read as %v, whose code is %v", c.name, st.Code(), e.Code, codes.Code(e.Code.GRPCCode()))
	}
	return outcome{code: e.Code, err: e}
}

// canonicalNumbers replaces every number in v, a decoded JSON value, by a
// canonical spelling of its exact value, so that 2, 2.0 and 2e0 compare
// equal and 9007199254740993 and 9007199254740992 do not.
func canonicalNumbers(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, ok := new(big.Float).SetPrec(1024).SetString(string(v))
		if !ok {
			return v
		}
		return json.Number(f.Text('g', -1))
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = canonicalNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = canonicalNumbers(e)
		}
		return out
	}
	return v
}

// asDoubles replaces every number in v by the nearest float64, as the
// proto's google.protobuf.Value carries data parts.
func asDoubles(v any) any {
	switch v := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return v
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = asDoubles(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = asDoubles(e)
		}
		return out
	}
	return v
}

// withoutEmptyArtifacts returns v with every "artifacts": [] removed, and
// how many it removed: a repeated field has no presence in the proto, so
// an empty list the JSON bindings send arrives absent over gRPC.
func withoutEmptyArtifacts(v any) (any, int) {
	n := 0
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, e := range v {
				if l, ok := e.([]any); ok && k == "artifacts" && len(l) == 0 {
					n++
					continue
				}
				out[k] = walk(e)
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, e := range v {
				out[i] = walk(e)
			}
			return out
		}
		return v
	}
	return walk(v), n
}
