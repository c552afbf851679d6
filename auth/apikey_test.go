package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/server"
)

// taskMaker is a next handler that creates a task, so that its owner tells
// which principal the request ran as.
type taskMaker struct {
	h      *server.Handler
	called bool
	taskID string
}

func newTaskMaker(t *testing.T) *taskMaker {
	t.Helper()
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		return w.Reject(ctx, "no")
	})
	card := &a2a.AgentCard{Name: "t", Version: "1", SupportedInterfaces: []a2a.AgentInterface{{URL: "http://x", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}}}
	h, err := server.NewHandler(card, agent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return &taskMaker{h: h}
}

func (m *taskMaker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.called = true
	res, err := m.h.SendMessage(r.Context(), &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hi")}}})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	m.taskID = res.Result.(*a2a.Task).ID
	w.WriteHeader(http.StatusNoContent)
}

// owner returns which of the principals sees the task; "?" for none or
// several.
func (m *taskMaker) owner(principals ...string) string {
	owner := "?"
	for _, p := range principals {
		_, err := m.h.GetTask(server.WithPrincipal(context.Background(), p), &a2a.GetTaskRequest{ID: m.taskID})
		switch {
		case err == nil && owner == "?":
			owner = p
		case err == nil:
			return "?"
		case !errors.Is(err, a2a.ErrTaskNotFound):
			return fmt.Sprintf("? (%v)", err)
		}
	}
	return owner
}

func TestAPIKey(t *testing.T) {
	t.Parallel()
	keys := map[string]string{"k-alice": "alice", "k-alice-new": "alice", "k-bob": "bob"}
	const (
		missing = `APIKey realm="a2a", header="X-API-Key"`
		invalid = `APIKey realm="a2a", header="X-API-Key", error="invalid_key"`
	)
	tests := []struct {
		name      string
		headers   []string // X-API-Key values
		challenge string   // "" means admitted
		principal string
	}{
		{"no header", nil, missing, ""},
		{"empty header", []string{""}, invalid, ""},
		{"wrong key", []string{"k-carol"}, invalid, ""},
		{"prefix of a key", []string{"k-alic"}, invalid, ""},
		{"longer than a key", []string{"k-alice1"}, invalid, ""},
		{"key in another case", []string{"K-ALICE"}, invalid, ""},
		{"two headers", []string{"k-alice", "k-alice"}, invalid, ""},
		{"two headers, one wrong", []string{"k-alice", "nope"}, invalid, ""},
		{"alice", []string{"k-alice"}, "", "alice"},
		{"alice's second key", []string{"k-alice-new"}, "", "alice"},
		{"bob", []string{"k-bob"}, "", "bob"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			next := newTaskMaker(t)
			h := auth.APIKey(keys, next)
			req := httptest.NewRequest(http.MethodPost, "/a2a/jsonrpc", nil)
			for _, v := range tt.headers {
				req.Header.Add(auth.APIKeyHeader, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if tt.challenge == "" {
				if !next.called || rec.Code != http.StatusNoContent {
					t.Fatalf("refused: %d %s", rec.Code, rec.Body)
				}
				if got := next.owner("", "alice", "bob"); got != tt.principal {
					t.Errorf("ran as %q, want %q", got, tt.principal)
				}
				return
			}
			if next.called {
				t.Fatal("the next handler ran")
			}
			if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") != tt.challenge {
				t.Fatalf("%d %q, want 401 %q", rec.Code, rec.Header().Get("WWW-Authenticate"), tt.challenge)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			for _, v := range tt.headers {
				if v != "" && strings.Contains(rec.Body.String(), v) {
					t.Errorf("the body echoes the key %q: %s", v, rec.Body)
				}
			}
		})
	}
}

// TestAPIKeyBody: the body is a google.rpc.Status naming the header.
func TestAPIKeyBody(t *testing.T) {
	t.Parallel()
	const send = "Send the API key in the X-API-Key header."
	tests := []struct {
		name    string
		headers []string
		message string
	}{
		{"missing", nil, send},
		{"wrong", []string{"nope"}, "The API key is not valid. " + send},
		{"several", []string{"a", "b"}, "Send one X-API-Key header, not several."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodGet, "/a2a/rest/tasks", nil)
			for _, v := range tt.headers {
				req.Header.Add(auth.APIKeyHeader, v)
			}
			rec := httptest.NewRecorder()
			auth.APIKey(map[string]string{"k": "p"}, &admitted{}, auth.WithRealm("kit")).ServeHTTP(rec, req)
			want := fmt.Sprintf(`{"error":{"code":401,"status":"UNAUTHENTICATED","message":%q}}`, tt.message) + "\n"
			if got := rec.Body.String(); got != want {
				t.Errorf("body %s, want %s", got, want)
			}
			if got := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, `APIKey realm="kit", header="X-API-Key"`) {
				t.Errorf("challenge %q", got)
			}
		})
	}
}

