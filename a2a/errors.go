package a2a

import (
	"context"
	"errors"
	"math"
	"strconv"
	"time"
)

// Code is the kind of an A2A error: one of the protocol's own errors (A2A
// §3.3.2, §5.4) or a standard failure such as invalid parameters. Each
// binding maps a Code to its wire form through one table, see
// [Code.JSONRPCCode], [Code.HTTPStatus] and [Code.GRPCCode].
type Code int

// Error kinds.
const (
	CodeUnknown Code = iota
	CodeTaskNotFound
	CodeTaskNotCancelable
	CodePushNotificationNotSupported
	CodeUnsupportedOperation
	CodeContentTypeNotSupported
	CodeInvalidAgentResponse
	CodeExtendedAgentCardNotConfigured
	CodeExtensionSupportRequired
	CodeVersionNotSupported
	CodeParseError
	CodeInvalidRequest
	CodeMethodNotFound
	CodeInvalidParams
	CodeInternal
	CodeUnauthenticated
	CodePermissionDenied
	CodeUnavailable
	CodeResourceExhausted
	numCodes
)

// gRPC status codes, as numbers, so this package needs no gRPC import.
const (
	grpcInvalidArgument    = 3
	grpcNotFound           = 5
	grpcPermissionDenied   = 7
	grpcResourceExhausted  = 8
	grpcFailedPrecondition = 9
	grpcUnimplemented      = 12
	grpcInternal           = 13
	grpcUnavailable        = 14
	grpcUnauthenticated    = 16
	grpcUnknown            = 2
)

var grpcNames = map[int]string{
	grpcUnknown: "UNKNOWN", grpcInvalidArgument: "INVALID_ARGUMENT", grpcNotFound: "NOT_FOUND",
	grpcPermissionDenied: "PERMISSION_DENIED", grpcFailedPrecondition: "FAILED_PRECONDITION",
	grpcUnimplemented: "UNIMPLEMENTED", grpcInternal: "INTERNAL", grpcUnavailable: "UNAVAILABLE",
	grpcUnauthenticated: "UNAUTHENTICATED", grpcResourceExhausted: "RESOURCE_EXHAUSTED",
}

type codeInfo struct {
	name    string // Go-style name, also the A2A error name
	jsonrpc int
	http    int
	grpc    int
	reason  string // ErrorInfo.reason; "" for non-A2A errors
	message string // default human-readable message
}

// codeTable is the single mapping of error kinds to wire codes: REQUIREMENTS
// E1, the v1.0.1 column of A2A §5.4. Default messages follow the A2A 101
// capture kit.
var codeTable = [numCodes]codeInfo{
	CodeUnknown:                        {"Unknown", -32603, 500, grpcUnknown, "", "Unknown error"},
	CodeTaskNotFound:                   {"TaskNotFoundError", -32001, 404, grpcNotFound, "TASK_NOT_FOUND", "Task not found"},
	CodeTaskNotCancelable:              {"TaskNotCancelableError", -32002, 400, grpcFailedPrecondition, "TASK_NOT_CANCELABLE", "Task cannot be canceled"},
	CodePushNotificationNotSupported:   {"PushNotificationNotSupportedError", -32003, 400, grpcFailedPrecondition, "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push notifications are not supported"},
	CodeUnsupportedOperation:           {"UnsupportedOperationError", -32004, 400, grpcFailedPrecondition, "UNSUPPORTED_OPERATION", "This operation is not supported"},
	CodeContentTypeNotSupported:        {"ContentTypeNotSupportedError", -32005, 400, grpcInvalidArgument, "CONTENT_TYPE_NOT_SUPPORTED", "Content type not supported"},
	CodeInvalidAgentResponse:           {"InvalidAgentResponseError", -32006, 500, grpcInternal, "INVALID_AGENT_RESPONSE", "Invalid agent response"},
	CodeExtendedAgentCardNotConfigured: {"ExtendedAgentCardNotConfiguredError", -32007, 400, grpcFailedPrecondition, "EXTENDED_AGENT_CARD_NOT_CONFIGURED", "Extended agent card is not configured"},
	CodeExtensionSupportRequired:       {"ExtensionSupportRequiredError", -32008, 400, grpcFailedPrecondition, "EXTENSION_SUPPORT_REQUIRED", "A required extension was not declared"},
	CodeVersionNotSupported:            {"VersionNotSupportedError", -32009, 400, grpcFailedPrecondition, "VERSION_NOT_SUPPORTED", "Protocol version not supported"},
	CodeParseError:                     {"ParseError", -32700, 400, grpcInvalidArgument, "", "Invalid JSON payload"},
	CodeInvalidRequest:                 {"InvalidRequest", -32600, 400, grpcInvalidArgument, "", "Invalid request"},
	CodeMethodNotFound:                 {"MethodNotFound", -32601, 404, grpcUnimplemented, "", "Method not found"},
	CodeInvalidParams:                  {"InvalidParams", -32602, 400, grpcInvalidArgument, "", "Invalid parameters"},
	CodeInternal:                       {"InternalError", -32603, 500, grpcInternal, "", "Internal error"},
	CodeUnauthenticated:                {"Unauthenticated", -31401, 401, grpcUnauthenticated, "", "Authentication required"},
	CodePermissionDenied:               {"PermissionDenied", -31403, 403, grpcPermissionDenied, "", "Permission denied"},
	CodeUnavailable:                    {"Unavailable", -32603, 503, grpcUnavailable, "", "Service temporarily unavailable"},
	// Not an A2A error: a server limit refused the call (too many streams
	// or tasks, too many requests). -31429 sits beside the -31401/-31403 of
	// REQUIREMENTS B3; the ErrorInfo names the limit in its metadata.
	CodeResourceExhausted: {"ResourceExhausted", -31429, 429, grpcResourceExhausted, "RESOURCE_EXHAUSTED", "A server limit was reached"},
}

