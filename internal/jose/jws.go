// Package jose holds the parts of JOSE (RFC 7515 JSON Web Signature,
// RFC 7517 JSON Web Key) that the server needs to verify bearer JWTs and to
// sign agent cards: compact JWS, protected headers, JWK sets, and the
// RFC 8785 canonical JSON form signed agent cards use.
//
// It is deliberately strict and small: three asymmetric algorithms (ES256,
// RS256, EdDSA) and HS256 for explicitly configured shared secrets;
// base64url without padding, canonical only; every verification takes an
// explicit allow-list of algorithms, and "none" is never on it.
package jose

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// Algorithms (RFC 7518 §3.1, RFC 8037 §3.1).
const (
	ES256 = "ES256" // ECDSA P-256 with SHA-256
	RS256 = "RS256" // RSASSA-PKCS1-v1_5 with SHA-256
	EdDSA = "EdDSA" // Ed25519
	HS256 = "HS256" // HMAC with SHA-256, for shared secrets only
)

// MinRSABits is the smallest RSA modulus accepted, for signing and
// verifying (RFC 7518 §3.3).
const MinRSABits = 2048

// MinSecretBytes is the shortest HS256 secret accepted (RFC 7518 §3.2: a
// key of the same size as the hash output or larger).
const MinSecretBytes = 32

// ErrSignature is the error of a signature that does not verify; check it
// with [errors.Is]. Other errors of [Verify] mean the algorithm or the key
// is not acceptable.
var ErrSignature = errors.New("jose: the signature does not verify")

var b64 = base64.RawURLEncoding.Strict()

// encode is base64url without padding (RFC 7515 §2).
func encode(b []byte) string { return b64.EncodeToString(b) }

// decode decodes base64url without padding, refusing padding, characters
// outside the alphabet and non-canonical trailing bits.
func decode(s string) ([]byte, error) {
	if strings.ContainsAny(s, "=\r\n") {
		return nil, errors.New("not base64url without padding")
	}
	b, err := b64.DecodeString(s)
	if err != nil {
		return nil, errors.New("not base64url without padding")
	}
	return b, nil
}

// Signer signs with one private key.
type Signer struct {
	kid  string
	alg  string
	priv crypto.Signer // nil for HS256
	sec  []byte        // HS256 only
}

// NewSigner returns a signer for key with key ID kid (may be empty): an
// *ecdsa.PrivateKey on P-256 signs ES256, an *rsa.PrivateKey of at least
// [MinRSABits] bits RS256, an ed25519.PrivateKey EdDSA and a []byte of at
// least [MinSecretBytes] bytes HS256. The secret is copied.
func NewSigner(kid string, key any) (*Signer, error) {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if k == nil || k.Curve != elliptic.P256() {
			return nil, errors.New("jose: an ECDSA key must be on curve P-256 (ES256)")
		}
		return &Signer{kid: kid, alg: ES256, priv: k}, nil
	case *rsa.PrivateKey:
		if k == nil || k.N.BitLen() < MinRSABits {
			return nil, fmt.Errorf("jose: an RSA key must have at least %d bits", MinRSABits)
		}
		return &Signer{kid: kid, alg: RS256, priv: k}, nil
	case ed25519.PrivateKey:
		if len(k) != ed25519.PrivateKeySize {
			return nil, errors.New("jose: an Ed25519 private key must be 64 bytes")
		}
		return &Signer{kid: kid, alg: EdDSA, priv: k}, nil
	case []byte:
		if len(k) < MinSecretBytes {
			return nil, fmt.Errorf("jose: an HS256 secret must be at least %d bytes", MinSecretBytes)
		}
		return &Signer{kid: kid, alg: HS256, sec: bytes.Clone(k)}, nil
	default:
		return nil, fmt.Errorf("jose: unsupported signing key type %T (want *ecdsa.PrivateKey, *rsa.PrivateKey, ed25519.PrivateKey or []byte)", key)
	}
}

// Alg is the algorithm the signer signs with.
func (s *Signer) Alg() string { return s.alg }

// KeyID is the key ID given to [NewSigner].
func (s *Signer) KeyID() string { return s.kid }

// Key is the key that verifies the signer's signatures: the public key, or
// a copy of the secret for HS256.
func (s *Signer) Key() Key {
	if s.alg == HS256 {
		return Key{KeyID: s.kid, Alg: HS256, Secret: bytes.Clone(s.sec)}
	}
	return Key{KeyID: s.kid, Alg: s.alg, Public: s.priv.Public()}
}

