package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// e1 is REQUIREMENTS.md E1 (the v1.0.1 column of A2A §5.4), copied by hand.
// Where E1 gives a choice ("404/405*" for method not found) the row holds
// the one the package emits.
var e1 = []struct {
	code    a2a.Code
	name    string
	jsonrpc int
	grpc    string
	http    int
	reason  string
}{
	{a2a.CodeTaskNotFound, "TaskNotFoundError", -32001, "NOT_FOUND", 404, "TASK_NOT_FOUND"},
	{a2a.CodeTaskNotCancelable, "TaskNotCancelableError", -32002, "FAILED_PRECONDITION", 400, "TASK_NOT_CANCELABLE"},
	{a2a.CodePushNotificationNotSupported, "PushNotificationNotSupportedError", -32003, "FAILED_PRECONDITION", 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"},
	{a2a.CodeUnsupportedOperation, "UnsupportedOperationError", -32004, "FAILED_PRECONDITION", 400, "UNSUPPORTED_OPERATION"},
	{a2a.CodeContentTypeNotSupported, "ContentTypeNotSupportedError", -32005, "INVALID_ARGUMENT", 400, "CONTENT_TYPE_NOT_SUPPORTED"},
	{a2a.CodeInvalidAgentResponse, "InvalidAgentResponseError", -32006, "INTERNAL", 500, "INVALID_AGENT_RESPONSE"},
	{a2a.CodeExtendedAgentCardNotConfigured, "ExtendedAgentCardNotConfiguredError", -32007, "FAILED_PRECONDITION", 400, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"},
	{a2a.CodeExtensionSupportRequired, "ExtensionSupportRequiredError", -32008, "FAILED_PRECONDITION", 400, "EXTENSION_SUPPORT_REQUIRED"},
	{a2a.CodeVersionNotSupported, "VersionNotSupportedError", -32009, "FAILED_PRECONDITION", 400, "VERSION_NOT_SUPPORTED"},
	{a2a.CodeParseError, "JSON parse error", -32700, "INVALID_ARGUMENT", 400, ""},
	{a2a.CodeInvalidRequest, "Invalid request", -32600, "INVALID_ARGUMENT", 400, ""},
	{a2a.CodeMethodNotFound, "Method or route not found", -32601, "UNIMPLEMENTED", 404, ""},
	{a2a.CodeInvalidParams, "Invalid params / validation", -32602, "INVALID_ARGUMENT", 400, ""},
	{a2a.CodeInternal, "Internal", -32603, "INTERNAL", 500, ""},
	{a2a.CodeUnauthenticated, "Unauthenticated", -31401, "UNAUTHENTICATED", 401, ""},
	{a2a.CodePermissionDenied, "Permission denied", -31403, "PERMISSION_DENIED", 403, ""},
	{a2a.CodeUnavailable, "Temporarily unavailable", -32603, "UNAVAILABLE", 503, ""},
	// Not in E1: our code for a server limit (beside B3's -31401/-31403).
	{a2a.CodeResourceExhausted, "ResourceExhausted", -31429, "RESOURCE_EXHAUSTED", 429, "RESOURCE_EXHAUSTED"},
}

// grpcNumbers are the gRPC status codes by name.
var grpcNumbers = map[string]int{
	"UNKNOWN": 2, "INVALID_ARGUMENT": 3, "NOT_FOUND": 5, "PERMISSION_DENIED": 7,
	"RESOURCE_EXHAUSTED": 8, "FAILED_PRECONDITION": 9, "UNIMPLEMENTED": 12, "INTERNAL": 13, "UNAVAILABLE": 14, "UNAUTHENTICATED": 16,
}

// allCodes lists every defined Code, CodeUnknown first.
func allCodes() []a2a.Code {
	var cs []a2a.Code
	for c := a2a.Code(0); !strings.HasPrefix(c.String(), "Code("); c++ {
		cs = append(cs, c)
	}
	return cs
}

func isA2A(c a2a.Code) bool { return c.Reason() != "" }

func TestErrorTableMatchesE1(t *testing.T) {
	covered := map[a2a.Code]bool{a2a.CodeUnknown: true}
	for _, row := range e1 {
		t.Run(row.name, func(t *testing.T) {
			covered[row.code] = true
			if got := row.code.JSONRPCCode(); got != row.jsonrpc {
				t.Errorf("JSONRPCCode = %d, E1 says %d", got, row.jsonrpc)
			}
			if got := row.code.HTTPStatus(); got != row.http {
				t.Errorf("HTTPStatus = %d, E1 says %d", got, row.http)
			}
			if got := row.code.GRPCStatusName(); got != row.grpc {
				t.Errorf("GRPCStatusName = %q, E1 says %q", got, row.grpc)
			}
			if got := row.code.GRPCCode(); got != grpcNumbers[row.grpc] {
				t.Errorf("GRPCCode = %d, %s is %d", got, row.grpc, grpcNumbers[row.grpc])
			}
			if got := row.code.Reason(); got != row.reason {
				t.Errorf("Reason = %q, E1 says %q", got, row.reason)
			}
			if row.reason != "" && row.code.String() != row.name {
				t.Errorf("String = %q, want the A2A error name %q", row.code.String(), row.name)
			}
			if row.code.DefaultMessage() == "" {
				t.Error("no default message")
			}
		})
	}
	for _, c := range allCodes() {
		if !covered[c] {
			t.Errorf("%v is not in E1", c)
		}
	}
	if len(allCodes()) != len(e1)+1 {
		t.Errorf("%d codes, E1 has %d rows plus CodeUnknown", len(allCodes()), len(e1))
	}
}

func TestJSONRPCCodesDistinct(t *testing.T) {
	// -32603 is shared by design: Internal, Unavailable (E1) and Unknown.
	const shared = -32603
	byCode := map[int][]a2a.Code{}
	for _, c := range allCodes() {
		byCode[c.JSONRPCCode()] = append(byCode[c.JSONRPCCode()], c)
	}
	for n, cs := range byCode {
		if len(cs) > 1 && n != shared {
			t.Errorf("JSON-RPC code %d is shared by %v", n, cs)
		}
	}
	want := fmt.Sprint([]a2a.Code{a2a.CodeUnknown, a2a.CodeInternal, a2a.CodeUnavailable})
	if got := fmt.Sprint(byCode[shared]); got != want {
		t.Errorf("%d is used by %s, want %s", shared, got, want)
	}
	if c, ok := a2a.CodeFromJSONRPC(shared); !ok || c != a2a.CodeInternal {
		t.Errorf("CodeFromJSONRPC(%d) = %v, %v; want InternalError", shared, c, ok)
	}
	if c, ok := a2a.CodeFromJSONRPC(-32099); ok {
		t.Errorf("CodeFromJSONRPC(-32099) = %v", c)
	}
}

func TestCodeLookupsRoundTrip(t *testing.T) {
	for _, c := range allCodes() {
		if !isA2A(c) {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			if got, ok := a2a.CodeFromReason(c.Reason()); !ok || got != c {
				t.Errorf("CodeFromReason(%q) = %v, %v", c.Reason(), got, ok)
			}
			if got, ok := a2a.CodeFromJSONRPC(c.JSONRPCCode()); !ok || got != c {
				t.Errorf("CodeFromJSONRPC(%d) = %v, %v", c.JSONRPCCode(), got, ok)
			}
		})
	}
	// The standard errors with their own JSON-RPC code map back too.
	for _, c := range []a2a.Code{a2a.CodeParseError, a2a.CodeInvalidRequest, a2a.CodeMethodNotFound, a2a.CodeInvalidParams, a2a.CodeInternal, a2a.CodeUnauthenticated, a2a.CodePermissionDenied} {
		if got, ok := a2a.CodeFromJSONRPC(c.JSONRPCCode()); !ok || got != c {
			t.Errorf("CodeFromJSONRPC(%d) = %v, %v, want %v", c.JSONRPCCode(), got, ok, c)
		}
	}
	for _, r := range []string{"", "NOT_A_REASON", "task_not_found"} {
		if c, ok := a2a.CodeFromReason(r); ok {
			t.Errorf("CodeFromReason(%q) = %v", r, c)
		}
	}
}

func TestCodeFromHTTPStatus(t *testing.T) {
	cases := []struct {
		status int
		want   a2a.Code
	}{
		{404, a2a.CodeTaskNotFound},
		{400, a2a.CodeInvalidParams},
		{401, a2a.CodeUnauthenticated},
		{403, a2a.CodePermissionDenied},
		{500, a2a.CodeInternal},
		{503, a2a.CodeUnavailable},
		// v1.0.0 statuses (REQUIREMENTS B13)
		{409, a2a.CodeTaskNotCancelable},
		{415, a2a.CodeContentTypeNotSupported},
		{502, a2a.CodeInvalidAgentResponse},
	}
	for _, c := range cases {
		if got := a2a.CodeFromHTTPStatus(c.status); got != c.want {
			t.Errorf("CodeFromHTTPStatus(%d) = %v, want %v", c.status, got, c.want)
		}
	}
}

func TestErrorsIs(t *testing.T) {
	sentinels := map[a2a.Code]error{
		a2a.CodeTaskNotFound:                   a2a.ErrTaskNotFound,
		a2a.CodeTaskNotCancelable:              a2a.ErrTaskNotCancelable,
		a2a.CodePushNotificationNotSupported:   a2a.ErrPushNotificationNotSupported,
		a2a.CodeUnsupportedOperation:           a2a.ErrUnsupportedOperation,
		a2a.CodeContentTypeNotSupported:        a2a.ErrContentTypeNotSupported,
		a2a.CodeInvalidAgentResponse:           a2a.ErrInvalidAgentResponse,
		a2a.CodeExtendedAgentCardNotConfigured: a2a.ErrExtendedAgentCardNotConfigured,
		a2a.CodeExtensionSupportRequired:       a2a.ErrExtensionSupportRequired,
		a2a.CodeVersionNotSupported:            a2a.ErrVersionNotSupported,
		a2a.CodeParseError:                     a2a.ErrParse,
		a2a.CodeInvalidRequest:                 a2a.ErrInvalidRequest,
		a2a.CodeMethodNotFound:                 a2a.ErrMethodNotFound,
		a2a.CodeInvalidParams:                  a2a.ErrInvalidParams,
		a2a.CodeInternal:                       a2a.ErrInternal,
		a2a.CodeUnauthenticated:                a2a.ErrUnauthenticated,
		a2a.CodePermissionDenied:               a2a.ErrPermissionDenied,
		a2a.CodeUnavailable:                    a2a.ErrUnavailable,
	}
	if !errors.Is(a2a.NewError(a2a.CodeTaskNotFound, "x"), a2a.ErrTaskNotFound) {
		t.Error("NewError(CodeTaskNotFound) is not ErrTaskNotFound")
	}
	if errors.Is(a2a.NewError(a2a.CodeTaskNotFound, "x"), a2a.ErrTaskNotCancelable) {
		t.Error("NewError(CodeTaskNotFound) is ErrTaskNotCancelable")
	}
	for c, s := range sentinels {
		for c2, s2 := range sentinels {
			if got := errors.Is(a2a.NewError(c, "m"), s2); got != (c == c2) {
				t.Errorf("errors.Is(NewError(%v), %v) = %v", c, s2, got)
			}
		}
		// Through wrapping, With and WithCause.
		wrapped := fmt.Errorf("handler: %w", a2a.NewError(c, "").With("k", "v").WithCause(errors.New("db down")))
		if !errors.Is(wrapped, s) {
			t.Errorf("wrapped %v is not its sentinel", c)
		}
	}
	if errors.Is(errors.New("task not found"), a2a.ErrTaskNotFound) {
		t.Error("a plain error is ErrTaskNotFound")
	}
	cause := errors.New("db down")
	if e := a2a.NewError(a2a.CodeInternal, "").WithCause(cause); !errors.Is(e, cause) {
		t.Error("cause not unwrapped")
	}
}

func TestAsError(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want a2a.Code
	}{
		{"a2a error in chain", fmt.Errorf("x: %w", a2a.NewError(a2a.CodeTaskNotFound, "")), a2a.CodeTaskNotFound},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), a2a.CodeUnavailable},
		{"canceled", context.Canceled, a2a.CodeUnavailable},
		{"anything else", errors.New("secret connection string"), a2a.CodeInternal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := a2a.AsError(c.err)
			if e.Code != c.want {
				t.Errorf("code %v, want %v", e.Code, c.want)
			}
			if strings.Contains(e.Text(), "secret") {
				t.Errorf("message leaks the cause: %q", e.Text())
			}
		})
	}
	if a2a.AsError(nil) != nil {
		t.Error("AsError(nil) != nil")
	}
}