func (c Code) info() codeInfo {
	if c < 0 || c >= numCodes {
		return codeTable[CodeUnknown]
	}
	return codeTable[c]
}

// String returns the error's name, such as "TaskNotFoundError".
func (c Code) String() string {
	if c < 0 || c >= numCodes {
		return "Code(" + strconv.Itoa(int(c)) + ")"
	}
	return codeTable[c].name
}

// JSONRPCCode is the JSON-RPC error code (A2A §9.5).
func (c Code) JSONRPCCode() int { return c.info().jsonrpc }

// HTTPStatus is the HTTP status of the HTTP+JSON binding (A2A §11.6).
func (c Code) HTTPStatus() int { return c.info().http }

// GRPCCode is the numeric gRPC status code (A2A §10.6).
func (c Code) GRPCCode() int { return c.info().grpc }

// GRPCStatusName is the gRPC code name, such as "NOT_FOUND", as written in
// the "status" member of HTTP+JSON error bodies.
func (c Code) GRPCStatusName() string { return grpcNames[c.info().grpc] }

// Reason is the ErrorInfo reason, such as "TASK_NOT_FOUND"; "" for errors
// that are not A2A-specific.
func (c Code) Reason() string { return c.info().reason }

// DefaultMessage is the message used when an error carries none.
func (c Code) DefaultMessage() string { return c.info().message }

// CodeFromReason maps an ErrorInfo reason back to its code.
func CodeFromReason(reason string) (Code, bool) {
	if reason == "" {
		return CodeUnknown, false
	}
	for c := range numCodes {
		if codeTable[c].reason == reason {
			return c, true
		}
	}
	return CodeUnknown, false
}

// CodeFromJSONRPC maps a JSON-RPC error code to its kind. The -32603 code is
// shared; it maps to CodeInternal.
func CodeFromJSONRPC(n int) (Code, bool) {
	for c := CodeTaskNotFound; c < numCodes; c++ {
		if codeTable[c].jsonrpc == n {
			return c, true
		}
	}
	return CodeUnknown, false
}

// CodeFromHTTPStatus gives the best guess of an error kind from an HTTP
// status alone, for peers that send no ErrorInfo. It also accepts the
// v1.0.0 statuses (409, 415, 502; REQUIREMENTS B13).
func CodeFromHTTPStatus(status int) Code {
	switch status {
	case 404:
		return CodeTaskNotFound
	case 409:
		return CodeTaskNotCancelable
	case 415:
		return CodeContentTypeNotSupported
	case 502:
		return CodeInvalidAgentResponse
	case 401:
		return CodeUnauthenticated
	case 403:
		return CodePermissionDenied
	case 503:
		return CodeUnavailable
	case 429:
		return CodeResourceExhausted
	case 400:
		return CodeInvalidParams
	case 405:
		return CodeMethodNotFound
	}
	if status >= 500 {
		return CodeInternal
	}
	return CodeUnknown
}

