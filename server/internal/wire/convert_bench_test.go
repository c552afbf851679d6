package wire_test

import (
	"context"
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/internal/grpcpb"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/internal/wire"
)

// BenchmarkConvert prices, per blocking SendMessage of the harness (the
// same message, and the task the echo agent answers it with), what each
// binding does to turn the request into the model and the response out of
// it. gRPC: proto.Unmarshal then grpcpb.FromProto (ProtoJSON encode, JSON
// decode), grpcpb.ToProto (JSON encode, ProtoJSON decode) then
// proto.Marshal. JSON bindings: wire.Decode of the params and
// wire.AppendJSON of the result.
//
//	go test -run '^$' -bench Convert -benchmem ./server/internal/wire
func BenchmarkConvert(b *testing.B) {
	req, res := harnessExchange(b)
	reqJSON, err := wire.AppendJSON(nil, req)
	if err != nil {
		b.Fatal(err)
	}
	var reqPB grpcpb.SendMessageRequest
	if err := grpcpb.ToProto(req, &reqPB); err != nil {
		b.Fatal(err)
	}
	reqWire, err := proto.Marshal(&reqPB)
	if err != nil {
		b.Fatal(err)
	}
	var resPB grpcpb.SendMessageResponse
	if err := grpcpb.ToProto(res, &resPB); err != nil {
		b.Fatal(err)
	}

	b.Run("request/grpc/proto.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m grpcpb.SendMessageRequest
			if err := proto.Unmarshal(reqWire, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("request/grpc/FromProto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v a2a.SendMessageRequest
			if err := grpcpb.FromProto(&reqPB, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The steps of FromProto and ToProto on their own, as
	// internal/grpcpb/convert.go takes them.
	reqProtoJSON, err := protojson.Marshal(&reqPB)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("request/grpc/FromProto:protojson.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := protojson.Marshal(&reqPB); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("request/grpc/FromProto:json.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v a2a.SendMessageRequest
			if err := json.Unmarshal(reqProtoJSON, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("request/json/wire.Decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v a2a.SendMessageRequest
			if err := wire.Decode(reqJSON, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("response/grpc/ToProto", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m grpcpb.SendMessageResponse
			if err := grpcpb.ToProto(res, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	resJSON, err := json.Marshal(res)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("response/grpc/ToProto:json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(res); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("response/grpc/ToProto:protojson.Unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m grpcpb.SendMessageResponse
			if err := protojson.Unmarshal(resJSON, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("response/grpc/proto.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := proto.Marshal(&resPB); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("response/json/wire.AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			var err error
			if buf, err = wire.AppendJSON(buf[:0], res); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// harnessExchange returns the request of the harness's clients and the
// response the echo agent gives it through a Handler.
func harnessExchange(b *testing.B) (*a2a.SendMessageRequest, *a2a.SendMessageResponse) {
	h, err := server.NewHandler(echo.Card("http://127.0.0.1:1/a2a/jsonrpc", "http://127.0.0.1:1/a2a/rest"), echo.Agent{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(context.Background()) })
	req := &a2a.SendMessageRequest{Message: &a2a.Message{
		MessageID: "bench1234567890-12-345",
		Role:      a2a.RoleUser,
		Parts:     []a2a.Part{a2a.TextPart("hello, agent")},
	}}
	ctx := server.WithServiceParams(context.Background(), server.ServiceParams{Version: a2a.ProtocolVersion})
	res, err := h.SendMessage(ctx, req)
	if err != nil {
		b.Fatal(err)
	}
	if _, ok := res.Result.(*a2a.Task); !ok {
		b.Fatalf("result is %T, not a task", res.Result)
	}
	return req, res
}
