package auth

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/capture"
	"github.com/goa2a/a2a/internal/jose"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef") // 32 bytes, tests only

func testCard() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "signer",
		Description: "Signs <things> & checks them.",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "http://127.0.0.1:1/a2a/jsonrpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
		},
		Version:            "1.0.0",
		Capabilities:       a2a.AgentCapabilities{Streaming: a2a.Ptr(false)},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{{ID: "s", Name: "S", Description: "été 😀", Tags: []string{"t"}}},
	}
}

func mustSigner(t *testing.T, kid string, key any, jku string) *CardSigner {
	t.Helper()
	s, err := NewCardSigner(kid, key, jku)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testKeys(t *testing.T) map[string]any {
	t.Helper()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{CardES256: ec, CardRS256: rk, CardEdDSA: ed, CardHS256: testSecret}
}

// Each algorithm: the signed card verifies from its JSON and from the
// struct, names its kid and alg, and a changed card does not verify.
func TestSignCardRoundTrip(t *testing.T) {
	ctx := context.Background()
	for alg, key := range testKeys(t) {
		t.Run(alg, func(t *testing.T) {
			s := mustSigner(t, "k-"+alg, key, "")
			if s.Alg() != alg || s.KeyID() != "k-"+alg {
				t.Fatalf("signer is %s %q", s.Alg(), s.KeyID())
			}
			card := testCard()
			signed, err := SignCard(card, s)
			if err != nil {
				t.Fatal(err)
			}
			if card.Signatures != nil || len(signed.Signatures) != 1 {
				t.Fatalf("SignCard changed its input or made %d signatures", len(signed.Signatures))
			}
			h, err := jose.DecodeHeader(signed.Signatures[0].Protected)
			if err != nil || h.Alg != alg || h.Type != "JOSE" || h.KeyID != "k-"+alg || h.JWKSetURL != "" {
				t.Fatalf("protected header %+v, %v", h, err)
			}
			v := &CardVerifier{Keys: CardKeysOf(s), Algorithms: []string{alg}}
			got, err := v.Verify(ctx, mustJSON(t, signed))
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if got != (VerifiedCardSignature{Index: 0, KeyID: "k-" + alg, Alg: alg}) {
				t.Errorf("Verify = %+v", got)
			}
			if _, err := v.VerifyCard(ctx, signed); err != nil {
				t.Errorf("VerifyCard: %v", err)
			}
			// The same card with its JSON indented and members reordered
			// still verifies: the payload is canonical.
			var m map[string]any
			if err := json.Unmarshal(mustJSON(t, signed), &m); err != nil {
				t.Fatal(err)
			}
			indented, _ := json.MarshalIndent(m, "", "   ")
			if _, err := v.Verify(ctx, indented); err != nil {
				t.Errorf("Verify(indented): %v", err)
			}

			tampered := *signed
			tampered.Description = "Signs things for production."
			if _, err := v.VerifyCard(ctx, &tampered); !errors.Is(err, ErrCardSignature) {
				t.Errorf("tampered card: err = %v, want ErrCardSignature", err)
			}
			// A field added after signing breaks it too.
			tampered = *signed
			tampered.DocumentationURL = a2a.Ptr("https://evil.example")
			if _, err := v.VerifyCard(ctx, &tampered); !errors.Is(err, ErrCardSignature) {
				t.Errorf("card with an added field: err = %v, want ErrCardSignature", err)
			}
		})
	}
}

func TestSignCardKeepsSignaturesAndJKU(t *testing.T) {
	ec := testKeys(t)[CardES256].(*ecdsa.PrivateKey)
	s1 := mustSigner(t, "one", testSecret, "")
	s2 := mustSigner(t, "two", ec, "https://agent.example/.well-known/jwks.json")
	c1, err := SignCard(testCard(), s1)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := SignCard(c1, s2)
	if err != nil {
		t.Fatal(err)
	}
	if len(c1.Signatures) != 1 || len(c2.Signatures) != 2 || c2.Signatures[0].Signature != c1.Signatures[0].Signature {
		t.Fatalf("signatures: %d then %d", len(c1.Signatures), len(c2.Signatures))
	}
	h, err := jose.DecodeHeader(c2.Signatures[1].Protected)
	if err != nil || h.JWKSetURL != "https://agent.example/.well-known/jwks.json" {
		t.Errorf("header %+v, %v", h, err)
	}
	// Both signatures cover the same payload: each verifies alone.
	ctx := context.Background()
	for i, s := range []*CardSigner{s1, s2} {
		v := &CardVerifier{Keys: CardKeysOf(s), Algorithms: []string{CardHS256, CardES256}}
		got, err := v.Verify(ctx, mustJSON(t, c2))
		if err != nil || got.Index != i {
			t.Errorf("signer %d: %+v, %v", i, got, err)
		}
	}
}

// Key rotation: the first signature's key is not trusted, the second is.
func TestVerifyCardRotation(t *testing.T) {
	keys := testKeys(t)
	old := mustSigner(t, "old", keys[CardES256], "")
	cur := mustSigner(t, "new", keys[CardEdDSA], "")
	c, _ := SignCard(testCard(), old)
	c, _ = SignCard(c, cur)
	v := &CardVerifier{Keys: CardKeysOf(cur)}
	got, err := v.Verify(context.Background(), mustJSON(t, c))
	if err != nil || got.Index != 1 || got.KeyID != "new" || got.Alg != CardEdDSA {
		t.Errorf("Verify = %+v, %v", got, err)
	}
}

func TestVerifyCardRejects(t *testing.T) {
	ctx := context.Background()
	keys := testKeys(t)
	es := mustSigner(t, "es", keys[CardES256], "")
	hs := mustSigner(t, "hs", testSecret, "")
	esCard, _ := SignCard(testCard(), es)
	hsCard, _ := SignCard(testCard(), hs)
	trustES := &CardVerifier{Keys: CardKeysOf(es)}

	// withHeader re-signs esCard's payload under another header with sign.
	withHeader := func(h jose.Header, sign func([]byte) []byte) []byte {
		payload, _, err := cardPayload(mustJSON(t, esCard))
		if err != nil {
			t.Fatal(err)
		}
		p, err := jose.EncodeHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		c := *esCard
		c.Signatures = []a2a.AgentCardSignature{{Protected: p, Signature: base64.RawURLEncoding.EncodeToString(sign(signingInput(p, payload)))}}
		return mustJSON(t, &c)
	}
	ecPub := keys[CardES256].(*ecdsa.PrivateKey).Public().(*ecdsa.PublicKey)
	pubBytes, _ := ecPub.Bytes()
	confusion := withHeader(jose.Header{Alg: "HS256", KeyID: "es"}, func(in []byte) []byte {
		s, err := jose.NewSigner("es", append(pubBytes, pubBytes...)) // the public key as an HMAC secret
		if err != nil {
			t.Fatal(err)
		}
		sig, _ := s.Sign(in)
		return sig
	})
	none := withHeader(jose.Header{Alg: "none", KeyID: "es"}, func([]byte) []byte { return []byte{0} })
	crit := withHeader(jose.Header{Alg: "ES256", KeyID: "es"}, func(in []byte) []byte { return nil })
	{ // crit cannot be set through EncodeHeader: build the header by hand.
		var c a2a.AgentCard
		_ = json.Unmarshal(crit, &c)
		c.Signatures[0].Protected = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"ES256","kid":"es","crit":["b64"],"b64":false}`))
		c.Signatures[0].Signature = esCard.Signatures[0].Signature
		crit = mustJSON(t, &c)
	}
	noKid := withHeader(jose.Header{Alg: "ES256"}, func(in []byte) []byte {
		sig, _ := es.s.Sign(in)
		return sig
	})
	padded := *esCard
	padded.Signatures = []a2a.AgentCardSignature{{Protected: esCard.Signatures[0].Protected, Signature: esCard.Signatures[0].Signature + "="}}
	truncated := *esCard
	truncated.Signatures = []a2a.AgentCardSignature{{Protected: esCard.Signatures[0].Protected, Signature: esCard.Signatures[0].Signature[:40]}}

	cases := []struct {
		name string
		v    *CardVerifier
		card []byte
		want error
		msg  string
	}{
		{"unsigned", trustES, mustJSON(t, testCard()), ErrCardUnsigned, "not signed"},
		{"unknown kid", &CardVerifier{Keys: CardKeysOf(mustSigner(t, "other", keys[CardES256], ""))}, mustJSON(t, esCard), ErrCardKeyUnknown, `kid "es"`},
		{"empty trust store", &CardVerifier{}, mustJSON(t, esCard), ErrCardKeyUnknown, "trust store"},
		{"HS256 not allowed by default", &CardVerifier{Keys: CardKeysOf(hs)}, mustJSON(t, hsCard), ErrCardAlgorithm, `"HS256"`},
		{"alg not on the list", &CardVerifier{Keys: CardKeysOf(es), Algorithms: []string{CardRS256}}, mustJSON(t, esCard), ErrCardAlgorithm, "allowed: RS256"},
		{"HS256 with a public key (confusion)", &CardVerifier{Keys: CardKeysOf(es), Algorithms: []string{CardES256, CardHS256}}, confusion, ErrCardKeyUnknown, "HS256"},
		{"alg none", &CardVerifier{Keys: CardKeysOf(es), Algorithms: []string{CardES256}}, none, ErrCardAlgorithm, `"none"`},
		{"crit", trustES, crit, ErrCardMalformed, "crit"},
		{"no kid", trustES, noKid, ErrCardMalformed, "no kid"},
		{"padded signature", trustES, mustJSON(t, &padded), ErrCardMalformed, "base64url"},
		{"short ES256 signature", trustES, mustJSON(t, &truncated), ErrCardSignature, "signed with another key"},
		{"wrong key, same kid", &CardVerifier{Keys: CardKeysOf(mustSigner(t, "es", mustECKey(t), ""))}, mustJSON(t, esCard), ErrCardSignature, `kid "es"`},
		{"not JSON", trustES, []byte(`{"name":`), ErrCardMalformed, "not canonicalizable"},
		{"duplicate member", trustES, []byte(`{"name":"a","name":"b","signatures":[]}`), ErrCardMalformed, "duplicate"},
		{"signatures not an array", trustES, []byte(`{"name":"a","signatures":{}}`), ErrCardMalformed, "signatures"},
	}
	for _, c := range cases {
		_, err := c.v.Verify(ctx, c.card)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %q does not say %q", c.name, err, c.msg)
		}
		if strings.Contains(err.Error(), string(testSecret)) {
			t.Errorf("%s: the error shows the secret", c.name)
		}
	}
	if _, err := (&CardVerifier{Keys: CardKeysOf(es), Algorithms: []string{"PS256"}}).Verify(ctx, mustJSON(t, esCard)); err == nil || !strings.Contains(err.Error(), `"PS256" is not supported`) {
		t.Errorf("unsupported algorithm on the list: %v", err)
	}
}

func mustECKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestNewCardSignerErrors(t *testing.T) {
	ec := mustECKey(t)
	cases := []struct {
		name, kid string
		key       any
		jku, msg  string
	}{
		{"empty kid", "", ec, "", "empty key ID"},
		{"short secret", "k", []byte("short"), "", "at least 32 bytes"},
		{"HS256 with jku", "k", testSecret, "https://a.example/jwks.json", "cannot be published"},
		{"relative jku", "k", ec, "/jwks.json", "not an absolute http or https URL"},
		{"unsupported key", "k", "a string", "", "unsupported signing key type"},
	}
	for _, c := range cases {
		_, err := NewCardSigner(c.kid, c.key, c.jku)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.msg)
		}
	}
	hs := mustSigner(t, "k", testSecret, "")
	if _, err := hs.JWKS(); err == nil {
		t.Error("JWKS of an HS256 signer succeeded")
	}
}

// The JWKS a signer publishes is a trust store that verifies its cards.
func TestCardSignerJWKS(t *testing.T) {
	s := mustSigner(t, "pub", mustECKey(t), "")
	jwks, err := s.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(jwks, []byte(`"d"`)) {
		t.Fatalf("the JWKS holds a private key: %s", jwks)
	}
	keys, err := ParseCardKeys(jwks)
	if err != nil || keys.Len() != 1 {
		t.Fatalf("ParseCardKeys: %d keys, %v", keys.Len(), err)
	}
	c, _ := SignCard(testCard(), s)
	if _, err := (&CardVerifier{Keys: keys}).Verify(context.Background(), mustJSON(t, c)); err != nil {
		t.Error(err)
	}
	if _, err := ParseCardKeys([]byte(`{"keys":`)); err == nil {
		t.Error("ParseCardKeys accepted broken JSON")
	}
}

// A jku is fetched only when the verifier allows that URL.
func TestVerifyCardJKU(t *testing.T) {
	var hits atomic.Int32
	var jwks []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(jwks)
	}))
	defer srv.Close()
	jku := srv.URL + "/.well-known/jwks.json"
	s := mustSigner(t, "remote", mustECKey(t), jku)
	var err error
	if jwks, err = s.JWKS(); err != nil {
		t.Fatal(err)
	}
	c, _ := SignCard(testCard(), s)
	data := mustJSON(t, c)
	ctx := context.Background()

	_, err = (&CardVerifier{}).Verify(ctx, data)
	if !errors.Is(err, ErrCardKeyUnknown) || !strings.Contains(err.Error(), "not an allowed JWKS URL") {
		t.Errorf("jku not allowed: %v", err)
	}
	_, err = (&CardVerifier{JWKSURLs: []string{srv.URL + "/other.json"}}).Verify(ctx, data)
	if !errors.Is(err, ErrCardKeyUnknown) {
		t.Errorf("another jku allowed: %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the verifier fetched the jku %d times without being allowed to", n)
	}
	got, err := (&CardVerifier{JWKSURLs: []string{jku}}).Verify(ctx, data)
	if err != nil || got.JWKSURL != jku || got.KeyID != "remote" {
		t.Errorf("jku allowed: %+v, %v", got, err)
	}
	if hits.Load() != 1 {
		t.Errorf("%d fetches, want 1", hits.Load())
	}
	// An allowed jku that serves another key does not verify.
	other := mustSigner(t, "remote", mustECKey(t), "")
	jwks, _ = other.JWKS()
	if _, err := (&CardVerifier{JWKSURLs: []string{jku}}).Verify(ctx, data); !errors.Is(err, ErrCardSignature) {
		t.Errorf("jku with another key: %v", err)
	}
}

// A card as another implementation encodes it ({"list": []} where we
// write {}) verifies from its bytes, and only from them.
func TestVerifyCardRawBytes(t *testing.T) {
	s := mustSigner(t, "kit", mustECKey(t), "")
	kitJSON := []byte(`{"name":"x","version":"1","securityRequirements":[{"schemes":{"bearer":{"list":[]}}}],"skills":[]}`)
	signed := signRaw(t, kitJSON, s)
	v := &CardVerifier{Keys: CardKeysOf(s)}
	if _, err := v.Verify(context.Background(), signed); err != nil {
		t.Fatalf("Verify(raw): %v", err)
	}
	var card a2a.AgentCard
	if err := a2a.Unmarshal(signed, &card); err != nil {
		t.Fatal(err)
	}
	if _, err := v.VerifyCard(context.Background(), &card); !errors.Is(err, ErrCardSignature) {
		t.Errorf("VerifyCard(re-encoded) = %v; the re-encoding drops {\"list\":[]} and should not verify", err)
	}
}

// signRaw signs a card given as JSON (without signatures) and returns it
// with the signature member added.
func signRaw(t *testing.T, cardJSON []byte, s *CardSigner) []byte {
	t.Helper()
	payload, _, err := cardPayload(cardJSON)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := jose.EncodeHeader(jose.Header{Alg: s.Alg(), Type: "JOSE", KeyID: s.KeyID()})
	sig, err := s.s.Sign(signingInput(p, payload))
	if err != nil {
		t.Fatal(err)
	}
	entry := mustJSON(t, []a2a.AgentCardSignature{{Protected: p, Signature: base64.RawURLEncoding.EncodeToString(sig)}})
	return append(append(bytes.TrimSuffix(bytes.TrimSpace(cardJSON), []byte("}")), `,"signatures":`...), append(entry, '}')...)
}

// TestCaptureSignedCard reproduces capture 17 from the deployer card of
// capture 01 #3, as served: the canonical payload (17 #1), the protected
// header (17 #2) and the signing input (17 #3), byte for byte. The kit's
// HS256 secret is not recorded, so the recorded signature itself cannot be
// checked; the card is then signed with a known secret and verifies, and
// fails once its description names production (17 #5 and #6).
func TestCaptureSignedCard(t *testing.T) {
	exs, err := capture.Load("01-agent-cards.http")
	if err != nil {
		t.Fatal(err)
	}
	ex := exs[2]
	if !strings.Contains(ex.Title, "deployer") {
		t.Fatalf("exchange 3 of 01 is %q", ex.Title)
	}
	cardJSON := []byte(ex.RBody)
	if i := bytes.Index(cardJSON, []byte("\n\n#")); i >= 0 {
		cardJSON = cardJSON[:i]
	}
	dir, err := capture.Dir()
	if err != nil {
		t.Fatal(err)
	}
	txt, err := os.ReadFile(filepath.Join(dir, "17-signed-card.txt"))
	if err != nil {
		t.Fatal(err)
	}
	section := func(n string) string { // the first line after "# n."
		_, rest, ok := strings.Cut(string(txt), "# "+n+".")
		if !ok {
			t.Fatalf("17 has no section %s", n)
		}
		_, rest, _ = strings.Cut(rest, "\n")
		line, _, _ := strings.Cut(rest, "\n")
		return line
	}

	payload, sigs, err := cardPayload(cardJSON)
	if err != nil {
		t.Fatal(err)
	}
	if want := section("1"); string(payload) != want {
		t.Errorf("canonical payload differs from 17 #1:\n got %s\nwant %s", payload, want)
	}
	if len(sigs) != 1 {
		t.Fatalf("%d signatures in 01 #3", len(sigs))
	}
	h, err := jose.DecodeHeader(sigs[0].Protected)
	if err != nil {
		t.Fatal(err)
	}
	var want2 map[string]any
	if err := json.Unmarshal([]byte(section("2")), &want2); err != nil {
		t.Fatal(err)
	}
	if h.Alg != want2["alg"] || h.Type != want2["typ"] || h.KeyID != want2["kid"] || len(h.Raw) != len(want2) {
		t.Errorf("protected header %v, 17 #2 %v", h.Raw, want2)
	}
	// Our encoder writes the same protected header as the kit.
	if p, _ := jose.EncodeHeader(jose.Header{Alg: h.Alg, Type: h.Type, KeyID: h.KeyID}); p != sigs[0].Protected {
		t.Errorf("EncodeHeader = %s, recorded %s", p, sigs[0].Protected)
	}
	if got, want := string(signingInput(sigs[0].Protected, payload)), section("3"); got != want {
		t.Errorf("signing input differs from 17 #3:\n got %s\nwant %s", got, want)
	}
	// The signature entry of 17 #4 is the card's.
	var entry a2a.AgentCardSignature
	_, four, _ := strings.Cut(string(txt), "# 4.")
	_, four, _ = strings.Cut(four, "\n")
	four, _, _ = strings.Cut(four, "\n\n")
	if err := json.Unmarshal([]byte(four), &entry); err != nil || entry.Protected != sigs[0].Protected || entry.Signature != sigs[0].Signature {
		t.Errorf("17 #4 %+v (%v) is not the card's %+v", entry, err, sigs[0])
	}

	// A changed description gives another payload.
	changed := bytes.Replace(cardJSON, []byte("to staging after"), []byte("to production after"), 1)
	p2, _, err := cardPayload(changed)
	if err != nil || bytes.Equal(p2, payload) {
		t.Errorf("the changed card has the same payload (%v)", err)
	}

	// Signed again with a known secret under the recorded kid (17 #5, #6).
	s := mustSigner(t, "deployer-key-1", testSecret, "")
	unsigned := stripSignatures(t, cardJSON)
	resigned := signRaw(t, unsigned, s)
	v := &CardVerifier{Keys: CardKeysOf(s), Algorithms: []string{CardHS256}}
	if _, err := v.Verify(context.Background(), resigned); err != nil {
		t.Errorf("17 #5: the re-signed card does not verify: %v", err)
	}
	tampered := bytes.Replace(resigned, []byte("to staging after"), []byte("to production after"), 1)
	if _, err := v.Verify(context.Background(), tampered); !errors.Is(err, ErrCardSignature) {
		t.Errorf("17 #6: the changed card: %v, want ErrCardSignature", err)
	}
	// The recorded signature was made with another secret.
	if _, err := v.Verify(context.Background(), cardJSON); !errors.Is(err, ErrCardSignature) {
		t.Errorf("recorded card under the test secret: %v, want ErrCardSignature", err)
	}
}

// stripSignatures removes the signatures member of a card's JSON text,
// keeping the rest of the text as it is.
func stripSignatures(t *testing.T, cardJSON []byte) []byte {
	t.Helper()
	i := bytes.Index(cardJSON, []byte(`,
  "signatures"`))
	if i < 0 {
		t.Fatal("no signatures member")
	}
	return append(bytes.Clone(cardJSON[:i]), []byte("\n}")...)
}

// hostileSigs returns n signature entries naming kid, ES256 and jku, whose
// signature values are random bytes: none verifies.
func hostileSigs(t *testing.T, n int, kid, jku string) []a2a.AgentCardSignature {
	t.Helper()
	p, err := jose.EncodeHeader(jose.Header{Alg: CardES256, Type: "JOSE", KeyID: kid, JWKSetURL: jku})
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 64)
	_, _ = rand.Read(raw)
	sigs := make([]a2a.AgentCardSignature, n)
	for i := range sigs {
		sigs[i] = a2a.AgentCardSignature{Protected: p, Signature: base64.RawURLEncoding.EncodeToString(raw)}
	}
	return sigs
}

// A card with many signatures naming an allowed jku costs one fetch of it
// per Verify call, not one per signature; beyond maxCardSignatures the card
// is refused before anything is fetched; and the error stays short even
// when the signatures' headers are long.
func TestVerifyCardHostileSignatures(t *testing.T) {
	var hits atomic.Int32
	var jwks []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(jwks)
	}))
	defer srv.Close()
	jku := srv.URL + "/.well-known/jwks.json"
	s := mustSigner(t, "remote", mustECKey(t), jku)
	var err error
	if jwks, err = s.JWKS(); err != nil {
		t.Fatal(err)
	}
	v := &CardVerifier{JWKSURLs: []string{jku}}
	ctx := context.Background()

	// At the limit: every signature is tried, the jku fetched once.
	card := testCard()
	card.Signatures = hostileSigs(t, maxCardSignatures, "remote", jku)
	_, err = v.Verify(ctx, mustJSON(t, card))
	if !errors.Is(err, ErrCardSignature) {
		t.Fatalf("%d bad signatures: %v, want ErrCardSignature", maxCardSignatures, err)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("%d signatures naming one jku: %d fetches, want 1", maxCardSignatures, n)
	}
	// A genuine signature after the bad ones still verifies, and the jku
	// is still fetched once per call.
	hits.Store(0)
	signed, err := SignCard(testCard(), s)
	if err != nil {
		t.Fatal(err)
	}
	signed.Signatures = append(hostileSigs(t, 5, "remote", jku), signed.Signatures...)
	if got, err := v.Verify(ctx, mustJSON(t, signed)); err != nil || got.Index != 5 || got.JWKSURL != jku {
		t.Errorf("a genuine sixth signature: %+v, %v", got, err)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("6 signatures naming one jku: %d fetches, want 1", n)
	}

	// Beyond the limit: refused, nothing fetched.
	hits.Store(0)
	card.Signatures = hostileSigs(t, 2000, "remote", jku)
	_, err = v.Verify(ctx, mustJSON(t, card))
	if !errors.Is(err, ErrCardMalformed) || !strings.Contains(err.Error(), "16") {
		t.Errorf("2000 signatures: %v, want ErrCardMalformed naming the limit", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("2000 signatures: %d fetches, want none", n)
	}

	// Long kids: the error is capped, and still says what it is.
	card.Signatures = hostileSigs(t, maxCardSignatures, strings.Repeat("k", 7000), "")
	_, err = v.Verify(ctx, mustJSON(t, card))
	if !errors.Is(err, ErrCardKeyUnknown) {
		t.Errorf("long kids: %v, want ErrCardKeyUnknown", err)
	}
	if err != nil && len(err.Error()) > maxCardErrorText {
		t.Errorf("long kids: the error is %d bytes, want at most %d", len(err.Error()), maxCardErrorText)
	}
}

// A JWKS server that never answers does not hold Verify beyond the
// default client's timeout when HTTPClient is nil.
func TestVerifyCardJWKSTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer srv.Close()
	defer close(release)
	old := cardJWKSTimeout
	cardJWKSTimeout = 200 * time.Millisecond
	defer func() { cardJWKSTimeout = old }()

	jku := srv.URL + "/jwks.json"
	card := testCard()
	card.Signatures = hostileSigs(t, 1, "remote", jku)
	start := time.Now()
	_, err := (&CardVerifier{JWKSURLs: []string{jku}}).Verify(context.Background(), mustJSON(t, card))
	if !errors.Is(err, ErrCardKeyUnknown) {
		t.Errorf("a hanging JWKS server: %v, want ErrCardKeyUnknown", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Verify took %v with a hanging JWKS server, want the client's timeout", d)
	}
}
