package cli

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/internal/jose"
)

// jwtIssuer is an issuer for the --jwks tests: a key, its JWKS on
// 127.0.0.1, and a counter of fetches.
type jwtIssuer struct {
	signer  *jose.Signer
	jwks    *httptest.Server
	fetches atomic.Int64
}

func newJWTIssuer(t *testing.T) *jwtIssuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	iss := &jwtIssuer{}
	if iss.signer, err = jose.NewSigner("k1", key); err != nil {
		t.Fatal(err)
	}
	set, err := jose.MarshalJWKS(iss.signer.Key())
	if err != nil {
		t.Fatal(err)
	}
	iss.jwks = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iss.fetches.Add(1)
		if r.URL.Path != "/jwks.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(set)
	}))
	t.Cleanup(iss.jwks.Close)
	return iss
}

// token signs a token of sub for audience agent-a from the test issuer,
// expiring at exp, granting scope.
func (iss *jwtIssuer) token(t *testing.T, sub string, exp time.Time, scope string) string {
	t.Helper()
	payload, _ := json.Marshal(map[string]any{
		"iss": "https://issuer.test", "aud": "agent-a", "sub": sub, "exp": exp.Unix(), "scope": scope,
	})
	tok, err := jose.SignCompact(iss.signer, "at+jwt", payload)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// bearerCall sends one request with the bearer token tok (none when
// empty) and the API key key (none when empty).
func bearerCall(t *testing.T, method, url, tok, key, body string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// TestServeJWT: with --jwks, both bindings admit a valid token as its
// subject, keep subjects' tasks apart, refuse missing, expired and
// under-scoped tokens before any method runs, and the card, banner and logs
// say what is checked without ever showing a token.
func TestServeJWT(t *testing.T) {
	t.Parallel()
	iss := newJWTIssuer(t)
	ts := startServe(t, "--agent", "echo", "--store", "memory",
		"--jwks", iss.jwks.URL+"/jwks.json", "--audience", "agent-a", "--issuer", "https://issuer.test", "--scope", "a2a:send")
	if n := iss.fetches.Load(); n != 1 {
		t.Fatalf("%d JWKS fetches at start-up, want 1", n)
	}
	jsonrpcURL, restURL := ts.base+"/a2a/jsonrpc", ts.base+"/a2a/rest"
	hour := time.Now().Add(time.Hour)
	alice := iss.token(t, "alice", hour, "a2a:read a2a:send")
	bob := iss.token(t, "bob", hour, "a2a:send")
	expired := iss.token(t, "alice", time.Now().Add(-time.Hour), "a2a:send")
	readOnly := iss.token(t, "alice", hour, "a2a:read")

	t.Run("card declares the scheme and the scope", func(t *testing.T) {
		code, body := httpGet(t, ts.base+"/.well-known/agent-card.json")
		if code != http.StatusOK {
			t.Fatalf("card: %d %s", code, body)
		}
		var card struct {
			SecuritySchemes      map[string]map[string]map[string]string `json:"securitySchemes"`
			SecurityRequirements []map[string]map[string]map[string][]string
		}
		if err := json.Unmarshal([]byte(body), &card); err != nil {
			t.Fatal(err)
		}
		h := card.SecuritySchemes["jwt"]["httpAuthSecurityScheme"]
		if len(card.SecuritySchemes) != 1 || h["scheme"] != "Bearer" || h["bearerFormat"] != "JWT" {
			t.Errorf("securitySchemes %s", body)
		}
		if len(card.SecurityRequirements) != 1 || strings.Join(card.SecurityRequirements[0]["schemes"]["jwt"]["list"], " ") != "a2a:send" {
			t.Errorf("securityRequirements %s", body)
		}
	})

	const missing = `Bearer realm="a2a"`
	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			name, method, url, body string
		}{
			{"JSON-RPC SendMessage", http.MethodPost, jsonrpcURL, sendJSONRPC},
			{"REST SendMessage", http.MethodPost, restURL + "/message:send", sendREST},
			{"REST ListTasks", http.MethodGet, restURL + "/tasks", ""},
		} {
			for _, c := range []struct {
				tok, challenge, status string
				code                   int
			}{
				{"", missing, "UNAUTHENTICATED", http.StatusUnauthorized},
				{expired, `Bearer realm="a2a", error="invalid_token", error_description="the token has expired"`, "UNAUTHENTICATED", http.StatusUnauthorized},
				{alice[:len(alice)-4] + "AAAA", `Bearer realm="a2a", error="invalid_token", error_description="the token's signature does not verify"`, "UNAUTHENTICATED", http.StatusUnauthorized},
				{readOnly, `Bearer realm="a2a", error="insufficient_scope", scope="a2a:send"`, "PERMISSION_DENIED", http.StatusForbidden},
			} {
				resp, body := bearerCall(t, tc.method, tc.url, c.tok, "", tc.body)
				if resp.StatusCode != c.code || resp.Header.Get("WWW-Authenticate") != c.challenge || !strings.Contains(body, `"status":"`+c.status+`"`) {
					t.Errorf("%s: %d %q %s, want %d %q %s", tc.name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body, c.code, c.challenge, c.status)
				}
			}
		}
	})

	var aliceTask string
	t.Run("admitted as the subject", func(t *testing.T) {
		resp, body := bearerCall(t, http.MethodPost, jsonrpcURL, alice, "", sendJSONRPC)
		var rpc struct {
			Result struct {
				Task struct{ ID string } `json:"task"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(body), &rpc); resp.StatusCode != http.StatusOK || err != nil || rpc.Result.Task.ID == "" {
			t.Fatalf("JSON-RPC SendMessage: %d %v %s", resp.StatusCode, err, body)
		}
		aliceTask = rpc.Result.Task.ID
		if resp, body := bearerCall(t, http.MethodGet, restURL+"/tasks/"+aliceTask, alice, "", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("alice REST GetTask: %d %s", resp.StatusCode, body)
		}
		if resp, body := bearerCall(t, http.MethodGet, restURL+"/tasks/"+aliceTask, bob, "", ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("bob REST GetTask of alice's task: %d %s, want 404", resp.StatusCode, body)
		}
		if resp, body := bearerCall(t, http.MethodPost, restURL+"/message:send", bob, "", sendREST); resp.StatusCode != http.StatusOK {
			t.Errorf("bob REST SendMessage: %d %s", resp.StatusCode, body)
		}
	})

	if code := ts.stop(t); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	out, logs := ts.stdout.String(), ts.stderr.String()
	want := "  auth        JWT bearer (issuer https://issuer.test, audience agent-a, scopes a2a:send), JWKS " + iss.jwks.URL + "/jwks.json\n"
	if !strings.Contains(out, want) || strings.Contains(out, "auth        none") {
		t.Errorf("banner:\n%s\nwant the line %q", out, want)
	}
	if !strings.Contains(logs, "auth=jwt") || strings.Contains(logs, "serving without authentication") {
		t.Errorf("logs:\n%s", logs)
	}
	for _, tok := range []string{alice, bob, expired, readOnly} {
		sig := tok[strings.LastIndex(tok, ".")+1:]
		if strings.Contains(out, sig) || strings.Contains(logs, sig) {
			t.Errorf("a token was printed:\n%s\n%s", out, logs)
		}
	}
}

// TestServeJWTAndAPIKey: with --jwks and --api-key, either credential is
// accepted; the card offers both as alternatives; a request with neither
// gets both challenges.
func TestServeJWTAndAPIKey(t *testing.T) {
	t.Parallel()
	iss := newJWTIssuer(t)
	ts := startServe(t, "--agent", "echo", "--store", "memory",
		"--jwks", iss.jwks.URL+"/jwks.json", "--audience", "agent-a", "--api-key", "bob="+keyBob)
	url := ts.base + "/a2a/rest/message:send"
	alice := iss.token(t, "alice", time.Now().Add(time.Hour), "")

	if resp, body := bearerCall(t, http.MethodPost, url, alice, "", sendREST); resp.StatusCode != http.StatusOK {
		t.Errorf("JWT: %d %s", resp.StatusCode, body)
	}
	resp, body := bearerCall(t, http.MethodPost, url, "", keyBob, sendREST)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("API key: %d %s", resp.StatusCode, body)
	}
	// A JWT whose subject is bob is not the API key's principal bob: the
	// schemes' principals are kept apart, so it cannot see bob's task.
	var sent struct {
		Task struct{ ID string } `json:"task"`
	}
	if err := json.Unmarshal([]byte(body), &sent); err != nil || sent.Task.ID == "" {
		t.Fatalf("API key send: %v %s", err, body)
	}
	bobJWT := iss.token(t, "bob", time.Now().Add(time.Hour), "")
	if resp, body := bearerCall(t, http.MethodGet, ts.base+"/a2a/rest/tasks/"+sent.Task.ID, bobJWT, "", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a JWT for sub bob reads the API key bob's task: %d %s", resp.StatusCode, body)
	}
	if resp, body := bearerCall(t, http.MethodGet, ts.base+"/a2a/rest/tasks/"+sent.Task.ID, "", keyBob, ""); resp.StatusCode != http.StatusOK {
		t.Errorf("bob's own task: %d %s", resp.StatusCode, body)
	}
	resp, body = bearerCall(t, http.MethodPost, url, "", "", sendREST)
	got := resp.Header.Values("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || len(got) != 2 || got[0] != `Bearer realm="a2a"` || got[1] != `APIKey realm="a2a", header="X-API-Key"` {
		t.Errorf("neither: %d %q %s", resp.StatusCode, got, body)
	}
	if resp, _ := bearerCall(t, http.MethodPost, url, "", keyBob+"x", sendREST); resp.Header.Get("WWW-Authenticate") != `APIKey realm="a2a", header="X-API-Key", error="invalid_key"` {
		t.Errorf("wrong key: %d %q", resp.StatusCode, resp.Header.Values("WWW-Authenticate"))
	}
	if resp, _ := bearerCall(t, http.MethodPost, url, "garbage", "", sendREST); !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("bad token: %d %q", resp.StatusCode, resp.Header.Values("WWW-Authenticate"))
	}

	_, cardBody := httpGet(t, ts.base+"/.well-known/agent-card.json")
	var card struct {
		SecuritySchemes      map[string]json.RawMessage              `json:"securitySchemes"`
		SecurityRequirements []map[string]map[string]json.RawMessage `json:"securityRequirements"`
	}
	if err := json.Unmarshal([]byte(cardBody), &card); err != nil {
		t.Fatal(err)
	}
	if len(card.SecuritySchemes) != 2 || card.SecuritySchemes["jwt"] == nil || card.SecuritySchemes["apiKey"] == nil ||
		len(card.SecurityRequirements) != 2 || len(card.SecurityRequirements[0]["schemes"]) != 1 || len(card.SecurityRequirements[1]["schemes"]) != 1 {
		t.Errorf("card: %s", cardBody)
	}
	if code := ts.stop(t); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if out := ts.stdout.String(); !strings.Contains(out, "API key (X-API-Key)") || !strings.Contains(out, "JWT bearer (any issuer, audience agent-a)") {
		t.Errorf("banner:\n%s", out)
	}
	if logs := ts.stderr.String(); !strings.Contains(logs, "auth=api-key+jwt") || !strings.Contains(logs, "--issuer is not set") {
		t.Errorf("logs:\n%s", logs)
	}
}

// TestServeJWTUsage: mistakes in the --jwks flags are usage errors that
// name the flag; a JWKS that cannot be fetched stops start-up with the URL
// and the reason.
func TestServeJWTUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--jwks", "https://issuer.test/jwks.json"}, "--jwks needs --audience AUD"},
		{[]string{"--audience", "a"}, "--audience applies to --jwks, which is not set"},
		{[]string{"--issuer", "i", "--scope", "s"}, "--issuer applies to --jwks"},
		{[]string{"--jwks", "ftp://issuer.test/jwks", "--audience", "a"}, `--jwks: the JWKS URL "ftp://issuer.test/jwks" must be http or https`},
		{[]string{"--jwks", "issuer.test/jwks", "--audience", "a"}, "must be http or https"},
		{[]string{"--jwks", "https:///jwks", "--audience", "a"}, "has no host"},
		{[]string{"--jwks", "https://issuer.test/jwks", "--audience", "a", "--scope", `a"b`}, `--scope "a\"b": a scope is printable ASCII`},
	} {
		var stderr strings.Builder
		cfg, code := parseServeArgs(append([]string{"--store", "memory"}, tc.args...), &stderr)
		if cfg != nil || code != ExitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, %q; want usage error with %q", tc.args, code, stderr.String(), tc.want)
		}
	}

	iss := newJWTIssuer(t)
	var stderr strings.Builder
	cfg, _ := parseServeArgs([]string{"--addr", "127.0.0.1:0", "--store", "memory", "--data-dir", t.TempDir(),
		"--jwks", iss.jwks.URL + "/missing.json", "--audience", "a"}, &stderr)
	if cfg == nil {
		t.Fatal(stderr.String())
	}
	s, err := newServeRun(cfg, io.Discard, &stderr)
	if err == nil {
		s.close()
		t.Fatal("started with a JWKS URL that answers 404")
	}
	if want := "--jwks " + iss.jwks.URL + "/missing.json: cannot fetch the JWK set: HTTP 404 Not Found"; err.Error() != want {
		t.Errorf("%v, want %s", err, want)
	}
}

// TestServeJWTConfigFile: the flags work in the config file too, --scope
// as an array.
func TestServeJWTConfigFile(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, `{"jwks": "https://issuer.test/jwks.json", "audience": "agent-a", "scope": ["a2a:send", "a2a:read"]}`)
	var stderr strings.Builder
	cfg, code := parseServeArgs([]string{"--store", "memory", "--config", path}, &stderr)
	if cfg == nil {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if cfg.jwt == nil || strings.Join(cfg.jwt.Scopes(), " ") != "a2a:send a2a:read" || cfg.jwt.Audience() != "agent-a" {
		t.Fatalf("%+v", cfg.jwtSettings)
	}
}
