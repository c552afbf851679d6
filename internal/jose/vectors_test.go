package jose

import (
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"strings"
	"sync"
	"testing"
)

// Wycheproof-style vectors, written for this package's policy: for each
// accepted algorithm a valid token that must verify, and the malformed,
// malleated and confused forms of it that must be refused, through the
// path callers take (ParseCompact, then Verify) and through the detached
// path of agent cards (VerifyDetached).

var (
	rsa1024Once sync.Once
	rsa1024Key  *rsa.PrivateKey
)

// testRSA1024 is a key below MinRSABits, for the vectors that must refuse
// it.
func testRSA1024(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	rsa1024Once.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 1024)
		if err != nil {
			panic(err)
		}
		rsa1024Key = k
	})
	return rsa1024Key
}

// outcome is what a vector must come to.
type outcome int

const (
	verifies    outcome = iota // the signature verifies
	refused                    // an error, whichever
	badSig                     // an error that wraps ErrSignature
	parseFails                 // ParseCompact refuses the token
	policyFails                // an error that does not wrap ErrSignature: the alg or key is not acceptable
)

func (o outcome) String() string {
	return [...]string{"verifies", "refused", "badSig", "parseFails", "policyFails"}[o]
}

// vb64 is base64url without padding.
func vb64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// vtoken builds a compact JWS from a header (JSON as given, byte for
// byte), a payload and a function that signs the signing input.
func vtoken(header string, payload []byte, sign func(input []byte) []byte) string {
	input := vb64([]byte(header)) + "." + vb64(payload)
	return input + "." + vb64(sign([]byte(input)))
}

// withSig replaces a token's signature segment by the encoding of sig.
func withSig(tok string, sig []byte) string {
	return tok[:strings.LastIndexByte(tok, '.')+1] + vb64(sig)
}

// sigOf is the decoded signature of a token.
func sigOf(t *testing.T, tok string) []byte {
	t.Helper()
	sig, err := base64.RawURLEncoding.DecodeString(tok[strings.LastIndexByte(tok, '.')+1:])
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

// check runs a token through ParseCompact and Verify, and, when it parses,
// through VerifyDetached too, which must come to the same.
func check(t *testing.T, allowed []string, key Key, tok string, want outcome) {
	t.Helper()
	h, payload, input, sig, err := ParseCompact(tok)
	if err != nil {
		if want != parseFails && want != refused {
			t.Fatalf("ParseCompact: %v, want %v", err, want)
		}
		return
	}
	if want == parseFails {
		t.Fatalf("ParseCompact accepted %s", tok)
	}
	compact := Verify(allowed, h.Alg, key, input, sig)
	detached := VerifyDetached(allowed, h.Alg, key, strings.SplitN(tok, ".", 2)[0], payload, sig)
	for path, err := range map[string]error{"Verify": compact, "VerifyDetached": detached} {
		switch {
		case want == verifies && err != nil:
			t.Errorf("%s: %v, want it to verify", path, err)
		case want != verifies && err == nil:
			t.Errorf("%s verified, want %v", path, want)
		case want == badSig && !errors.Is(err, ErrSignature):
			t.Errorf("%s: %v, want ErrSignature", path, err)
		case want == policyFails && errors.Is(err, ErrSignature):
			t.Errorf("%s: %v, want a refusal of the alg or key, not ErrSignature", path, err)
		}
	}
}

type jwsVector struct {
	name    string
	allowed []string // nil means all four algorithms
	key     Key
	token   string
	want    outcome
}

func runJWSVectors(t *testing.T, vectors []jwsVector) {
	t.Helper()
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			allowed := v.allowed
			if allowed == nil {
				allowed = all
			}
			check(t, allowed, v.key, v.token, v.want)
		})
	}
}