// FieldViolation names one invalid field of a request and why
// (google.rpc.BadRequest.FieldViolation).
type FieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}

// Error is an A2A error: its kind, a message for people, and details for
// programs. Messages reach clients, so they must not leak internals; the
// wrapped cause, if any, stays on this side of the wire.
//
// Sentinel errors such as [ErrTaskNotFound] compare by code, so
// errors.Is(err, a2a.ErrTaskNotFound) holds for any *Error of that kind.
type Error struct {
	Code    Code
	Message string
	// Metadata is carried in the ErrorInfo detail (for example the task id).
	Metadata map[string]string
	// Violations are carried in a google.rpc.BadRequest detail.
	Violations []FieldViolation
	// Details are further detail objects received from a peer, each with
	// an "@type" member.
	Details []map[string]any
	// RetryAfter, when positive, tells the caller how long to wait before
	// trying again. It is carried in a google.rpc.RetryInfo detail; the
	// HTTP bindings also send it as a Retry-After header where the answer
	// has an error status.
	RetryAfter time.Duration

	cause error
}

// Sentinels for errors.Is. Do not modify them; use [NewError] to build one.
var (
	ErrTaskNotFound                   = &Error{Code: CodeTaskNotFound}
	ErrTaskNotCancelable              = &Error{Code: CodeTaskNotCancelable}
	ErrPushNotificationNotSupported   = &Error{Code: CodePushNotificationNotSupported}
	ErrUnsupportedOperation           = &Error{Code: CodeUnsupportedOperation}
	ErrContentTypeNotSupported        = &Error{Code: CodeContentTypeNotSupported}
	ErrInvalidAgentResponse           = &Error{Code: CodeInvalidAgentResponse}
	ErrExtendedAgentCardNotConfigured = &Error{Code: CodeExtendedAgentCardNotConfigured}
	ErrExtensionSupportRequired       = &Error{Code: CodeExtensionSupportRequired}
	ErrVersionNotSupported            = &Error{Code: CodeVersionNotSupported}
	ErrParse                          = &Error{Code: CodeParseError}
	ErrInvalidRequest                 = &Error{Code: CodeInvalidRequest}
	ErrMethodNotFound                 = &Error{Code: CodeMethodNotFound}
	ErrInvalidParams                  = &Error{Code: CodeInvalidParams}
	ErrInternal                       = &Error{Code: CodeInternal}
	ErrUnauthenticated                = &Error{Code: CodeUnauthenticated}
	ErrPermissionDenied               = &Error{Code: CodePermissionDenied}
	ErrUnavailable                    = &Error{Code: CodeUnavailable}
	ErrResourceExhausted              = &Error{Code: CodeResourceExhausted}
)

// NewError returns an error of the given kind. An empty message takes the
// kind's default.
func NewError(code Code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// InvalidParams returns an InvalidParams error naming the failing fields.
func InvalidParams(violations ...FieldViolation) *Error {
	return &Error{Code: CodeInvalidParams, Violations: violations}
}

// InvalidParam returns an InvalidParams error for one field.
func InvalidParam(field, description string) *Error {
	return InvalidParams(FieldViolation{Field: field, Description: description})
}

// With returns a copy of e with one more ErrorInfo metadata entry.
func (e *Error) With(key, value string) *Error {
	c := *e
	c.Metadata = make(map[string]string, len(e.Metadata)+1)
	for k, v := range e.Metadata {
		c.Metadata[k] = v
	}
	c.Metadata[key] = value
	return &c
}

// WithCause returns a copy of e that wraps cause (kept locally, never sent).
func (e *Error) WithCause(cause error) *Error {
	c := *e
	c.cause = cause
	return &c
}

// Text is the message, or the kind's default when the message is empty.
func (e *Error) Text() string {
	if e.Message != "" {
		return e.Message
	}
	return e.Code.DefaultMessage()
}

// Error implements error.
func (e *Error) Error() string {
	s := "a2a: " + e.Code.String() + ": " + e.Text()
	for _, v := range e.Violations {
		s += "; " + v.Field + ": " + v.Description
	}
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	return s
}

// Unwrap returns the local cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// Is reports whether target is an *Error of the same kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// AsError converts any error to an *Error: an *Error anywhere in the chain is
// returned as is; context cancellation and deadlines map to Unavailable; and
// anything else becomes an Internal error whose message hides the cause.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Code: CodeUnavailable, Message: "deadline exceeded", cause: err}
	case errors.Is(err, context.Canceled):
		return &Error{Code: CodeUnavailable, Message: "request canceled", cause: err}
	}
	return &Error{Code: CodeInternal, cause: err}
}

