package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/internal/jose"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// bindingRow is one row of TestAuthenticatorsOnEveryBinding: an
// authenticator, the credentials a request carries, and what must happen,
// checked on every binding. To add an authenticator, add rows; a row whose
// credentials are not headers (a client certificate) sets serve to start
// its own server and return the client that presents them.
type bindingRow struct {
	name string
	// guard puts the authenticator under test in front of next, which
	// serves the A2A bindings.
	guard func(t *testing.T, next http.Handler) http.Handler
	// header holds the request's credentials, and query more of them
	// (encoded, without "?").
	header http.Header
	query  string
	// serve starts a server for h and returns its base URL and the client
	// to call it with; nil means plain HTTP on 127.0.0.1.
	serve func(t *testing.T, h http.Handler) (base string, c *http.Client)
	want  bindingWant
}

// bindingWant is what a row must get.
type bindingWant struct {
	// principal, when not empty, means the call is admitted and the task
	// it creates is owned by principal. Otherwise the call is refused
	// before any A2A method runs, with:
	principal string
	status    int    // the HTTP status
	challenge string // the exact WWW-Authenticate header
	rpcStatus string // the google.rpc.Status status name of the body
	message   string // a part of its message
}

func admit(principal string) bindingWant { return bindingWant{principal: principal} }

func refuse401(challenge, message string) bindingWant {
	return bindingWant{status: http.StatusUnauthorized, challenge: challenge, rpcStatus: "UNAUTHENTICATED", message: message}
}

// bindingServer is one server of the harness: the A2A handler, the
// authenticator in front of its bindings, and how many requests got past
// the authenticator.
type bindingServer struct {
	h       *server.Handler
	base    string
	client  *http.Client
	reached atomic.Int64
	query   atomic.Value // the raw query of the last request past the authenticator
}

func newBindingServer(t *testing.T, row bindingRow) *bindingServer {
	t.Helper()
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		return w.Reject(ctx, "no")
	})
	card := &a2a.AgentCard{Name: "t", Version: "1", SupportedInterfaces: a2ahttp.Interfaces("http://127.0.0.1")}
	h, err := server.NewHandler(card, agent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	bs := &bindingServer{h: h}
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bs.reached.Add(1)
		bs.query.Store(r.URL.RawQuery)
		mux.ServeHTTP(w, r)
	})
	guarded := row.guard(t, counted)
	if row.serve != nil {
		bs.base, bs.client = row.serve(t, guarded)
	} else {
		srv := httptest.NewServer(guarded) // 127.0.0.1
		t.Cleanup(srv.Close)
		bs.base, bs.client = srv.URL, srv.Client()
	}
	return bs
}

