package a2a_test

// Golden round-trip tests over the A2A 101 capture kit: every JSON body the
// kit recorded is decoded into the Go type the protocol gives it, encoded
// again with encoding/json, and compared with the original as a JSON value
// (REQUIREMENTS D8: never compare bytes). Error bodies are checked against
// the error table instead, and the few bodies that are not round-tripped are
// listed in captureExceptions with the reason. Nothing is skipped silently:
// every exception and every expected error must be met, and every file of
// the capture folder must be accounted for.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/goa2a/a2a/internal/capture"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
)

// referenceDir finds the shared reference folder. From the package directory
// (/work/main/a2a, the working directory of `go test`) it is
// ../../shared/reference; it is searched for upwards so that the test also
// runs from a copy of the checkout elsewhere. A2A_REFERENCE_DIR overrides.
func referenceDir(t testing.TB) string {
	t.Helper()
	const marker = "a2a-101/capture/out"
	if d := os.Getenv("A2A_REFERENCE_DIR"); d != "" {
		if _, err := os.Stat(filepath.Join(d, marker)); err != nil {
			t.Fatalf("A2A_REFERENCE_DIR=%s has no %s: %v", d, marker, err)
		}
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("getwd: %v", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		cand := filepath.Join(dir, "shared", "reference")
		if fi, err := os.Stat(filepath.Join(cand, marker)); err == nil && fi.IsDir() {
			return cand
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	t.Fatalf("reference folder not found: expected ../../shared/reference/%s relative to %s "+
		"(the a2a package directory), or in a shared/reference folder of any parent; "+
		"set A2A_REFERENCE_DIR to the folder holding a2a-101/", marker, wd)
	return ""
}

func captureDir(t testing.TB) string {
	return filepath.Join(referenceDir(t), "a2a-101", "capture", "out")
}

// ---------------------------------------------------------------------------
// What is not round-tripped, and why.

// captureFileExceptions are files of the capture folder that hold no HTTP
// exchanges.
var captureFileExceptions = map[string]string{
	"17-signed-card.txt": "not HTTP: the JCS canonical payload, JWS header and signature of the deployer card (the card itself is round-tripped from 01-agent-cards.http)",
	"19-planner.log":     "not HTTP: the planner's decision log in plain text",
}

// captureExceptions are bodies deliberately not round-tripped, keyed by
// "<file>#<exchange label> <request|response>".
var captureExceptions = map[string]string{
	"07-auth-required.http#2 request":  "POST /approve/{id} is the kit's out-of-band operator approval, not an A2A operation",
	"07-auth-required.http#2 response": "the kit's operator approval answer {approved, taskId}, not an A2A message",
	"19-planner.http#9 request":        "POST /approve/{id} is the kit's out-of-band operator approval, not an A2A operation",
	"19-planner.http#9 response":       "the kit's operator approval answer {approved, taskId}, not an A2A message",
	"11-errors.http#3 request":         "uses the v0.3 method name message/send on purpose; it has no v1.0 params type (the MethodNotFound answer is checked)",
	"11-errors.http#4 request":         "invalid on purpose: the message lacks the REQUIRED messageId, which the encoder always writes, so it would come back as \"messageId\":\"\" (decoding it is checked)",
	"11-errors.http#7 request":         "malformed JSON on purpose (the ParseError answer is checked)",
}

// captureErrors are the error answers of the kit with the kind each must
// decode to. Their details are rebuilt with ErrorFromWire and re-encoded
// with WireDetails, which must give back what was sent.
var captureErrors = map[string]a2a.Code{
	"10-cancel.http#3":       a2a.CodeTaskNotCancelable,
	"10-cancel.http#4":       a2a.CodeUnsupportedOperation,
	"11-errors.http#1":       a2a.CodeTaskNotFound,
	"11-errors.http#2":       a2a.CodeVersionNotSupported,
	"11-errors.http#3":       a2a.CodeMethodNotFound,
	"11-errors.http#4":       a2a.CodeInvalidParams,
	"11-errors.http#5":       a2a.CodeContentTypeNotSupported,
	"11-errors.http#6":       a2a.CodePushNotificationNotSupported,
	"11-errors.http#7":       a2a.CodeParseError,
	"14-resubscribe.http#3":  a2a.CodeUnsupportedOperation,
	"16-rest-binding.http#3": a2a.CodeTaskNotFound,
	"16-rest-binding.http#4": a2a.CodeTaskNotCancelable,
	// Authentication runs in front of the protocol: the kit answers HTTP 401
	// with a google.rpc.Status body even on the JSON-RPC endpoint.
	"18-extended-card.http#1": a2a.CodeUnauthenticated,
}

// captureNormalizations are documented differences between the kit's JSON
// and ProtoJSON. Each is applied to the original before comparing, and must
// change it, so that a stale entry fails.
var captureNormalizations = []struct {
	files  []string
	reason string
	apply  func(v any) bool
}{{
	files: []string{"01-agent-cards.http", "18-extended-card.http", "19-planner.http"},
	reason: "the kit writes StringList {\"list\": []} for a scheme with no scopes; ProtoJSON omits the empty " +
		"repeated list (it is not REQUIRED, so A2A §8.4.1 omits it as well) and writes {}",
	apply: capture.DropEmptyStringLists,
}}

// ---------------------------------------------------------------------------
// Parsing the .http files.

type sseFrame struct {
	line int
	data []byte
}

type httpMessage struct {
	line    int
	request bool
	verb    string // request
	target  string // request
	status  int    // response
	header  http.Header
	body    []byte     // the JSON body, trimmed; nil when there is none
	frames  []sseFrame // SSE data events
}

func (m *httpMessage) sse() bool {
	return !m.request && strings.HasPrefix(m.header.Get("Content-Type"), "text/event-stream")
}

type exchange struct {
	file  string
	label string // "1", "webhook 3"
	title string
	req   *httpMessage
	resp  *httpMessage
}

func (x *exchange) key() string { return x.file + "#" + x.label }

var (
	requestLine = regexp.MustCompile(`^(GET|POST|PUT|PATCH|DELETE) (\S+) HTTP/1\.1$`)
	statusLine  = regexp.MustCompile(`^HTTP/1\.1 (\d{3})\b`)
)

// parseHTTPFile reads a capture file: "### <label> · <title>" headings, a
// request and its response under each, headers up to a blank line, then a
// JSON body or SSE "data:" lines. "# " lines are comments. A "data:" line
// after another message continues the last SSE stream of the file (the kit
// interleaves the operator's approval with an open stream).
func parseHTTPFile(t *testing.T, path string) []*exchange {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read capture: %v", err)
	}
	file := filepath.Base(path)
	var (
		xs        []*exchange
		cur       *exchange
		msg       *httpMessage
		inHeaders bool
		body      []string
		lastSSE   *httpMessage
		lastData  = -2 // line index of the previous data: line
	)
	endBody := func() {
		if msg != nil && !msg.sse() {
			if b := bytes.TrimSpace([]byte(strings.Join(body, "\n"))); len(b) > 0 {
				msg.body = b
			}
		}
		body = nil
	}
	for i, ln := range strings.Split(string(raw), "\n") {
		ln = strings.TrimRight(ln, "\r")
		lineNo := i + 1
		switch {
		case strings.HasPrefix(ln, "### "):
			endBody()
			msg = nil
			label, title, ok := strings.Cut(ln[4:], " · ")
			if !ok {
				t.Fatalf("%s:%d: heading without \" · \": %q", file, lineNo, ln)
			}
			cur = &exchange{file: file, label: label, title: title}
			xs = append(xs, cur)
		case ln == "#" || strings.HasPrefix(ln, "# "):
			endBody()
			msg = nil
		case requestLine.MatchString(ln):
			endBody()
			if cur == nil || cur.req != nil {
				t.Fatalf("%s:%d: request line outside a fresh exchange", file, lineNo)
			}
			m := requestLine.FindStringSubmatch(ln)
			msg = &httpMessage{line: lineNo, request: true, verb: m[1], target: m[2], header: http.Header{}}
			cur.req = msg
			inHeaders = true
		case statusLine.MatchString(ln):
			endBody()
			if cur == nil || cur.req == nil || cur.resp != nil {
				t.Fatalf("%s:%d: status line without a request", file, lineNo)
			}
			code, _ := strconv.Atoi(statusLine.FindStringSubmatch(ln)[1])
			msg = &httpMessage{line: lineNo, status: code, header: http.Header{}}
			cur.resp = msg
			inHeaders = true
		case inHeaders:
			if ln == "" {
				inHeaders = false
				if msg.sse() {
					lastSSE = msg
				}
				continue
			}
			k, v, ok := strings.Cut(ln, ":")
			if !ok {
				t.Fatalf("%s:%d: bad header line %q", file, lineNo, ln)
			}
			msg.header.Add(k, strings.TrimSpace(v))
		case strings.HasPrefix(ln, "data:"):
			target := msg
			if target == nil || !target.sse() {
				endBody()
				msg = nil
				target = lastSSE
			}
			if target == nil {
				t.Fatalf("%s:%d: data line outside an event stream", file, lineNo)
			}
			d := strings.TrimPrefix(strings.TrimPrefix(ln, "data:"), " ")
			if lastData == i-1 && len(target.frames) > 0 {
				// A multi-line event: data lines join with "\n".
				f := &target.frames[len(target.frames)-1]
				f.data = append(append(f.data, '\n'), d...)
			} else {
				target.frames = append(target.frames, sseFrame{line: lineNo, data: []byte(d)})
			}
			lastData = i
		case msg != nil && !msg.sse():
			body = append(body, ln)
		default:
			if strings.TrimSpace(ln) != "" {
				t.Fatalf("%s:%d: unexpected line %q", file, lineNo, ln)
			}
		}
	}
	endBody()
	return xs
}

// ---------------------------------------------------------------------------
// Round trips.

// roundTripper decodes a body into its Go type, encodes it again and
// returns the re-encoded JSON.
type roundTripper struct {
	name string
	run  func(raw []byte) ([]byte, error)
}

func rt[T any]() roundTripper {
	var zero T
	return roundTripper{
		name: reflect.TypeOf(zero).String(),
		run: func(raw []byte) ([]byte, error) {
			var v T
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("decode: %w", err)
			}
			out, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("encode: %w", err)
			}
			return out, nil
		},
	}
}

