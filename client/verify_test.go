package client_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/client"
)

// rawCards serves the card JSON last set, byte for byte.
type rawCards struct {
	mu   sync.Mutex
	body []byte
}

func (s *rawCards) set(b []byte) { s.mu.Lock(); s.body = b; s.mu.Unlock() }

func (s *rawCards) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	b := s.body
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func signer(t *testing.T, kid string) *auth.CardSigner {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := auth.NewCardSigner(kid, k, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCardSignatures(t *testing.T) {
	t.Parallel()
	cards := &rawCards{}
	srv := httptest.NewServer(cards)
	t.Cleanup(srv.Close)
	s := signer(t, "card-key")
	signed, err := auth.SignCard(testCard(srv.URL), s)
	if err != nil {
		t.Fatal(err)
	}
	signedJSON, _ := json.Marshal(signed)
	verify := client.WithCardSignatures(&auth.CardVerifier{Keys: auth.CardKeysOf(s)})

	cards.set(signedJSON)
	c, err := client.New(t.Context(), srv.URL, verify)
	if err != nil {
		t.Fatalf("signed card: %v", err)
	}

	unsigned, _ := json.Marshal(testCard(srv.URL))
	tampered := bytes.Replace(signedJSON, []byte("An agent for the client's tests."), []byte("An agent for production."), 1)
	cases := []struct {
		name string
		body []byte
		opt  client.Option
		want error
	}{
		{"unsigned", unsigned, verify, auth.ErrCardUnsigned},
		{"tampered", tampered, verify, auth.ErrCardSignature},
		{"unknown kid", signedJSON, client.WithCardSignatures(&auth.CardVerifier{Keys: auth.CardKeysOf(signer(t, "other"))}), auth.ErrCardKeyUnknown},
		{"alg not allowed", signedJSON, client.WithCardSignatures(&auth.CardVerifier{Keys: auth.CardKeysOf(s), Algorithms: []string{auth.CardRS256}}), auth.ErrCardAlgorithm},
	}
	for _, tc := range cases {
		cards.set(tc.body)
		_, err := client.New(t.Context(), srv.URL, tc.opt)
		if !errors.Is(err, client.ErrCardNotVerified) || !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want ErrCardNotVerified and %v", tc.name, err, tc.want)
		} else if !strings.Contains(err.Error(), srv.URL) {
			t.Errorf("%s: error %q does not name the card URL", tc.name, err)
		}
	}
	// Without the option nothing is checked.
	cards.set(tampered)
	if _, err := client.New(t.Context(), srv.URL); err != nil {
		t.Errorf("tampered card without WithCardSignatures: %v", err)
	}

	// RefreshCard rejects a changed card that does not verify and keeps
	// the previous one.
	first := c.Card()
	if _, err := c.RefreshCard(t.Context()); !errors.Is(err, auth.ErrCardSignature) || !errors.Is(err, client.ErrCardNotVerified) {
		t.Errorf("RefreshCard with a tampered card: %v", err)
	}
	if c.Card() != first {
		t.Error("RefreshCard replaced the card with one that does not verify")
	}

	// NewFromCard verifies the struct.
	if _, err := client.NewFromCard(t.Context(), signed, verify); err != nil {
		t.Errorf("NewFromCard(signed): %v", err)
	}
	changed := *signed
	changed.Version = "9"
	if _, err := client.NewFromCard(t.Context(), &changed, verify); !errors.Is(err, auth.ErrCardSignature) {
		t.Errorf("NewFromCard(changed): %v", err)
	}
	if _, err := client.New(t.Context(), srv.URL, client.WithCardSignatures(nil)); !errors.Is(err, client.ErrInvalidOption) {
		t.Errorf("nil verifier: %v", err)
	}
}

// The bytes received are what is verified, not a re-encoding: a signature
// over our {} does not cover the kit's {"list":[]}, although both decode
// to the same struct (auth's tests show the converse: a card signed over
// {"list":[]} verifies from its bytes). The WithCardVerifier hook runs
// after the signature check.
func TestCardSignaturesRawBytes(t *testing.T) {
	t.Parallel()
	cards := &rawCards{}
	srv := httptest.NewServer(cards)
	t.Cleanup(srv.Close)
	s := signer(t, "kit")
	card := testCard(srv.URL)
	card.SecurityRequirements = []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{"bearer": {}}}}
	card.SecuritySchemes = map[string]a2a.SecurityScheme{"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}}}
	signed, err := auth.SignCard(card, s)
	if err != nil {
		t.Fatal(err)
	}
	ours, _ := json.Marshal(signed)
	if !bytes.Contains(ours, []byte(`"bearer":{}`)) {
		t.Fatalf("our encoding of an empty scope list changed: %s", ours)
	}
	// The same card in the kit's encoding, {"list":[]}.
	kitUnsigned, _ := json.Marshal(card)
	kitUnsigned = bytes.Replace(kitUnsigned, []byte(`"bearer":{}`), []byte(`"bearer":{"list":[]}`), 1)
	var m map[string]any
	if err := json.Unmarshal(kitUnsigned, &m); err != nil {
		t.Fatal(err)
	}
	verifier := &auth.CardVerifier{Keys: auth.CardKeysOf(s)}
	var hookCalls int
	opts := []client.Option{client.WithCardSignatures(verifier), client.WithCardVerifier(func(context.Context, *a2a.AgentCard) error {
		hookCalls++
		return nil
	})}
	cards.set(ours)
	if _, err := client.New(t.Context(), srv.URL, opts...); err != nil {
		t.Fatalf("our encoding: %v", err)
	}
	if hookCalls != 1 {
		t.Errorf("WithCardVerifier ran %d times, want 1", hookCalls)
	}
	// Our signature over {} does not cover {"list":[]}: the bytes received
	// are what is verified, not a re-encoding.
	m["signatures"] = signed.Signatures
	kitSigned, _ := json.Marshal(m)
	cards.set(kitSigned)
	if _, err := client.New(t.Context(), srv.URL, opts...); !errors.Is(err, auth.ErrCardSignature) {
		t.Errorf("card re-encoded with {\"list\":[]}: %v, want ErrCardSignature", err)
	}
	if hookCalls != 1 {
		t.Errorf("WithCardVerifier ran on a card whose signature failed")
	}
}
