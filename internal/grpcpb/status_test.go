package grpcpb_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/capture"
	"github.com/goa2a/a2a/internal/grpcpb"
)

// allCodes returns every a2a.Code, found by name so that a new code is
// picked up without editing this test.
func allCodes() []a2a.Code {
	var out []a2a.Code
	for c := a2a.Code(0); !strings.HasPrefix(c.String(), "Code("); c++ {
		out = append(out, c)
	}
	return out
}

// collapsed lists the codes that a gRPC status cannot tell apart: they
// carry no ErrorInfo (they are not A2A errors, REQUIREMENTS E1 gives them
// no reason) and share their gRPC code with another kind, so a peer reads
// them as that kind. The HTTP+JSON binding collapses them the same way.
var collapsed = map[a2a.Code]a2a.Code{
	a2a.CodeParseError:     a2a.CodeInvalidParams,        // INVALID_ARGUMENT
	a2a.CodeInvalidRequest: a2a.CodeInvalidParams,        // INVALID_ARGUMENT
	a2a.CodeMethodNotFound: a2a.CodeUnsupportedOperation, // UNIMPLEMENTED, read as v1.0.0's unsupported operation
}

// sameError compares what survives the wire: kind, message, ErrorInfo
// metadata (nil and empty alike), violations, retry delay and details.
func sameError(t *testing.T, got, want *a2a.Error) {
	t.Helper()
	if got == nil {
		t.Fatal("nil error")
	}
	if got.Code != want.Code {
		t.Errorf("code %v, want %v", got.Code, want.Code)
	}
	if got.Message != want.Message {
		t.Errorf("message %q, want %q", got.Message, want.Message)
	}
	if len(got.Metadata)+len(want.Metadata) > 0 && !reflect.DeepEqual(got.Metadata, want.Metadata) {
		t.Errorf("metadata %v, want %v", got.Metadata, want.Metadata)
	}
	if len(got.Violations)+len(want.Violations) > 0 && !reflect.DeepEqual(got.Violations, want.Violations) {
		t.Errorf("violations %v, want %v", got.Violations, want.Violations)
	}
	if got.RetryAfter != want.RetryAfter {
		t.Errorf("retry after %v, want %v", got.RetryAfter, want.RetryAfter)
	}
	if len(got.Details)+len(want.Details) > 0 && !reflect.DeepEqual(got.Details, want.Details) {
		t.Errorf("details %v, want %v", got.Details, want.Details)
	}
}

// TestStatusRoundTrip: every code, with a message, metadata, violations
// and a retry delay, goes through Status and back through Error.
func TestStatusRoundTrip(t *testing.T) {
	codesSeen := 0
	for _, c := range allCodes() {
		codesSeen++
		t.Run(c.String(), func(t *testing.T) {
			in := &a2a.Error{
				Code: c, Message: "message of " + c.String(),
				Metadata:   map[string]string{"taskId": "task-1", "limit": "streams"},
				Violations: []a2a.FieldViolation{{Field: "message.parts", Description: "at least one part"}, {Field: "id", Description: ""}},
				RetryAfter: 1500 * time.Millisecond,
			}
			st := grpcpb.Status(in)
			if st.Code() != codes.Code(c.GRPCCode()) || st.Message() != in.Message {
				t.Errorf("status %v %q, want %v %q", st.Code(), st.Message(), codes.Code(c.GRPCCode()), in.Message)
			}
			// The details: ErrorInfo first for A2A errors, then BadRequest,
			// then RetryInfo.
			var kinds []string
			for _, d := range st.Details() {
				switch d := d.(type) {
				case *errdetails.ErrorInfo:
					kinds = append(kinds, "ErrorInfo")
					if d.Reason != c.Reason() || d.Domain != a2a.ErrorDomain {
						t.Errorf("ErrorInfo %v", d)
					}
				case *errdetails.BadRequest:
					kinds = append(kinds, "BadRequest")
				case *errdetails.RetryInfo:
					kinds = append(kinds, "RetryInfo")
				default:
					t.Errorf("unexpected detail %T", d)
				}
			}
			want := "BadRequest,RetryInfo"
			if c.Reason() != "" {
				want = "ErrorInfo," + want
			}
			if got := strings.Join(kinds, ","); got != want {
				t.Errorf("details %s, want %s", got, want)
			}

			exp := *in
			if c.Reason() == "" {
				// No ErrorInfo: the metadata has nowhere to go (as in the
				// JSON bindings), and the kind comes from the gRPC code.
				exp.Metadata = nil
				if to, ok := collapsed[c]; ok {
					exp.Code = to
				}
			}
			sameError(t, grpcpb.Error(st), &exp)
		})
	}
	if codesSeen < 19 {
		t.Errorf("only %d codes found", codesSeen)
	}
}

