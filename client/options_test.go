package client_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
)

// TestOptionValidation refuses bad options when the client is made.
func TestOptionValidation(t *testing.T) {
	t.Parallel()
	card := testCard("https://agent.example.com")
	card.SecuritySchemes = map[string]a2a.SecurityScheme{
		"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}},
		"oauth":  {OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{ClientCredentials: &a2a.ClientCredentialsOAuthFlow{TokenURL: "https://x/token"}}}},
		"mtls":   {MutualTLS: &a2a.MutualTLSSecurityScheme{}},
		"weird":  {APIKey: &a2a.APIKeySecurityScheme{Location: "body", Name: "k"}},
	}
	cred := func(context.Context) (string, error) { return "c", nil }
	cases := map[string][]client.Option{
		"nil option":           {nil},
		"nil HTTP client":      {client.WithHTTPClient(nil)},
		"no bindings":          {client.WithBindings()},
		"gRPC binding":         {client.WithBindings("GRPC")},
		"unknown binding":      {client.WithBindings("JSONRPC", "SOAP")},
		"bad header name":      {client.WithHeader("X Bad", "v")},
		"empty header name":    {client.WithHeader("", "v")},
		"header injection":     {client.WithHeader("X-Ok", "a\r\nEvil: 1")},
		"reserved header":      {client.WithHeader("a2a-version", "0.3")},
		"extensions header":    {client.WithHeader("A2A-Extensions", "x")},
		"empty token":          {client.WithBearerToken("")},
		"token with space":     {client.WithBearerToken("a b")},
		"two Authorization":    {client.WithBearerToken("t"), client.WithHeader("Authorization", "Basic x")},
		"empty extension":      {client.WithExtensions("")},
		"extension with comma": {client.WithExtensions("a,b")},
		"zero timeout":         {client.WithTimeout(0)},
		"negative timeout":     {client.WithTimeout(-time.Second)},
		"nil verifier":         {client.WithCardVerifier(nil)},
		"zero backoff":         {client.WithBackoff(0, time.Second)},
		"backoff max < min":    {client.WithBackoff(time.Second, time.Millisecond)},
		"nil reconnect hook":   {client.WithReconnectHook(nil)},
		"no scheme name":       {client.WithCredentials("", cred)},
		"nil credential func":  {client.WithCredentials("bearer", nil)},
		"undeclared scheme":    {client.WithCredentials("nope", cred)},
		"mutual TLS scheme":    {client.WithCredentials("mtls", cred)},
		"unknown location":     {client.WithCredentials("weird", cred)},
		"bearer twice":         {client.WithBearerToken("t"), client.WithCredentials("bearer", cred)},
		"two schemes on Auth":  {client.WithCredentials("bearer", cred), client.WithCredentials("oauth", cred)},
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := client.NewFromCard(t.Context(), card, opts...)
			if !errors.Is(err, client.ErrInvalidOption) {
				t.Fatalf("err = %v, want ErrInvalidOption", err)
			}
			if !strings.HasPrefix(err.Error(), "client: invalid option: ") {
				t.Errorf("message = %q", err.Error())
			}
		})
	}
	// New checks options before making any request.
	if _, err := client.New(t.Context(), "http://127.0.0.1:1", client.WithTimeout(-1)); !errors.Is(err, client.ErrInvalidOption) {
		t.Errorf("New: %v", err)
	}
	// Good options pass.
	ok := []client.Option{
		client.WithHTTPClient(&http.Client{}), client.WithBindings("jsonrpc", "HTTP+JSON"),
		client.WithHeader("X-Trace", "1"), client.WithHeader("X-Trace", "2"), client.WithBearerToken("tok"),
		client.WithExtensions("https://example.com/ext/v1"), client.WithTimeout(time.Second),
		client.WithCardVerifier(func(context.Context, *a2a.AgentCard) error { return nil }),
		client.WithBackoff(time.Millisecond, time.Millisecond), client.WithCredentials("oauth", cred),
	}
	if _, err := client.NewFromCard(t.Context(), card, ok...); err == nil {
		t.Error("WithBearerToken and an OAuth scheme both set Authorization, yet were accepted")
	}
	if _, err := client.NewFromCard(t.Context(), card, ok[:len(ok)-1]...); err != nil {
		t.Errorf("good options: %v", err)
	}
}

// wirePeer is a fake peer recording what reaches it and answering every
// call with a task (or an SSE stream of one).
type wirePeer struct {
	mu   sync.Mutex
	reqs []recorded
}

