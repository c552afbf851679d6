package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/jose"
)

// Agent card signing (A2A §8.4). The payload of a signature is the card's
// JSON as it is served or received, without its "signatures" member, in
// RFC 8785 (JCS) canonical form. The fields present in that JSON are kept
// as they are and none is added or dropped: the encoding of the signer
// already leaves out what it does not set, and a verifier that rebuilt the
// card from its own model could add or drop fields and fail to verify a
// genuine card (A2A issues #2122 and #2249). The signature is detached
// (JWS, RFC 7515): the card carries the protected header and the
// signature, never the payload.

// Signature algorithms of agent cards.
const (
	CardES256 = jose.ES256 // ECDSA P-256 with SHA-256
	CardRS256 = jose.RS256 // RSASSA-PKCS1-v1_5 with SHA-256
	CardEdDSA = jose.EdDSA // Ed25519
	CardHS256 = jose.HS256 // HMAC with SHA-256: a shared secret, for demos and tests
)

// DefaultCardAlgorithms returns the algorithms a [CardVerifier] accepts
// when its Algorithms is nil. HS256 is not among them: a verifier that
// holds an HMAC secret could also sign, so it must be asked for by name.
// Each call returns a new slice: no caller can change what others accept.
func DefaultCardAlgorithms() []string { return []string{CardES256, CardRS256, CardEdDSA} }

// Errors of card verification, to check with [errors.Is]. The error
// [CardVerifier.Verify] returns says which signature failed and why.
var (
	// ErrCardUnsigned: the card has no signatures.
	ErrCardUnsigned = errors.New("auth: the agent card is not signed")
	// ErrCardAlgorithm: a signature's alg is not on the allow-list.
	ErrCardAlgorithm = errors.New("auth: the card signature's algorithm is not allowed")
	// ErrCardKeyUnknown: no trusted key has the signature's kid and alg.
	ErrCardKeyUnknown = errors.New("auth: no trusted key for the card signature")
	// ErrCardSignature: a trusted key was found but the signature does not
	// verify: the card was changed, or signed by another key.
	ErrCardSignature = errors.New("auth: the card signature does not verify")
	// ErrCardMalformed: the card or a signature entry is not well formed.
	ErrCardMalformed = errors.New("auth: malformed card signature")
)

// CardSigner signs agent cards with one private key (A2A §8.4.2). Make one
// with [NewCardSigner]; it is safe for concurrent use.
type CardSigner struct {
	s   *jose.Signer
	jku string
}

// NewCardSigner returns a signer whose signatures name key ID kid (required,
// it is how verifiers find the key). key is an *ecdsa.PrivateKey on P-256
// (ES256), an *rsa.PrivateKey of at least 2048 bits (RS256), an
// ed25519.PrivateKey (EdDSA), or a []byte of at least 32 bytes, a shared
// secret (HS256), which only suits demos and tests. jwksURL, when not
// empty, is put in each signature's protected header as "jku": the absolute
// http(s) URL where the public key is published as a JWK set (see
// [CardSigner.JWKS]); a shared secret cannot be published, so HS256 takes
// none.
func NewCardSigner(kid string, key any, jwksURL string) (*CardSigner, error) {
	if kid == "" {
		return nil, errors.New("auth: card signer: empty key ID")
	}
	s, err := jose.NewSigner(kid, key)
	if err != nil {
		return nil, fmt.Errorf("auth: card signer: %w", err)
	}
	if jwksURL != "" {
		if s.Alg() == jose.HS256 {
			return nil, errors.New("auth: card signer: an HS256 secret cannot be published, so it takes no JWKS URL")
		}
		u, err := url.Parse(jwksURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("auth: card signer: JWKS URL %q is not an absolute http or https URL", jwksURL)
		}
	}
	return &CardSigner{s: s, jku: jwksURL}, nil
}

// Alg is the algorithm the signer signs with, such as "ES256".
func (s *CardSigner) Alg() string { return s.s.Alg() }

