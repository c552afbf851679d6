package grpcpb

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// The model of package a2a encodes to exactly the ProtoJSON of the
// normative proto, which is what its tests hold it to. The conversions
// go through that encoding: one rule, already tested against every
// capture, rather than a second, hand-written mapping of every field that
// could drift from it. It costs an encode and a decode per message, which
// the benchmarks show beside the JSON bindings (docs/performance.md).

var (
	marshal   = protojson.MarshalOptions{}
	unmarshal = protojson.UnmarshalOptions{DiscardUnknown: false}
)

// ToProto fills m, a generated message, from v, the model value of the
// same proto message (for example *a2a.Task into *grpcpb.Task).
func ToProto(v any, m proto.Message) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("grpcpb: encoding %T: %w", v, err)
	}
	proto.Reset(m)
	if err := unmarshal.Unmarshal(b, m); err != nil {
		return fmt.Errorf("grpcpb: %T to %T: %w", v, m, err)
	}
	return nil
}

// FromProto fills v, a pointer to the model value of the same proto
// message, from m. A message that is valid protobuf but breaks a model
// rule (an enum number the model does not know, say) is an error.
func FromProto(m proto.Message, v any) error {
	b, err := marshal.Marshal(m)
	if err != nil {
		return fmt.Errorf("grpcpb: encoding %T: %w", m, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("grpcpb: %T to %T: %w", m, v, err)
	}
	return nil
}
