package deployer

import (
	"bytes"
	"errors"
	"net/http"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/internal/jose"
)

// The card served in demo mode verifies, from the bytes served, with the
// demo secret, and its protected header is the kit's (capture 01 #3).
func TestDemoCardVerifies(t *testing.T) {
	s := startServer(t, kitBase, nil)
	body := readBody(t, do(t, http.MethodGet, s.URL+"/.well-known/agent-card.json", "", ""))
	v := &auth.CardVerifier{Keys: auth.CardKeysOf(DemoSigner()), Algorithms: []string{auth.CardHS256}}
	got, err := v.Verify(t.Context(), body)
	if err != nil {
		t.Fatalf("the served card does not verify: %v\n%s", err, body)
	}
	if got.KeyID != KeyID || got.Alg != auth.CardHS256 {
		t.Errorf("verified %+v", got)
	}
	var card a2a.AgentCard
	if err := a2a.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	const kitProtected = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpPU0UiLCJraWQiOiJkZXBsb3llci1rZXktMSJ9"
	if card.Signatures[0].Protected != kitProtected {
		t.Errorf("protected %s, the kit's %s", card.Signatures[0].Protected, kitProtected)
	}
	// Two demo signers sign alike: recordings stay byte-identical.
	a, _ := Card("http://a/1", "http://a/2", DemoSigner())
	b, _ := Card("http://a/1", "http://a/2", DemoSigner())
	if a.Signatures[0].Signature != b.Signatures[0].Signature {
		t.Error("the demo signature is not deterministic")
	}
	// A card changed in transit does not verify.
	changed := bytes.Replace(body, []byte("to staging after"), []byte("to production after"), 1)
	if _, err := v.Verify(t.Context(), changed); !errors.Is(err, auth.ErrCardSignature) {
		t.Errorf("changed card: %v", err)
	}
	// No JWKS for a shared secret.
	if resp := do(t, http.MethodGet, s.URL+JWKSPath, "", ""); resp.StatusCode == http.StatusOK {
		t.Errorf("the demo server serves a JWKS: %s", readBody(t, resp))
	} else {
		readBody(t, resp)
	}
}

// NewServer signs with a new ES256 key, publishes it at JWKSPath, and
// names that as the jku; a verifier allowed to fetch it verifies the card.
func TestNewServerSignsES256(t *testing.T) {
	srv := startServerWith(t, nil)
	body := readBody(t, do(t, http.MethodGet, srv.URL+"/.well-known/agent-card.json", "", ""))
	var card a2a.AgentCard
	if err := a2a.Unmarshal(body, &card); err != nil || len(card.Signatures) != 1 {
		t.Fatalf("card %s (%v)", body, err)
	}
	h, err := jose.DecodeHeader(card.Signatures[0].Protected)
	if err != nil || h.Alg != "ES256" || h.KeyID != KeyID || h.JWKSetURL != srv.URL+JWKSPath {
		t.Fatalf("header %+v (%v)", h, err)
	}
	resp := do(t, http.MethodGet, srv.URL+JWKSPath, "", "")
	jwks := readBody(t, resp)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/jwk-set+json" {
		t.Fatalf("JWKS: %d %s", resp.StatusCode, jwks)
	}
	keys, err := auth.ParseCardKeys(jwks)
	if err != nil || keys.Len() != 1 {
		t.Fatalf("JWKS %s: %v", jwks, err)
	}
	if _, err := (&auth.CardVerifier{Keys: keys}).Verify(t.Context(), body); err != nil {
		t.Errorf("with the JWKS as trust store: %v", err)
	}
	got, err := (&auth.CardVerifier{JWKSURLs: []string{srv.URL + JWKSPath}}).Verify(t.Context(), body)
	if err != nil || got.JWKSURL != srv.URL+JWKSPath {
		t.Errorf("through the jku: %+v, %v", got, err)
	}
	// Another server has another key.
	other := startServerWith(t, nil)
	otherJWKS := readBody(t, do(t, http.MethodGet, other.URL+JWKSPath, "", ""))
	otherKeys, _ := auth.ParseCardKeys(otherJWKS)
	if _, err := (&auth.CardVerifier{Keys: otherKeys}).Verify(t.Context(), body); !errors.Is(err, auth.ErrCardSignature) {
		t.Errorf("with another server's key: %v", err)
	}
}
