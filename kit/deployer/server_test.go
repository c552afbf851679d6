package deployer

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
)

// TestAuthBeforeEveryMethod: without the right token, both bindings answer
// 401 with a challenge before any A2A method runs; with it they serve.
func TestAuthBeforeEveryMethod(t *testing.T) {
	s := startServer(t, "", nil)
	send, _ := json.Marshal(sendText("Deploy build 1 to production"))
	requests := []struct {
		name, method, path, body string
	}{
		{"JSON-RPC GetExtendedAgentCard", http.MethodPost, "/a2a/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`},
		{"JSON-RPC SendMessage", http.MethodPost, "/a2a/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + string(send) + `}`},
		{"JSON-RPC malformed body", http.MethodPost, "/a2a/jsonrpc", `{`},
		{"REST extendedAgentCard", http.MethodGet, "/a2a/rest/extendedAgentCard", ""},
		{"REST message:send", http.MethodPost, "/a2a/rest/message:send", string(send)},
		{"REST unknown task", http.MethodGet, "/a2a/rest/tasks/nope", ""},
		{"unknown path", http.MethodGet, "/elsewhere", ""},
	}
	creds := []struct {
		name, header string
		challenge    string // "" means admitted
	}{
		{"no token", "", `Bearer realm="deployer"`},
		{"other scheme", "Basic ZHBsOnRlc3Q=", `Bearer realm="deployer"`},
		{"wrong token", "Bearer dpl_wrong", `Bearer realm="deployer", error="invalid_token"`},
		{"token prefix", "Bearer " + kitToken[:len(kitToken)-1], `Bearer realm="deployer", error="invalid_token"`},
		{"empty token", "Bearer ", `Bearer realm="deployer", error="invalid_token"`},
		{"right token", "Bearer " + kitToken, ""},
		{"lower-case scheme", "bearer " + kitToken, ""},
	}
	for _, r := range requests {
		for _, c := range creds {
			t.Run(r.name+"/"+c.name, func(t *testing.T) {
				req, err := http.NewRequest(r.method, s.URL+r.path, strings.NewReader(r.body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("A2A-Version", "1.0")
				req.Header.Set("Content-Type", "application/json")
				if c.header != "" {
					req.Header.Set("Authorization", c.header)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body := readBody(t, resp)
				got := resp.Header.Get("WWW-Authenticate")
				if c.challenge == "" {
					if resp.StatusCode == http.StatusUnauthorized || got != "" {
						t.Fatalf("refused: %d %q %s", resp.StatusCode, got, body)
					}
					return
				}
				if resp.StatusCode != http.StatusUnauthorized || got != c.challenge {
					t.Fatalf("%d %q, want 401 %q\n%s", resp.StatusCode, got, c.challenge, body)
				}
				var st struct {
					Error struct {
						Code    int    `json:"code"`
						Status  string `json:"status"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(body, &st); err != nil || st.Error.Code != 401 || st.Error.Status != "UNAUTHENTICATED" ||
					!strings.Contains(st.Error.Message, "Authorization: Bearer <token>") {
					t.Fatalf("body %s", body)
				}
				if strings.Contains(string(body), kitToken) || strings.Contains(string(body), "dpl_wrong") {
					t.Fatalf("the body echoes a token: %s", body)
				}
			})
		}
	}
}

// TestCardIsPublic: the card needs no token, and a wrong token does not
// hide it.
func TestCardIsPublic(t *testing.T) {
	s := startServer(t, "", nil)
	for _, token := range []string{"", "dpl_wrong"} {
		resp := do(t, http.MethodGet, s.URL+"/.well-known/agent-card.json", token, "")
		body := readBody(t, resp)
		var card a2a.AgentCard
		if err := json.Unmarshal(body, &card); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("token %q: %d %s", token, resp.StatusCode, body)
		}
		if card.Name != "deployer" || card.SupportedInterfaces[0].URL != s.URL+"/a2a/jsonrpc" ||
			card.SupportedInterfaces[1].URL != s.URL+"/a2a/rest" || len(card.Signatures) != 1 || len(card.Skills) != 1 {
			t.Fatalf("card %s", body)
		}
	}
}

// TestTasksBelongToTheirPrincipal: a task created with one token does not
// exist for a caller with another.
func TestTasksBelongToTheirPrincipal(t *testing.T) {
	s := startServer(t, "", map[string]string{"tok-alice": "alice", "tok-bob": "bob"})
	p, _ := json.Marshal(sendText("Deploy build 1 to production"))
	status, body, err := post(s.URL+"/a2a/rest/message:send", "tok-alice", string(p))
	if err != nil || status != http.StatusOK {
		t.Fatalf("%d %s (%v)", status, body, err)
	}
	var res a2a.SendMessageResponse
	if err := json.Unmarshal([]byte(body), &res); err != nil {
		t.Fatal(err)
	}
	id := res.Result.(*a2a.Task).ID
	for token, want := range map[string]int{"tok-alice": http.StatusOK, "tok-bob": http.StatusNotFound} {
		resp := do(t, http.MethodGet, s.URL+"/a2a/rest/tasks/"+id, token, "")
		if b := readBody(t, resp); resp.StatusCode != want {
			t.Errorf("GetTask as %s: %d %s, want %d", token, resp.StatusCode, b, want)
		}
	}
}

func TestNewServer(t *testing.T) {
	if _, _, err := NewServer("http://x", ""); err == nil {
		t.Error("NewServer accepted an empty token")
	}
	if _, _, err := NewServer("", "tok"); err == nil {
		t.Error("NewServer accepted an empty base URL")
	}
	handler, h, err := NewServer("http://deploy.test:8080/", "tok")
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(t.Context())
	if got := h.Card().SupportedInterfaces[0].URL; got != "http://deploy.test:8080/a2a/jsonrpc" {
		t.Errorf("card URL %q", got)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/a2a/jsonrpc",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`))
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Authorization", "Bearer tok")
	handler.ServeHTTP(rec, req)
	var env struct {
		Result a2a.AgentCard `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if n := len(env.Result.Skills); n != 2 || env.Result.Skills[1].ID != "rollback" || env.Result.Signatures != nil {
		t.Errorf("extended card %s", rec.Body)
	}
}