// empty is google.protobuf.Empty, the result of
// DeleteTaskPushNotificationConfig: it must be exactly {}.
var empty = roundTripper{name: "google.protobuf.Empty", run: func(raw []byte) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m == nil || len(m) != 0 {
		return nil, fmt.Errorf("google.protobuf.Empty must be {}, got %s", raw)
	}
	return []byte("{}"), nil
}}

// rpcMethod gives the params and result types of a JSON-RPC method.
type rpcMethod struct {
	params roundTripper
	result roundTripper // of each SSE frame when stream is set
	stream bool
}

var rpcMethods = map[string]rpcMethod{
	"SendMessage":                      {rt[a2a.SendMessageRequest](), rt[a2a.SendMessageResponse](), false},
	"SendStreamingMessage":             {rt[a2a.SendMessageRequest](), rt[a2a.StreamResponse](), true},
	"GetTask":                          {rt[a2a.GetTaskRequest](), rt[a2a.Task](), false},
	"ListTasks":                        {rt[a2a.ListTasksRequest](), rt[a2a.ListTasksResponse](), false},
	"CancelTask":                       {rt[a2a.CancelTaskRequest](), rt[a2a.Task](), false},
	"SubscribeToTask":                  {rt[a2a.SubscribeToTaskRequest](), rt[a2a.StreamResponse](), true},
	"CreateTaskPushNotificationConfig": {rt[a2a.TaskPushNotificationConfig](), rt[a2a.TaskPushNotificationConfig](), false},
	"GetTaskPushNotificationConfig":    {rt[a2a.GetTaskPushNotificationConfigRequest](), rt[a2a.TaskPushNotificationConfig](), false},
	"ListTaskPushNotificationConfigs":  {rt[a2a.ListTaskPushNotificationConfigsRequest](), rt[a2a.ListTaskPushNotificationConfigsResponse](), false},
	"DeleteTaskPushNotificationConfig": {rt[a2a.DeleteTaskPushNotificationConfigRequest](), empty, false},
	"GetExtendedAgentCard":             {rt[a2a.GetExtendedAgentCardRequest](), rt[a2a.AgentCard](), false},
}

