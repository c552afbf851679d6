package a2ahttp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/internal/uuid"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
	"github.com/goa2a/a2a/store/postgres"
	"github.com/goa2a/a2a/store/sqlite"
)

// The isolation tests check A2A §13.1 over every binding and every store:
// a task belongs to the principal that created it, in the tenant it was
// created in, and for anyone else it does not exist. Another principal's
// task must be indistinguishable from no task at all: the same HTTP status
// and the same bytes once the task id is blanked out.

const (
	aliceToken  = "alice-token"
	bobToken    = "bob-token"
	otherTenant = "elsewhere"

	aliceConfigID = "alice-cfg"
	aliceHook     = "http://127.0.0.1:9/alice-hook"
	aliceHookAuth = "alice-hook-secret"
	aliceQuestion = "Which colour, Alice?"

	// requestTimeout bounds each call, so that a stream the server wrongly
	// keeps open fails the test instead of hanging it.
	requestTimeout = 2 * time.Second
)

// interrupting is the agent of the isolation tests: "input" leaves the task
// in INPUT_REQUIRED, so it can be continued, canceled and subscribed to;
// anything else completes it.
func interrupting(ctx context.Context, req *server.Request, w *server.Writer) error {
	if req.Message.Text() == "input" {
		return w.RequireInput(ctx, aliceQuestion)
	}
	return w.Complete(ctx, "done")
}

// isoOp is one call, in both bindings' forms. In every string, {task} and
// {cfg} stand for the task and config ids.
type isoOp struct {
	name    string
	method  string // JSON-RPC method
	params  string // JSON-RPC params, an object
	verb    string // HTTP+JSON method
	path    string // HTTP+JSON path and query, relative to the binding
	body    string // HTTP+JSON body
	headers map[string]string
}

func (o isoOp) with(task, cfg string) isoOp {
	r := strings.NewReplacer("{task}", task, "{cfg}", cfg)
	o.params, o.path, o.body = r.Replace(o.params), r.Replace(o.path), r.Replace(o.body)
	headers := make(map[string]string, len(o.headers))
	for k, v := range o.headers {
		headers[k] = r.Replace(v)
	}
	o.headers = headers
	return o
}

// taskOps are the operations that name a task, as bob tries them on a task
// that is not his.
func taskOps() []isoOp {
	const msg = `{"message":{"messageId":"bob-m1","taskId":"{task}","role":"ROLE_USER","parts":[{"text":"bob was here"}]}}`
	return []isoOp{
		{name: "SendMessage", method: "SendMessage", params: msg, verb: http.MethodPost, path: "/message:send", body: msg},
		{name: "SendStreamingMessage", method: "SendStreamingMessage", params: msg, verb: http.MethodPost, path: "/message:stream", body: msg},
		{name: "GetTask", method: "GetTask", params: `{"id":"{task}"}`, verb: http.MethodGet, path: "/tasks/{task}"},
		{name: "CancelTask", method: "CancelTask", params: `{"id":"{task}"}`, verb: http.MethodPost, path: "/tasks/{task}:cancel", body: `{}`},
		{name: "SubscribeToTask", method: "SubscribeToTask", params: `{"id":"{task}"}`, verb: http.MethodGet, path: "/tasks/{task}:subscribe"},
		{name: "SubscribeToTask resume", method: "SubscribeToTask", params: `{"id":"{task}"}`, verb: http.MethodPost, path: "/tasks/{task}:subscribe",
			headers: map[string]string{"Last-Event-ID": "{task}:1"}},
		{name: "CreateTaskPushNotificationConfig", method: "CreateTaskPushNotificationConfig",
			params: `{"taskId":"{task}","id":"bob-cfg","url":"http://127.0.0.1:9/bob-hook"}`,
			verb:   http.MethodPost, path: "/tasks/{task}/pushNotificationConfigs", body: `{"id":"bob-cfg","url":"http://127.0.0.1:9/bob-hook"}`},
		{name: "GetTaskPushNotificationConfig", method: "GetTaskPushNotificationConfig", params: `{"taskId":"{task}","id":"{cfg}"}`,
			verb: http.MethodGet, path: "/tasks/{task}/pushNotificationConfigs/{cfg}"},
		{name: "ListTaskPushNotificationConfigs", method: "ListTaskPushNotificationConfigs", params: `{"taskId":"{task}"}`,
			verb: http.MethodGet, path: "/tasks/{task}/pushNotificationConfigs"},
		{name: "DeleteTaskPushNotificationConfig", method: "DeleteTaskPushNotificationConfig", params: `{"taskId":"{task}","id":"{cfg}"}`,
			verb: http.MethodDelete, path: "/tasks/{task}/pushNotificationConfigs/{cfg}"},
	}
}