func TestWireDetails(t *testing.T) {
	cases := []struct {
		name string
		err  *a2a.Error
		want string
	}{
		{"A2A error with metadata", a2a.NewError(a2a.CodeTaskNotFound, "").With("taskId", "t1"),
			`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t1"}}]`},
		{"A2A error without metadata", a2a.NewError(a2a.CodePushNotificationNotSupported, ""),
			`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"PUSH_NOTIFICATION_NOT_SUPPORTED","domain":"a2a-protocol.org"}]`},
		{"invalid params", a2a.InvalidParam("message.messageId", "messageId is required"),
			`[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.messageId","description":"messageId is required"}]}]`},
		{"A2A error with violations", &a2a.Error{Code: a2a.CodeContentTypeNotSupported, Violations: []a2a.FieldViolation{{Field: "message.parts[0].mediaType", Description: "image/png"}}},
			`[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"CONTENT_TYPE_NOT_SUPPORTED","domain":"a2a-protocol.org"},
			  {"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.parts[0].mediaType","description":"image/png"}]}]`},
		{"peer details kept", &a2a.Error{Code: a2a.CodeInternal, Details: []map[string]any{{"@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": "x"}}},
			`[{"@type":"type.googleapis.com/google.rpc.DebugInfo","detail":"x"}]`},
		{"internal error", a2a.NewError(a2a.CodeInternal, "boom"), `null`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assertJSONEqual(t, c.want, mustMarshal(t, c.err.WireDetails()))
		})
	}
	t.Run("With copies", func(t *testing.T) {
		a := a2a.NewError(a2a.CodeTaskNotFound, "").With("a", "1")
		b := a.With("b", "2")
		if len(a.Metadata) != 1 || len(b.Metadata) != 2 {
			t.Errorf("With shares metadata: %v %v", a.Metadata, b.Metadata)
		}
	})
}

