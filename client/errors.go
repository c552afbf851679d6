package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goa2a/a2a/a2a"
)

// transportError wraps a failure to reach the peer or to read its answer:
// it is deliberately not an *a2a.Error (see the package doc).
func transportError(op string, err error) error {
	return fmt.Errorf("client: %s: %w", op, err)
}

// invalidResponse is the error for an answer that does not follow the
// protocol (A2A §3.3.2 InvalidAgentResponseError).
func invalidResponse(format string, args ...any) *a2a.Error {
	return a2a.NewError(a2a.CodeInvalidAgentResponse, fmt.Sprintf(format, args...))
}

// invalidResponseCause is invalidResponse keeping the decoding error as
// the local cause.
func invalidResponseCause(cause error, format string, args ...any) *a2a.Error {
	return invalidResponse(format, args...).WithCause(cause)
}

// transient reports whether a failed call may succeed if repeated: the
// connection failed, or the peer said it is temporarily unavailable. A
// caller whose context is done never retries.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var e *a2a.Error
	if !errors.As(err, &e) {
		return true
	}
	return e.Code == a2a.CodeUnavailable
}

// rpcError is the JSON-RPC error object (A2A §9.5).
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// toA2A rebuilds the A2A error: the ErrorInfo reason first, then the
// JSON-RPC code (REQUIREMENTS B13).
func (e *rpcError) toA2A() *a2a.Error {
	kind, ok := a2a.CodeFromJSONRPC(e.Code)
	if !ok {
		kind = a2a.CodeUnknown
	}
	return a2a.ErrorFromWire(kind, e.Message, details(e.Data))
}

// details reads error details: an array of objects as the spec asks, or a
// single object as some peers send. Anything else is dropped.
func details(raw json.RawMessage) []map[string]any {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		var out []map[string]any
		for _, it := range items {
			var m map[string]any
			if json.Unmarshal(it, &m) == nil && m != nil {
				out = append(out, m)
			}
		}
		return out
	case '{':
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil && m != nil {
			return []map[string]any{m}
		}
	}
	return nil
}

// statusBody is the google.rpc.Status JSON of HTTP+JSON errors (A2A
// §11.6).
type statusBody struct {
	Error *struct {
		Code    int             `json:"code"`
		Status  string          `json:"status"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	} `json:"error"`
}

// statusError decodes a google.rpc.Status error body answered with
// httpStatus. It reports false when data is not one.
func statusError(httpStatus int, data []byte) (*a2a.Error, bool) {
	var b statusBody
	if json.Unmarshal(data, &b) != nil || b.Error == nil {
		return nil, false
	}
	if httpStatus == 0 {
		httpStatus = b.Error.Code
	}
	return a2a.ErrorFromWire(restKind(b.Error.Status, httpStatus), b.Error.Message, details(b.Error.Details)), true
}

// restKind is the error kind an HTTP+JSON error has when it carries no
// ErrorInfo: from the gRPC status name, then the HTTP status. The v1.0.0
// statuses (409, 415, 502) name their kind alone (REQUIREMENTS B13). A 404
// whose status is UNIMPLEMENTED is a route that does not exist, not a
// missing task.
func restKind(status string, httpStatus int) a2a.Code {
	switch httpStatus {
	case http.StatusConflict:
		return a2a.CodeTaskNotCancelable
	case http.StatusUnsupportedMediaType:
		return a2a.CodeContentTypeNotSupported
	case http.StatusBadGateway:
		return a2a.CodeInvalidAgentResponse
	}
	switch status {
	case "NOT_FOUND":
		return a2a.CodeTaskNotFound
	case "UNIMPLEMENTED":
		if httpStatus == http.StatusNotFound || httpStatus == http.StatusMethodNotAllowed {
			return a2a.CodeMethodNotFound
		}
		// v1.0.0 answered UnsupportedOperation (and others) with
		// UNIMPLEMENTED; the reason, when present, has already decided.
		return a2a.CodeUnsupportedOperation
	case "INVALID_ARGUMENT":
		return a2a.CodeInvalidParams
	case "FAILED_PRECONDITION":
		// Shared by six A2A errors: without a reason, no guess is right.
		return a2a.CodeUnknown
	case "INTERNAL":
		return a2a.CodeInternal
	case "UNAVAILABLE":
		return a2a.CodeUnavailable
	case "UNAUTHENTICATED":
		return a2a.CodeUnauthenticated
	case "PERMISSION_DENIED":
		return a2a.CodePermissionDenied
	case "RESOURCE_EXHAUSTED":
		return a2a.CodeResourceExhausted
	}
	return a2a.CodeFromHTTPStatus(httpStatus)
}

// httpError is the error for a failed HTTP answer that carries no A2A
// error body, such as a proxy's or a router's. A 404 without one is a
// missing route, not a missing task.
func httpError(httpStatus int, data []byte) *a2a.Error {
	kind := a2a.CodeFromHTTPStatus(httpStatus)
	if httpStatus == http.StatusNotFound {
		kind = a2a.CodeMethodNotFound
	}
	msg := "HTTP " + strconv.Itoa(httpStatus)
	if t := http.StatusText(httpStatus); t != "" {
		msg += " " + t
	}
	if s := snippet(data); s != "" {
		msg += ": " + s
	}
	return a2a.NewError(kind, msg)
}

// snippet is the start of a body, if it is short readable text, for error
// messages.
func snippet(data []byte) string {
	const limit = 200
	s := strings.TrimSpace(string(data))
	if s == "" || !utf8.ValidString(s) {
		return ""
	}
	if len(s) > limit {
		s = s[:limit]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return strings.Join(strings.Fields(s), " ")
}
