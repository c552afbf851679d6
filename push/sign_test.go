package push

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/internal/jose"
)

func TestSignClaims(t *testing.T) {
	s, err := GenerateSigner("k1", WithIssuer("https://agent.example"))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"statusUpdate":{"taskId":"t1"}}`)
	now := time.Unix(1_700_000_000, 0)
	tok, err := s.Sign("t1", body, now)
	if err != nil {
		t.Fatal(err)
	}
	h, payload, input, sig, err := jose.ParseCompact(tok)
	if err != nil {
		t.Fatal(err)
	}
	if h.Alg != "ES256" || h.Type != "JWT" || h.KeyID != "k1" {
		t.Errorf("header = %+v", h)
	}
	ks, err := jose.ParseJWKS(s.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	if err := jose.Verify([]string{jose.ES256}, jose.ES256, ks.Find("k1", jose.ES256)[0], input, sig); err != nil {
		t.Fatalf("the JWKS key does not verify the signature: %v", err)
	}
	var c map[string]any
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	want := map[string]any{
		"iss": "https://agent.example", "iat": float64(now.Unix()), "exp": float64(now.Add(DefaultLifetime).Unix()),
		"taskId": "t1", "bodySha256": base64.RawURLEncoding.EncodeToString(sum[:]),
	}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("claim %s = %v, want %v", k, c[k], v)
		}
	}
	if _, ok := c["eventId"]; ok {
		t.Error("Sign set eventId")
	}
	tok2, _ := s.Sign("t1", body, now)
	_, p2, _, _, _ := jose.ParseCompact(tok2)
	var c2 map[string]any
	_ = json.Unmarshal(p2, &c2)
	if c["jti"] == "" || c["jti"] == c2["jti"] {
		t.Errorf("jti not unique: %v and %v", c["jti"], c2["jti"])
	}
}

func TestNewSignerChecks(t *testing.T) {
	k384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if _, err := NewSigner("k", k384); err == nil || !strings.Contains(err.Error(), "P-256") {
		t.Errorf("P-384 key: err = %v", err)
	}
	if _, err := NewSigner("k", nil); err == nil {
		t.Error("nil key accepted")
	}
	if _, err := GenerateSigner("k", WithLifetime(2*time.Hour)); err == nil {
		t.Error("a two-hour lifetime accepted")
	}
	if _, err := GenerateSigner("k", WithIssuer("ftp://x")); err == nil {
		t.Error("an ftp issuer accepted")
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	a, _ := NewSigner("", key)
	b, _ := NewSigner("", key)
	if a.KeyID() == "" || a.KeyID() != b.KeyID() {
		t.Errorf("thumbprint kid: %q, %q", a.KeyID(), b.KeyID())
	}
	if _, err := a.Sign("", nil, time.Now()); err == nil {
		t.Error("empty task ID signed")
	}
}

func TestJWKSHandler(t *testing.T) {
	s, _ := GenerateSigner("k1")
	srv := httptest.NewServer(s.JWKSHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/jwk-set+json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=") || !strings.Contains(cc, "public") {
		t.Errorf("Cache-Control = %q", cc)
	}
	if strings.Contains(string(data), `"d"`) {
		t.Fatal("the JWKS holds a private key")
	}
	ks, err := jose.ParseJWKS(data)
	if err != nil || len(ks.Find("k1", jose.ES256)) != 1 {
		t.Fatalf("JWKS %s: %v", data, err)
	}
	r2, _ := http.Post(srv.URL, "text/plain", nil)
	r2.Body.Close()
	if r2.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", r2.StatusCode)
	}
}
