package push

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/goa2a/a2a/internal/jose"
)

// SignatureHeader is the header that carries the signed JWT of a push
// notification, a compact JWS with no scheme before it:
//
//	A2A-Push-Signature: eyJhbGciOiJFUzI1NiIs...
//
// It is not Authorization: the config's authentication, when set, MUST be
// sent there as "<scheme> <credentials>" (A2A §4.3.3, §13.2), and a
// webhook may sit behind a gateway that checks exactly that. A header of
// its own lets the signature travel beside the credentials and the
// A2A-Notification-Token, and a receiver that knows nothing of it simply
// ignores it.
const SignatureHeader = "A2A-Push-Signature"

// TokenHeader is the header that carries a config's token
// (TaskPushNotificationConfig.token). A2A v1.0 does not say how the token
// travels (REQUIREMENTS B4, R196); this is the header the Go SDK sends.
const TokenHeader = "A2A-Notification-Token"

// JWKSPath is where a server that signs its push notifications publishes
// the public key as a JWK set, relative to its base URL; like the agent
// card it needs no credentials. It is a path of its own, not the card's
// /.well-known/jwks.json, so that the keys trusted for notifications and
// those trusted for cards can be rotated and trusted apart.
const JWKSPath = "/.well-known/a2a-push-jwks.json"

// DefaultLifetime is how long a signature is valid after it is made,
// when [WithLifetime] does not say: long enough for clock skew and a slow
// network, short enough that a captured notification cannot be replayed
// for long (the receiver also drops repeats, see [Receiver]).
const DefaultLifetime = 5 * time.Minute

// MaxLifetime is the longest validity a [Signer] signs for and a
// [Receiver] accepts (exp minus iat).
const MaxLifetime = time.Hour

// Claim names of a push notification JWT, beside the registered iss, iat,
// exp and jti (RFC 7519 §4.1).
const (
	// ClaimTaskID is the task the notification is about; it must be the
	// task of the body's event.
	ClaimTaskID = "taskId"
	// ClaimBodySHA256 is the base64url (no padding) SHA-256 of the exact
	// body bytes: the signature covers the body through it.
	ClaimBodySHA256 = "bodySha256"
	// ClaimEventID, when present, names the event in the sender's log; a
	// [Receiver] de-duplicates by it rather than by the body's hash.
	ClaimEventID = "eventId"
)

// Signer signs push notifications with an ES256 (ECDSA P-256) key: each
// notification gets a short-lived JWT over its task ID and body hash, sent
// in [SignatureHeader], and the public key is served as a JWK set by
// [Signer.JWKSHandler] at [JWKSPath]. A receiver verifies it with the JWK
// set alone: no secret is shared. Make one with [NewSigner] or
// [GenerateSigner]; it is safe for concurrent use.
type Signer struct {
	s        *jose.Signer
	issuer   string
	lifetime time.Duration
	jwks     []byte
}

// SignerOption configures a [Signer].
type SignerOption func(*Signer) error

// WithIssuer puts iss, the signing server's base URL (an absolute http or
// https URL), in every JWT as "iss"; a receiver can require it with
// [WithExpectedIssuer]. Without it the JWT has no "iss".
func WithIssuer(iss string) SignerOption {
	return func(s *Signer) error {
		u, err := url.Parse(iss)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return fmt.Errorf("push: signer: issuer %q is not an absolute http or https URL without credentials", iss)
		}
		s.issuer = iss
		return nil
	}
}

// WithLifetime sets how long after "iat" a signature expires: more than
// zero and at most [MaxLifetime]; [DefaultLifetime] when not given.
func WithLifetime(d time.Duration) SignerOption {
	return func(s *Signer) error {
		if d <= 0 || d > MaxLifetime {
			return fmt.Errorf("push: signer: lifetime %v is not between 0 and %v", d, MaxLifetime)
		}
		s.lifetime = d
		return nil
	}
}

