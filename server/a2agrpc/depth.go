package a2agrpc

import (
	"strconv"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/goa2a/a2a/a2a"
)

// The JSON bindings refuse a request nested deeper than Limits.MaxDepth
// levels of JSON objects and arrays, counted on its body by a2a.CheckDepth.
// A gRPC request has no JSON text, so its depth is counted on the message:
// as deep as its ProtoJSON would be. A message is an object, a repeated
// field an array, a map an object; google.protobuf.Struct and ListValue
// are one object or array each, and a Value is what it holds. A request
// then gets the same answer on every binding (the JSON-RPC envelope adds a
// level of its own there).

// tooDeep reports whether m nests deeper than max levels; a max of zero or
// less checks nothing.
func tooDeep(m protoreflect.Message, max int) bool {
	return max > 0 && over(m, 0, max)
}

// over reports whether m, inside depth levels, goes deeper than max.
func over(m protoreflect.Message, depth, max int) bool {
	desc := m.Descriptor()
	container := false // the fields of m are m's own level (Struct, ListValue)
	if desc.ParentFile().Package() == "google.protobuf" {
		switch desc.Name() {
		case "Value":
			// Transparent: its struct or list is the level.
		case "Struct", "ListValue":
			depth++
			container = true
		default:
			// Timestamp, Duration, wrappers, FieldMask: JSON scalars.
			return false
		}
	} else {
		depth++
	}
	if depth > max {
		return true
	}
	deep := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			inner := depth
			if !container {
				inner++
			}
			if inner > max {
				deep = true
				break
			}
			if fd.Message() == nil {
				break
			}
			l := v.List()
			for i := 0; i < l.Len() && !deep; i++ {
				deep = over(l.Get(i).Message(), inner, max)
			}
		case fd.IsMap():
			inner := depth
			if !container {
				inner++
			}
			if inner > max {
				deep = true
				break
			}
			if fd.MapValue().Message() == nil {
				break
			}
			v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
				deep = over(mv.Message(), inner, max)
				return !deep
			})
		case fd.Message() != nil:
			deep = over(v.Message(), depth, max)
		}
		return !deep
	})
	return deep
}

// depthError is the error for a request nested too deeply: the one
// a2a.CheckDepth gives the JSON bindings.
func depthError(max int) *a2a.Error {
	return a2a.NewError(a2a.CodeInvalidRequest, "request nested deeper than "+strconv.Itoa(max)+" levels")
}
