package cli

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/internal/jose"
)

// writeKeyPEM writes key as a PEM block of type typ.
func writeKeyPEM(t *testing.T, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func get(t *testing.T, url, token string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("X-API-Key", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// a2a serve --sign-key signs the card it serves and publishes the key,
// without credentials even when the bindings need an API key.
func TestServeSignKey(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalECPrivateKey(ec)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	pk8, _ := x509.MarshalPKCS8PrivateKey(ed)
	for _, c := range []struct {
		name, typ, alg string
		der            []byte
		args           []string
	}{
		{"EC SEC 1", "EC PRIVATE KEY", "ES256", der, []string{"--sign-kid", "k1", "--api-key", "alice=secret-key-1"}},
		{"Ed25519 PKCS 8", "PRIVATE KEY", "EdDSA", pk8, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := startServe(t, append([]string{"--store", "memory", "--sign-key", writeKeyPEM(t, c.typ, c.der)}, c.args...)...)
			_, card := get(t, ts.base+"/.well-known/agent-card.json", "")
			resp, jwks := get(t, ts.base+cardJWKSPath, "")
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/jwk-set+json" {
				t.Fatalf("JWKS: %d %s", resp.StatusCode, jwks)
			}
			keys, err := auth.ParseCardKeys(jwks)
			if err != nil {
				t.Fatal(err)
			}
			got, err := (&auth.CardVerifier{Keys: keys}).Verify(t.Context(), card)
			if err != nil {
				t.Fatalf("the served card does not verify: %v\n%s", err, card)
			}
			if got.Alg != c.alg || (c.args != nil && got.KeyID != "k1") || (c.args == nil && !strings.HasPrefix(got.KeyID, "card-")) {
				t.Errorf("verified %+v", got)
			}
			if out := ts.stdout.String(); !strings.Contains(out, "card signed "+c.alg+", kid "+got.KeyID+", key at "+ts.base+cardJWKSPath) {
				t.Errorf("stdout does not say how the card is signed:\n%s", out)
			}
			// The jku names the published set, and the card verifies through it.
			var sig struct {
				Signatures []struct{ Protected string } `json:"signatures"`
			}
			_ = json.Unmarshal(card, &sig)
			h, err := jose.DecodeHeader(sig.Signatures[0].Protected)
			if err != nil || h.JWKSetURL != ts.base+cardJWKSPath {
				t.Errorf("header %+v, %v", h, err)
			}
			if _, err := (&auth.CardVerifier{JWKSURLs: []string{h.JWKSetURL}}).Verify(t.Context(), card); err != nil {
				t.Errorf("through the jku: %v", err)
			}
			// A changed card does not verify.
			changed := strings.Replace(string(card), `"name":"`, `"name":"x`, 1)
			if _, err := (&auth.CardVerifier{Keys: keys}).Verify(t.Context(), []byte(changed)); !errors.Is(err, auth.ErrCardSignature) {
				t.Errorf("changed card: %v", err)
			}
		})
	}
}

func TestServeSignKeyErrors(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	p384, _ := x509.MarshalECPrivateKey(ec)
	notKey := filepath.Join(t.TempDir(), "cert.pem")
	_ = os.WriteFile(notKey, []byte("just text\n"), 0o600)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"--sign-key", filepath.Join(t.TempDir(), "none.pem")}, "--sign-key"},
		{"no key in the file", []string{"--sign-key", notKey}, "no PEM private key block"},
		{"garbage block", []string{"--sign-key", writeKeyPEM(t, "EC PRIVATE KEY", []byte("garbage"))}, "the EC PRIVATE KEY block does not parse"},
		{"encrypted", []string{"--sign-key", writeKeyPEM(t, "ENCRYPTED PRIVATE KEY", []byte("x"))}, "encrypted"},
		{"P-384", []string{"--sign-key", writeKeyPEM(t, "EC PRIVATE KEY", p384)}, "P-256"},
		{"kid without key", []string{"--sign-kid", "k"}, "--sign-kid applies to --sign-key"},
	}
	for _, c := range cases {
		var stderr syncBuffer
		cfg, code := parseServeArgs(append([]string{"--addr", "127.0.0.1:0", "--store", "memory"}, c.args...), &stderr)
		if cfg != nil {
			// Some problems show only when the card is signed.
			s, err := newServeRun(cfg, io.Discard, io.Discard)
			if err == nil {
				s.close()
				t.Errorf("%s: accepted", c.name)
				continue
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %q does not say %q", c.name, err, c.want)
			}
			continue
		}
		if code != ExitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", c.name, code, stderr.String(), c.want)
		}
	}
}
