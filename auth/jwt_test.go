package auth_test

import (
	"encoding/json"
	"errors"
	"fmt"
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
)

// jwksHost is a JWKS server whose set and answer can be changed, and that
// counts its fetches.
type jwksHost struct {
	srv     *httptest.Server
	fetches atomic.Int64

	mu           sync.Mutex
	body         []byte
	status       int
	cacheControl string
	contentType  string
}

func newJWKSHost(t *testing.T, keys ...jose.Key) *jwksHost {
	t.Helper()
	h := &jwksHost{status: http.StatusOK, contentType: "application/json"}
	h.setKeys(t, keys...)
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.fetches.Add(1)
		h.mu.Lock()
		defer h.mu.Unlock()
		w.Header().Set("Content-Type", h.contentType)
		if h.cacheControl != "" {
			w.Header().Set("Cache-Control", h.cacheControl)
		}
		w.WriteHeader(h.status)
		w.Write(h.body)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *jwksHost) setKeys(t *testing.T, keys ...jose.Key) {
	t.Helper()
	data, err := jose.MarshalJWKS(keys...)
	if err != nil {
		t.Fatal(err)
	}
	h.set(func() { h.body = data })
}

func (h *jwksHost) set(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f()
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

func newCacheVerifier(t *testing.T, host *jwksHost, c *clock) *auth.JWTVerifier {
	t.Helper()
	v, err := auth.NewJWTVerifier(auth.JWTConfig{
		JWKSURL: host.srv.URL + "/jwks", Client: host.srv.Client(),
		Issuer: "https://issuer.example", Audience: "agent-1", Now: c.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// token signs standard claims for audience agent-1, valid for a day from
// c's now.
func token(t *testing.T, s *jose.Signer, c *clock) string {
	t.Helper()
	payload, _ := json.Marshal(map[string]any{
		"iss": "https://issuer.example", "aud": "agent-1", "sub": "alice", "exp": c.Now().Add(24 * time.Hour).Unix(),
	})
	tok, err := jose.SignCompact(s, "", payload)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func reason(err error) string {
	var te *auth.TokenError
	if errors.As(err, &te) {
		return te.Reason
	}
	return fmt.Sprint(err)
}

// TestJWKSCache: the set is fetched at first use and kept; a token of an
// unknown key refetches it at most once per JWKSRefetchInterval (rotation
// works, forged key IDs do not hammer the host); an expired set is
// refetched; a failed refresh keeps the last good set.
func TestJWKSCache(t *testing.T) {
	t.Parallel()
	fx := newJWTFixture(t)
	host := newJWKSHost(t, fx.es.Key())
	host.cacheControl = "max-age=300"
	c := &clock{now: fx.now}
	v := newCacheVerifier(t, host, c)
	ctx := t.Context()

	if host.fetches.Load() != 0 {
		t.Fatal("fetched before first use")
	}
	for range 3 {
		if _, err := v.Verify(ctx, token(t, fx.es, c)); err != nil {
			t.Fatal(err)
		}
	}
	if n := host.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for three tokens, want 1", n)
	}

	// The issuer rotates to ed; the first token of ed refetches. The clock
	// is past the refetch interval since the first fetch.
	c.advance(auth.JWKSRefetchInterval)
	host.setKeys(t, fx.es.Key(), fx.ed.Key())
	if _, err := v.Verify(ctx, token(t, fx.ed, c)); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	if n := host.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after rotation, want 2", n)
	}

	// Forged key IDs: refused, and fetched at most once per interval.
	for i := range 5 {
		tok := fx.signKid(t, fx.stranger, fmt.Sprintf("forged-%d", i), map[string]any{"aud": "agent-1", "sub": "x", "exp": c.Now().Add(time.Hour).Unix()})
		if _, err := v.Verify(ctx, tok); reason(err) != "the token is signed by an unknown key" {
			t.Fatalf("forged kid: %v", err)
		}
	}
	if n := host.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after forged key IDs within the interval, want 2", n)
	}
	c.advance(auth.JWKSRefetchInterval)
	tok := fx.signKid(t, fx.stranger, "forged-x", map[string]any{"aud": "agent-1", "sub": "x", "exp": c.Now().Add(time.Hour).Unix()})
	if _, err := v.Verify(ctx, tok); reason(err) != "the token is signed by an unknown key" {
		t.Fatalf("forged kid: %v", err)
	}
	if n := host.fetches.Load(); n != 3 {
		t.Fatalf("%d fetches after the interval, want 3", n)
	}

	// The set expires after its max-age (300 s since the last fetch), and
	// a failed refresh keeps the last good one.
	host.set(func() { host.status = http.StatusInternalServerError })
	c.advance(299 * time.Second)
	if _, err := v.Verify(ctx, token(t, fx.ed, c)); err != nil || host.fetches.Load() != 3 {
		t.Fatalf("before max-age: %v, %d fetches", err, host.fetches.Load())
	}
	c.advance(time.Second)
	if _, err := v.Verify(ctx, token(t, fx.ed, c)); err != nil {
		t.Fatalf("failed refresh: %v", err)
	}
	if n := host.fetches.Load(); n != 4 {
		t.Fatalf("%d fetches at max-age, want 4", n)
	}
	if err := v.Refresh(ctx); err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), host.srv.URL) {
		t.Fatalf("Refresh: %v, want an error naming the URL and the status", err)
	}
}