// Sign signs signingInput. An ES256 signature is the JWS form, R||S in 64
// bytes (RFC 7518 §3.4), not ASN.1.
func (s *Signer) Sign(signingInput []byte) ([]byte, error) {
	switch s.alg {
	case HS256:
		m := hmac.New(sha256.New, s.sec)
		m.Write(signingInput)
		return m.Sum(nil), nil
	case EdDSA:
		return ed25519.Sign(s.priv.(ed25519.PrivateKey), signingInput), nil
	case RS256:
		d := sha256.Sum256(signingInput)
		return rsa.SignPKCS1v15(rand.Reader, s.priv.(*rsa.PrivateKey), crypto.SHA256, d[:])
	case ES256:
		d := sha256.Sum256(signingInput)
		r, ss, err := ecdsa.Sign(rand.Reader, s.priv.(*ecdsa.PrivateKey), d[:])
		if err != nil {
			return nil, err
		}
		if ss.Cmp(p256HalfOrder) > 0 {
			// The low S of the pair that verifies (N-S does too), which is
			// the only one Verify accepts.
			ss.Sub(p256Order, ss)
		}
		sig := make([]byte, 64)
		r.FillBytes(sig[:32])
		ss.FillBytes(sig[32:])
		return sig, nil
	}
	return nil, fmt.Errorf("jose: unsupported algorithm %q", s.alg)
}

// Verify checks sig over signingInput with key for alg. alg must be on the
// allow-list allowed ("none" never counts, even when listed) and must fit
// the key: ES256 a P-256 ECDSA key, RS256 an RSA key of at least
// [MinRSABits] bits, EdDSA an Ed25519 key, HS256 a secret. A key whose own
// Alg is set must name alg. Checking the fit is what stops algorithm
// confusion (an HS256 token "signed" with a public key's bytes). A
// signature that does not verify gives an error that wraps [ErrSignature].
func Verify(allowed []string, alg string, key Key, signingInput, sig []byte) error {
	if alg == "" || strings.EqualFold(alg, "none") {
		return errors.New(`jose: algorithm "none" is not accepted`)
	}
	if !slices.Contains(allowed, alg) {
		return fmt.Errorf("jose: algorithm %q is not allowed", alg)
	}
	if key.Alg != "" && key.Alg != alg {
		return fmt.Errorf("jose: the key is for %s, not %s", key.Alg, alg)
	}
	switch alg {
	case HS256:
		if key.Public != nil || len(key.Secret) < MinSecretBytes {
			return errors.New("jose: HS256 needs a shared secret key of at least 32 bytes")
		}
		m := hmac.New(sha256.New, key.Secret)
		m.Write(signingInput)
		if !hmac.Equal(m.Sum(nil), sig) {
			return ErrSignature
		}
		return nil
	case ES256:
		pub, ok := key.Public.(*ecdsa.PublicKey)
		if !ok || pub == nil || pub.Curve != elliptic.P256() || key.Secret != nil {
			return errors.New("jose: ES256 needs a P-256 ECDSA public key")
		}
		if len(sig) != 64 {
			return fmt.Errorf("%w: an ES256 signature must be 64 bytes, not %d", ErrSignature, len(sig))
		}
		d := sha256.Sum256(signingInput)
		r := new(big.Int).SetBytes(sig[:32])
		s := new(big.Int).SetBytes(sig[32:])
		if s.Cmp(p256HalfOrder) > 0 {
			// (R, N-S) verifies whenever (R, S) does: accepting both would
			// make every signature malleable. Only the low S is accepted.
			return fmt.Errorf("%w: a high-S ES256 signature (only the low S of the pair is accepted)", ErrSignature)
		}
		if !ecdsa.Verify(pub, d[:], r, s) {
			return ErrSignature
		}
		return nil
	case RS256:
		pub, ok := key.Public.(*rsa.PublicKey)
		if !ok || pub == nil || key.Secret != nil {
			return errors.New("jose: RS256 needs an RSA public key")
		}
		if pub.N.BitLen() < MinRSABits {
			return fmt.Errorf("jose: the RSA key has fewer than %d bits", MinRSABits)
		}
		d := sha256.Sum256(signingInput)
		if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, d[:], sig); err != nil {
			return ErrSignature
		}
		return nil
	case EdDSA:
		pub, ok := key.Public.(ed25519.PublicKey)
		if !ok || len(pub) != ed25519.PublicKeySize || key.Secret != nil {
			return errors.New("jose: EdDSA needs an Ed25519 public key")
		}
		if !ed25519.Verify(pub, signingInput, sig) {
			return ErrSignature
		}
		return nil
	}
	return fmt.Errorf("jose: unsupported algorithm %q", alg)
}

// Header is a JWS protected header (RFC 7515 §4).
type Header struct {
	Alg       string         // "alg"
	KeyID     string         // "kid"
	Type      string         // "typ"
	JWKSetURL string         // "jku"
	Raw       map[string]any // every member as decoded; nil from a Header built by hand
}