// KeyID is the key ID the signer's signatures name.
func (s *CardSigner) KeyID() string { return s.s.KeyID() }

// JWKSURL is the jku the signer's signatures name, or "".
func (s *CardSigner) JWKSURL() string { return s.jku }

// JWKS returns the signer's public key as a JWK set (RFC 7517), to serve at
// its JWKS URL. An HS256 signer has no public key and gets an error.
func (s *CardSigner) JWKS() ([]byte, error) {
	if s.s.Alg() == jose.HS256 {
		return nil, errors.New("auth: card signer: an HS256 secret has no public JWK set")
	}
	k := s.s.Key()
	k.Alg = s.s.Alg()
	return jose.MarshalJWKS(k)
}

// SignCard returns a copy of card with one more signature by s, appended to
// those it has. The payload is the card as [encoding/json] encodes it
// (which is how server.CardHandler serves it), without signatures, in
// RFC 8785 form; so serve the returned card as it is, and sign again
// after any change.
func SignCard(card *a2a.AgentCard, s *CardSigner) (*a2a.AgentCard, error) {
	if card == nil || s == nil {
		return nil, errors.New("auth: SignCard: nil card or signer")
	}
	unsigned := *card
	unsigned.Signatures = nil
	data, err := json.Marshal(&unsigned)
	if err != nil {
		return nil, fmt.Errorf("auth: SignCard: encoding the card: %w", err)
	}
	payload, err := jose.Canonicalize(data)
	if err != nil {
		return nil, fmt.Errorf("auth: SignCard: %w", err)
	}
	protected, err := jose.EncodeHeader(jose.Header{Alg: s.s.Alg(), Type: "JOSE", KeyID: s.s.KeyID(), JWKSetURL: s.jku})
	if err != nil {
		return nil, fmt.Errorf("auth: SignCard: %w", err)
	}
	sig, err := s.s.Sign(signingInput(protected, payload))
	if err != nil {
		return nil, fmt.Errorf("auth: SignCard: signing: %w", err)
	}
	out := *card
	out.Signatures = append(slices.Clone(card.Signatures), a2a.AgentCardSignature{
		Protected: protected,
		Signature: base64.RawURLEncoding.EncodeToString(sig),
	})
	return &out, nil
}

// signingInput is the JWS signing input of a detached payload (RFC 7515
// §5.1): BASE64URL(protected header) '.' BASE64URL(payload).
func signingInput(protected string, payload []byte) []byte {
	return []byte(protected + "." + base64.RawURLEncoding.EncodeToString(payload))
}

// cardPayload splits a card's JSON into the payload its signatures cover
// (A2A §8.4.1: canonical, without "signatures") and its signature entries.
func cardPayload(cardJSON []byte) (payload []byte, sigs []a2a.AgentCardSignature, err error) {
	canon, err := jose.Canonicalize(cardJSON)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: the card is not canonicalizable JSON: %v", ErrCardMalformed, err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(canon, &members); err != nil || members == nil {
		return nil, nil, fmt.Errorf("%w: the card is not a JSON object", ErrCardMalformed)
	}
	if raw, ok := members["signatures"]; ok {
		if err := json.Unmarshal(raw, &sigs); err != nil {
			return nil, nil, fmt.Errorf("%w: signatures is not an array of {protected, signature} objects: %v", ErrCardMalformed, err)
		}
		delete(members, "signatures")
	}
	rest, err := json.Marshal(members)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrCardMalformed, err)
	}
	// Marshal sorts the names by bytes and escapes HTML; JCS wants UTF-16
	// order and no such escapes.
	payload, err = jose.Canonicalize(rest)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrCardMalformed, err)
	}
	return payload, sigs, nil
}

// CardKeys is a trust store: the keys a [CardVerifier] accepts card
// signatures from. The caller decides what goes in it: a key that has
// expired or been revoked must be left out (A2A §8.4.3), since nothing in a
// card or a JWK set says so.
type CardKeys struct {
	ks jose.KeySet
}