// TestJWKSUnavailable: with no set ever fetched, a token cannot be checked:
// 503 Unavailable, not 401, and the host is not asked again within the
// refetch interval.
func TestJWKSUnavailable(t *testing.T) {
	t.Parallel()
	fx := newJWTFixture(t)
	host := newJWKSHost(t, fx.es.Key())
	host.status = http.StatusNotFound
	c := &clock{now: fx.now}
	v := newCacheVerifier(t, host, c)
	h := auth.JWT(v, &admitted{})
	for range 2 {
		req := httptest.NewRequest(http.MethodPost, "/", nil)
		req.Header.Set("Authorization", "Bearer "+token(t, fx.es, c))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"status":"UNAVAILABLE"`) || rec.Header().Get("Retry-After") != "30" {
			t.Fatalf("%d %s %v", rec.Code, rec.Body, rec.Header())
		}
	}
	if n := host.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches, want 1", n)
	}
	// The host recovers; after the interval the token is accepted.
	host.set(func() { host.status = http.StatusOK })
	c.advance(auth.JWKSRefetchInterval)
	if _, err := v.Verify(t.Context(), token(t, fx.es, c)); err != nil {
		t.Fatal(err)
	}
}

// TestJWKSBadAnswers: what the host answers must be a JWK set of usable
// keys, of bounded size; Refresh says what is wrong.
func TestJWKSBadAnswers(t *testing.T) {
	t.Parallel()
	fx := newJWTFixture(t)
	tests := []struct {
		name   string
		change func(h *jwksHost)
		want   string
	}{
		{"not found", func(h *jwksHost) { h.status = http.StatusNotFound }, "HTTP 404"},
		{"html", func(h *jwksHost) { h.contentType = "text/html" }, `Content-Type "text/html"`},
		{"not JSON", func(h *jwksHost) { h.body = []byte("<html>") }, "not a JSON object"},
		{"no usable key", func(h *jwksHost) { h.body = []byte(`{"keys":[{"kty":"oct","k":"AAAA"}]}`) }, "no usable ES256, RS256 or EdDSA signing key"},
		{"only a weak key", func(h *jwksHost) {
			h.body = []byte(`{"keys":[{"kid":"old","kty":"RSA","n":"` + strings.Repeat("A", 170) + `w","e":"AQAB"}]}`)
		}, `left out: key 0 (kid "old")`},
		{"too large", func(h *jwksHost) { h.body = []byte(`{"keys":[],"x":"` + strings.Repeat("a", 1<<20) + `"}`) }, "larger than 1048576 bytes"},
		{"private key", func(h *jwksHost) {
			h.body = []byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"}]}`)
		}, "private"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			host := newJWKSHost(t, fx.es.Key())
			host.set(func() { tt.change(host) })
			v := newCacheVerifier(t, host, &clock{now: fx.now})
			err := v.Refresh(t.Context())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Refresh: %v, want an error with %q", err, tt.want)
			}
			if _, err := v.Verify(t.Context(), token(t, fx.es, &clock{now: fx.now})); !errors.Is(err, auth.ErrKeysUnavailable) {
				t.Fatalf("Verify: %v, want ErrKeysUnavailable", err)
			}
		})
	}
}