// restRoute gives the types of an HTTP+JSON operation (REQUIREMENTS E2).
// pathFields are the request members bound to the path: with body "*" they
// are not in the body.
type restRoute struct {
	verb       string
	pattern    *regexp.Regexp // on the path after the interface URL, without the optional /{tenant}
	request    *roundTripper  // nil: no body
	pathFields []string
	response   roundTripper // of each SSE event when stream is set
	stream     bool
}

func ptrRT(r roundTripper) *roundTripper { return &r }

var restRoutes = []restRoute{
	{"POST", regexp.MustCompile(`^/message:send$`), ptrRT(rt[a2a.SendMessageRequest]()), nil, rt[a2a.SendMessageResponse](), false},
	{"POST", regexp.MustCompile(`^/message:stream$`), ptrRT(rt[a2a.SendMessageRequest]()), nil, rt[a2a.StreamResponse](), true},
	{"GET", regexp.MustCompile(`^/tasks/[^/:]+$`), nil, nil, rt[a2a.Task](), false},
	{"GET", regexp.MustCompile(`^/tasks$`), nil, nil, rt[a2a.ListTasksResponse](), false},
	{"POST", regexp.MustCompile(`^/tasks/[^/:]+:cancel$`), ptrRT(rt[a2a.CancelTaskRequest]()), []string{"id"}, rt[a2a.Task](), false},
	{"GET", regexp.MustCompile(`^/tasks/[^/:]+:subscribe$`), nil, nil, rt[a2a.StreamResponse](), true},
	{"POST", regexp.MustCompile(`^/tasks/[^/:]+:subscribe$`), nil, nil, rt[a2a.StreamResponse](), true},
	{"POST", regexp.MustCompile(`^/tasks/[^/:]+/pushNotificationConfigs$`), ptrRT(rt[a2a.TaskPushNotificationConfig]()), []string{"taskId"}, rt[a2a.TaskPushNotificationConfig](), false},
	{"GET", regexp.MustCompile(`^/tasks/[^/:]+/pushNotificationConfigs/[^/]+$`), nil, nil, rt[a2a.TaskPushNotificationConfig](), false},
	{"GET", regexp.MustCompile(`^/tasks/[^/:]+/pushNotificationConfigs$`), nil, nil, rt[a2a.ListTaskPushNotificationConfigsResponse](), false},
	{"DELETE", regexp.MustCompile(`^/tasks/[^/:]+/pushNotificationConfigs/[^/]+$`), nil, nil, empty, false},
	{"GET", regexp.MustCompile(`^/extendedAgentCard$`), nil, nil, rt[a2a.AgentCard](), false},
}