func (p *wirePeer) handler(binding string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.reqs = append(p.reqs, recorded{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(body)})
		p.mu.Unlock()
		result := `{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}`
		if isStreamRequest(r) {
			result = `{"task":` + result + `}`
		}
		if binding == a2a.BindingJSONRPC {
			var env struct{ ID json.RawMessage }
			_ = json.Unmarshal(body, &env)
			result = `{"jsonrpc":"2.0","id":` + string(env.ID) + `,"result":` + result + `}`
		}
		if isStreamRequest(r) {
			sse("data: "+result+"\n\n")(w, r)
			return
		}
		_, _ = io.WriteString(w, result)
	}
}

func (p *wirePeer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.reqs)
}

func (p *wirePeer) last() recorded {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reqs[len(p.reqs)-1]
}

// TestCredentials sends each scheme's credential where the card says.
func TestCredentials(t *testing.T) {
	t.Parallel()
	schemes := map[string]a2a.SecurityScheme{
		"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "bearer"}},
		"basic":  {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Basic"}},
		"oidc":   {OpenIDConnect: &a2a.OpenIDConnectSecurityScheme{OpenIDConnectURL: "https://x/.well-known/openid-configuration"}},
		"hdr":    {APIKey: &a2a.APIKeySecurityScheme{Location: "header", Name: "X-API-Key"}},
		"qry":    {APIKey: &a2a.APIKeySecurityScheme{Location: "query", Name: "api key"}},
		"ck":     {APIKey: &a2a.APIKeySecurityScheme{Location: "cookie", Name: "session"}},
	}
	value := func(v string) func(context.Context) (string, error) {
		return func(ctx context.Context) (string, error) {
			if ctx == nil {
				return "", errors.New("no context")
			}
			return v, nil
		}
	}
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			peer := &wirePeer{}
			base := fakePeer(t, b, func(c *a2a.AgentCard) { c.SecuritySchemes = schemes }, peer.handler(b))
			c, err := client.New(t.Context(), base,
				client.WithCredentials("bearer", value("tok")), client.WithCredentials("hdr", value("k1")),
				client.WithCredentials("qry", value("q&1")), client.WithCredentials("ck", value("s1")))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t1"}); err != nil {
				t.Fatal(err)
			}
			r := peer.last()
			if got := r.header.Get("Authorization"); got != "Bearer tok" {
				t.Errorf("Authorization = %q", got)
			}
			if got := r.header.Get("X-API-Key"); got != "k1" {
				t.Errorf("X-API-Key = %q", got)
			}
			if !strings.Contains(r.query, "api+key=q%261") {
				t.Errorf("query = %q", r.query)
			}
			if got := r.header.Get("Cookie"); got != "session=s1" {
				t.Errorf("Cookie = %q", got)
			}
			// Streams carry them too.
			collect(t, c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: "t1"}))
			if got := peer.last().header.Get("Authorization"); got != "Bearer tok" {
				t.Errorf("stream Authorization = %q", got)
			}

			basic, err := client.New(t.Context(), base, client.WithCredentials("basic", value("ann:pw")))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := basic.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t1"}); err != nil {
				t.Fatal(err)
			}
			if got, want := peer.last().header.Get("Authorization"), "Basic "+base64.StdEncoding.EncodeToString([]byte("ann:pw")); got != want {
				t.Errorf("Basic: %q, want %q", got, want)
			}
			oidc, err := client.New(t.Context(), base, client.WithCredentials("oidc", value("id-token")))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := oidc.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t1"}); err != nil {
				t.Fatal(err)
			}
			if got := peer.last().header.Get("Authorization"); got != "Bearer id-token" {
				t.Errorf("OIDC: %q", got)
			}

			// A failing credential source fails the call before it is sent.
			errNoToken := errors.New("no token yet")
			failing, err := client.New(t.Context(), base, client.WithCredentials("bearer", func(context.Context) (string, error) { return "", errNoToken }))
			if err != nil {
				t.Fatal(err)
			}
			n := peer.count()
			if _, err := failing.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t1"}); !errors.Is(err, errNoToken) || errors.As(err, new(*a2a.Error)) {
				t.Errorf("failing credentials: %v", err)
			}
			if peer.count() != n {
				t.Error("the request was sent without its credentials")
			}
		})
	}
}