// ParseCardKeys reads a JWK set (RFC 7517), such as a signer's
// [CardSigner.JWKS]. Keys of other types or uses are skipped; a usable key
// with bad parameters, or one with private parts, is an error that names
// it.
func ParseCardKeys(jwks []byte) (*CardKeys, error) {
	ks, err := jose.ParseJWKS(jwks)
	if err != nil {
		return nil, fmt.Errorf("auth: card keys: %w", err)
	}
	return &CardKeys{ks: *ks}, nil
}

// CardKeysOf returns the verification keys of signers: their public keys,
// or for HS256 a copy of the secret.
func CardKeysOf(signers ...*CardSigner) *CardKeys {
	ck := &CardKeys{}
	for _, s := range signers {
		if s != nil {
			k := s.s.Key()
			k.Alg = s.s.Alg()
			ck.ks.Keys = append(ck.ks.Keys, k)
		}
	}
	return ck
}

// Len is the number of keys in the store.
func (k *CardKeys) Len() int {
	if k == nil {
		return 0
	}
	return len(k.ks.Keys)
}

// CardVerifier verifies the signatures of agent cards (A2A §8.4.3) against
// a trust store. A card passes when at least one of its signatures verifies
// with a trusted key by an allowed algorithm; others, such as those of a
// key being rotated out, may fail. The zero value trusts no key.
type CardVerifier struct {
	// Keys is the trust store. A signature's key is looked up there by its
	// kid and alg.
	Keys *CardKeys

	// Algorithms is the allow-list of signature algorithms; nil means
	// [DefaultCardAlgorithms]. "none" is never accepted, and an algorithm
	// must fit the key's type (so an HS256 signature is never checked with
	// a public key's bytes as the secret).
	Algorithms []string

	// JWKSURLs lists the "jku" URLs the verifier may fetch a JWK set from
	// when Keys has no key for a signature. A URL must match exactly, and
	// the keys fetched from it are trusted for that signature only. Nil,
	// the default, fetches nothing: a jku named by the card itself proves
	// nothing, since whoever forged the card could name their own.
	JWKSURLs []string

	// HTTPClient fetches JWKSURLs; nil means a client with a 10 second
	// timeout. Each jku is fetched at most once per [CardVerifier.Verify]
	// call, and its JWK set may be at most 64 KiB.
	HTTPClient *http.Client
}

// maxCardSignatures bounds the signatures a card may carry for
// [CardVerifier.Verify] to try them. A card with more is refused as
// malformed before any is checked or any jku fetched, rather than having
// the extra ones ignored: a signer needs one signature per key it
// publishes, a few during a key rotation, and a card with more than this
// is far more likely to be an attempt to make the verifier work than a
// genuine card whose valid signature happens to come late.
const maxCardSignatures = 16

// maxCardErrorText bounds the text of the error [CardVerifier.Verify]
// returns: the signatures' kid, alg and jku come from the card, and may be
// long.
const maxCardErrorText = 4096

// cardJWKSTimeout bounds a jku fetch when CardVerifier.HTTPClient is nil.
var cardJWKSTimeout = 10 * time.Second

// VerifiedCardSignature tells which signature of a card verified.
type VerifiedCardSignature struct {
	Index   int    // in the card's signatures
	KeyID   string // the kid of its protected header
	Alg     string // its alg
	JWKSURL string // the jku the key was fetched from; "" for Keys
}