const (
	jsonrpcPath = "/a2a/jsonrpc"
	restPrefix  = "/a2a/rest"
	cardPath    = "/.well-known/agent-card.json"
)

func findRESTRoute(verb, target string) (*restRoute, bool) {
	path, _, _ := strings.Cut(target, "?")
	path = strings.TrimPrefix(path, restPrefix)
	for _, cand := range []string{path, tenantless(path)} {
		for i := range restRoutes {
			r := &restRoutes[i]
			if r.verb == verb && r.pattern.MatchString(cand) {
				return r, true
			}
		}
	}
	return nil, false
}

// tenantless drops a leading /{tenant} segment.
func tenantless(path string) string {
	if i := strings.IndexByte(path[1:], '/'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// jsonValue parses JSON keeping numbers exact.
func jsonValue(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data after JSON value")
	}
	return v, nil
}

func pretty(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// goldenRun collects what happened to every body, for the log.
type goldenRun struct {
	t              *testing.T
	roundTripped   map[string]int // type name -> bodies
	checkedErrors  []string
	usedExceptions map[string]bool
	seenErrors     map[string]bool
	normalized     map[int]bool
	total          int
}

// roundTrip decodes raw with r, re-encodes, and compares as JSON values.
// drop lists members the re-encoded value may add because the binding
// carries them elsewhere (REST path fields).
func (g *goldenRun) roundTrip(where, file string, r roundTripper, raw []byte, drop ...string) {
	g.t.Helper()
	g.total++
	out, err := r.run(raw)
	if err != nil {
		g.t.Errorf("%s: %s: %v\nbody:\n%s", where, r.name, err, raw)
		return
	}
	want, err := jsonValue(raw)
	if err != nil {
		g.t.Errorf("%s: original is not JSON: %v", where, err)
		return
	}
	got, err := jsonValue(out)
	if err != nil {
		g.t.Errorf("%s: %s re-encoded to invalid JSON: %v\n%s", where, r.name, err, out)
		return
	}
	if m, ok := got.(map[string]any); ok {
		for _, k := range drop {
			if _, inOrig := want.(map[string]any)[k]; inOrig {
				g.t.Errorf("%s: path-bound member %q is also in the body", where, k)
			}
			delete(m, k)
		}
	}
	for i, n := range captureNormalizations {
		if slices.Contains(n.files, file) && n.apply(want) {
			g.normalized[i] = true
		}
	}
	if !reflect.DeepEqual(want, got) {
		g.t.Errorf("%s: %s round trip differs\n--- original\n%s\n--- re-encoded\n%s", where, r.name, pretty(want), pretty(got))
		return
	}
	g.roundTripped[r.name]++
}

func (g *goldenRun) exception(key string) bool {
	if _, ok := captureExceptions[key]; ok {
		g.usedExceptions[key] = true
		return true
	}
	return false
}

// rpcEnvelope is a JSON-RPC 2.0 request or response.
type rpcEnvelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int              `json:"code"`
		Message string           `json:"message"`
		Data    []map[string]any `json:"data"`
	} `json:"error"`
}