// listOp is ListTasks with the given filters, as pairs of name and value
// written as in a query string.
func listOp(filters ...string) isoOp {
	params := map[string]any{}
	q := url.Values{}
	for i := 0; i+1 < len(filters); i += 2 {
		name, value := filters[i], filters[i+1]
		q.Set(name, value)
		switch name {
		case "pageSize", "historyLength", "includeArtifacts": // JSON numbers and booleans
			params[name] = json.RawMessage(value)
		default:
			params[name] = value
		}
	}
	b, _ := json.Marshal(params)
	path := "/tasks"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return isoOp{name: "ListTasks", method: "ListTasks", params: string(b), verb: http.MethodGet, path: path}
}

// binding builds raw requests of one binding and reads its answers.
type binding struct {
	name    string
	request func(ctx context.Context, base, tenant string, o isoOp) *http.Request
	// errorOf returns the error object of an error answer (with its
	// numeric code and detail list), or nil for a success.
	errorOf func(t *testing.T, a answer) *wireError
	// result returns the result of a successful answer.
	result func(t *testing.T, a answer) json.RawMessage
}

type wireError struct {
	Code    int              `json:"code"`
	Status  string           `json:"status"` // HTTP+JSON only
	Message string           `json:"message"`
	Data    []map[string]any `json:"data"`    // JSON-RPC
	Details []map[string]any `json:"details"` // HTTP+JSON
}

func (e *wireError) details() []map[string]any { return append(e.Data, e.Details...) }

// info returns the ErrorInfo detail with reason, or nil.
func (e *wireError) info(reason string) map[string]any {
	for _, d := range e.details() {
		if d["@type"] == a2a.ErrorInfoType && d["reason"] == reason {
			return d
		}
	}
	return nil
}

// violates reports whether the error has a BadRequest violation of field.
func (e *wireError) violates(field string) bool {
	for _, d := range e.details() {
		if d["@type"] != a2a.BadRequestType {
			continue
		}
		vs, _ := d["fieldViolations"].([]any)
		for _, v := range vs {
			if m, _ := v.(map[string]any); m["field"] == field {
				return true
			}
		}
	}
	return false
}

func bindings() []binding {
	return []binding{
		{
			name: "JSON-RPC",
			request: func(ctx context.Context, base, tenant string, o isoOp) *http.Request {
				params := o.params
				if tenant != "" {
					sep := ","
					if strings.TrimSpace(params[1:]) == "}" {
						sep = ""
					}
					params = `{"tenant":` + strconv.Quote(tenant) + sep + params[1:]
				}
				body := `{"jsonrpc":"2.0","id":1,"method":"` + o.method + `","params":` + params + `}`
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+a2ahttp.JSONRPCPath, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				return req
			},
			errorOf: func(t *testing.T, a answer) *wireError {
				t.Helper()
				var env struct {
					Result json.RawMessage `json:"result"`
					Error  *wireError      `json:"error"`
				}
				if err := json.Unmarshal(a.body, &env); err != nil {
					t.Fatalf("not a JSON-RPC response (status %d): %s", a.status, a.body)
				}
				return env.Error
			},
			result: func(t *testing.T, a answer) json.RawMessage {
				t.Helper()
				var env struct {
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if err := json.Unmarshal(a.body, &env); err != nil || env.Error != nil || a.status != http.StatusOK {
					t.Fatalf("want a JSON-RPC result, got status %d: %s", a.status, a.body)
				}
				return env.Result
			},
		},
		{
			name: "HTTP+JSON",
			request: func(ctx context.Context, base, tenant string, o isoOp) *http.Request {
				prefix := ""
				if tenant != "" {
					prefix = "/" + url.PathEscape(tenant)
				}
				var body io.Reader
				if o.body != "" {
					body = strings.NewReader(o.body)
				}
				req, _ := http.NewRequestWithContext(ctx, o.verb, base+a2ahttp.RESTPath+prefix+o.path, body)
				if o.body != "" {
					req.Header.Set("Content-Type", "application/a2a+json")
				}
				return req
			},
			errorOf: func(t *testing.T, a answer) *wireError {
				t.Helper()
				if a.status == http.StatusOK {
					return nil
				}
				var e struct {
					Error *wireError `json:"error"`
				}
				if err := json.Unmarshal(a.body, &e); err != nil || e.Error == nil {
					t.Fatalf("not an HTTP+JSON error (status %d): %s", a.status, a.body)
				}
				return e.Error
			},
			result: func(t *testing.T, a answer) json.RawMessage {
				t.Helper()
				if a.status != http.StatusOK || !json.Valid(a.body) {
					t.Fatalf("want an HTTP+JSON result, got status %d: %s", a.status, a.body)
				}
				return a.body
			},
		},
	}
}

// answer is a raw HTTP response.
type answer struct {
	status int
	ctype  string
	body   []byte
}

// isoServer is a server behind bearer authentication, with the tasks alice
// made on it.
type isoServer struct {
	base string
	b    binding

	inputTask, doneTask, contextID string // alice's
	bobTask                        string
	alicePageToken                 string // of ListTasks, pageSize 1
}

func (s *isoServer) call(t *testing.T, token, tenant string, o isoOp) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), requestTimeout)
	defer cancel()
	req := s.b.request(ctx, s.base, tenant, o)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("A2A-Version", "1.0")
	for k, v := range o.headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", o.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading the answer (status %d, %s): %v; read so far: %s", o.name, resp.StatusCode, resp.Header.Get("Content-Type"), err, body)
	}
	return answer{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: body}
}