// Verify verifies a card from the JSON it was received as, byte for byte,
// which is the reliable way: re-encoding a card can change what was signed.
// A signature's kid, alg and jku are read from its protected header only;
// the unprotected "header" member is not covered by the signature and is
// ignored. It returns the first signature that verifies; otherwise an
// error that wraps [ErrCardUnsigned], [ErrCardAlgorithm],
// [ErrCardKeyUnknown], [ErrCardSignature] or [ErrCardMalformed], one per
// signature tried, and says why each failed (its text cut to 4 KiB). A card
// with more than 16 signatures is refused with [ErrCardMalformed] without
// trying any. An allowed jku named by several signatures is fetched once.
func (v *CardVerifier) Verify(ctx context.Context, cardJSON []byte) (VerifiedCardSignature, error) {
	algs := v.Algorithms
	if algs == nil {
		algs = DefaultCardAlgorithms()
	}
	for _, a := range algs {
		if a != jose.ES256 && a != jose.RS256 && a != jose.EdDSA && a != jose.HS256 {
			return VerifiedCardSignature{}, fmt.Errorf("auth: card verifier: algorithm %q is not supported (use ES256, RS256, EdDSA or HS256)", a)
		}
	}
	payload, sigs, err := cardPayload(cardJSON)
	if err != nil {
		return VerifiedCardSignature{}, err
	}
	if len(sigs) == 0 {
		return VerifiedCardSignature{}, ErrCardUnsigned
	}
	if len(sigs) > maxCardSignatures {
		return VerifiedCardSignature{}, fmt.Errorf("%w: the card has %d signatures, more than the %d a verifier tries", ErrCardMalformed, len(sigs), maxCardSignatures)
	}
	fetched := make(map[string]jwksResult) // by jku, for this call
	var errs []error
	for i, sig := range sigs {
		res, err := v.verifyOne(ctx, algs, payload, sig, fetched)
		if err == nil {
			res.Index = i
			return res, nil
		}
		if len(sigs) > 1 {
			err = fmt.Errorf("signature %d: %w", i, err)
		}
		errs = append(errs, err)
	}
	return VerifiedCardSignature{}, capErrors(errs)
}

// cappedError is errors.Join whose text is cut to maxCardErrorText bytes.
type cappedError struct {
	text string
	errs []error
}

func (e *cappedError) Error() string   { return e.text }
func (e *cappedError) Unwrap() []error { return e.errs }

// capErrors joins errs as errors.Join does, cutting the text to
// maxCardErrorText bytes (at a UTF-8 boundary).
func capErrors(errs []error) error {
	joined := errors.Join(errs...)
	text := joined.Error()
	if len(text) <= maxCardErrorText {
		return joined
	}
	const more = " […]"
	cut := maxCardErrorText - len(more)
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return &cappedError{text: text[:cut] + more, errs: errs}
}

// jwksResult is the outcome of fetching one jku.
type jwksResult struct {
	keys *jose.KeySet
	err  error
}

// VerifyCard verifies card as [encoding/json] encodes it. This is for
// callers that hold only the struct: a card received from an
// implementation that encodes it differently (such as {"list": []} where
// ours writes {}) does not verify this way. Use [CardVerifier.Verify] with
// the received bytes when you have them.
func (v *CardVerifier) VerifyCard(ctx context.Context, card *a2a.AgentCard) (VerifiedCardSignature, error) {
	if card == nil {
		return VerifiedCardSignature{}, fmt.Errorf("%w: nil card", ErrCardMalformed)
	}
	data, err := json.Marshal(card)
	if err != nil {
		return VerifiedCardSignature{}, fmt.Errorf("%w: encoding the card: %v", ErrCardMalformed, err)
	}
	return v.Verify(ctx, data)
}

// VerifyCardJSON is [CardVerifier.Verify] without the result, the form
// client.WithCardSignatures takes.
func (v *CardVerifier) VerifyCardJSON(ctx context.Context, cardJSON []byte) error {
	_, err := v.Verify(ctx, cardJSON)
	return err
}