// statusBody is the google.rpc.Status JSON of HTTP+JSON errors.
type statusBody struct {
	Error *struct {
		Code    int              `json:"code"`
		Status  string           `json:"status"`
		Message string           `json:"message"`
		Details []map[string]any `json:"details"`
	} `json:"error"`
}

// checkRPCResponse checks one JSON-RPC response (a body or an SSE frame).
func (g *goldenRun) checkRPCResponse(x *exchange, where string, body []byte, m rpcMethod, reqID json.RawMessage) {
	g.t.Helper()
	var env rpcEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		g.t.Errorf("%s: JSON-RPC response: %v", where, err)
		return
	}
	if env.JSONRPC != "2.0" {
		g.t.Errorf("%s: jsonrpc = %q", where, env.JSONRPC)
	}
	if reqID != nil && !bytes.Equal(env.ID, reqID) {
		g.t.Errorf("%s: response id %s, request id %s", where, env.ID, reqID)
	}
	switch {
	case env.Error != nil && env.Result != nil:
		g.t.Errorf("%s: both result and error", where)
	case env.Error != nil:
		e := env.Error
		g.checkError(x, where, body, "jsonrpc", a2aCodeFromJSONRPC(e.Code), e.Code, 0, "", e.Message, e.Data)
	case env.Result != nil:
		if m.params.run == nil {
			g.t.Errorf("%s: result for an unknown method", where)
			return
		}
		g.roundTrip(where+" result", x.file, m.result, env.Result)
	default:
		g.t.Errorf("%s: neither result nor error", where)
	}
}

func a2aCodeFromJSONRPC(n int) a2a.Code {
	c, _ := a2a.CodeFromJSONRPC(n)
	return c
}