// task is the result of a call that returns a task, or the "task" of a
// SendMessage result.
func (s *isoServer) task(t *testing.T, a answer) a2a.Task {
	t.Helper()
	var r struct {
		a2a.Task
		Wrapped *a2a.Task `json:"task"`
	}
	if err := json.Unmarshal(s.b.result(t, a), &r); err != nil {
		t.Fatalf("decoding a task: %v: %s", err, a.body)
	}
	if r.Wrapped != nil {
		return *r.Wrapped
	}
	return r.Task
}

func (s *isoServer) list(t *testing.T, a answer) a2a.ListTasksResponse {
	t.Helper()
	var r a2a.ListTasksResponse
	if err := json.Unmarshal(s.b.result(t, a), &r); err != nil {
		t.Fatalf("decoding a task list: %v: %s", err, a.body)
	}
	return r
}

// storeKind opens a fresh store for one test.
type storeKind struct {
	name string
	open func(t *testing.T) store.Store
}

func storeKinds() []storeKind {
	return []storeKind{
		{"memory", func(*testing.T) store.Store { return memory.New() }},
		{"sqlite", func(t *testing.T) store.Store {
			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "tasks.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("closing the sqlite store: %v", err)
				}
			})
			return s
		}},
		{"postgres", openPostgres},
	}
}