func TestErrorFromWire(t *testing.T) {
	info := func(reason, domain string, md map[string]any) map[string]any {
		d := map[string]any{"@type": a2a.ErrorInfoType, "reason": reason}
		if domain != "" {
			d["domain"] = domain
		}
		if md != nil {
			d["metadata"] = md
		}
		return d
	}
	cases := []struct {
		name        string
		kind        a2a.Code
		details     []map[string]any
		want        a2a.Code
		wantMeta    map[string]string
		wantDetails int
	}{
		{"reason wins over the binding code", a2a.CodeInternal, []map[string]any{info("TASK_NOT_FOUND", a2a.ErrorDomain, nil)}, a2a.CodeTaskNotFound, nil, 0},
		{"v1.0.0 409 with its reason", a2a.CodeFromHTTPStatus(409), []map[string]any{info("TASK_NOT_CANCELABLE", a2a.ErrorDomain, nil)}, a2a.CodeTaskNotCancelable, nil, 0},
		{"reason beats a mismatched A2A code", a2a.CodeTaskNotFound, []map[string]any{info("VERSION_NOT_SUPPORTED", a2a.ErrorDomain, nil)}, a2a.CodeVersionNotSupported, nil, 0},
		{"metadata read", a2a.CodeUnknown, []map[string]any{info("TASK_NOT_FOUND", a2a.ErrorDomain, map[string]any{"taskId": "t1", "n": 1.0})}, a2a.CodeTaskNotFound, map[string]string{"taskId": "t1"}, 0},
		{"no domain accepted", a2a.CodeInternal, []map[string]any{info("UNSUPPORTED_OPERATION", "", nil)}, a2a.CodeUnsupportedOperation, nil, 0},
		{"no details keeps the kind", a2a.CodeTaskNotFound, nil, a2a.CodeTaskNotFound, nil, 0},
		{"unknown reason keeps the kind", a2a.CodeInternal, []map[string]any{info("SOMETHING_NEW", a2a.ErrorDomain, nil)}, a2a.CodeInternal, nil, 1},
		{"foreign domain keeps the kind", a2a.CodeInternal, []map[string]any{info("TASK_NOT_FOUND", "example.com", map[string]any{"k": "v"})}, a2a.CodeInternal, nil, 1},
		{"other details kept", a2a.CodeInternal, []map[string]any{{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{}}}, a2a.CodeInternal, nil, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := a2a.ErrorFromWire(c.kind, "msg", c.details)
			if e.Code != c.want {
				t.Errorf("code %v, want %v", e.Code, c.want)
			}
			if e.Message != "msg" {
				t.Errorf("message %q", e.Message)
			}
			if fmt.Sprint(e.Metadata) != fmt.Sprint(c.wantMeta) && !(len(e.Metadata) == 0 && len(c.wantMeta) == 0) {
				t.Errorf("metadata %v, want %v", e.Metadata, c.wantMeta)
			}
			if len(e.Details) != c.wantDetails {
				t.Errorf("details %v, want %d", e.Details, c.wantDetails)
			}
		})
	}
	t.Run("bad request", func(t *testing.T) {
		var details []map[string]any
		_ = json.Unmarshal([]byte(`[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"a","description":"b"},{"field":"c","description":"d"}]}]`), &details)
		e := a2a.ErrorFromWire(a2a.CodeInvalidParams, "", details)
		if e.Code != a2a.CodeInvalidParams || fmt.Sprint(e.Violations) != "[{a b} {c d}]" {
			t.Errorf("got %+v", e)
		}
		if e.Text() != a2a.CodeInvalidParams.DefaultMessage() {
			t.Errorf("Text() = %q", e.Text())
		}
	})
	t.Run("round trip through WireDetails", func(t *testing.T) {
		for _, c := range allCodes() {
			orig := a2a.NewError(c, "m").With("taskId", "t")
			b, _ := json.Marshal(orig.WireDetails())
			var details []map[string]any
			_ = json.Unmarshal(b, &details)
			// The binding code alone says Internal; ErrorInfo restores A2A kinds.
			back := a2a.ErrorFromWire(a2a.CodeInternal, "m", details)
			want := c
			if !isA2A(c) {
				want = a2a.CodeInternal
			}
			if back.Code != want {
				t.Errorf("%v came back as %v", c, back.Code)
			}
		}
	})
}

