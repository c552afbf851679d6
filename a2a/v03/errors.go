package v03

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/goa2a/a2a/a2a"
)

// The v0.3 error codes (A2A v0.3 §8): JSON-RPC's own, then A2A's. v1.0
// gives every one of them the same number (A2A §9.5), so they need no
// mapping; the kinds v1.0 added (ExtensionSupportRequired -32008,
// VersionNotSupported -32009, and this module's -31401, -31403 and
// -31429) keep their v1.0 numbers on the v0.3 wire too, as the JS SDK's
// compat layer does: in the server-error range JSON-RPC reserves, a v0.3
// client reads them as an error it does not know.
const (
	CodeParseError                             = -32700
	CodeInvalidRequest                         = -32600
	CodeMethodNotFound                         = -32601
	CodeInvalidParams                          = -32602
	CodeInternalError                          = -32603
	CodeTaskNotFound                           = -32001
	CodeTaskNotCancelable                      = -32002
	CodePushNotificationNotSupported           = -32003
	CodeUnsupportedOperation                   = -32004
	CodeContentTypeNotSupported                = -32005
	CodeInvalidAgentResponse                   = -32006
	CodeAuthenticatedExtendedCardNotConfigured = -32007
)

// Error is the v0.3 error object: of JSON-RPC responses, and the whole body
// of v0.3 HTTP+JSON errors. Data is a JSON object or absent (v0.3 declares
// it an object).
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements error.
func (e *Error) Error() string {
	return "a2a v0.3 error " + strconv.Itoa(e.Code) + ": " + e.Message
}

// FromV1Error returns the v0.3 form of e. The code is e's JSON-RPC code and
// the message its text. What v0.3 has no member for travels in data, only
// when there is any: a lone detail object as data itself, several as
// {"details": [...]}, each as the v1.0 bindings write it (an ErrorInfo
// with the metadata of an A2A error, a BadRequest naming the fields, a
// RetryInfo, then the details received from a peer). A v0.3 code already
// says which A2A error it is, so an ErrorInfo is written only to carry
// metadata.
//
// Unknown and Unavailable share -32603 with Internal and carry no
// ErrorInfo, so a v0.3 peer reads them as Internal, as a v1.0 JSON-RPC peer
// does.
func FromV1Error(e *a2a.Error) *Error {
	if e == nil {
		return nil
	}
	out := &Error{Code: e.Code.JSONRPCCode(), Message: e.Text()}
	var details []any
	if r := e.Code.Reason(); r != "" && len(e.Metadata) > 0 {
		details = append(details, map[string]any{"@type": a2a.ErrorInfoType, "reason": r, "domain": a2a.ErrorDomain, "metadata": e.Metadata})
	}
	// The BadRequest and RetryInfo details are written as v1.0 writes
	// them: take them from WireDetails, after its ErrorInfo.
	wire := e.WireDetails()
	if e.Code.Reason() != "" {
		wire = wire[1:]
	}
	peer := len(wire) - len(e.Details)
	details = append(details, wire[:peer]...)
	generated := len(details)
	details = append(details, wire[peer:]...)
	if len(details) == 0 {
		return out
	}
	// A detail of ours is never mistaken for the wrapper; one from a
	// peer might be, and is then wrapped.
	var data any = map[string]any{"details": details}
	if len(details) == 1 && (generated == 1 || !isEnvelope(details[0])) {
		data = details[0]
	}
	if b, err := json.Marshal(data); err == nil {
		out.Data = b
	}
	return out
}

// isEnvelope reports whether d would read back as the {"details": [...]}
// wrapper rather than as one detail.
func isEnvelope(d any) bool {
	b, err := json.Marshal(d)
	if err != nil {
		return false
	}
	_, ok := envelope(b)
	return ok
}

// envelope returns the details of data when it is {"details": [...]}, an
// object with that one member holding an array of objects.
func envelope(data []byte) ([]map[string]any, bool) {
	var w map[string]json.RawMessage
	if json.Unmarshal(data, &w) != nil || len(w) != 1 || w["details"] == nil {
		return nil, false
	}
	var ds []map[string]any
	if json.Unmarshal(w["details"], &ds) != nil || ds == nil {
		return nil, false
	}
	for _, d := range ds {
		if d == nil {
			return nil, false
		}
	}
	return ds, true
}

// ToV1Error returns the v1.0 error a v0.3 error object stands for: the
// kind from the code (one v0.3 does not define is Unknown), the message as
// sent, and the details of data as [FromV1Error] writes them. Other data
// that is an object is kept as one detail; data that is not an object is
// not kept.
func ToV1Error(e *Error) *a2a.Error {
	if e == nil {
		return nil
	}
	kind, ok := a2a.CodeFromJSONRPC(e.Code)
	if !ok {
		kind = a2a.CodeUnknown
	}
	var details []map[string]any
	if raw := bytes.TrimSpace(e.Data); len(raw) > 0 && raw[0] == '{' {
		if ds, ok := envelope(raw); ok {
			details = ds
		} else {
			var d map[string]any
			if json.Unmarshal(raw, &d) == nil {
				details = []map[string]any{d}
			}
		}
	}
	return a2a.ErrorFromWire(kind, e.Message, details)
}

// notInV03 is the error for a v1.0 value that v0.3 cannot express.
func notInV03(field, why string) *a2a.Error {
	return &a2a.Error{
		Code:       a2a.CodeUnsupportedOperation,
		Message:    "not expressible in A2A v0.3",
		Violations: []a2a.FieldViolation{{Field: field, Description: why}},
	}
}

// notInV1 is the error for a v0.3 value that v1.0 cannot express.
func notInV1(field, why string) *a2a.Error {
	return &a2a.Error{
		Code:       a2a.CodeUnsupportedOperation,
		Message:    "not expressible in A2A v1.0",
		Violations: []a2a.FieldViolation{{Field: field, Description: why}},
	}
}

// invalid is the error for a value that is malformed in its own version.
func invalid(field, why string) *a2a.Error { return a2a.InvalidParam(field, why) }

// join appends a member name to a field path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// index appends an array index to a field path.
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// key appends a map key to a field path.
func key(path, k string) string { return path + "[" + strconv.Quote(k) + "]" }