// openPostgres opens a store in a schema of its own, dropped when the test
// ends. An unreachable server fails the test: it is never skipped.
func openPostgres(t *testing.T) store.Store {
	dsn := os.Getenv("A2A_TEST_POSTGRES")
	if dsn == "" {
		dsn = "host=/var/run/postgresql dbname=test"
	}
	b := make([]byte, 8)
	rand.Read(b)
	schema := "a2a_isolation_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	s, err := postgres.Open(ctx, dsn, postgres.Options{Schema: schema})
	if err != nil {
		t.Fatalf("cannot open a PostgreSQL store at %q (set A2A_TEST_POSTGRES to a reachable server): %v", dsn, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("closing the postgres store: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	return s
}

// newIsoServer starts a server on st, behind bearer tokens for alice and
// bob, and has alice create her tasks in the default tenant: one left in
// INPUT_REQUIRED with a push config, one completed, in the same context.
// Bob creates one completed task of his own.
func newIsoServer(t *testing.T, st store.Store, b binding) *isoServer {
	t.Helper()
	card := echo.Card("http://agent.test"+a2ahttp.JSONRPCPath, "http://agent.test"+a2ahttp.RESTPath)
	h, err := server.NewHandler(card, server.AgentFunc(interrupting), server.WithStore(st),
		server.WithTokenKey([]byte("isolation-test-page-token-key-0123456789")))
	if err != nil {
		t.Fatal(err)
	}
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(auth.Bearer(map[string]string{aliceToken: "alice", bobToken: "bob"}, mux))
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("closing the handler: %v", err)
		}
	})
	s := &isoServer{base: srv.URL, b: b}

	send := func(token, text, contextID string) a2a.Task {
		m := map[string]any{"messageId": uuid.New(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
		if contextID != "" {
			m["contextId"] = contextID
		}
		body, _ := json.Marshal(map[string]any{"message": m})
		o := isoOp{name: "SendMessage", method: "SendMessage", params: string(body), verb: http.MethodPost, path: "/message:send", body: string(body)}
		return s.task(t, s.call(t, token, "", o))
	}
	in := send(aliceToken, "input", "")
	if in.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("alice's first task is %v, want INPUT_REQUIRED", in.Status.State)
	}
	s.inputTask, s.contextID = in.ID, in.ContextID
	done := send(aliceToken, "hello", s.contextID)
	if done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("alice's second task is %v, want COMPLETED", done.Status.State)
	}
	s.doneTask = done.ID
	s.bobTask = send(bobToken, "hello", "").ID

	cfg := `{"id":"` + aliceConfigID + `","url":"` + aliceHook + `","token":"` + aliceHookAuth + `"}`
	create := isoOp{name: "CreateTaskPushNotificationConfig", method: "CreateTaskPushNotificationConfig",
		params: `{"taskId":"` + s.inputTask + `",` + cfg[1:], verb: http.MethodPost,
		path: "/tasks/" + s.inputTask + "/pushNotificationConfigs", body: cfg}
	s.b.result(t, s.call(t, aliceToken, "", create))

	page := s.list(t, s.call(t, aliceToken, "", listOp("pageSize", "1")))
	if page.NextPageToken == "" || page.TotalSize != 2 {
		t.Fatalf("alice's first page: totalSize %d, nextPageToken %q; want 2 and a token", page.TotalSize, page.NextPageToken)
	}
	s.alicePageToken = page.NextPageToken
	return s
}

// aliceView is what alice sees of her tasks: both tasks and the configs of
// the interrupted one, as raw answers.
type aliceView struct {
	inputTask, doneTask, configs, config answer
}

func (s *isoServer) aliceView(t *testing.T) aliceView {
	t.Helper()
	get := isoOp{name: "GetTask", method: "GetTask", params: `{"id":"{task}"}`, verb: http.MethodGet, path: "/tasks/{task}"}
	ops := taskOps()
	v := aliceView{
		inputTask: s.call(t, aliceToken, "", get.with(s.inputTask, "")),
		doneTask:  s.call(t, aliceToken, "", get.with(s.doneTask, "")),
		configs:   s.call(t, aliceToken, "", opNamed(ops, "ListTaskPushNotificationConfigs").with(s.inputTask, "")),
		config:    s.call(t, aliceToken, "", opNamed(ops, "GetTaskPushNotificationConfig").with(s.inputTask, aliceConfigID)),
	}
	for _, a := range []answer{v.inputTask, v.doneTask, v.configs, v.config} {
		s.b.result(t, a) // each must succeed
	}
	return v
}

func opNamed(ops []isoOp, name string) isoOp {
	i := slices.IndexFunc(ops, func(o isoOp) bool { return o.name == name })
	return ops[i]
}

// secrets are strings of alice's that no answer to anyone else may hold.
func (s *isoServer) secrets() []string {
	return []string{s.contextID, aliceHook, aliceHookAuth, aliceQuestion, s.alicePageToken}
}

// checkNoLeak fails if a holds any of alice's secrets, or the id of one of
// her tasks other than the one the caller named.
func (s *isoServer) checkNoLeak(t *testing.T, a answer, named string) {
	t.Helper()
	leaks := s.secrets()
	for _, id := range []string{s.inputTask, s.doneTask} {
		if id != named {
			leaks = append(leaks, id)
		}
	}
	for _, l := range leaks {
		if bytes.Contains(a.body, []byte(l)) {
			t.Errorf("the answer holds alice's %q: %s", l, a.body)
		}
	}
}