// checkError checks an error body against the code table: the kind decoded
// from the binding code and the details with ErrorFromWire, the binding's
// own numbers for that kind, the ErrorInfo reason and domain, and that
// WireDetails gives back the details that were sent.
func (g *goldenRun) checkError(x *exchange, where string, body []byte, binding string, kind a2a.Code, rpcCode, httpStatus int, grpcStatus, message string, details []map[string]any) {
	g.t.Helper()
	g.total++
	want, ok := captureErrors[x.key()]
	if !ok {
		g.t.Errorf("%s: unexpected error body (add it to captureErrors if it is meant):\n%s", where, body)
		return
	}
	g.seenErrors[x.key()] = true
	e := a2a.ErrorFromWire(kind, message, details)
	if e.Code != want {
		g.t.Errorf("%s: error decodes to %v, want %v", where, e.Code, want)
	}
	switch binding {
	case "jsonrpc":
		if rpcCode != want.JSONRPCCode() {
			g.t.Errorf("%s: JSON-RPC code %d, table says %d for %v", where, rpcCode, want.JSONRPCCode(), want)
		}
	case "rest":
		if httpStatus != want.HTTPStatus() {
			g.t.Errorf("%s: HTTP status %d, table says %d for %v", where, httpStatus, want.HTTPStatus(), want)
		}
		if grpcStatus != want.GRPCStatusName() {
			g.t.Errorf("%s: status %q, table says %q for %v", where, grpcStatus, want.GRPCStatusName(), want)
		}
	}
	if e.Message != message {
		g.t.Errorf("%s: message %q, want %q", where, e.Message, message)
	}
	var infos int
	for _, d := range details {
		if d["@type"] != a2a.ErrorInfoType {
			continue
		}
		infos++
		if d["reason"] != want.Reason() {
			g.t.Errorf("%s: ErrorInfo.reason %v, want %q", where, d["reason"], want.Reason())
		}
		if d["domain"] != a2a.ErrorDomain {
			g.t.Errorf("%s: ErrorInfo.domain %v, want %q", where, d["domain"], a2a.ErrorDomain)
		}
	}
	if want.Reason() != "" && infos != 1 {
		g.t.Errorf("%s: %d ErrorInfo details for an A2A error, want 1", where, infos)
	}
	// The details survive ErrorFromWire -> WireDetails.
	wantDetails, _ := json.Marshal(details)
	gotDetails, err := json.Marshal(e.WireDetails())
	if err != nil {
		g.t.Errorf("%s: WireDetails: %v", where, err)
		return
	}
	wv, _ := jsonValue(wantDetails)
	gv, _ := jsonValue(gotDetails)
	if len(details) == 0 {
		wv = nil
	}
	if len(e.WireDetails()) == 0 {
		gv = nil
	}
	if !reflect.DeepEqual(wv, gv) {
		g.t.Errorf("%s: details do not survive ErrorFromWire/WireDetails\n--- sent\n%s\n--- rebuilt\n%s", where, pretty(wv), pretty(gv))
	}
	g.checkedErrors = append(g.checkedErrors, fmt.Sprintf("%s (%s %v)", x.key(), binding, e.Code))
}

// checkRESTError checks a google.rpc.Status body.
func (g *goldenRun) checkRESTError(x *exchange, where string, status int, body []byte) {
	g.t.Helper()
	var sb statusBody
	if err := json.Unmarshal(body, &sb); err != nil || sb.Error == nil {
		g.t.Errorf("%s: HTTP %d without a google.rpc.Status body (%v):\n%s", where, status, err, body)
		return
	}
	if sb.Error.Code != status {
		g.t.Errorf("%s: error.code %d but HTTP status %d", where, sb.Error.Code, status)
	}
	g.checkError(x, where, body, "rest", a2a.CodeFromHTTPStatus(status), 0, sb.Error.Code, sb.Error.Status, sb.Error.Message, sb.Error.Details)
}

