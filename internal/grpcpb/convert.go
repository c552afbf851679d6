package grpcpb

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
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
	// ProtoJSON writes an enum number without a name as a bare number,
	// which the model's enums accept (they are open, as ProtoJSON's are):
	// refuse it here, where the number cannot have come from JSON.
	if err := checkEnums(m.ProtoReflect()); err != nil {
		return fmt.Errorf("grpcpb: %T to %T: %w", m, v, err)
	}
	b, err := marshal.Marshal(m)
	if err != nil {
		return fmt.Errorf("grpcpb: encoding %T: %w", m, err)
	}
	if err := decodeCompact(b, v); err != nil {
		return fmt.Errorf("grpcpb: %T to %T: %w", m, v, err)
	}
	return nil
}

// decodeCompact decodes protojson output into a model value. protojson
// varies its whitespace on purpose (per build); free-form values (data
// parts, metadata) keep their bytes in the model, so the JSON is
// compacted first, to what the JSON bindings would hold.
func decodeCompact(b []byte, v any) error {
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return err
	}
	return json.Unmarshal(compact.Bytes(), v)
}

// checkEnums returns an error for the first enum field, anywhere in m, whose
// number has no name in the proto, and so none in the model. Messages of
// other files (Struct, Value, Timestamp) are not searched.
func checkEnums(m protoreflect.Message) error {
	if m.Descriptor().ParentFile() != File_a2a_proto {
		return nil
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && err == nil; i++ {
				err = checkEnumValue(fd, l.Get(i))
			}
		case fd.IsMap():
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				err = checkEnumValue(fd.MapValue(), mv)
				return err == nil
			})
		default:
			err = checkEnumValue(fd, v)
		}
		return err == nil
	})
	return err
}

func checkEnumValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) error {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if fd.Enum().Values().ByNumber(v.Enum()) == nil {
			return fmt.Errorf("%s: %d is not a value of %s", fd.FullName(), v.Enum(), fd.Enum().FullName())
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return checkEnums(v.Message())
	}
	return nil
}