// TestStatusEmptyMessage: an error without a message is sent with its
// kind's default one.
func TestStatusEmptyMessage(t *testing.T) {
	st := grpcpb.Status(a2a.NewError(a2a.CodeTaskNotFound, ""))
	if st.Message() != a2a.CodeTaskNotFound.DefaultMessage() {
		t.Errorf("message %q", st.Message())
	}
	e := grpcpb.Error(st)
	if e.Code != a2a.CodeTaskNotFound || e.Message != a2a.CodeTaskNotFound.DefaultMessage() {
		t.Errorf("back: %v", e)
	}
}

// TestStatusRetryAfter: retry delays come back to the nanosecond,
// including those a float64 number of seconds cannot hold exactly.
func TestStatusRetryAfter(t *testing.T) {
	for _, d := range []time.Duration{time.Nanosecond, time.Millisecond, 250 * time.Millisecond, time.Second, 1500 * time.Millisecond, 1123456789, 90 * time.Minute, 48*time.Hour + 1} {
		e := grpcpb.Error(grpcpb.Status(&a2a.Error{Code: a2a.CodeUnavailable, RetryAfter: d}))
		if e.RetryAfter != d {
			t.Errorf("%v (%d ns) came back as %v (%d ns)", d, int64(d), e.RetryAfter, int64(e.RetryAfter))
		}
	}
}

// TestStatusWithoutErrorInfo: a status from a peer that sends no
// ErrorInfo maps by its gRPC code alone.
func TestStatusWithoutErrorInfo(t *testing.T) {
	want := map[codes.Code]a2a.Code{
		codes.NotFound:           a2a.CodeTaskNotFound,
		codes.InvalidArgument:    a2a.CodeInvalidParams,
		codes.Unauthenticated:    a2a.CodeUnauthenticated,
		codes.PermissionDenied:   a2a.CodePermissionDenied,
		codes.ResourceExhausted:  a2a.CodeResourceExhausted,
		codes.Unavailable:        a2a.CodeUnavailable,
		codes.DeadlineExceeded:   a2a.CodeUnavailable,
		codes.Canceled:           a2a.CodeUnavailable,
		codes.Unimplemented:      a2a.CodeUnsupportedOperation,
		codes.Internal:           a2a.CodeInternal,
		codes.DataLoss:           a2a.CodeInternal,
		codes.Unknown:            a2a.CodeUnknown,
		codes.FailedPrecondition: a2a.CodeUnknown, // several A2A kinds share it: no guess
		codes.Aborted:            a2a.CodeUnknown,
		codes.AlreadyExists:      a2a.CodeUnknown,
		codes.OutOfRange:         a2a.CodeUnknown,
	}
	for gc, kind := range want {
		e := grpcpb.Error(status.New(gc, "from a peer"))
		if e == nil || e.Code != kind || e.Message != "from a peer" || e.Metadata != nil || e.Details != nil {
			t.Errorf("%v: %+v, want kind %v", gc, e, kind)
		}
	}
	if e := grpcpb.Error(status.New(codes.OK, "")); e != nil {
		t.Errorf("OK: %v, want nil", e)
	}
	// Details other than the three known ones are kept, not used.
	st, err := status.New(codes.NotFound, "x").WithDetails(&errdetails.Help{Links: []*errdetails.Help_Link{{Description: "d", Url: "https://help.example.com"}}})
	if err != nil {
		t.Fatal(err)
	}
	e := grpcpb.Error(st)
	if e.Code != a2a.CodeTaskNotFound || len(e.Details) != 1 || e.Details[0]["@type"] != "type.googleapis.com/google.rpc.Help" {
		t.Errorf("Help detail: %+v", e)
	}
	// And sent on again, after the ErrorInfo of the kind.
	if again := grpcpb.Status(e); !hasDetail(again, st.Proto().Details[0]) {
		t.Errorf("Help detail not passed on: %v", again.Proto())
	}
}

// hasDetail reports whether st carries a detail equal to d.
func hasDetail(st *status.Status, d *anypb.Any) bool {
	for _, a := range st.Proto().Details {
		if proto.Equal(a, d) {
			return true
		}
	}
	return false
}