// checkTaskNotFound fails unless a is TaskNotFoundError for taskID as the
// binding sends it: JSON-RPC code -32001 over HTTP 200, or HTTP+JSON 404
// NOT_FOUND; both with an ErrorInfo of reason TASK_NOT_FOUND naming the
// task (A2A §3.3.2, §9.5, §11.6).
func (s *isoServer) checkTaskNotFound(t *testing.T, a answer, taskID string) {
	t.Helper()
	e := s.b.errorOf(t, a)
	if e == nil {
		t.Fatalf("succeeded (status %d), want TaskNotFoundError: %s", a.status, a.body)
	}
	switch s.b.name {
	case "JSON-RPC":
		if a.status != http.StatusOK || e.Code != -32001 {
			t.Errorf("status %d, code %d; want 200 and -32001: %s", a.status, e.Code, a.body)
		}
	default:
		if a.status != http.StatusNotFound || e.Code != http.StatusNotFound || e.Status != "NOT_FOUND" {
			t.Errorf("status %d, body code %d %s; want 404 NOT_FOUND: %s", a.status, e.Code, e.Status, a.body)
		}
	}
	info := e.info("TASK_NOT_FOUND")
	if info == nil {
		t.Fatalf("no ErrorInfo TASK_NOT_FOUND: %s", a.body)
	}
	if md, _ := info["metadata"].(map[string]any); md["taskId"] != taskID {
		t.Errorf("ErrorInfo metadata %v, want taskId %q", info["metadata"], taskID)
	}
}

// checkInvalidParams fails unless a is InvalidParams naming field.
func (s *isoServer) checkInvalidParams(t *testing.T, a answer, field string) {
	t.Helper()
	e := s.b.errorOf(t, a)
	if e == nil {
		t.Fatalf("succeeded, want InvalidParams naming %s: %s", field, a.body)
	}
	if (s.b.name == "JSON-RPC" && e.Code != -32602) || (s.b.name != "JSON-RPC" && (a.status != http.StatusBadRequest || e.Status != "INVALID_ARGUMENT")) {
		t.Errorf("status %d, code %d %s; want InvalidParams: %s", a.status, e.Code, e.Status, a.body)
	}
	if !e.violates(field) {
		t.Errorf("no violation of %s: %s", field, a.body)
	}
}

// checkIndistinguishable runs o as the caller on alice's task and on a task
// id that was never issued, and fails unless both answers are
// TaskNotFoundError and byte for byte the same once the ids are blanked.
func (s *isoServer) checkIndistinguishable(t *testing.T, token, tenant string, o isoOp, aliceTask string) {
	t.Helper()
	unknown := uuid.New()
	theirs := s.call(t, token, tenant, o.with(aliceTask, aliceConfigID))
	none := s.call(t, token, tenant, o.with(unknown, aliceConfigID))
	s.checkTaskNotFound(t, theirs, aliceTask)
	s.checkTaskNotFound(t, none, unknown)
	s.checkNoLeak(t, theirs, aliceTask)
	const blank = "{TASK}"
	gotTheirs := bytes.ReplaceAll(theirs.body, []byte(aliceTask), []byte(blank))
	gotNone := bytes.ReplaceAll(none.body, []byte(unknown), []byte(blank))
	if theirs.status != none.status || theirs.ctype != none.ctype || !bytes.Equal(gotTheirs, gotNone) {
		t.Errorf("another principal's task is distinguishable from no task:\n"+
			"  alice's task: %d %s %s\n  no task:      %d %s %s",
			theirs.status, theirs.ctype, gotTheirs, none.status, none.ctype, gotNone)
	}
}