// TestAPIKeyCopiesKeys: changing the map afterwards changes nothing.
func TestAPIKeyCopiesKeys(t *testing.T) {
	t.Parallel()
	keys := map[string]string{"old": "p"}
	h := auth.APIKey(keys, &admitted{})
	delete(keys, "old")
	keys["new"] = "p"
	for key, want := range map[string]int{"old": http.StatusNoContent, "new": http.StatusUnauthorized} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set(auth.APIKeyHeader, key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("key %q: %d, want %d", key, rec.Code, want)
		}
	}
}

// TestAPIKeyScheme: the card declares the header APIKey checks.
func TestAPIKeyScheme(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(auth.APIKeyScheme())
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		APIKey struct{ Location, Name, Description string } `json:"apiKeySecurityScheme"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.APIKey.Location != "header" || got.APIKey.Name != auth.APIKeyHeader || got.APIKey.Description == "" {
		t.Errorf("scheme %s", b)
	}
	q := auth.APIKeyScheme(auth.WithKeyIn(auth.KeyInQuery, "api_key")).APIKey
	if q.Location != "query" || q.Name != "api_key" || !strings.Contains(q.Description, "api_key query parameter") {
		t.Errorf("query scheme %+v", q)
	}
}

func TestValidAPIKey(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]bool{
		"s3cret": true, "a b": true, "a\tb": true, "base64+/==": true, "clé": true,
		"": false, " lead": false, "trail ": false, "\ttab": false, "new\nline": false, "nul\x00": false, "del\x7f": false,
	} {
		if got := auth.ValidAPIKey(key); got != want {
			t.Errorf("ValidAPIKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestAPIKeyPanicsOnBadConfiguration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		keys map[string]string
		next http.Handler
		opts []auth.Option
	}{
		{"empty key", map[string]string{"": "p"}, &admitted{}, nil},
		{"empty principal", map[string]string{"s3cret-1": ""}, &admitted{}, nil},
		{"key with a newline", map[string]string{"s3cret-2\r\nX-Evil: 1": "p"}, &admitted{}, nil},
		{"key with a trailing space", map[string]string{"s3cret-3 ": "p"}, &admitted{}, nil},
		{"nil handler", map[string]string{"s3cret-4": "p"}, nil, nil},
		{"control character in realm", map[string]string{"s3cret-5": "p"}, &admitted{}, []auth.Option{auth.WithRealm("a\r\nb")}},
		{"unknown location", map[string]string{"s3cret-6": "p"}, &admitted{}, []auth.Option{auth.WithKeyIn("body", "key")}},
		{"header name with a space", map[string]string{"s3cret-7": "p"}, &admitted{}, []auth.Option{auth.WithKeyIn(auth.KeyInHeader, "X Key")}},
		{"cookie name with '='", map[string]string{"s3cret-8": "p"}, &admitted{}, []auth.Option{auth.WithKeyIn(auth.KeyInCookie, "a=b")}},
		{"empty query name", map[string]string{"s3cret-9": "p"}, &admitted{}, []auth.Option{auth.WithKeyIn(auth.KeyInQuery, "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				r := recover()
				if r == nil {
					t.Error("no panic")
				}
				for key := range tt.keys {
					if key != "" && strings.Contains(fmt.Sprint(r), key) {
						t.Errorf("the panic %q names the key", r)
					}
				}
			}()
			auth.APIKey(tt.keys, tt.next, tt.opts...)
		})
	}
}

func ExampleAPIKey() {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "an A2A method ran")
	})
	srv := httptest.NewServer(auth.APIKey(map[string]string{"s3cret": "alice"}, api))
	defer srv.Close()

	for _, key := range []string{"", "s3cret"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/a2a/jsonrpc", strings.NewReader("{}"))
		if key != "" {
			req.Header.Set(auth.APIKeyHeader, key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(strings.TrimSpace(resp.Status + " " + resp.Header.Get("WWW-Authenticate")))
		fmt.Print(string(body))
	}
	// Output:
	// 401 Unauthorized APIKey realm="a2a", header="X-API-Key"
	// {"error":{"code":401,"status":"UNAUTHENTICATED","message":"Send the API key in the X-API-Key header."}}
	// 200 OK
	// an A2A method ran
}