// Detail types written in error details (A2A §9.5, §10.6, §11.6).
const (
	ErrorInfoType  = "type.googleapis.com/google.rpc.ErrorInfo"
	BadRequestType = "type.googleapis.com/google.rpc.BadRequest"
	RetryInfoType  = "type.googleapis.com/google.rpc.RetryInfo"
	// ErrorDomain is the ErrorInfo domain of A2A errors.
	ErrorDomain = "a2a-protocol.org"
)

// WireDetails returns the detail objects of e as the bindings write them: an
// ErrorInfo for A2A errors, a BadRequest when fields are named, then any
// details received from a peer.
func (e *Error) WireDetails() []any {
	var out []any
	if r := e.Code.Reason(); r != "" {
		out = append(out, errorInfo{Type: ErrorInfoType, Reason: r, Domain: ErrorDomain, Metadata: e.Metadata})
	}
	if len(e.Violations) > 0 {
		out = append(out, badRequest{Type: BadRequestType, FieldViolations: e.Violations})
	}
	if e.RetryAfter > 0 {
		out = append(out, retryInfo{Type: RetryInfoType, RetryDelay: formatDuration(e.RetryAfter)})
	}
	for _, d := range e.Details {
		out = append(out, d)
	}
	return out
}

type errorInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

type retryInfo struct {
	Type       string `json:"@type"`
	RetryDelay string `json:"retryDelay"` // google.protobuf.Duration JSON: "1.5s"
}

// formatDuration writes d as the JSON form of a google.protobuf.Duration:
// seconds with up to nine fractional digits and an "s".
func formatDuration(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// parseDuration reads the JSON form of a google.protobuf.Duration.
func parseDuration(s string) (time.Duration, bool) {
	if len(s) < 2 || s[len(s)-1] != 's' {
		return 0, false
	}
	f, err := strconv.ParseFloat(s[:len(s)-1], 64)
	if err != nil || f < 0 || f > float64(math.MaxInt64/int64(time.Second)) {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

type badRequest struct {
	Type            string           `json:"@type"`
	FieldViolations []FieldViolation `json:"fieldViolations"`
}

// ErrorFromWire rebuilds an *Error from what a peer sent: the ErrorInfo
// reason decides the kind first, then the binding's own code (kind), which
// the caller derives from the JSON-RPC code or HTTP/gRPC status
// (REQUIREMENTS B13). Only an ErrorInfo of the A2A domain (or one without a
// domain) with a known reason is read; any other ErrorInfo, and details
// other than ErrorInfo, BadRequest and RetryInfo, are kept in Details.
func ErrorFromWire(kind Code, message string, details []map[string]any) *Error {
	e := &Error{Code: kind, Message: message}
	for _, d := range details {
		switch d["@type"] {
		case ErrorInfoType:
			r, _ := d["reason"].(string)
			c, known := CodeFromReason(r)
			if dom, ok := d["domain"].(string); !known || (ok && dom != ErrorDomain) {
				e.Details = append(e.Details, d)
				continue
			}
			e.Code = c
			if md, ok := d["metadata"].(map[string]any); ok {
				e.Metadata = make(map[string]string, len(md))
				for k, v := range md {
					if s, ok := v.(string); ok {
						e.Metadata[k] = s
					}
				}
			}
		case RetryInfoType:
			s, _ := d["retryDelay"].(string)
			if r, ok := parseDuration(s); ok {
				e.RetryAfter = r
			} else {
				e.Details = append(e.Details, d)
			}
		case BadRequestType:
			if fvs, ok := d["fieldViolations"].([]any); ok {
				for _, fv := range fvs {
					m, _ := fv.(map[string]any)
					f, _ := m["field"].(string)
					desc, _ := m["description"].(string)
					e.Violations = append(e.Violations, FieldViolation{Field: f, Description: desc})
				}
			}
		default:
			e.Details = append(e.Details, d)
		}
	}
	return e
}
