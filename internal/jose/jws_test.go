package jose

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
)

var (
	rsaOnce sync.Once
	rsaKey  *rsa.PrivateKey
)

// testRSA is one 2048-bit key for the package's tests; generating it is slow.
func testRSA(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	rsaOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		rsaKey = k
	})
	return rsaKey
}

// signers is one signer of each algorithm.
func signers(t *testing.T) []*Signer {
	t.Helper()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var out []*Signer
	for _, k := range []any{ec, testRSA(t), ed, []byte(strings.Repeat("k", 32))} {
		s, err := NewSigner("kid-1", k)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

var all = []string{ES256, RS256, EdDSA, HS256}

func TestSignVerify(t *testing.T) {
	for _, s := range signers(t) {
		t.Run(s.Alg(), func(t *testing.T) {
			tok, err := SignCompact(s, "JWT", []byte(`{"sub":"alice"}`))
			if err != nil {
				t.Fatal(err)
			}
			h, payload, input, sig, err := ParseCompact(tok)
			if err != nil {
				t.Fatal(err)
			}
			if h.Alg != s.Alg() || h.KeyID != "kid-1" || h.Type != "JWT" || string(payload) != `{"sub":"alice"}` {
				t.Fatalf("header %+v payload %s", h, payload)
			}
			if s.Alg() == ES256 && len(sig) != 64 {
				t.Fatalf("ES256 signature of %d bytes", len(sig))
			}
			if err := Verify(all, h.Alg, s.Key(), input, sig); err != nil {
				t.Fatalf("Verify: %v", err)
			}
			// A changed payload does not verify.
			bad := append([]byte(nil), input...)
			bad[len(bad)-1] ^= 1
			if err := Verify(all, h.Alg, s.Key(), bad, sig); !errors.Is(err, ErrSignature) {
				t.Fatalf("tampered input: %v, want ErrSignature", err)
			}
			// Not on the allow-list.
			if err := Verify([]string{"XX"}, h.Alg, s.Key(), input, sig); err == nil || errors.Is(err, ErrSignature) {
				t.Fatalf("alg not allowed: %v", err)
			}
		})
	}
}

func TestVerifyRefusesNone(t *testing.T) {
	s := signers(t)[0]
	for _, alg := range []string{"none", "None", ""} {
		if err := Verify(append(all, alg), alg, s.Key(), []byte("x"), []byte("y")); err == nil {
			t.Errorf("alg %q accepted", alg)
		}
	}
}

// TestVerifyAlgorithmConfusion: a token "signed" with HMAC keyed by a public
// key's bytes is refused, since HS256 does not fit a public key.
func TestVerifyAlgorithmConfusion(t *testing.T) {
	for _, s := range signers(t)[:3] {
		der, err := x509.MarshalPKIXPublicKey(s.Key().Public)
		if err != nil {
			t.Fatal(err)
		}
		hs, err := NewSigner("", der)
		if err != nil {
			t.Fatal(err)
		}
		input := []byte("a.b")
		sig, _ := hs.Sign(input)
		key := s.Key()
		key.Alg = ""
		if err := Verify(all, HS256, key, input, sig); err == nil {
			t.Errorf("%s key verified an HS256 signature", s.Alg())
		}
		// Nor may one asymmetric algorithm use another's key.
		for _, alg := range []string{ES256, RS256, EdDSA} {
			if alg != s.Alg() {
				if err := Verify(all, alg, key, input, sig); err == nil || errors.Is(err, ErrSignature) {
					t.Errorf("%s key for %s: %v", s.Alg(), alg, err)
				}
			}
		}
	}
}

func TestVerifyKeyAlgMustMatch(t *testing.T) {
	s := signers(t)[1] // RS256
	input := []byte("a.b")
	sig, _ := s.Sign(input)
	k := s.Key()
	k.Alg = "PS256"
	if err := Verify(all, RS256, k, input, sig); err == nil {
		t.Fatal("a key for PS256 verified RS256")
	}
}

func TestES256SignatureLength(t *testing.T) {
	s := signers(t)[0]
	input := []byte("a.b")
	sig, _ := s.Sign(input)
	// ASN.1 or padded forms are refused.
	for _, bad := range [][]byte{sig[:63], append(append([]byte{}, sig...), 0), append([]byte{0}, sig...)} {
		if err := Verify(all, ES256, s.Key(), input, bad); !errors.Is(err, ErrSignature) {
			t.Errorf("%d-byte signature: %v", len(bad), err)
		}
	}
}

func TestParseCompactStrict(t *testing.T) {
	s := signers(t)[2]
	tok, err := SignCompact(s, "", []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	hdr := func(json string) string { return base64.RawURLEncoding.EncodeToString([]byte(json)) }
	tests := map[string]string{
		"two parts":          parts[0] + "." + parts[1],
		"four parts":         tok + ".x",
		"padded signature":   tok + "=",
		"std base64":         parts[0] + "." + parts[1] + "." + strings.NewReplacer("-", "+", "_", "/").Replace(parts[2]) + "+/",
		"non-canonical bits": parts[0] + "." + "e30" + "." + parts[2], // e30 is canonical; see below
		"empty signature":    parts[0] + "." + parts[1] + ".",
		"header not object":  hdr(`[1]`) + "." + parts[1] + "." + parts[2],
		"no alg":             hdr(`{"kid":"x"}`) + "." + parts[1] + "." + parts[2],
		"alg not string":     hdr(`{"alg":1}`) + "." + parts[1] + "." + parts[2],
		"duplicate alg":      hdr(`{"alg":"none","alg":"EdDSA"}`) + "." + parts[1] + "." + parts[2],
		"crit":               hdr(`{"alg":"EdDSA","crit":["b64"],"b64":false}`) + "." + parts[1] + "." + parts[2],
		"trailing data":      hdr(`{"alg":"EdDSA"} {}`) + "." + parts[1] + "." + parts[2],
	}
	tests["non-canonical bits"] = parts[0] + "." + "e31" + "." + parts[2] // "{}" with a stray low bit
	for name, tok := range tests {
		if _, _, _, _, err := ParseCompact(tok); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if _, _, _, _, err := ParseCompact(tok); err != nil {
		t.Fatalf("the good token: %v", err)
	}
}

func TestEncodeHeaderOrder(t *testing.T) {
	got, err := EncodeHeader(Header{Alg: ES256, KeyID: "k<1>", Type: "JWT", JWKSetURL: "https://x/jwks"})
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := base64.RawURLEncoding.DecodeString(got)
	if want := `{"alg":"ES256","typ":"JWT","kid":"k<1>","jku":"https://x/jwks"}`; string(dec) != want {
		t.Fatalf("%s, want %s", dec, want)
	}
	h, err := DecodeHeader(got)
	if err != nil || h.Alg != ES256 || h.KeyID != "k<1>" || h.Type != "JWT" || h.JWKSetURL != "https://x/jwks" || h.Raw["jku"] != "https://x/jwks" {
		t.Fatalf("%+v %v", h, err)
	}
	if _, err := EncodeHeader(Header{}); err == nil {
		t.Fatal("a header without alg encoded")
	}
}

func TestNewSignerRefuses(t *testing.T) {
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	for name, k := range map[string]any{
		"P-384":        p384,
		"RSA 1024":     small,
		"short secret": []byte("short"),
		"public key":   &p384.PublicKey,
		"string":       "secret",
	} {
		if _, err := NewSigner("", k); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