func (g *goldenRun) exchange(x *exchange) {
	g.t.Helper()
	req, resp := x.req, x.resp
	where := func(m *httpMessage, what string) string {
		return fmt.Sprintf("%s:%d (%s · %s) %s", x.file, m.line, x.label, x.title, what)
	}
	if req == nil {
		g.t.Errorf("%s: exchange without a request", x.key())
		return
	}
	if len(req.frames) > 0 {
		g.t.Errorf("%s: SSE data in a request", x.key())
	}
	path, _, _ := strings.Cut(req.target, "?")
	switch {
	case strings.HasPrefix(x.label, "webhook "):
		// Push notification: the body is a bare StreamResponse (A2A §4.3.3).
		if resp != nil || req.verb != "POST" || req.body == nil {
			g.t.Errorf("%s: a webhook delivery is one POST with a body and no recorded answer", x.key())
			return
		}
		g.roundTrip(where(req, "webhook body"), x.file, rt[a2a.StreamResponse](), req.body)

	case path == cardPath:
		if req.verb != "GET" || req.body != nil || resp == nil || resp.status != 200 {
			g.t.Errorf("%s: card discovery is GET without a body answered 200", x.key())
			return
		}
		g.roundTrip(where(resp, "agent card"), x.file, rt[a2a.AgentCard](), resp.body)

	case path == jsonrpcPath:
		var m rpcMethod
		var reqID json.RawMessage
		if g.exception(x.key() + " request") {
			// Not decoded as a typed request; still find the method when the
			// body parses, so that the answer can be typed.
			var env rpcEnvelope
			if json.Unmarshal(req.body, &env) == nil {
				m = rpcMethods[env.Method]
				reqID = env.ID
				if m.params.run != nil {
					if _, err := decodeOnly(m.params, env.Params); err != nil {
						g.t.Errorf("%s: %v", where(req, "params"), err)
					}
				}
			}
		} else {
			var env rpcEnvelope
			if err := json.Unmarshal(req.body, &env); err != nil {
				g.t.Errorf("%s: %v", where(req, "JSON-RPC request"), err)
				return
			}
			if env.JSONRPC != "2.0" || env.ID == nil {
				g.t.Errorf("%s: bad envelope jsonrpc=%q id=%s", where(req, "JSON-RPC request"), env.JSONRPC, env.ID)
			}
			var ok bool
			m, ok = rpcMethods[env.Method]
			if !ok {
				g.t.Errorf("%s: unknown method %q", where(req, "JSON-RPC request"), env.Method)
				return
			}
			reqID = env.ID
			g.roundTrip(where(req, env.Method+" params"), x.file, m.params, env.Params)
		}
		if resp == nil {
			g.t.Errorf("%s: no response", x.key())
			return
		}
		switch {
		case resp.status != 200:
			// Rejected before JSON-RPC processing (authentication).
			g.checkRESTError(x, where(resp, "HTTP error"), resp.status, resp.body)
		case resp.sse():
			if !m.stream {
				g.t.Errorf("%s: SSE answer to a non-streaming method", x.key())
			}
			if len(resp.frames) == 0 {
				g.t.Errorf("%s: empty event stream", x.key())
			}
			for i, f := range resp.frames {
				g.checkRPCResponse(x, fmt.Sprintf("%s:%d (%s · %s) SSE event %d", x.file, f.line, x.label, x.title, i+1), f.data, m, reqID)
			}
		default:
			if m.stream {
				// A streaming method answered with a plain JSON-RPC error.
				var env rpcEnvelope
				if json.Unmarshal(resp.body, &env) == nil && env.Error == nil {
					g.t.Errorf("%s: streaming method answered with a non-error JSON body", x.key())
				}
			}
			g.checkRPCResponse(x, where(resp, "JSON-RPC response"), resp.body, m, reqID)
		}

	case strings.HasPrefix(path, restPrefix+"/"):
		route, ok := findRESTRoute(req.verb, req.target)
		if !ok {
			g.t.Errorf("%s: no HTTP+JSON route for %s %s", x.key(), req.verb, req.target)
			return
		}
		switch {
		case g.exception(x.key() + " request"):
		case route.request == nil && req.body != nil:
			g.t.Errorf("%s: body on %s %s", x.key(), req.verb, path)
		case route.request != nil:
			if req.body == nil {
				g.t.Errorf("%s: no body on %s %s", x.key(), req.verb, path)
			} else {
				g.roundTrip(where(req, "HTTP+JSON request"), x.file, *route.request, req.body, route.pathFields...)
			}
		}
		if resp == nil {
			g.t.Errorf("%s: no response", x.key())
			return
		}
		switch {
		case resp.status != 200:
			g.checkRESTError(x, where(resp, "HTTP+JSON error"), resp.status, resp.body)
		case resp.sse():
			if !route.stream {
				g.t.Errorf("%s: SSE answer on a non-streaming route", x.key())
			}
			for i, f := range resp.frames {
				g.roundTrip(fmt.Sprintf("%s:%d SSE event %d", x.file, f.line, i+1), x.file, route.response, f.data)
			}
		default:
			g.roundTrip(where(resp, "HTTP+JSON response"), x.file, route.response, resp.body)
		}

	default:
		if !g.exception(x.key() + " request") {
			g.t.Errorf("%s: %s %s is neither A2A nor a listed exception", x.key(), req.verb, req.target)
		}
		if resp != nil && !g.exception(x.key()+" response") {
			g.t.Errorf("%s: answer to %s is neither A2A nor a listed exception", x.key(), req.target)
		}
	}
}

func decodeOnly(r roundTripper, raw []byte) ([]byte, error) { return r.run(raw) }

