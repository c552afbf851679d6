package auth_test

import (
	"context"
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

// admitted is a next handler that records whether it ran.
type admitted struct{ called bool }

func (a *admitted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.called = true
	w.WriteHeader(http.StatusNoContent)
}

func TestBearer(t *testing.T) {
	tokens := map[string]string{"s3cret": "alice", "other-token": "bob"}
	const (
		missing = `Bearer realm="kit"`
		invalid = `Bearer realm="kit", error="invalid_token"`
	)
	tests := []struct {
		name      string
		headers   []string // Authorization values
		challenge string   // "" means admitted
	}{
		{"no header", nil, missing},
		{"basic", []string{"Basic czNjcmV0Og=="}, missing},
		{"scheme only", []string{"Bearer"}, invalid},
		{"empty token", []string{"Bearer "}, invalid},
		{"wrong token", []string{"Bearer s3cre"}, invalid},
		{"longer token", []string{"Bearer s3cret1"}, invalid},
		{"token with a space", []string{"Bearer s3cret x"}, invalid},
		{"two headers", []string{"Bearer s3cret", "Bearer s3cret"}, invalid},
		{"right token", []string{"Bearer s3cret"}, ""},
		{"second token", []string{"Bearer other-token"}, ""},
		{"scheme in capitals", []string{"BEARER s3cret"}, ""},
		{"extra spaces", []string{"Bearer   s3cret"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := &admitted{}
			h := auth.Bearer(tokens, next, auth.WithRealm("kit"))
			req := httptest.NewRequest(http.MethodPost, "/a2a/jsonrpc", nil)
			for _, v := range tt.headers {
				req.Header.Add("Authorization", v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if tt.challenge == "" {
				if !next.called || rec.Code != http.StatusNoContent {
					t.Fatalf("refused: %d %s", rec.Code, rec.Body)
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
		})
	}
}

// TestBearerBody: the body is the google.rpc.Status the kit sends
// (capture 18 #1).
func TestBearerBody(t *testing.T) {
	rec := httptest.NewRecorder()
	auth.Bearer(map[string]string{"t": "p"}, &admitted{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	want := `{"error":{"code":401,"status":"UNAUTHENTICATED","message":"Send Authorization: Bearer <token>"}}` + "\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("body %s, want %s", got, want)
	}
	if got := rec.Header().Get("WWW-Authenticate"); got != `Bearer realm="a2a"` {
		t.Errorf("default challenge %q", got)
	}
}

// TestBearerPrincipal: the token's principal owns what the request
// creates.
func TestBearerPrincipal(t *testing.T) {
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		return w.Reject(ctx, "no")
	})
	card := &a2a.AgentCard{Name: "t", Version: "1", SupportedInterfaces: []a2a.AgentInterface{{URL: "http://x", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}}}
	h, err := server.NewHandler(card, agent)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	var taskID string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := h.SendMessage(r.Context(), &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hi")}}})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		taskID = res.Result.(*a2a.Task).ID
	})
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.Header.Set("Authorization", "Bearer tok-a")
	rec := httptest.NewRecorder()
	auth.Bearer(map[string]string{"tok-a": "alice"}, next).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || taskID == "" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	for principal, found := range map[string]bool{"alice": true, "bob": false, "": false} {
		_, err := h.GetTask(server.WithPrincipal(context.Background(), principal), &a2a.GetTaskRequest{ID: taskID})
		if (err == nil) != found || (err != nil && !errors.Is(err, a2a.ErrTaskNotFound)) {
			t.Errorf("GetTask as %q: %v, found should be %v", principal, err, found)
		}
	}
}

// TestBearerCopiesTokens: changing the map afterwards changes nothing.
func TestBearerCopiesTokens(t *testing.T) {
	tokens := map[string]string{"old": "p"}
	h := auth.Bearer(tokens, &admitted{})
	delete(tokens, "old")
	tokens["new"] = "p"
	for token, want := range map[string]int{"old": http.StatusNoContent, "new": http.StatusUnauthorized} {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("token %q: %d, want %d", token, rec.Code, want)
		}
	}
}

func TestBearerRealmQuoting(t *testing.T) {
	rec := httptest.NewRecorder()
	auth.Bearer(nil, &admitted{}, auth.WithRealm(`a "b" \c`)).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if got, want := rec.Header().Get("WWW-Authenticate"), `Bearer realm="a \"b\" \\c"`; got != want {
		t.Errorf("challenge %s, want %s", got, want)
	}
}

func TestBearerPanicsOnBadConfiguration(t *testing.T) {
	tests := []struct {
		name   string
		tokens map[string]string
		next   http.Handler
		opts   []auth.Option
	}{
		{"empty token", map[string]string{"": "p"}, &admitted{}, nil},
		{"empty principal", map[string]string{"t": ""}, &admitted{}, nil},
		{"nil handler", map[string]string{"t": "p"}, nil, nil},
		{"control character in realm", map[string]string{"t": "p"}, &admitted{}, []auth.Option{auth.WithRealm("a\r\nb")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			auth.Bearer(tt.tokens, tt.next, tt.opts...)
		})
	}
}

func ExampleBearer() {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "an A2A method ran")
	})
	srv := httptest.NewServer(auth.Bearer(map[string]string{"s3cret": "alice"}, api, auth.WithRealm("deployer")))
	defer srv.Close()

	for _, token := range []string{"", "s3cret"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/a2a/jsonrpc", strings.NewReader("{}"))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
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
	// 401 Unauthorized Bearer realm="deployer"
	// {"error":{"code":401,"status":"UNAUTHENTICATED","message":"Send Authorization: Bearer <token>"}}
	// 200 OK
	// an A2A method ran
}
