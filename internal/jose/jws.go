// Package jose holds the parts of JOSE (RFC 7515 JSON Web Signature,
// RFC 7517 JSON Web Key) that the server needs to verify bearer JWTs and to
// sign agent cards: compact JWS, protected headers, JWK sets, and the
// RFC 8785 canonical JSON form signed agent cards use.
//
// Signatures are made, parsed and checked by go-jose
// (github.com/go-jose/go-jose/v4), and JWKs decoded and encoded by it; this
// package is the policy on top, deliberately strict and small: three
// asymmetric algorithms (ES256, RS256, EdDSA) and HS256 for explicitly
// configured shared secrets; RSA keys of at least [MinRSABits] bits, HS256
// secrets of at least [MinSecretBytes] bytes, ES256 on P-256 with low-S
// signatures only; base64url without padding, canonical only; JSON objects
// without duplicate members or trailing bytes; every verification takes an
// explicit allow-list of algorithms, and "none" is never on it.
package jose

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"

	gojose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"
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
	kid    string
	alg    string
	priv   crypto.Signer       // nil for HS256
	opaque gojose.OpaqueSigner // go-jose's signer over priv
	sec    []byte              // HS256 only
}

// NewSigner returns a signer for key with key ID kid (may be empty): an
// *ecdsa.PrivateKey on P-256 signs ES256, an *rsa.PrivateKey of at least
// [MinRSABits] bits RS256, an ed25519.PrivateKey EdDSA and a []byte of at
// least [MinSecretBytes] bytes HS256. The secret is copied.
func NewSigner(kid string, key any) (*Signer, error) {
	var priv crypto.Signer
	var alg string
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if k == nil || k.Curve != elliptic.P256() {
			return nil, errors.New("jose: an ECDSA key must be on curve P-256 (ES256)")
		}
		priv, alg = k, ES256
	case *rsa.PrivateKey:
		if k == nil || k.N.BitLen() < MinRSABits {
			return nil, fmt.Errorf("jose: an RSA key must have at least %d bits", MinRSABits)
		}
		priv, alg = k, RS256
	case ed25519.PrivateKey:
		if len(k) != ed25519.PrivateKeySize {
			return nil, errors.New("jose: an Ed25519 private key must be 64 bytes")
		}
		priv, alg = k, EdDSA
	case []byte:
		if len(k) < MinSecretBytes {
			return nil, fmt.Errorf("jose: an HS256 secret must be at least %d bytes", MinSecretBytes)
		}
		return &Signer{kid: kid, alg: HS256, sec: bytes.Clone(k)}, nil
	default:
		return nil, fmt.Errorf("jose: unsupported signing key type %T (want *ecdsa.PrivateKey, *rsa.PrivateKey, ed25519.PrivateKey or []byte)", key)
	}
	return &Signer{kid: kid, alg: alg, priv: priv, opaque: cryptosigner.Opaque(priv)}, nil
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

// Sign signs signingInput, with go-jose's signer for the asymmetric
// algorithms. An ES256 signature is the JWS form, R||S in 64 bytes
// (RFC 7518 §3.4), not ASN.1, and has the low S of the two that verify
// (the only one [Verify] accepts).
func (s *Signer) Sign(signingInput []byte) ([]byte, error) {
	if s.alg == HS256 {
		// go-jose signs HMAC only over a JWS it serializes itself.
		m := hmac.New(sha256.New, s.sec)
		m.Write(signingInput)
		return m.Sum(nil), nil
	}
	sig, err := s.opaque.SignPayload(signingInput, gojose.SignatureAlgorithm(s.alg))
	if err != nil {
		return nil, fmt.Errorf("jose: signing %s: %v", s.alg, err)
	}
	if s.alg == ES256 {
		if len(sig) != 64 {
			return nil, fmt.Errorf("jose: signing ES256: a signature of %d bytes, not 64", len(sig))
		}
		if ss := new(big.Int).SetBytes(sig[32:]); ss.Cmp(p256HalfOrder) > 0 {
			// (R, N-S) verifies as (R, S) does: keep the low one.
			ss.Sub(p256Order, ss).FillBytes(sig[32:])
		}
	}
	return sig, nil
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
// understood (RFC 7515 §4.1.11); so is "b64" (RFC 7797).
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
	if _, ok := raw["b64"]; ok {
		// go-jose honours "b64": false even outside "crit" (RFC 7797), and
		// would then verify over the payload's bytes rather than their
		// base64url form.
		return Header{}, errors.New(`jose: header: "b64" (unencoded payloads, RFC 7797) is not supported`)
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
// as sent) and the decoded signature. It applies this package's strictness
// (canonical base64url, a header as [DecodeHeader] wants it) but not the
// algorithm allow-list, so that a caller can say which algorithm it
// refused. Verify the signature with [Verify], where go-jose parses the
// token again with the allow-list, before trusting anything else.
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