// send makes one SendMessage call over binding with header; it returns
// the response and its body.
func (bs *bindingServer) send(t *testing.T, binding string, header http.Header, query string) (*http.Response, []byte) {
	t.Helper()
	msg := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	url, body := bs.base+a2ahttp.RESTPath+"/message:send", msg
	if binding == a2a.BindingJSONRPC {
		url, body = bs.base+a2ahttp.JSONRPCPath, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`+msg+`}`
	}
	if query != "" {
		url += "?" + query
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	for name, values := range header {
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	resp, err := bs.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// sentTaskID is the id of the task in a SendMessage response of binding.
func sentTaskID(t *testing.T, binding string, body []byte) string {
	t.Helper()
	if binding == a2a.BindingJSONRPC {
		var env struct {
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.Error != nil {
			t.Fatalf("not a JSON-RPC result: %s (%v)", body, err)
		}
		body = env.Result
	}
	var res struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	if err := json.Unmarshal(body, &res); err != nil || res.Task.ID == "" {
		t.Fatalf("no task in %s (%v)", body, err)
	}
	return res.Task.ID
}

func TestAuthenticatorsOnEveryBinding(t *testing.T) {
	t.Parallel()
	fx := newJWTFixture(t)
	now := fx.now
	claims := func(changes map[string]any) map[string]any {
		c := map[string]any{
			"iss": fx.issuer, "aud": "agent-1", "sub": "alice",
			"exp": now.Add(time.Hour).Unix(), "nbf": now.Add(-time.Minute).Unix(), "iat": now.Unix(),
			"scope": "a2a:read a2a:send",
		}
		for k, v := range changes {
			if v == nil {
				delete(c, k)
			} else {
				c[k] = v
			}
		}
		return c
	}
	bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
	jwtGuard := func(scopes ...string) func(*testing.T, http.Handler) http.Handler {
		return func(t *testing.T, next http.Handler) http.Handler {
			return auth.JWT(fx.verifier(t, scopes...), next)
		}
	}
	const (
		bearerMissing = `Bearer realm="a2a"`
		sendJWT       = "Send Authorization: Bearer <JWT>"
	)
	invalidToken := func(reason string) bindingWant {
		return refuse401(`Bearer realm="a2a", error="invalid_token", error_description="`+reason+`"`, "The bearer token is not valid: "+reason+". "+sendJWT)
	}

	// Tokens that are refused whatever the scopes.
	es, rs, ed, stranger := fx.es, fx.rs, fx.ed, fx.stranger
	pkix, err := x509.MarshalPKIXPublicKey(es.Key().Public)
	if err != nil {
		t.Fatal(err)
	}
	jwkJSON, err := jose.MarshalJWKS(es.Key())
	if err != nil {
		t.Fatal(err)
	}

	rows := []bindingRow{
		// Static bearer tokens.
		{name: "bearer/valid", guard: staticBearer, header: bearer("tok-alice"), want: admit("alice")},
		{name: "bearer/wrong", guard: staticBearer, header: bearer("tok-alicf"),
			want: refuse401(`Bearer realm="a2a", error="invalid_token"`, "The bearer token is not valid")},
		{name: "bearer/missing", guard: staticBearer, want: refuse401(bearerMissing, "Send Authorization: Bearer <token>")},

		// API keys.
		{name: "apikey/valid", guard: staticAPIKey, header: http.Header{"X-Api-Key": {"key-bob"}}, want: admit("bob")},
		{name: "apikey/wrong", guard: staticAPIKey, header: http.Header{"X-Api-Key": {"key-bov"}},
			want: refuse401(`APIKey realm="a2a", header="X-API-Key", error="invalid_key"`, "The API key is not valid")},
		{name: "apikey/missing", guard: staticAPIKey, want: refuse401(`APIKey realm="a2a", header="X-API-Key"`, "Send the API key in the X-API-Key header.")},
		{name: "apikey-query/valid", guard: queryAPIKey, query: "api_key=key-bob", want: admit("bob")},
		{name: "apikey/valid, prefixed principal", guard: func(t *testing.T, next http.Handler) http.Handler {
			return auth.APIKey(map[string]string{"key-bob": "bob"}, next, auth.WithPrincipalPrefix("key:"))
		}, header: http.Header{"X-Api-Key": {"key-bob"}}, want: admit("key:bob")},
		{name: "bearer/valid, prefixed principal", guard: func(t *testing.T, next http.Handler) http.Handler {
			return auth.Bearer(map[string]string{"tok-bob": "bob"}, next, auth.WithPrincipalPrefix("token:"))
		}, header: http.Header{"Authorization": {"Bearer tok-bob"}}, want: admit("token:bob")},
		{name: "apikey-query/wrong", guard: queryAPIKey, query: "api_key=key-bov",
			want: refuse401(`APIKey realm="a2a", query="api_key", error="invalid_key"`, "The API key is not valid")},
		{name: "apikey-query/twice", guard: queryAPIKey, query: "api_key=key-bob&api_key=key-bob",
			want: refuse401(`APIKey realm="a2a", query="api_key", error="invalid_key"`, "Send one api_key query parameter, not several.")},
		{name: "apikey-query/in-header", guard: queryAPIKey, header: http.Header{"X-Api-Key": {"key-bob"}},
			want: refuse401(`APIKey realm="a2a", query="api_key"`, "Send the API key in the api_key query parameter.")},
		{name: "apikey-cookie/valid", guard: cookieAPIKey, header: http.Header{"Cookie": {"theme=dark; a2a_key=key-bob"}}, want: admit("bob")},
		{name: "apikey-cookie/wrong", guard: cookieAPIKey, header: http.Header{"Cookie": {"a2a_key=key-bov"}},
			want: refuse401(`APIKey realm="a2a", cookie="a2a_key", error="invalid_key"`, "The API key is not valid")},
		{name: "apikey-cookie/missing", guard: cookieAPIKey, header: http.Header{"Cookie": {"theme=dark"}},
			want: refuse401(`APIKey realm="a2a", cookie="a2a_key"`, "Send the API key in the a2a_key cookie.")},

		// JWTs, with keys fetched from a JWKS.
		{name: "jwt/valid ES256", guard: jwtGuard(), header: bearer(fx.sign(t, es, "", claims(nil))), want: admit("alice")},
		{name: "jwt/valid, prefixed principal", guard: func(t *testing.T, next http.Handler) http.Handler {
			return auth.JWT(fx.verifier(t), next, auth.WithPrincipalPrefix("jwt:"))
		}, header: bearer(fx.sign(t, es, "", claims(nil))), want: admit("jwt:alice")},
		{name: "jwt/valid RS256", guard: jwtGuard(), header: bearer(fx.sign(t, rs, "at+jwt", claims(map[string]any{"sub": "bob"}))), want: admit("bob")},
		{name: "jwt/valid EdDSA, aud array, fractional exp", guard: jwtGuard(), header: bearer(fx.sign(t, ed, "JWT", claims(map[string]any{
			"aud": []string{"other", "agent-1"}, "exp": float64(now.Add(time.Hour).Unix()) + 0.5}))), want: admit("alice")},
		{name: "jwt/valid within leeway", guard: jwtGuard(), header: bearer(fx.sign(t, es, "", claims(map[string]any{
			"exp": now.Add(-30 * time.Second).Unix(), "nbf": now.Add(30 * time.Second).Unix()}))), want: admit("alice")},
		{name: "jwt/missing", guard: jwtGuard(), want: refuse401(bearerMissing, sendJWT)},
		{name: "jwt/other scheme", guard: jwtGuard(), header: http.Header{"Authorization": {"Basic YWxpY2U6cHc="}}, want: refuse401(bearerMissing, sendJWT)},
		{name: "jwt/empty", guard: jwtGuard(), header: http.Header{"Authorization": {"Bearer"}},
			want: invalidToken("the Authorization header does not hold one bearer token")},
		{name: "jwt/malformed", guard: jwtGuard(), header: bearer("not.a.jwt"), want: invalidToken("the token is not a well-formed compact JWS")},
		{name: "jwt/expired", guard: jwtGuard(), header: bearer(fx.sign(t, es, "", claims(map[string]any{"exp": now.Add(-2 * time.Minute).Unix()}))),
			want: invalidToken("the token has expired")},
		{name: "jwt/no exp", guard: jwtGuard(), header: bearer(fx.sign(t, es, "", claims(map[string]any{"exp": nil}))),
			want: invalidToken("the token has no expiry (exp)")},
		{name: "jwt/not yet valid", guard: jwtGuard(), header: bearer(fx.sign(t, es, "", claims(map[string]any{"nbf": now.Add(2 * time.Minute).Unix()}))),
			want: invalidToken("the token is not valid yet (nbf)")},
		{name: "jwt/wrong audience", guard: jwtGuard(), header: bearer(fx.sign(t, es, "", claims(map[string]any{"aud": "agent-2"}))),
			want: invalidToken("the token is for another audience")},
		{name: "jwt/no audience", guard: jwtGuard(), header: bearer(fx.sign(t, es, "", claims(map[string]any{"aud": nil}))),
			want: invalidToken("the token is for another audience")},
		{name: "jwt/wrong issuer", guard: jwtGuard(), header: bearer(fx.sign(t, es, "", claims(map[string]any{"iss": "https://evil.example"}))),
			want: invalidToken("the token is from another issuer")},
		{name: "jwt/no subject", guard: jwtGuard(), header: bearer(fx.sign(t, es, "", claims(map[string]any{"sub": ""}))),
			want: invalidToken("the token has no subject (sub)")},
		{name: "jwt/wrong signature", guard: jwtGuard(), header: bearer(fx.sign(t, stranger, "", claims(nil))), // same kid, another key
			want: invalidToken("the token's signature does not verify")},
		{name: "jwt/tampered claims", guard: jwtGuard(), header: bearer(tamper(fx.sign(t, es, "", claims(nil)), claims(map[string]any{"sub": "root"}))),
			want: invalidToken("the token's signature does not verify")},
		{name: "jwt/unknown key", guard: jwtGuard(), header: bearer(fx.signKid(t, es, "k-unknown", claims(nil))),
			want: invalidToken("the token is signed by an unknown key")},
		{name: "jwt/alg none", guard: jwtGuard(), header: bearer(rawToken(`{"alg":"none","kid":"k-es"}`, claims(nil), nil)),
			want: invalidToken("the token is not a well-formed compact JWS")},
		{name: "jwt/alg none with a signature", guard: jwtGuard(), header: bearer(rawToken(`{"alg":"none","kid":"k-es"}`, claims(nil), []byte("x"))),
			want: invalidToken("the token's algorithm is not accepted")},
		{name: "jwt/alg confusion, PKIX", guard: jwtGuard(), header: bearer(hmacToken(`{"alg":"HS256","kid":"k-es"}`, claims(nil), pkix)),
			want: invalidToken("the token's algorithm HS256 is not accepted")},
		{name: "jwt/alg confusion, JWKS", guard: jwtGuard(), header: bearer(hmacToken(`{"alg":"HS256","kid":"k-es"}`, claims(nil), jwkJSON)),
			want: invalidToken("the token's algorithm HS256 is not accepted")},
		{name: "jwt/alg of another key", guard: jwtGuard(), header: bearer(rawToken(`{"alg":"RS256","kid":"k-es"}`, claims(nil), make([]byte, 256))),
			want: invalidToken("the token is signed by an unknown key")},
		{name: "jwt/wrong typ", guard: jwtGuard(), header: bearer(fx.sign(t, es, "dpop+jwt", claims(nil))),
			want: invalidToken("the token's type (typ) is not a JWT access token")},

		// Scopes.
		{name: "jwt/scope granted", guard: jwtGuard("a2a:send"), header: bearer(fx.sign(t, es, "", claims(nil))), want: admit("alice")},
		{name: "jwt/scope granted by scp", guard: jwtGuard("a2a:send", "a2a:admin"), header: bearer(fx.sign(t, es, "", claims(map[string]any{
			"scope": nil, "scp": []string{"a2a:admin", "a2a:send"}}))), want: admit("alice")},
		{name: "jwt/insufficient scope", guard: jwtGuard("a2a:send", "a2a:admin"), header: bearer(fx.sign(t, es, "", claims(nil))),
			want: bindingWant{status: http.StatusForbidden, challenge: `Bearer realm="a2a", error="insufficient_scope", scope="a2a:send a2a:admin"`,
				rpcStatus: "PERMISSION_DENIED", message: "The bearer token lacks the scope a2a:admin; this agent requires a2a:send a2a:admin."}},
		{name: "jwt/no scope", guard: jwtGuard("a2a:send"), header: bearer(fx.sign(t, es, "", claims(map[string]any{"scope": nil}))),
			want: bindingWant{status: http.StatusForbidden, challenge: `Bearer realm="a2a", error="insufficient_scope", scope="a2a:send"`,
				rpcStatus: "PERMISSION_DENIED", message: "lacks the scope a2a:send"}},
		{name: "jwt/expired beats scope", guard: jwtGuard("a2a:admin"), header: bearer(fx.sign(t, es, "", claims(map[string]any{"exp": now.Add(-time.Hour).Unix()}))),
			want: invalidToken("the token has expired")},
	}
	for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON} {
		t.Run(binding, func(t *testing.T) {
			t.Parallel()
			for _, row := range rows {
				t.Run(row.name, func(t *testing.T) {
					t.Parallel()
					checkBindingRow(t, binding, row)
				})
			}
		})
	}
}

// checkBindingRow sends row's request over binding to a server of its own
// and checks the outcome.
func checkBindingRow(t *testing.T, binding string, row bindingRow) {
	bs := newBindingServer(t, row)
	resp, body := bs.send(t, binding, row.header, row.query)
	if row.want.principal != "" {
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("refused: %d %s %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
		if q, _ := bs.query.Load().(string); row.query != "" && q != "" {
			t.Errorf("the credentials went on in the query: %q", q)
		}
		id := sentTaskID(t, binding, body)
		ctx := server.WithPrincipal(context.Background(), row.want.principal)
		if _, err := bs.h.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); err != nil {
			t.Errorf("the task is not %s's: %v", row.want.principal, err)
		}
		for _, other := range []string{"", "mallory"} {
			ctx := context.Background()
			if other != "" {
				ctx = server.WithPrincipal(ctx, other)
			}
			if _, err := bs.h.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("principal %q sees the task: %v", other, err)
			}
		}
		return
	}
	if n := bs.reached.Load(); n != 0 {
		t.Errorf("the request got past the authenticator (%d)", n)
	}
	if resp.StatusCode != row.want.status {
		t.Errorf("status %d, want %d", resp.StatusCode, row.want.status)
	}
	if got := resp.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != row.want.challenge {
		t.Errorf("WWW-Authenticate %q, want %q", got, row.want.challenge)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var st struct {
		Error struct {
			Code    int    `json:"code"`
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if st.Error.Code != row.want.status || st.Error.Status != row.want.rpcStatus || !strings.Contains(st.Error.Message, row.want.message) {
		t.Errorf("body %s, want code %d status %s and a message with %q", body, row.want.status, row.want.rpcStatus, row.want.message)
	}
	if auth := row.header.Get("Authorization"); auth != "" && len(auth) > len("Bearer ")+8 {
		token := strings.TrimPrefix(auth, "Bearer ")
		if strings.Contains(string(body), token) || strings.Contains(resp.Header.Get("WWW-Authenticate"), token) {
			t.Error("the refusal echoes the token")
		}
	}
}

func staticBearer(t *testing.T, next http.Handler) http.Handler {
	return auth.Bearer(map[string]string{"tok-alice": "alice"}, next)
}

func staticAPIKey(t *testing.T, next http.Handler) http.Handler {
	return auth.APIKey(map[string]string{"key-bob": "bob"}, next)
}

func queryAPIKey(t *testing.T, next http.Handler) http.Handler {
	return auth.APIKey(map[string]string{"key-bob": "bob"}, next, auth.WithKeyIn(auth.KeyInQuery, "api_key"))
}

func cookieAPIKey(t *testing.T, next http.Handler) http.Handler {
	return auth.APIKey(map[string]string{"key-bob": "bob"}, next, auth.WithKeyIn(auth.KeyInCookie, "a2a_key"))
}

// jwtFixture is an issuer: signing keys, their JWKS served on 127.0.0.1,
// and a fixed clock.
type jwtFixture struct {
	issuer string
	jwks   *httptest.Server
	now    time.Time
	es     *jose.Signer // kid k-es
	rs     *jose.Signer // kid k-rs
	ed     *jose.Signer // kid k-ed
	hs     *jose.Signer // kid k-hs, a shared secret, not in the JWKS
	// stranger has kid k-es but another key: its tokens claim to be
	// signed by es.
	stranger *jose.Signer
}

var (
	fixtureRSAOnce sync.Once
	fixtureRSA     *rsa.PrivateKey
)

func newJWTFixture(t *testing.T) *jwtFixture {
	t.Helper()
	fixtureRSAOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		fixtureRSA = k
	})
	ec1, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec2, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, edk, _ := ed25519.GenerateKey(rand.Reader)
	fx := &jwtFixture{issuer: "https://issuer.example", now: time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)}
	mk := func(kid string, key any) *jose.Signer {
		s, err := jose.NewSigner(kid, key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	fx.es, fx.rs, fx.ed = mk("k-es", ec1), mk("k-rs", fixtureRSA), mk("k-ed", edk)
	fx.stranger = mk("k-es", ec2)
	fx.hs = mk("k-hs", []byte(strings.Repeat("s", 32)))
	set, err := jose.MarshalJWKS(fx.es.Key(), fx.rs.Key(), fx.ed.Key())
	if err != nil {
		t.Fatal(err)
	}
	fx.jwks = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Write(set)
	}))
	t.Cleanup(fx.jwks.Close)
	return fx
}

// verifier is a verifier of the fixture's tokens for audience agent-1,
// fetching the JWKS.
func (fx *jwtFixture) verifier(t *testing.T, scopes ...string) *auth.JWTVerifier {
	t.Helper()
	v, err := auth.NewJWTVerifier(auth.JWTConfig{
		JWKSURL:  fx.jwks.URL + "/jwks.json",
		Client:   fx.jwks.Client(),
		Issuer:   fx.issuer,
		Audience: "agent-1",
		Scopes:   scopes,
		Now:      func() time.Time { return fx.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (fx *jwtFixture) sign(t *testing.T, s *jose.Signer, typ string, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jose.SignCompact(s, typ, payload)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// signKid signs with s's key under another key ID.
func (fx *jwtFixture) signKid(t *testing.T, s *jose.Signer, kid string, claims map[string]any) string {
	t.Helper()
	h, _ := json.Marshal(map[string]string{"alg": s.Alg(), "kid": kid})
	payload, _ := json.Marshal(claims)
	input := b64(h) + "." + b64(payload)
	sig, err := s.Sign([]byte(input))
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + b64(sig)
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// rawToken builds a token from a header, claims and a signature, as an
// attacker would.
func rawToken(header string, claims map[string]any, sig []byte) string {
	payload, _ := json.Marshal(claims)
	return b64([]byte(header)) + "." + b64(payload) + "." + b64(sig)
}

// hmacToken "signs" with HS256 keyed by key: the algorithm confusion
// attack, with a public key's bytes as the secret.
func hmacToken(header string, claims map[string]any, key []byte) string {
	payload, _ := json.Marshal(claims)
	input := b64([]byte(header)) + "." + b64(payload)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(input))
	return input + "." + b64(m.Sum(nil))
}

// tamper replaces the claims of a signed token, keeping its signature.
func tamper(tok string, claims map[string]any) string {
	parts := strings.Split(tok, ".")
	payload, _ := json.Marshal(claims)
	return parts[0] + "." + b64(payload) + "." + parts[2]
}