// TestWireFormat checks the headers and encodings of each binding.
func TestWireFormat(t *testing.T) {
	t.Parallel()
	list := &a2a.ListTasksRequest{
		ContextID: "ctx 1&2", Status: a2a.TaskStateWorking, PageSize: a2a.Ptr[int32](5), PageToken: "a+b/c=",
		HistoryLength: a2a.Ptr[int32](0), IncludeArtifacts: a2a.Ptr(false),
		StatusTimestampAfter: a2a.TimestampOf(time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)),
	}
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			peer := &wirePeer{}
			base := fakePeer(t, b, nil, peer.handler(b))
			c, err := client.New(t.Context(), base, client.WithExtensions("https://e.example/1", "https://e.example/2"),
				client.WithHeader("X-Trace", "abc"), client.WithBearerToken("tok"))
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, r recorded, contentType, accept string) {
				t.Helper()
				h := r.header
				if h.Get("A2A-Version") != "1.0" || h.Get("A2A-Extensions") != "https://e.example/1,https://e.example/2" ||
					h.Get("X-Trace") != "abc" || h.Get("Authorization") != "Bearer tok" {
					t.Errorf("%s: headers %v", what, h)
				}
				if h.Get("Content-Type") != contentType || !strings.Contains(h.Get("Accept"), accept) {
					t.Errorf("%s: Content-Type %q, Accept %q", what, h.Get("Content-Type"), h.Get("Accept"))
				}
			}
			if _, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "a:b/c d", HistoryLength: a2a.Ptr[int32](3)}); err != nil {
				t.Fatal(err)
			}
			get := peer.last()
			_, _ = c.ListTasks(t.Context(), list) // the answer does not matter
			lst := peer.last()
			collect(t, c.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("x")}))
			stream := peer.last()
			switch b {
			case a2a.BindingJSONRPC:
				for _, r := range []recorded{get, lst, stream} {
					var env map[string]any
					if err := json.Unmarshal([]byte(r.body), &env); err != nil {
						t.Fatal(err)
					}
					if _, ok := env["id"].(float64); !ok || env["jsonrpc"] != "2.0" || r.method != http.MethodPost || r.path != "/a2a" {
						t.Errorf("envelope %s %s %s", r.method, r.path, r.body)
					}
				}
				check("GetTask", get, "application/json", "application/json")
				check("stream", stream, "application/json", "text/event-stream")
				if !strings.Contains(get.body, `"method":"GetTask","params":{"id":"a:b/c d","historyLength":3}`) {
					t.Errorf("GetTask body %s", get.body)
				}
				if !strings.Contains(lst.body, `"status":"TASK_STATE_WORKING"`) || !strings.Contains(lst.body, `"statusTimestampAfter":"2026-10-06T09:00:00.000Z"`) {
					t.Errorf("ListTasks body %s", lst.body)
				}
			default:
				check("GetTask", get, "", "application/a2a+json")
				check("stream", stream, "application/a2a+json", "text/event-stream")
				if get.method != http.MethodGet || get.path != "/a2a/tasks/a%3Ab%2Fc%20d" || get.query != "historyLength=3" {
					t.Errorf("GetTask %s %s ? %s", get.method, get.path, get.query)
				}
				wantQ := "contextId=ctx%201%262&status=TASK_STATE_WORKING&pageSize=5&pageToken=a%2Bb%2Fc%3D&historyLength=0&statusTimestampAfter=2026-10-06T09%3A00%3A00.000Z&includeArtifacts=false"
				if lst.path != "/a2a/tasks" || lst.query != wantQ {
					t.Errorf("ListTasks %s ? %s\nwant query %s", lst.path, lst.query, wantQ)
				}
				if stream.method != http.MethodPost || stream.path != "/a2a/message:stream" || !strings.HasPrefix(stream.body, `{"message":{`) {
					t.Errorf("stream %s %s %s", stream.method, stream.path, stream.body)
				}
			}
		})
	}
}

// TestTimeout bounds unary calls without a deadline, and never streams.
func TestTimeout(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, serverOpts{})
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			c := newClient(t, ts.URL, b, client.WithTimeout(100*time.Millisecond))
			start := time.Now()
			_, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("hang")})
			if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, new(*a2a.Error)) {
				t.Errorf("blocking send: %v", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			// A deadline of the caller's own wins.
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			if got := describe(collect(t, c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("auth")}))); got[len(got)-1] != "status COMPLETED" {
				t.Errorf("stream: %q", got)
			}
			// The stream outlives the timeout: auth completes after 200ms.
			start = time.Now()
			got := describe(collect(t, c.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("auth")})))
			if got[len(got)-1] != "status COMPLETED" || time.Since(start) < 100*time.Millisecond {
				t.Errorf("stream without a deadline: %q after %v", got, time.Since(start))
			}
		})
	}
}

// TestQueryKeyNotInErrors keeps an API key sent in the query out of error
// messages.
func TestQueryKeyNotInErrors(t *testing.T) {
	t.Parallel()
	card := testCard("http://127.0.0.1:1")
	card.SecuritySchemes = map[string]a2a.SecurityScheme{"q": {APIKey: &a2a.APIKeySecurityScheme{Location: "query", Name: "key"}}}
	c, err := client.NewFromCard(t.Context(), card, client.WithBindings(a2a.BindingHTTPJSON),
		client.WithCredentials("q", func(context.Context) (string, error) { return "s3cret", nil }))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t"})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("err = %v", err)
	}
}