// NewSigner returns a signer for key, an ECDSA key on curve P-256, whose
// JWTs name key ID kid. An empty kid is replaced by the key's RFC 7638
// thumbprint, so that receivers can always pick the key by ID, also after
// a rotation that publishes two keys.
func NewSigner(kid string, key *ecdsa.PrivateKey, opts ...SignerOption) (*Signer, error) {
	if key == nil {
		return nil, errors.New("push: signer: no key")
	}
	if key.Curve != elliptic.P256() {
		return nil, errors.New("push: signer: the key must be an ECDSA key on curve P-256 (ES256)")
	}
	if kid == "" {
		var err error
		if kid, err = jose.Thumbprint(&key.PublicKey); err != nil {
			return nil, fmt.Errorf("push: signer: %w", err)
		}
	}
	js, err := jose.NewSigner(kid, key)
	if err != nil {
		return nil, fmt.Errorf("push: signer: %w", err)
	}
	s := &Signer{s: js, lifetime: DefaultLifetime}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	k := js.Key()
	k.Alg = jose.ES256
	if s.jwks, err = jose.MarshalJWKS(k); err != nil {
		return nil, fmt.Errorf("push: signer: %w", err)
	}
	return s, nil
}

// GenerateSigner returns a signer for a fresh P-256 key, for a server
// whose receivers fetch the JWK set again when they meet an unknown key
// ID (a [Receiver] with [WithJWKSURL] does). The key lives in memory only:
// a restarted server signs with a new one.
func GenerateSigner(kid string, opts ...SignerOption) (*Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("push: signer: generating a key: %w", err)
	}
	return NewSigner(kid, key, opts...)
}

// KeyID is the key ID the signer's JWTs name in "kid".
func (s *Signer) KeyID() string { return s.s.KeyID() }

// JWKS returns the signer's public key as a JWK set (RFC 7517 §5) with
// "alg": "ES256" and "use": "sig".
func (s *Signer) JWKS() []byte { return append([]byte(nil), s.jwks...) }

// Sign returns the JWT for a notification about task taskID whose body is
// body, issued at now: header {"alg":"ES256","typ":"JWT","kid":...},
// claims "iss" (with [WithIssuer]), "iat", "exp" (iat plus the lifetime),
// "jti" (random, unique per call), [ClaimTaskID] and [ClaimBodySHA256].
// Send it in [SignatureHeader] with exactly body: a receiver refuses a
// body whose hash differs by a single bit.
func (s *Signer) Sign(taskID string, body []byte, now time.Time) (string, error) {
	return s.SignEvent(taskID, "", body, now)
}

// SignEvent is [Signer.Sign] with [ClaimEventID] set to eventID (when not
// empty): the identity of the event in the sender's log, the same on every
// retry of it, so that a receiver drops repeats by it even when two
// distinct events have the same bytes (two identical artifact chunks).
func (s *Signer) SignEvent(taskID, eventID string, body []byte, now time.Time) (string, error) {
	if taskID == "" {
		return "", errors.New("push: sign: empty task ID")
	}
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", fmt.Errorf("push: sign: %w", err)
	}
	sum := sha256.Sum256(body)
	claims := struct {
		Iss     string `json:"iss,omitempty"`
		Iat     int64  `json:"iat"`
		Exp     int64  `json:"exp"`
		Jti     string `json:"jti"`
		TaskID  string `json:"taskId"`
		EventID string `json:"eventId,omitempty"`
		Body    string `json:"bodySha256"`
	}{
		Iss:     s.issuer,
		Iat:     now.Unix(),
		Exp:     now.Add(s.lifetime).Unix(),
		Jti:     b64.EncodeToString(jti),
		TaskID:  taskID,
		EventID: eventID,
		Body:    b64.EncodeToString(sum[:]),
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("push: sign: %w", err)
	}
	tok, err := jose.SignCompact(s.s, "JWT", payload)
	if err != nil {
		return "", fmt.Errorf("push: sign: %w", err)
	}
	return tok, nil
}

// SignRequest signs req, a notification about taskID whose body is body,
// and sets [SignatureHeader] on it.
func (s *Signer) SignRequest(req *http.Request, taskID string, body []byte, now time.Time) error {
	tok, err := s.Sign(taskID, body, now)
	if err != nil {
		return err
	}
	req.Header.Set(SignatureHeader, tok)
	return nil
}

// JWKSHandler serves the signer's JWK set to GET and HEAD, with
// Content-Type application/jwk-set+json and five minutes of public
// caching: mount it at [JWKSPath], outside any authentication (receivers
// fetch it without credentials, and it holds nothing secret).
func (s *Signer) JWKSHandler() http.Handler { return jose.JWKSHandler(s.JWKS()) }

var b64 = base64.RawURLEncoding