// verifyOne checks one signature. fetched holds the jku fetches of this
// Verify call, so that each allowed jku is fetched once whatever the number
// of signatures naming it.
func (v *CardVerifier) verifyOne(ctx context.Context, algs []string, payload []byte, sig a2a.AgentCardSignature, fetched map[string]jwksResult) (VerifiedCardSignature, error) {
	h, err := jose.DecodeHeader(sig.Protected)
	if err != nil {
		return VerifiedCardSignature{}, fmt.Errorf("%w: protected header: %v", ErrCardMalformed, err)
	}
	if _, ok := h.Raw["crit"]; ok {
		return VerifiedCardSignature{}, fmt.Errorf("%w: the protected header has critical extensions (crit), which this verifier does not support", ErrCardMalformed)
	}
	res := VerifiedCardSignature{KeyID: h.KeyID, Alg: h.Alg}
	if h.Alg == "" || strings.EqualFold(h.Alg, "none") || !slices.Contains(algs, h.Alg) {
		return res, fmt.Errorf("%w: %q (allowed: %s)", ErrCardAlgorithm, h.Alg, strings.Join(algs, ", "))
	}
	if h.KeyID == "" {
		return res, fmt.Errorf("%w: the protected header has no kid", ErrCardMalformed)
	}
	raw, err := decodeB64URL(sig.Signature)
	if err != nil {
		return res, fmt.Errorf("%w: signature: %v", ErrCardMalformed, err)
	}
	keys := v.Keys.find(h.KeyID, h.Alg)
	if len(keys) == 0 && h.JWKSetURL != "" && slices.Contains(v.JWKSURLs, h.JWKSetURL) {
		r, ok := fetched[h.JWKSetURL]
		if !ok {
			r.keys, r.err = v.fetchJWKS(ctx, h.JWKSetURL)
			fetched[h.JWKSetURL] = r
		}
		if r.err != nil {
			return res, fmt.Errorf("%w: kid %q: %v", ErrCardKeyUnknown, h.KeyID, r.err)
		}
		keys, res.JWKSURL = r.keys.Find(h.KeyID, h.Alg), h.JWKSetURL
	}
	if len(keys) == 0 {
		where := "in the trust store"
		switch {
		case res.JWKSURL != "":
			where = "in the trust store or at " + res.JWKSURL
		case h.JWKSetURL != "":
			where += " (the card's jku " + h.JWKSetURL + " is not an allowed JWKS URL)"
		}
		return res, fmt.Errorf("%w: no %s key with kid %q %s", ErrCardKeyUnknown, h.Alg, h.KeyID, where)
	}
	for _, k := range keys {
		// A detached JWS, parsed and verified by go-jose.
		if err := jose.VerifyDetached(algs, h.Alg, k, sig.Protected, payload, raw); err == nil {
			return res, nil
		}
	}
	return res, fmt.Errorf("%w: %s, kid %q: the card was changed after signing, or signed with another key", ErrCardSignature, h.Alg, h.KeyID)
}

func (k *CardKeys) find(kid, alg string) []jose.Key {
	if k == nil {
		return nil
	}
	return k.ks.Find(kid, alg)
}

// maxCardJWKSBytes bounds a fetched JWK set.
const maxCardJWKSBytes = 64 << 10

// fetchJWKS gets the JWK set at u, an allowed jku.
func (v *CardVerifier) fetchJWKS(ctx context.Context, u string) (*jose.KeySet, error) {
	hc := v.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: cardJWKSTimeout}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("fetching JWKS %s: %v", u, err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching JWKS: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching JWKS %s: HTTP %d", u, resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxCardJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("fetching JWKS %s: %v", u, err)
	}
	if len(data) > maxCardJWKSBytes {
		return nil, fmt.Errorf("JWKS %s is larger than %d bytes", u, maxCardJWKSBytes)
	}
	return jose.ParseJWKS(data)
}

// decodeB64URL decodes base64url without padding, strictly (RFC 7515 §2).
func decodeB64URL(s string) ([]byte, error) {
	if s == "" || strings.ContainsAny(s, "=\r\n") {
		return nil, errors.New("not base64url without padding")
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, errors.New("not base64url without padding")
	}
	return b, nil
}

// CardJWKSPath is where a server conventionally publishes the public keys
// of its card signatures, named by their jku; like the card, it needs no
// credentials.
const CardJWKSPath = "/.well-known/jwks.json"

// JWKSHandler serves jwks, a JWK set such as [CardSigner.JWKS] returns,
// to GET and HEAD with Content-Type application/jwk-set+json and five
// minutes of public caching.
func JWKSHandler(jwks []byte) http.Handler { return jose.JWKSHandler(jwks) }