func TestRetryInfoRoundTrip(t *testing.T) {
	orig := a2a.NewError(a2a.CodeResourceExhausted, "slow down").With("limit", "rate")
	orig.RetryAfter = 1500 * time.Millisecond
	b, err := json.Marshal(orig.WireDetails())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}`) {
		t.Errorf("details = %s", b)
	}
	var details []map[string]any
	if err := json.Unmarshal(b, &details); err != nil {
		t.Fatal(err)
	}
	back := a2a.ErrorFromWire(a2a.CodeUnknown, "slow down", details)
	if back.Code != a2a.CodeResourceExhausted || back.RetryAfter != orig.RetryAfter || back.Metadata["limit"] != "rate" {
		t.Errorf("came back as %+v", back)
	}
	bad := a2a.ErrorFromWire(a2a.CodeUnknown, "", []map[string]any{{"@type": a2a.RetryInfoType, "retryDelay": "soon"}})
	if bad.RetryAfter != 0 || len(bad.Details) != 1 {
		t.Errorf("a malformed RetryInfo gave %+v", bad)
	}
	if a2a.CodeFromHTTPStatus(429) != a2a.CodeResourceExhausted {
		t.Errorf("CodeFromHTTPStatus(429) = %v", a2a.CodeFromHTTPStatus(429))
	}
}