func TestJWTConfigErrors(t *testing.T) {
	t.Parallel()
	keys := &jose.KeySet{}
	tests := []struct {
		name string
		cfg  auth.JWTConfig
		want string
	}{
		{"no audience", auth.JWTConfig{Keys: keys}, "an audience is required"},
		{"no keys", auth.JWTConfig{Audience: "a"}, "a JWKS URL or keys are required"},
		{"both", auth.JWTConfig{Audience: "a", Keys: keys, JWKSURL: "https://x/jwks"}, "not both"},
		{"bad URL", auth.JWTConfig{Audience: "a", JWKSURL: "ftp://x/jwks"}, "must be http or https"},
		{"no host", auth.JWTConfig{Audience: "a", JWKSURL: "https:///jwks"}, "has no host"},
		{"HS256 with a JWKS", auth.JWTConfig{Audience: "a", JWKSURL: "https://x/jwks", Algorithms: []string{jose.HS256}}, "HS256 needs Keys"},
		{"none", auth.JWTConfig{Audience: "a", Keys: keys, Algorithms: []string{"none"}}, `unsupported algorithm "none"`},
		{"bad scope", auth.JWTConfig{Audience: "a", Keys: keys, Scopes: []string{"a b"}}, `scope "a b"`},
	}
	for _, tt := range tests {
		if _, err := auth.NewJWTVerifier(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}

// TestJWTStaticSecret: HS256 works with an explicit shared secret and an
// explicit allow-list, and not without the allow-list.
func TestJWTStaticSecret(t *testing.T) {
	t.Parallel()
	fx := newJWTFixture(t)
	c := &clock{now: fx.now}
	keys := &jose.KeySet{Keys: []jose.Key{fx.hs.Key()}}
	tok := token(t, fx.hs, c)
	for _, tt := range []struct {
		algs []string
		ok   bool
	}{{nil, false}, {[]string{jose.HS256}, true}} {
		v, err := auth.NewJWTVerifier(auth.JWTConfig{Keys: keys, Audience: "agent-1", Algorithms: tt.algs, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		c, err := v.Verify(t.Context(), tok)
		if (err == nil) != tt.ok {
			t.Fatalf("algorithms %v: %v", tt.algs, err)
		}
		if tt.ok && (c.Subject != "alice" || c.Issuer != "https://issuer.example" || len(c.Audience) != 1) {
			t.Fatalf("claims %+v", c)
		}
	}
}

// TestJWTClaimTypes: claims of the wrong JSON type are refused, naming
// the claim.
func TestJWTClaimTypes(t *testing.T) {
	t.Parallel()
	fx := newJWTFixture(t)
	c := &clock{now: fx.now}
	v, err := auth.NewJWTVerifier(auth.JWTConfig{Keys: &jose.KeySet{Keys: []jose.Key{fx.es.Key()}}, Audience: "agent-1", Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	exp := c.Now().Add(time.Hour).Unix()
	tests := []struct {
		claims string
		want   string
	}{
		{fmt.Sprintf(`{"aud":"agent-1","sub":"a","exp":"%d"}`, exp), "the token's exp is not a number"},
		{fmt.Sprintf(`{"aud":"agent-1","sub":"a","exp":%d,"nbf":true}`, exp), "the token's nbf is not a number"},
		{`{"aud":"agent-1","sub":"a","exp":1e300}`, "the token's exp is not a valid date"},
		{fmt.Sprintf(`{"aud":[1],"sub":"a","exp":%d}`, exp), "the token's audience (aud) is not a string or an array of strings"},
		{fmt.Sprintf(`{"aud":"agent-1","sub":7,"exp":%d}`, exp), "the token's sub is not a string"},
		{fmt.Sprintf(`{"aud":"agent-1","sub":"a","exp":%d,"iss":1}`, exp), "the token's iss is not a string"},
		{fmt.Sprintf(`{"aud":"agent-1","sub":"a","exp":%d,"scope":["x"]}`, exp), "the token's scope is not a string"},
		{fmt.Sprintf(`{"aud":"agent-1","sub":"a","exp":%d,"scp":[1]}`, exp), "the token's scp is not an array of strings"},
		{fmt.Sprintf(`{"aud":"agent-1","sub":"a","sub":"b","exp":%d}`, exp), "the token's claims are not a JSON object"},
		{`[]`, "the token's claims are not a JSON object"},
	}
	for _, tt := range tests {
		tok, err := jose.SignCompact(fx.es, "", []byte(tt.claims))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(t.Context(), tok); reason(err) != tt.want {
			t.Errorf("%s: %v, want %q", tt.claims, err, tt.want)
		}
	}
}

func TestJWTScheme(t *testing.T) {
	t.Parallel()
	v, err := auth.NewJWTVerifier(auth.JWTConfig{Keys: &jose.KeySet{}, Issuer: "https://issuer.example", Audience: "agent-1", Scopes: []string{"a2a:send"}})
	if err != nil {
		t.Fatal(err)
	}
	s := auth.JWTScheme(v)
	if s.HTTPAuth == nil || s.HTTPAuth.Scheme != "Bearer" || s.HTTPAuth.BearerFormat != "JWT" ||
		!strings.Contains(s.HTTPAuth.Description, "agent-1") || !strings.Contains(s.HTTPAuth.Description, "https://issuer.example") {
		t.Fatalf("%+v", s.HTTPAuth)
	}
	req := auth.JWTRequirement("jwt", v)
	b, err := json.Marshal(a2a.AgentCard{SecurityRequirements: []a2a.SecurityRequirement{req}}.SecurityRequirements)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"schemes":{"jwt":{"list":["a2a:send"]}}}]`; string(b) != want {
		t.Fatalf("%s, want %s", b, want)
	}
}