// eventsFile is a *.events.json file: the frames of streams, pretty-printed.
type eventsFile []struct {
	Exchange int               `json:"exchange"`
	Title    string            `json:"title"`
	Events   []json.RawMessage `json:"events"`
}

func TestGoldenCapture(t *testing.T) {
	dir := captureDir(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("capture folder %s: %v", dir, err)
	}
	g := &goldenRun{
		t:              t,
		roundTripped:   map[string]int{},
		usedExceptions: map[string]bool{},
		seenErrors:     map[string]bool{},
		normalized:     map[int]bool{},
	}
	exchanges := map[string]*exchange{}
	var httpFiles, eventFiles []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".http"):
			httpFiles = append(httpFiles, name)
		case strings.HasSuffix(name, ".events.json"):
			eventFiles = append(eventFiles, name)
		default:
			if reason, ok := captureFileExceptions[name]; ok {
				t.Logf("not round-tripped: %s: %s", name, reason)
				continue
			}
			t.Errorf("capture file %s is neither .http, .events.json nor a listed exception", name)
		}
	}
	for name := range captureFileExceptions {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("listed exception %s is missing: %v", name, err)
		}
	}
	if len(httpFiles) == 0 {
		t.Fatalf("no .http files in %s", dir)
	}
	for _, name := range httpFiles {
		for _, x := range parseHTTPFile(t, filepath.Join(dir, name)) {
			if exchanges[x.key()] != nil {
				t.Fatalf("duplicate exchange %s", x.key())
			}
			exchanges[x.key()] = x
			g.exchange(x)
		}
	}

	// The *.events.json frames are the same streams, pretty-printed: each
	// must equal the SSE events of its exchange and round-trip as well.
	for _, name := range eventFiles {
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var ef eventsFile
		if err := json.Unmarshal(raw, &ef); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		httpName := strings.TrimSuffix(name, ".events.json") + ".http"
		for _, s := range ef {
			x := exchanges[httpName+"#"+strconv.Itoa(s.Exchange)]
			if x == nil || x.resp == nil || !x.resp.sse() {
				t.Errorf("%s: exchange %d (%s) has no event stream in %s", name, s.Exchange, s.Title, httpName)
				continue
			}
			if len(s.Events) != len(x.resp.frames) {
				t.Errorf("%s: exchange %d has %d events, %s has %d", name, s.Exchange, len(s.Events), httpName, len(x.resp.frames))
			}
			var env rpcEnvelope
			_ = json.Unmarshal(x.req.body, &env)
			m := rpcMethods[env.Method]
			for i, ev := range s.Events {
				where := fmt.Sprintf("%s exchange %d event %d", name, s.Exchange, i+1)
				if i < len(x.resp.frames) {
					a, err1 := jsonValue(ev)
					b, err2 := jsonValue(x.resp.frames[i].data)
					if err1 != nil || err2 != nil || !reflect.DeepEqual(a, b) {
						t.Errorf("%s differs from %s line %d", where, httpName, x.resp.frames[i].line)
					}
				}
				g.checkRPCResponse(x, where, ev, m, env.ID)
			}
		}
	}

	for key, reason := range captureExceptions {
		if !g.usedExceptions[key] {
			t.Errorf("listed exception %q (%s) was not met: stale entry?", key, reason)
		} else {
			t.Logf("not round-tripped: %s: %s", key, reason)
		}
	}
	for key := range captureErrors {
		if !g.seenErrors[key] {
			t.Errorf("expected error answer %s was not met", key)
		}
	}
	for i, n := range captureNormalizations {
		if !g.normalized[i] {
			t.Errorf("normalization %q changed nothing: stale entry?", n.reason)
		} else {
			t.Logf("normalized before comparing (%s): %s", strings.Join(n.files, ", "), n.reason)
		}
	}
	var names []string
	n := 0
	for name, c := range g.roundTripped {
		names = append(names, fmt.Sprintf("%s×%d", name, c))
		n += c
	}
	sort.Strings(names)
	t.Logf("%d bodies checked: %d round-tripped (%s), %d error bodies checked (%s)",
		g.total, n, strings.Join(names, ", "), len(g.checkedErrors), strings.Join(g.checkedErrors, "; "))
	if n == 0 {
		t.Fatal("nothing was round-tripped")
	}
}