// TestStatusForeignErrorInfo: an ErrorInfo of another domain, or of the
// A2A domain with a reason A2A does not define, does not decide the kind;
// it is kept in Details and sent on unchanged.
func TestStatusForeignErrorInfo(t *testing.T) {
	for name, info := range map[string]*errdetails.ErrorInfo{
		"other domain":   {Reason: "TASK_NOT_CANCELABLE", Domain: "googleapis.com", Metadata: map[string]string{"service": "x"}},
		"unknown reason": {Reason: "QUOTA_GONE", Domain: a2a.ErrorDomain},
	} {
		t.Run(name, func(t *testing.T) {
			st, err := status.New(codes.FailedPrecondition, "foreign").WithDetails(info)
			if err != nil {
				t.Fatal(err)
			}
			e := grpcpb.Error(st)
			if e.Code != a2a.CodeUnknown {
				t.Errorf("kind %v: the foreign ErrorInfo was used", e.Code)
			}
			if e.Metadata != nil {
				t.Errorf("metadata %v taken from a foreign ErrorInfo", e.Metadata)
			}
			if len(e.Details) != 1 || e.Details[0]["@type"] != a2a.ErrorInfoType || e.Details[0]["reason"] != info.Reason || e.Details[0]["domain"] != info.Domain {
				t.Fatalf("details %v", e.Details)
			}
			again := grpcpb.Status(e)
			if !hasDetail(again, st.Proto().Details[0]) || len(again.Proto().Details) != 1 {
				t.Errorf("sent on as %v, want the foreign ErrorInfo alone", again.Proto())
			}
		})
	}
	// An A2A ErrorInfo beside a foreign one: the A2A one decides.
	st, err := status.New(codes.FailedPrecondition, "both").WithDetails(
		&errdetails.ErrorInfo{Reason: "TASK_NOT_FOUND", Domain: "example.com"},
		&errdetails.ErrorInfo{Reason: "TASK_NOT_CANCELABLE", Domain: a2a.ErrorDomain, Metadata: map[string]string{"taskId": "t"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	e := grpcpb.Error(st)
	if e.Code != a2a.CodeTaskNotCancelable || e.Metadata["taskId"] != "t" || len(e.Details) != 1 || e.Details[0]["domain"] != "example.com" {
		t.Errorf("%+v", e)
	}
}

// TestStatusUnknownDetailType: a detail whose type this program does not
// know is dropped without harm; the kind still comes from the status.
func TestStatusUnknownDetailType(t *testing.T) {
	p := status.New(codes.NotFound, "x").Proto()
	p.Details = []*anypb.Any{{TypeUrl: "type.googleapis.com/example.Unknown", Value: []byte{8, 1}}}
	e := grpcpb.Error(status.FromProto(p))
	if e.Code != a2a.CodeTaskNotFound || e.Details != nil {
		t.Errorf("%+v", e)
	}
}

// TestStatusCapturedErrors: every error the captures hold, read as the
// JSON bindings read it, survives Status → Error.
func TestStatusCapturedErrors(t *testing.T) {
	dir, err := capture.Dir()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.http"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		exs, err := capture.Load(filepath.Base(f))
		if err != nil {
			t.Fatal(err)
		}
		for i, ex := range exs {
			var body struct {
				Error *struct {
					Code    int              `json:"code"`
					Message string           `json:"message"`
					Data    []map[string]any `json:"data"`
					Details []map[string]any `json:"details"`
				} `json:"error"`
			}
			if ex.Status == 0 || json.Unmarshal([]byte(ex.RBody), &body) != nil || body.Error == nil {
				continue
			}
			var in *a2a.Error
			if strings.HasSuffix(ex.Path, "/jsonrpc") {
				kind, _ := a2a.CodeFromJSONRPC(body.Error.Code)
				in = a2a.ErrorFromWire(kind, body.Error.Message, body.Error.Data)
			} else {
				in = a2a.ErrorFromWire(a2a.CodeFromHTTPStatus(body.Error.Code), body.Error.Message, body.Error.Details)
			}
			n++
			t.Run(fmt.Sprintf("%s#%d", filepath.Base(f), i+1), func(t *testing.T) {
				exp := *in
				if to, ok := collapsed[in.Code]; ok {
					exp.Code = to
				}
				sameError(t, grpcpb.Error(grpcpb.Status(in)), &exp)
			})
		}
	}
	if n < 8 {
		t.Errorf("only %d errors found in the captures", n)
	}
}