// EncodeHeader encodes h as base64url(JSON) with alg, then typ, kid and jku
// when set, in that member order. Raw is ignored.
func EncodeHeader(h Header) (string, error) {
	if h.Alg == "" {
		return "", errors.New("jose: the header has no alg")
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	member := func(name, value string) error {
		v, err := marshalString(value)
		if err != nil {
			return err
		}
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		buf.WriteString(`"` + name + `":`)
		buf.Write(v)
		return nil
	}
	for _, m := range [...][2]string{{"alg", h.Alg}, {"typ", h.Type}, {"kid", h.KeyID}, {"jku", h.JWKSetURL}} {
		if m[0] != "alg" && m[1] == "" {
			continue
		}
		if err := member(m[0], m[1]); err != nil {
			return "", err
		}
	}
	buf.WriteByte('}')
	return encode(buf.Bytes()), nil
}

func marshalString(s string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// maxHeaderBytes bounds a decoded protected header.
const maxHeaderBytes = 8 << 10

// DecodeHeader decodes a base64url protected header. It must be a JSON
// object with no duplicate members, a string alg, and kid, typ and jku,
// when present, strings. A "crit" member is refused: no extension is
// understood (RFC 7515 §4.1.11).
func DecodeHeader(b64 string) (Header, error) {
	if len(b64) > maxHeaderBytes*4/3+4 {
		return Header{}, errors.New("jose: the header is too long")
	}
	data, err := decode(b64)
	if err != nil {
		return Header{}, fmt.Errorf("jose: header: %v", err)
	}
	raw, err := decodeObject(data)
	if err != nil {
		return Header{}, fmt.Errorf("jose: header: %v", err)
	}
	var h Header
	h.Raw = raw
	str := func(name string, dst *string) error {
		v, ok := raw[name]
		if !ok {
			return nil
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("jose: header: %q is not a string", name)
		}
		*dst = s
		return nil
	}
	for name, dst := range map[string]*string{"alg": &h.Alg, "kid": &h.KeyID, "typ": &h.Type, "jku": &h.JWKSetURL} {
		if err := str(name, dst); err != nil {
			return Header{}, err
		}
	}
	if h.Alg == "" {
		return Header{}, errors.New("jose: header: no alg")
	}
	if _, ok := raw["crit"]; ok {
		return Header{}, errors.New(`jose: header: "crit" names extensions that are not supported`)
	}
	return h, nil
}

// decodeObject decodes a JSON object, refusing duplicate member names
// (RFC 7515 §5.2) and trailing data. Numbers are json.Number.
func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	out := map[string]any{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, errors.New("not valid JSON")
		}
		name, _ := tok.(string)
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("duplicate member %q", name)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, errors.New("not valid JSON")
		}
		out[name] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, errors.New("not valid JSON")
	}
	// Anything but white space after the object, valid JSON or not.
	if len(bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")) > 0 {
		return nil, errors.New("trailing data after the JSON object")
	}
	return out, nil
}

// The order of P-256 and half of it: an ES256 signature's S is at most
// the half (low S).
var (
	p256Order     = elliptic.P256().Params().N
	p256HalfOrder = new(big.Int).Rsh(p256Order, 1)
)

// DecodeObject decodes a JSON object as [DecodeHeader] does a header:
// duplicate member names and trailing data are errors, and numbers are
// json.Number. JWT claim sets are decoded with it.
func DecodeObject(data []byte) (map[string]any, error) { return decodeObject(data) }

// SignCompact signs payload as a compact JWS (RFC 7515 §7.1) whose header
// has s's alg and kid (when set), and typ when not empty.
func SignCompact(s *Signer, typ string, payload []byte) (string, error) {
	h, err := EncodeHeader(Header{Alg: s.alg, KeyID: s.kid, Type: typ})
	if err != nil {
		return "", err
	}
	input := h + "." + encode(payload)
	sig, err := s.Sign([]byte(input))
	if err != nil {
		return "", err
	}
	return input + "." + encode(sig), nil
}

// MaxCompactBytes bounds the length of a compact JWS [ParseCompact]
// accepts.
const MaxCompactBytes = 64 << 10

// ParseCompact splits a compact JWS without verifying it: its decoded
// header, its decoded payload, the signing input (the first two segments
// as sent) and the decoded signature. Verify the signature with [Verify]
// before trusting anything else.
func ParseCompact(token string) (h Header, payload, signingInput, sig []byte, err error) {
	if len(token) > MaxCompactBytes {
		return Header{}, nil, nil, nil, errors.New("jose: the JWS is too long")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Header{}, nil, nil, nil, errors.New("jose: a compact JWS has three dot-separated parts")
	}
	if h, err = DecodeHeader(parts[0]); err != nil {
		return Header{}, nil, nil, nil, err
	}
	if payload, err = decode(parts[1]); err != nil {
		return Header{}, nil, nil, nil, fmt.Errorf("jose: payload: %v", err)
	}
	if sig, err = decode(parts[2]); err != nil {
		return Header{}, nil, nil, nil, fmt.Errorf("jose: signature: %v", err)
	}
	if len(sig) == 0 {
		return Header{}, nil, nil, nil, errors.New("jose: the signature is empty")
	}
	return h, payload, []byte(parts[0] + "." + parts[1]), sig, nil
}