// TestIsolation checks per-principal and per-tenant isolation over every
// store and binding (A2A §13.1): bob cannot reach alice's tasks by any
// operation, cannot tell them from tasks that do not exist, cannot change
// them, and never sees them listed; nor can alice herself from another
// tenant.
func TestIsolation(t *testing.T) {
	for _, sk := range storeKinds() {
		for _, b := range bindings() {
			t.Run(sk.name+"/"+b.name, func(t *testing.T) {
				t.Parallel()
				s := newIsoServer(t, sk.open(t), b)
				before := s.aliceView(t)

				callers := []struct{ name, token, tenant string }{
					{"bob", bobToken, ""},
					// The same principal in another tenant. HTTP+JSON
					// addresses tenants by a /{tenant} path prefix,
					// JSON-RPC by the params' tenant field.
					{"alice@" + otherTenant, aliceToken, otherTenant},
				}
				targets := []struct{ name, id string }{{"input-required", s.inputTask}, {"completed", s.doneTask}}
				for _, c := range callers {
					for _, o := range taskOps() {
						for _, tg := range targets {
							t.Run(c.name+"/"+o.name+"/"+tg.name, func(t *testing.T) {
								s.checkIndistinguishable(t, c.token, c.tenant, o, tg.id)
							})
						}
					}
				}

				t.Run("bob/ListTasks", func(t *testing.T) { s.checkBobList(t) })
				t.Run("alice@"+otherTenant+"/ListTasks", func(t *testing.T) {
					l := s.list(t, s.call(t, aliceToken, otherTenant, listOp()))
					if len(l.Tasks) != 0 || l.TotalSize != 0 {
						t.Errorf("alice sees %d tasks (totalSize %d) in tenant %s, want none", len(l.Tasks), l.TotalSize, otherTenant)
					}
					a := s.call(t, aliceToken, otherTenant, listOp("pageSize", "1", "pageToken", s.alicePageToken))
					s.checkInvalidParams(t, a, "pageToken")
				})

				t.Run("alice/unchanged", func(t *testing.T) {
					after := s.aliceView(t)
					s.checkUnchanged(t, "input-required task", before.inputTask, after.inputTask)
					s.checkUnchanged(t, "completed task", before.doneTask, after.doneTask)
					s.checkUnchanged(t, "push configs", before.configs, after.configs)
					s.checkUnchanged(t, "push config", before.config, after.config)
					var cs a2a.ListTaskPushNotificationConfigsResponse
					if err := json.Unmarshal(s.b.result(t, after.configs), &cs); err != nil {
						t.Fatal(err)
					}
					if len(cs.Configs) != 1 || cs.Configs[0].ID != aliceConfigID || cs.Configs[0].URL != aliceHook {
						t.Errorf("alice's push configs are %+v, want only %s", cs.Configs, aliceConfigID)
					}
				})
			})
		}
	}
}

// checkBobList: ListTasks as bob never holds alice's tasks, whatever the
// filters, and alice's page token is refused without revealing anything.
func (s *isoServer) checkBobList(t *testing.T) {
	cases := []struct {
		name string
		op   isoOp
		want []string // bob's task ids expected
	}{
		{"no filter", listOp(), []string{s.bobTask}},
		{"alice's context", listOp("contextId", s.contextID), nil},
		{"status INPUT_REQUIRED", listOp("status", "TASK_STATE_INPUT_REQUIRED"), nil},
		{"status COMPLETED", listOp("status", "TASK_STATE_COMPLETED"), []string{s.bobTask}},
		{"alice's context and status", listOp("contextId", s.contextID, "status", "TASK_STATE_COMPLETED"), nil},
		{"history and artifacts", listOp("historyLength", "10", "includeArtifacts", "true"), []string{s.bobTask}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := s.call(t, bobToken, "", c.op)
			s.checkNoLeak(t, a, "")
			l := s.list(t, a)
			var got []string
			for _, task := range l.Tasks {
				got = append(got, task.ID)
			}
			if !slices.Equal(got, c.want) || int(l.TotalSize) != len(c.want) || l.NextPageToken != "" {
				t.Errorf("bob sees tasks %v (totalSize %d, nextPageToken %q), want %v", got, l.TotalSize, l.NextPageToken, c.want)
			}
		})
	}
	t.Run("alice's page token", func(t *testing.T) {
		a := s.call(t, bobToken, "", listOp("pageSize", "1", "pageToken", s.alicePageToken))
		s.checkInvalidParams(t, a, "pageToken")
		s.checkNoLeak(t, a, "")
	})
}

// checkUnchanged fails unless alice's answer is byte for byte what it was;
// for a task it names the state and history length that changed.
func (s *isoServer) checkUnchanged(t *testing.T, what string, before, after answer) {
	t.Helper()
	if bytes.Equal(before.body, after.body) && before.status == after.status {
		return
	}
	if strings.HasSuffix(what, "task") {
		b, a := s.task(t, before), s.task(t, after)
		t.Errorf("alice's %s changed: state %v -> %v, history %d -> %d", what, b.Status.State, a.Status.State, len(b.History), len(a.History))
	}
	t.Errorf("alice's %s changed:\nbefore: %s\nafter:  %s", what, before.body, after.body)
}
