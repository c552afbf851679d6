package jose

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	gojose "github.com/go-jose/go-jose/v4"
)

// FuzzParseCompact: ParseCompact never panics, nor does Verify on what it
// parses; what it parses re-encodes to the same segments; and when go-jose
// parses the same token too, it reads the same algorithm and payload.
func FuzzParseCompact(f *testing.F) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	es, err := NewSigner("k", key)
	if err != nil {
		f.Fatal(err)
	}
	hs, err := NewSigner("k", []byte(strings.Repeat("s", MinSecretBytes)))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []*Signer{es, hs} {
		tok, err := SignCompact(s, "JWT", []byte(`{"sub":"alice","exp":1}`))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(tok)
	}
	for _, seed := range []string{
		"", ".", "..", "...", "e30.e30.AA", "e30.e30.", "eyJhbGciOiJub25lIn0.e30.",
		"eyJhbGciOiJFUzI1NiJ9.e30.AA==", "eyJhbGciOiJFUzI1NiJ9x.e30.AA",
		"eyJhbGciOiJFUzI1NiIsImFsZyI6IkVTMjU2In0.e30.AA",        // duplicate alg
		"eyJhbGciOiJFUzI1NiIsImp3ayI6eyJrdHkiOiJFQyJ9fQ.e30.AA", // embedded jwk
	} {
		f.Add(seed)
	}
	// Keys no token can be signed with: the fuzzer does not hold them.
	otherEC, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	secret := make([]byte, MinSecretBytes)
	if _, err := rand.Read(secret); err != nil {
		f.Fatal(err)
	}
	strangers := []Key{{Public: &otherEC.PublicKey}, {Secret: secret}}
	algs := []gojose.SignatureAlgorithm{gojose.ES256, gojose.RS256, gojose.EdDSA, gojose.HS256}
	f.Fuzz(func(t *testing.T, token string) {
		h, payload, input, sig, err := ParseCompact(token)
		if err != nil {
			return
		}
		parts := strings.Split(token, ".")
		if len(parts) != 3 {
			t.Fatalf("parsed %d segments", len(parts))
		}
		raw, err := decode(parts[0])
		if err != nil || encode(raw) != parts[0] {
			t.Fatalf("header segment %q does not re-encode to itself", parts[0])
		}
		if encode(payload) != parts[1] || encode(sig) != parts[2] || string(input) != parts[0]+"."+parts[1] {
			t.Fatalf("%q does not re-encode to the same segments", token)
		}
		if h2, err := DecodeHeader(parts[0]); err != nil || h2.Alg != h.Alg || h2.KeyID != h.KeyID || h2.Type != h.Type || h2.JWKSetURL != h.JWKSetURL {
			t.Fatalf("the header decodes to %+v, %v, not %+v", h2, err, h)
		}
		if obj, err := gojose.ParseSignedCompact(token, algs); err == nil {
			if got := string(obj.Signatures[0].Protected.Algorithm); got != h.Alg {
				t.Fatalf("go-jose reads alg %q, we %q", got, h.Alg)
			}
			if !bytes.Equal(obj.UnsafePayloadWithoutVerification(), payload) {
				t.Fatalf("go-jose reads another payload")
			}
		}
		for _, k := range strangers {
			if Verify(all, h.Alg, k, input, sig) == nil {
				t.Fatalf("%q verified with a key that signed nothing", token)
			}
		}
	})
}

// FuzzParseJWKS: ParseJWKS never panics, and every key it keeps is one
// Verify takes for the algorithms it fits.
func FuzzParseJWKS(f *testing.F) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	good, err := MarshalJWKS(Key{KeyID: "k", Alg: ES256, Public: &key.PublicKey})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(good))
	f.Add(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`)
	f.Add(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"},{"kty":"oct","k":"AA"}]}`)
	f.Fuzz(func(t *testing.T, data string) {
		ks, err := ParseJWKS([]byte(data))
		if err != nil {
			return
		}
		for _, k := range ks.Keys {
			algs := k.algs()
			if len(algs) != 1 {
				t.Fatalf("key %+v fits %v", k, algs)
			}
			if _, err := verificationKey(all, algs[0], k, make([]byte, 64)); err != nil && !errors.Is(err, ErrSignature) {
				t.Fatalf("ParseJWKS kept a key Verify refuses: %v", err)
			}
		}
	})
}