func newEC(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustSigner(t *testing.T, kid string, key any) *Signer {
	t.Helper()
	s, err := NewSigner(kid, key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signWith signs the way s does, failing the test on an error.
func signWith(t *testing.T, s *Signer) func([]byte) []byte {
	return func(in []byte) []byte {
		sig, err := s.Sign(in)
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
}

// ecSig is R||S in 64 bytes.
func ecSig(r, s *big.Int) []byte {
	out := make([]byte, 64)
	r.FillBytes(out[:32])
	s.FillBytes(out[32:])
	return out
}

func TestVectorsES256(t *testing.T) {
	es := mustSigner(t, "k", newEC(t))
	other := mustSigner(t, "k", newEC(t))
	claims := []byte(`{"sub":"alice"}`)
	good := vtoken(`{"alg":"ES256","kid":"k"}`, claims, signWith(t, es))
	sig := sigOf(t, good)
	n := elliptic.P256().Params().N
	r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
	der, err := asn1.Marshal(struct{ R, S *big.Int }{r, s})
	if err != nil {
		t.Fatal(err)
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	runJWSVectors(t, []jwsVector{
		{name: "valid", key: es.Key(), token: good, want: verifies},
		{name: "high-S twin of a valid signature", key: es.Key(), token: withSig(good, ecSig(r, new(big.Int).Sub(n, s))), want: badSig},
		{name: "r=0", key: es.Key(), token: withSig(good, ecSig(big.NewInt(0), s)), want: badSig},
		{name: "s=0", key: es.Key(), token: withSig(good, ecSig(r, big.NewInt(0))), want: badSig},
		{name: "r=n", key: es.Key(), token: withSig(good, ecSig(n, s)), want: badSig},
		{name: "s=n", key: es.Key(), token: withSig(good, ecSig(r, n)), want: badSig},
		{name: "63-byte signature", key: es.Key(), token: withSig(good, sig[:63]), want: badSig},
		{name: "65-byte signature", key: es.Key(), token: withSig(good, append(append([]byte{}, sig...), 0)), want: badSig},
		{name: "65-byte signature, leading zero", key: es.Key(), token: withSig(good, append([]byte{0}, sig...)), want: badSig},
		{name: "DER-encoded signature", key: es.Key(), token: withSig(good, der), want: badSig},
		{name: "signature by a different key", key: es.Key(), token: vtoken(`{"alg":"ES256","kid":"k"}`, claims, signWith(t, other)), want: badSig},
		{name: "tampered claims", key: es.Key(), token: vb64([]byte(`{"alg":"ES256","kid":"k"}`)) + "." + vb64([]byte(`{"sub":"root"}`)) + "." + vb64(sig), want: badSig},
		{name: "P-384 key for ES256", key: Key{Public: &p384.PublicKey}, token: good, want: policyFails},
		{name: "P-384 key named ES256", key: Key{Alg: ES256, Public: &p384.PublicKey}, token: good, want: policyFails},
		{name: "ES256 key, ES256 not allowed", allowed: []string{RS256, EdDSA}, key: es.Key(), token: good, want: policyFails},
	})
}

func TestVectorsRS256(t *testing.T) {
	rs := mustSigner(t, "k", testRSA(t))
	claims := []byte(`{"sub":"alice"}`)
	good := vtoken(`{"alg":"RS256","kid":"k"}`, claims, signWith(t, rs))
	sig := sigOf(t, good)
	flipped := append([]byte{}, sig...)
	flipped[len(flipped)/2] ^= 0x01
	small := testRSA1024(t)
	smallTok := vtoken(`{"alg":"RS256"}`, claims, func(in []byte) []byte {
		d := sha256.Sum256(in)
		sig, err := rsa.SignPKCS1v15(rand.Reader, small, crypto.SHA256, d[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	})
	if _, err := NewSigner("", small); err == nil {
		t.Error("NewSigner took a 1024-bit RSA key")
	}
	runJWSVectors(t, []jwsVector{
		{name: "valid", key: rs.Key(), token: good, want: verifies},
		{name: "valid, key without alg", key: Key{Public: rs.Key().Public}, token: good, want: verifies},
		{name: "1024-bit key, valid signature", key: Key{Public: &small.PublicKey}, token: smallTok, want: policyFails},
		{name: "signature one byte short", key: rs.Key(), token: withSig(good, sig[:len(sig)-1]), want: badSig},
		{name: "signature one byte long", key: rs.Key(), token: withSig(good, append(append([]byte{}, sig...), 0)), want: badSig},
		{name: "signature with a leading zero byte", key: rs.Key(), token: withSig(good, append([]byte{0}, sig...)), want: badSig},
		{name: "signature of a different message", key: rs.Key(), token: withSig(good, sigOf(t, vtoken(`{"alg":"RS256","kid":"k"}`, []byte(`{"sub":"root"}`), signWith(t, rs)))), want: badSig},
		{name: "one bit of the signature flipped", key: rs.Key(), token: withSig(good, flipped), want: badSig},
		{name: "key named PS256", key: Key{Alg: "PS256", Public: rs.Key().Public}, token: good, want: policyFails},
	})
}

// l25519 is the order of the Ed25519 base point, little-endian as in a
// signature's S.
var l25519 = func() *big.Int {
	l, _ := new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)
	return l
}()

// leInt reads a little-endian integer; putLE writes one in 32 bytes.
func leInt(b []byte) *big.Int {
	be := make([]byte, len(b))
	for i := range b {
		be[len(b)-1-i] = b[i]
	}
	return new(big.Int).SetBytes(be)
}

func putLE(x *big.Int) []byte {
	be := x.FillBytes(make([]byte, 32))
	for i, j := 0, 31; i < j; i, j = i+1, j-1 {
		be[i], be[j] = be[j], be[i]
	}
	return be
}

func TestVectorsEdDSA(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, otherPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ed := mustSigner(t, "k", priv)
	claims := []byte(`{"sub":"alice"}`)
	good := vtoken(`{"alg":"EdDSA","kid":"k"}`, claims, signWith(t, ed))
	sig := sigOf(t, good)
	// S+L: the same S modulo L, which a verifier that does not insist on
	// S < L accepts (malleability).
	sPlusL := append(append([]byte{}, sig[:32]...), putLE(new(big.Int).Add(leInt(sig[32:]), l25519))...)
	sIsL := append(append([]byte{}, sig[:32]...), putLE(l25519)...)
	highBit := append([]byte{}, sig...)
	highBit[63] |= 0x80
	x25519, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	runJWSVectors(t, []jwsVector{
		{name: "valid", key: ed.Key(), token: good, want: verifies},
		{name: "S+L (non-canonical S >= L)", key: ed.Key(), token: withSig(good, sPlusL), want: badSig},
		{name: "S=L", key: ed.Key(), token: withSig(good, sIsL), want: badSig},
		{name: "top bit of S set", key: ed.Key(), token: withSig(good, highBit), want: badSig},
		{name: "63-byte signature", key: ed.Key(), token: withSig(good, sig[:63]), want: badSig},
		{name: "65-byte signature", key: ed.Key(), token: withSig(good, append(append([]byte{}, sig...), 0)), want: badSig},
		{name: "signature by a different key", key: ed.Key(), token: vtoken(`{"alg":"EdDSA","kid":"k"}`, claims, func(in []byte) []byte { return ed25519.Sign(otherPriv, in) }), want: badSig},
		{name: "X25519 key for EdDSA", key: Key{Public: x25519.PublicKey()}, token: good, want: policyFails},
		{name: "31-byte Ed25519 key", key: Key{Public: ed25519.PublicKey(ed.Key().Public.(ed25519.PublicKey)[:31])}, token: good, want: policyFails},
	})
}

func TestVectorsHS256(t *testing.T) {
	secret := []byte(strings.Repeat("s", MinSecretBytes))
	hs := mustSigner(t, "k", secret)
	claims := []byte(`{"sub":"alice"}`)
	good := vtoken(`{"alg":"HS256","kid":"k"}`, claims, signWith(t, hs))
	short := []byte(strings.Repeat("s", MinSecretBytes-1))
	shortTok := vtoken(`{"alg":"HS256"}`, claims, func(in []byte) []byte {
		m := hmac.New(sha256.New, short)
		m.Write(in)
		return m.Sum(nil)
	})
	if _, err := NewSigner("", short); err == nil {
		t.Errorf("NewSigner took a %d-byte secret", len(short))
	}
	sig := sigOf(t, good)
	runJWSVectors(t, []jwsVector{
		{name: "valid", key: hs.Key(), token: good, want: verifies},
		{name: "short secret, valid MAC", key: Key{Secret: short}, token: shortTok, want: policyFails},
		{name: "wrong secret", key: Key{Secret: []byte(strings.Repeat("t", MinSecretBytes))}, token: good, want: badSig},
		{name: "truncated MAC", key: hs.Key(), token: withSig(good, sig[:16]), want: badSig},
		{name: "HS256 not allowed", allowed: []string{ES256, RS256, EdDSA}, key: hs.Key(), token: good, want: policyFails},
	})
}

// TestVectorsJWS: the JWS envelope, whatever the algorithm.
func TestVectorsJWS(t *testing.T) {
	es := mustSigner(t, "k", newEC(t))
	rs := mustSigner(t, "k", testRSA(t))
	claims := []byte(`{"sub":"alice"}`)
	sign := signWith(t, es)
	good := vtoken(`{"alg":"ES256"}`, claims, sign)
	parts := strings.Split(good, ".")

	rsaPub := rs.Key().Public.(*rsa.PublicKey)
	pkix, err := x509.MarshalPKIXPublicKey(rsaPub)
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := MarshalJWKS(Key{Public: rsaPub})
	if err != nil {
		t.Fatal(err)
	}
	hmacWith := func(key []byte) func([]byte) []byte {
		return func(in []byte) []byte {
			m := hmac.New(sha256.New, key)
			m.Write(in)
			return m.Sum(nil)
		}
	}
	// signRaw signs a signing input given as is, for the vectors whose
	// segments are not what vtoken would encode.
	signRaw := func(input string) string { return input + "." + vb64(sign([]byte(input))) }
	stdPadded := base64.URLEncoding.EncodeToString([]byte(`{"alg":"ES256","k":"v"}`)) // ends in "="
	if !strings.HasSuffix(stdPadded, "=") {
		t.Fatalf("%s has no padding", stdPadded)
	}
	claimsB64 := vb64([]byte(`{"a":1}`)) // 7 bytes: the last character holds 4 spare bits
	noncanonical := nonCanonical(t, claimsB64)
	stdAlphabet := base64.RawStdEncoding.EncodeToString([]byte("{\"b\":\"\xfb\xff\"}"))
	if !strings.ContainsAny(stdAlphabet, "+/") {
		t.Fatalf("%s is in both alphabets", stdAlphabet)
	}

	noneAllowed := append(append([]string{}, all...), "none", "NONE", "None")
	runJWSVectors(t, []jwsVector{
		{name: "valid ES256", key: es.Key(), token: good, want: verifies},
		{name: "valid RS256", key: rs.Key(), token: vtoken(`{"alg":"RS256"}`, claims, signWith(t, rs)), want: verifies},
		{name: `alg "none", no signature`, allowed: noneAllowed, key: es.Key(), token: vb64([]byte(`{"alg":"none"}`)) + "." + vb64(claims) + ".", want: parseFails},
		{name: `alg "none" with a signature, allowed`, allowed: noneAllowed, key: es.Key(), token: vtoken(`{"alg":"none"}`, claims, sign), want: policyFails},
		{name: `alg "NONE", allowed`, allowed: noneAllowed, key: es.Key(), token: vtoken(`{"alg":"NONE"}`, claims, sign), want: policyFails},
		{name: `alg "None", allowed`, allowed: noneAllowed, key: es.Key(), token: vtoken(`{"alg":"None"}`, claims, sign), want: policyFails},
		{name: "alg not in the allow-list", allowed: []string{RS256}, key: es.Key(), token: good, want: policyFails},
		{name: "alg unknown (PS256)", allowed: append([]string{"PS256"}, all...), key: rs.Key(), token: vtoken(`{"alg":"PS256"}`, claims, signWith(t, rs)), want: policyFails},
		{name: "alg unknown (ES384)", allowed: append([]string{"ES384"}, all...), key: es.Key(), token: vtoken(`{"alg":"ES384"}`, claims, sign), want: policyFails},
		{name: "RS256 token, EC key", key: Key{Public: es.Key().Public}, token: vtoken(`{"alg":"RS256"}`, claims, signWith(t, rs)), want: policyFails},
		{name: "ES256 token, RSA key", key: Key{Public: rsaPub}, token: good, want: policyFails},
		{name: "HS256 keyed by the RSA key's PKIX bytes, RSA key", key: Key{Public: rsaPub}, token: vtoken(`{"alg":"HS256"}`, claims, hmacWith(pkix)), want: policyFails},
		{name: "HS256 keyed by the RSA key's JWKS, RSA key", key: Key{Public: rsaPub}, token: vtoken(`{"alg":"HS256"}`, claims, hmacWith(jwks)), want: policyFails},
		{name: "HS256 keyed by the RSA key's PKIX bytes, key named RS256", key: Key{Alg: RS256, Public: rsaPub}, token: vtoken(`{"alg":"HS256"}`, claims, hmacWith(pkix)), want: policyFails},
		{name: "HS256 with both a public key and its bytes as secret", key: Key{Public: rsaPub, Secret: pkix}, token: vtoken(`{"alg":"HS256"}`, claims, hmacWith(pkix)), want: policyFails},
		{name: "trailing bytes after the header JSON", key: es.Key(), token: vtoken(`{"alg":"ES256"}x`, claims, sign), want: parseFails},
		{name: "a second object after the header JSON", key: es.Key(), token: vtoken(`{"alg":"ES256"}{}`, claims, sign), want: parseFails},
		{name: "NUL after the header JSON", key: es.Key(), token: vtoken("{\"alg\":\"ES256\"}\x00", claims, sign), want: parseFails},
		{name: `duplicate "alg"`, key: es.Key(), token: vtoken(`{"alg":"ES256","alg":"ES256"}`, claims, sign), want: parseFails},
		{name: `duplicate "alg", none first`, key: es.Key(), token: vtoken(`{"alg":"none","alg":"ES256"}`, claims, sign), want: parseFails},
		{name: `duplicate "kid"`, key: es.Key(), token: vtoken(`{"alg":"ES256","kid":"a","kid":"b"}`, claims, sign), want: parseFails},
		{name: "padding in the header segment", key: es.Key(), token: signRaw(stdPadded + "." + parts[1]), want: parseFails},
		{name: "padding in the payload segment", key: es.Key(), token: signRaw(parts[0] + "." + base64.URLEncoding.EncodeToString([]byte(`{"a":1}`))), want: parseFails},
		{name: "padding in the signature segment", key: es.Key(), token: good + "==", want: parseFails},
		{name: "standard alphabet", key: es.Key(), token: signRaw(parts[0] + "." + stdAlphabet), want: parseFails},
		{name: "line break in a segment", key: es.Key(), token: signRaw(parts[0] + "." + claimsB64[:2] + "\n" + claimsB64[2:]), want: parseFails},
		{name: "non-canonical trailing bits in the payload", key: es.Key(), token: signRaw(parts[0] + "." + noncanonical), want: parseFails},
		{name: "non-canonical trailing bits in the signature", key: es.Key(), token: parts[0] + "." + parts[1] + "." + nonCanonical(t, parts[2]), want: parseFails},
		{name: "four segments", key: es.Key(), token: good + "." + parts[2], want: parseFails},
		{name: "five segments (a JWE)", key: es.Key(), token: good + ".x.y", want: parseFails},
		{name: "two segments", key: es.Key(), token: parts[0] + "." + parts[1], want: parseFails},
		{name: "crit with an unknown extension", key: es.Key(), token: vtoken(`{"alg":"ES256","crit":["exp"],"exp":1}`, claims, sign), want: parseFails},
		{name: "crit b64 (RFC 7797)", key: es.Key(), token: signRaw(vb64([]byte(`{"alg":"ES256","crit":["b64"],"b64":false}`)) + "." + string(claims)), want: parseFails},
		{name: "b64 false outside crit, signed as go-jose would read it", key: es.Key(), token: func() string {
			h := vb64([]byte(`{"alg":"ES256","b64":false}`))
			return h + "." + vb64(claims) + "." + vb64(sign([]byte(h+"."+string(claims))))
		}(), want: parseFails},
		{name: "header not an object", key: es.Key(), token: vtoken(`["ES256"]`, claims, sign), want: parseFails},
		{name: "alg not a string", key: es.Key(), token: vtoken(`{"alg":["ES256"]}`, claims, sign), want: parseFails},
		// Our checks pass this header; go-jose's do not: the refusal shows
		// that go-jose parses what is verified.
		{name: "embedded jwk that is not a key (go-jose refuses)", key: es.Key(), token: vtoken(`{"alg":"ES256","jwk":{"kty":"EC"}}`, claims, sign), want: policyFails},
		{name: "embedded private jwk (go-jose refuses)", key: es.Key(), token: vtoken(`{"alg":"ES256","jwk":{"kty":"oct","k":"c2VjcmV0"}}`, claims, sign), want: policyFails},
	})
}

// TestVectorsVerifyDirect: Verify itself, given a signing input that did
// not come from ParseCompact, holds to the same strictness: a header
// segment meant as one is decoded strictly and must name the alg asked for.
func TestVectorsVerifyDirect(t *testing.T) {
	es := mustSigner(t, "k", newEC(t))
	hdr := func(json string) string { return vb64([]byte(json)) }
	payload := vb64([]byte(`{"a":1}`))
	noncanonical := nonCanonical(t, hdr(`{"alg":"ES256","k":"v"}`)) // 23 bytes: 2 spare bits
	stdHeader := base64.RawStdEncoding.EncodeToString([]byte("{\"alg\":\"ES256\",\"kid\":\"\xfb\xff\"}"))
	if !strings.ContainsAny(stdHeader, "+/") {
		t.Fatalf("%s is in both alphabets", stdHeader)
	}
	tests := []struct {
		name  string
		input string
		want  outcome
	}{
		{"valid", hdr(`{"alg":"ES256"}`) + "." + payload, verifies},
		{"trailing bytes after the header JSON", hdr(`{"alg":"ES256"}x`) + "." + payload, policyFails},
		{"duplicate alg", hdr(`{"alg":"ES256","alg":"ES256"}`) + "." + payload, policyFails},
		{"header names another alg", hdr(`{"alg":"RS256"}`) + "." + payload, policyFails},
		{"crit", hdr(`{"alg":"ES256","crit":["exp"],"exp":1}`) + "." + payload, policyFails},
		{"padded header", base64.URLEncoding.EncodeToString([]byte(`{"alg":"ES256","k":"v"}`)) + "." + payload, policyFails},
		{"header in the standard alphabet", stdHeader + "." + payload, policyFails},
		{"non-canonical header", noncanonical + "." + payload, policyFails},
		{"header segment of a length base64 cannot have", hdr(`{"alg":"ES256"}`) + "x." + payload, policyFails},
		{"header segment with a character outside the alphabet", hdr(`{"alg":"ES256"}`) + "!." + payload, policyFails},
		{"header JSON after white space", hdr(` {"alg":"ES256"}`) + "." + payload, verifies},
		{"padded payload", hdr(`{"alg":"ES256"}`) + "." + payload + "=", badSig},
		{"three segments", hdr(`{"alg":"ES256"}`) + "." + payload + "." + payload, badSig},
		{"no payload segment", hdr(`{"alg":"ES256"}`), badSig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sig, err := es.Sign([]byte(tt.input)) // a genuine signature over the input
			if err != nil {
				t.Fatal(err)
			}
			err = Verify(all, ES256, es.Key(), []byte(tt.input), sig)
			switch {
			case tt.want == verifies && err != nil:
				t.Fatalf("%v, want it to verify", err)
			case tt.want != verifies && err == nil:
				t.Fatalf("verified, want %v", tt.want)
			case tt.want == badSig && !errors.Is(err, ErrSignature):
				t.Fatalf("%v, want ErrSignature", err)
			case tt.want == policyFails && errors.Is(err, ErrSignature):
				t.Fatalf("%v, want a refusal of the header, not ErrSignature", err)
			}
		})
	}
}

// TestVectorsJWK: keys a JWK set must not yield, and the ones it must.
func TestVectorsJWK(t *testing.T) {
	ec := newEC(t)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	rsaKey := testRSA(t)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	x25519, _ := ecdh.X25519().GenerateKey(rand.Reader)
	jwkOf := func(k Key) map[string]any {
		data, err := MarshalJWKS(k)
		if err != nil {
			t.Fatal(err)
		}
		var set struct{ Keys []map[string]any }
		if err := json.Unmarshal(data, &set); err != nil {
			t.Fatal(err)
		}
		return set.Keys[0]
	}
	ecJWK, rsaJWK, edJWK := jwkOf(Key{Public: &ec.PublicKey}), jwkOf(Key{Public: &rsaKey.PublicKey}), jwkOf(Key{Public: ed.Public()})
	with := func(m map[string]any, changes map[string]any) string {
		out := map[string]any{}
		for k, v := range m {
			out[k] = v
		}
		for k, v := range changes {
			if v == nil {
				delete(out, k)
			} else {
				out[k] = v
			}
		}
		b, err := json.Marshal(map[string]any{"keys": []any{out}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	p384pt, _ := p384.PublicKey.Bytes()
	small := testRSA1024(t)
	ecX := ecJWK["x"].(string)
	tests := []struct {
		name string
		set  string
		keys int  // usable keys it must yield
		err  bool // ParseJWKS must fail
	}{
		{name: "EC P-256", set: with(ecJWK, nil), keys: 1},
		{name: "RSA 2048", set: with(rsaJWK, nil), keys: 1},
		{name: "Ed25519", set: with(edJWK, nil), keys: 1},
		{name: "EC point not on the curve", set: with(ecJWK, map[string]any{"y": ecJWK["x"]})},
		{name: "EC point (0, 1)", set: `{"keys":[{"kty":"EC","crv":"P-256","x":"` + vb64(make([]byte, 32)) + `","y":"` + vb64(append(make([]byte, 31), 1)) + `"}]}`},
		{name: "EC x of 33 bytes", set: with(ecJWK, map[string]any{"x": vb64(append([]byte{0}, mustB64(t, ecX)...))})},
		{name: "EC x non-canonical base64url", set: with(ecJWK, map[string]any{"x": nonCanonical(t, ecX)})},
		{name: "EC x padded", set: with(ecJWK, map[string]any{"x": ecX + "="})},
		{name: "EC P-384", set: `{"keys":[{"kty":"EC","crv":"P-384","x":"` + vb64(p384pt[1:49]) + `","y":"` + vb64(p384pt[49:]) + `"}]}`},
		{name: "EC P-256 named RS256", set: with(ecJWK, map[string]any{"alg": RS256})},
		{name: "EC P-256 named ES384", set: with(ecJWK, map[string]any{"alg": "ES384"})},
		{name: "EC duplicate member", set: `{"keys":[{"kty":"EC","crv":"P-256","x":"` + ecX + `","x":"` + ecX + `","y":"` + ecJWK["y"].(string) + `"}]}`},
		{name: "RSA 1024", set: with(rsaJWK, map[string]any{"n": vb64(small.N.Bytes())})},
		{name: "RSA over 4096 bits (go-jose's bound)", set: with(rsaJWK, map[string]any{"n": vb64(append([]byte{1}, make([]byte, 512)...))})},
		{name: "RSA even exponent", set: with(rsaJWK, map[string]any{"e": vb64([]byte{4})})},
		{name: "RSA named ES256", set: with(rsaJWK, map[string]any{"alg": ES256})},
		{name: "Ed25519 named EdDSA with use enc", set: with(edJWK, map[string]any{"alg": EdDSA, "use": "enc"})},
		{name: "Ed25519 all-zero (low order) key", set: with(edJWK, map[string]any{"x": vb64(make([]byte, 32))})},
		{name: "Ed25519 31-byte key", set: with(edJWK, map[string]any{"x": vb64(make([]byte, 31))})},
		{name: "Ed448", set: `{"keys":[{"kty":"OKP","crv":"Ed448","x":"` + vb64(make([]byte, 57)) + `"}]}`},
		{name: "X25519", set: `{"keys":[{"kty":"OKP","crv":"X25519","x":"` + vb64(x25519.PublicKey().Bytes()) + `"}]}`},
		{name: "oct", set: `{"keys":[{"kty":"oct","k":"` + vb64([]byte(strings.Repeat("s", 32))) + `"}]}`},
		{name: "unknown kty", set: `{"keys":[{"kty":"AKP","alg":"ML-DSA-44","pub":"AAAA"}]}`},
		{name: "no kty", set: with(ecJWK, map[string]any{"kty": nil})},
		{name: "kty in another case", set: with(ecJWK, map[string]any{"kty": nil, "KTY": "EC"})},
		{name: "private EC key", set: with(ecJWK, map[string]any{"d": vb64(ec.D.FillBytes(make([]byte, 32)))}), err: true},
		{name: "private Ed25519 key", set: with(edJWK, map[string]any{"d": vb64(ed.Seed())}), err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ks, err := ParseJWKS([]byte(tt.set))
			switch {
			case tt.err && err == nil:
				t.Fatalf("parsed %s", tt.set)
			case tt.err:
				return
			case err != nil:
				t.Fatalf("ParseJWKS: %v", err)
			case len(ks.Keys) != tt.keys:
				t.Fatalf("%d keys, want %d (skipped: %q)", len(ks.Keys), tt.keys, ks.Skipped)
			}
		})
	}
}

// nonCanonical returns s, base64url without padding whose last character
// has spare bits, with the lowest of them set: another spelling of the
// same bytes, which a lenient decoder accepts.
func nonCanonical(t *testing.T, s string) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(s)%4 == 0 {
		t.Fatalf("%q has no spare bits", s)
	}
	last := strings.IndexByte(alphabet, s[len(s)-1])
	out := s[:len(s)-1] + string(alphabet[last+1])
	want := mustB64(t, s)
	got, err := base64.RawURLEncoding.DecodeString(out) // lenient
	if err != nil || string(got) != string(want) {
		t.Fatalf("%q is not another spelling of %q", out, s)
	}
	return out
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestThumbprintP256: the thumbprint of a P-256 key is the SHA-256 of
// {"crv","kty","x","y"} in that order, as push signers have named their
// keys all along.
func TestThumbprintP256(t *testing.T) {
	pub := newEC(t).PublicKey
	pt, _ := pub.Bytes()
	sum := sha256.Sum256([]byte(`{"crv":"P-256","kty":"EC","x":"` + vb64(pt[1:33]) + `","y":"` + vb64(pt[33:]) + `"}`))
	if got, err := Thumbprint(&pub); err != nil || got != vb64(sum[:]) {
		t.Fatalf("Thumbprint = %q, %v; want %q", got, err, vb64(sum[:]))
	}
}

// TestThumbprintRFC7638 is the example of RFC 7638 §3.1.
func TestThumbprintRFC7638(t *testing.T) {
	set := `{"keys":[{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256","kid":"2011-04-29"}]}`
	ks, err := ParseJWKS([]byte(set))
	if err != nil || len(ks.Keys) != 1 {
		t.Fatalf("%+v %v", ks, err)
	}
	got, err := Thumbprint(ks.Keys[0].Public)
	if want := "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"; err != nil || got != want {
		t.Fatalf("Thumbprint = %q, %v; want %q", got, err, want)
	}
}
