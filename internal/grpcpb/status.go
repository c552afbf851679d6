package grpcpb

import (
	"encoding/json"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/goa2a/a2a/a2a"
)

// Status is the gRPC status of an A2A error (A2A §10.6): the code of the
// error table, the message, and the same details the JSON bindings write
// (an ErrorInfo with the reason and domain a2a-protocol.org, a BadRequest
// naming the fields, a RetryInfo), in that order.
func Status(e *a2a.Error) *status.Status {
	st := status.New(codes.Code(e.Code.GRPCCode()), e.Text())
	var details []proto.Message
	if r := e.Code.Reason(); r != "" {
		details = append(details, &errdetails.ErrorInfo{Reason: r, Domain: a2a.ErrorDomain, Metadata: e.Metadata})
	}
	if len(e.Violations) > 0 {
		br := &errdetails.BadRequest{}
		for _, v := range e.Violations {
			br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: v.Field, Description: v.Description})
		}
		details = append(details, br)
	}
	if e.RetryAfter > 0 {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(e.RetryAfter)})
	}
	for _, d := range e.Details {
		// Details received from a peer: passed on when their type is known
		// here, dropped otherwise.
		b, err := json.Marshal(d)
		if err != nil {
			continue
		}
		var a anypb.Any
		if protojson.Unmarshal(b, &a) == nil {
			if m, err := a.UnmarshalNew(); err == nil {
				details = append(details, m)
			}
		}
	}
	if len(details) == 0 {
		return st
	}
	anys := make([]*anypb.Any, 0, len(details))
	for _, d := range details {
		a, err := anypb.New(d)
		if err == nil {
			anys = append(anys, a)
		}
	}
	p := st.Proto()
	p.Details = anys
	return status.FromProto(p)
}

// Error rebuilds the A2A error of a gRPC status a peer sent: the
// ErrorInfo reason decides the kind, then the gRPC code
// (REQUIREMENTS B13). A status with code OK is no error: nil.
func Error(st *status.Status) *a2a.Error {
	if st.Code() == codes.OK {
		return nil
	}
	var details []map[string]any
	for _, a := range st.Proto().GetDetails() {
		b, err := protojson.Marshal(a)
		if err != nil {
			continue // a type this program does not know
		}
		var m map[string]any
		if json.Unmarshal(b, &m) == nil {
			details = append(details, m)
		}
	}
	return a2a.ErrorFromWire(codeOf(st.Code()), st.Message(), details)
}

// codeOf guesses the kind of an error from its gRPC code alone, for peers
// that send no ErrorInfo. It accepts v1.0.0's UNIMPLEMENTED for
// unsupported operations.
func codeOf(c codes.Code) a2a.Code {
	switch c {
	case codes.NotFound:
		return a2a.CodeTaskNotFound
	case codes.InvalidArgument:
		return a2a.CodeInvalidParams
	case codes.Unauthenticated:
		return a2a.CodeUnauthenticated
	case codes.PermissionDenied:
		return a2a.CodePermissionDenied
	case codes.ResourceExhausted:
		return a2a.CodeResourceExhausted
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return a2a.CodeUnavailable
	case codes.Unimplemented:
		return a2a.CodeUnsupportedOperation
	case codes.Internal, codes.DataLoss:
		return a2a.CodeInternal
	}
	return a2a.CodeUnknown
}
