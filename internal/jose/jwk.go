package jose

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"

	gojose "github.com/go-jose/go-jose/v4"
)

// Key is a verification key: Public is an *ecdsa.PublicKey on P-256, an
// *rsa.PublicKey of at least [MinRSABits] bits or an ed25519.PublicKey;
// for HS256, Secret is the shared secret and Public is nil.
type Key struct {
	KeyID  string
	Alg    string // the key's "alg" in a JWKS, "" when not given
	Public crypto.PublicKey
	Secret []byte
}

// algs are the algorithms a key can verify: its own Alg when set, else
// those its type fits.
func (k Key) algs() []string {
	if k.Alg != "" {
		return []string{k.Alg}
	}
	switch k.Public.(type) {
	case *ecdsa.PublicKey:
		return []string{ES256}
	case *rsa.PublicKey:
		return []string{RS256}
	case ed25519.PublicKey:
		return []string{EdDSA}
	}
	if k.Public == nil && len(k.Secret) > 0 {
		return []string{HS256}
	}
	return nil
}

// KeySet is a set of verification keys, as a JWKS (RFC 7517 §5) holds them.
type KeySet struct {
	Keys []Key
	// Skipped says, for each key of a usable type that ParseJWKS left out
	// because its parameters are bad, which key and why, such as
	// `key 2 (kid "old"): an RSA key of 1024 bits; at least 2048 are needed`.
	Skipped []string
}

// Find returns the keys usable for alg with key ID kid; with an empty kid,
// every key usable for alg.
func (ks *KeySet) Find(kid, alg string) []Key {
	if ks == nil {
		return nil
	}
	var out []Key
	for _, k := range ks.Keys {
		if kid != "" && k.KeyID != kid {
			continue
		}
		for _, a := range k.algs() {
			if a == alg {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// ParseJWKS parses a JWK set; go-jose decodes each key, and this package's
// policy decides which to keep. Keys this package cannot use are skipped:
// another kty (oct keys among them: a shared secret has no place in a
// published set), another crv (only P-256 and Ed25519), a use other than
// "sig", an alg other than ES256, RS256 or EdDSA. A usable key type with
// bad parameters (a point off the curve, an RSA key under [MinRSABits]
// bits or over go-jose's 4096, an alg that does not fit the type, members
// that are not canonical base64url or appear twice) is skipped too, and
// named with the reason in KeySet.Skipped: one legacy or broken key must
// not take down the keys beside it. A private key ("d") is an error: a
// JWKS served by an issuer must hold public keys only, and one that does
// has leaked its secrets. A set with no usable key is not an error; Find
// finds nothing in it.
func ParseJWKS(data []byte) (*KeySet, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("jose: JWKS: not a JSON object with a \"keys\" array: %v", err)
	}
	if set.Keys == nil {
		return nil, errors.New(`jose: JWKS: no "keys" array`)
	}
	ks := &KeySet{}
	for i, raw := range set.Keys {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil || members == nil {
			return nil, fmt.Errorf("jose: JWKS: key %d is not a JSON object", i)
		}
		var p jwkParams
		for name, dst := range map[string]*string{"kty": &p.kty, "use": &p.use, "alg": &p.alg, "kid": &p.kid, "crv": &p.crv} {
			if v, ok := members[name]; ok {
				if err := json.Unmarshal(v, dst); err != nil {
					return nil, fmt.Errorf("jose: JWKS: key %d: %q is not a string", i, name)
				}
			}
		}
		name := fmt.Sprintf("key %d", i)
		if p.kid != "" {
			name = fmt.Sprintf("key %d (kid %q)", i, p.kid)
		}
		if p.use != "" && p.use != "sig" {
			continue
		}
		if p.alg != "" && p.alg != ES256 && p.alg != RS256 && p.alg != EdDSA {
			continue
		}
		if _, ok := members["d"]; ok {
			return nil, fmt.Errorf("jose: JWKS: %s: the key is private (has \"d\"); publish public keys only", name)
		}
		k, ok, err := p.key(raw)
		if err != nil {
			ks.Skipped = append(ks.Skipped, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		if ok {
			ks.Keys = append(ks.Keys, k)
		}
	}
	return ks, nil
}

// jwkParams are the members of a JWK that decide whether this package uses
// it (RFC 7517 §4).
type jwkParams struct{ kty, use, alg, kid, crv string }

// key has go-jose decode raw, the JWK of p, and checks the key against this
// package's policy; ok is false for a key type or curve this package does
// not use.
func (p jwkParams) key(raw []byte) (k Key, ok bool, err error) {
	var alg string
	var coords []string // the members holding the key, base64url
	switch {
	case p.kty == "EC" && p.crv == "P-256":
		alg, coords = ES256, []string{"x", "y"}
	case p.kty == "RSA":
		alg, coords = RS256, []string{"n", "e"}
	case p.kty == "OKP" && p.crv == "Ed25519":
		alg, coords = EdDSA, []string{"x"}
	default:
		return Key{}, false, nil
	}
	if p.alg != "" && p.alg != alg {
		return Key{}, false, fmt.Errorf("alg %s does not fit a %s key", p.alg, p.kty)
	}
	// go-jose refuses duplicate members too; decodeObject says which, and
	// checks that the members are canonical base64url, which go-jose does
	// not.
	members, err := decodeObject(raw)
	if err != nil {
		return Key{}, false, err
	}
	for _, c := range coords {
		if s, ok := members[c].(string); ok {
			if _, err := decode(s); err != nil {
				return Key{}, false, fmt.Errorf("%q: %v", c, err)
			}
		}
	}
	var jk gojose.JSONWebKey
	if err := jk.UnmarshalJSON(raw); err != nil {
		if p.kty == "RSA" && errors.Is(err, gojose.ErrUnsupportedKeyType) {
			return Key{}, false, fmt.Errorf("the RSA modulus has more than the %d bits go-jose accepts", gojose.MaxRSAModulusBits)
		}
		return Key{}, false, errors.New(goJoseText(err))
	}
	k = Key{KeyID: jk.KeyID, Alg: jk.Algorithm, Public: jk.Key}
	switch pub := jk.Key.(type) {
	case *ecdsa.PublicKey:
		if alg == ES256 && pub.Curve == elliptic.P256() {
			return k, true, nil
		}
	case *rsa.PublicKey:
		if alg != RS256 {
			break
		}
		if pub.N.BitLen() < MinRSABits {
			return Key{}, false, fmt.Errorf("the RSA modulus has %d bits; at least %d are needed", pub.N.BitLen(), MinRSABits)
		}
		if pub.E < 3 || pub.E%2 == 0 {
			return Key{}, false, errors.New(`"e" is not an odd exponent of at least 3`)
		}
		return k, true, nil
	case ed25519.PublicKey:
		if alg == EdDSA {
			return k, true, nil
		}
	}
	return Key{}, false, fmt.Errorf("go-jose decoded a %T, not a public key for %s", jk.Key, alg)
}

// MarshalJWKS encodes keys as a JWK set of their public parts, with go-jose,
// with "use": "sig", and "alg" and "kid" when set. An HS256 key is refused:
// a shared secret must not be published; so are keys [Verify] would not
// take (an RSA key under [MinRSABits] bits, an ECDSA key off P-256).
func MarshalJWKS(keys ...Key) ([]byte, error) {
	set := gojose.JSONWebKeySet{Keys: make([]gojose.JSONWebKey, 0, len(keys))}
	for i, k := range keys {
		if k.Public == nil || k.Secret != nil {
			return nil, fmt.Errorf("jose: key %d: only public keys can be published (an HS256 secret is refused)", i)
		}
		switch pub := k.Public.(type) {
		case *ecdsa.PublicKey:
			if pub.Curve != elliptic.P256() {
				return nil, fmt.Errorf("jose: key %d: an ECDSA key must be on curve P-256", i)
			}
		case *rsa.PublicKey:
			if pub.N == nil || pub.N.BitLen() < MinRSABits {
				return nil, fmt.Errorf("jose: key %d: an RSA key must have at least %d bits", i, MinRSABits)
			}
		case ed25519.PublicKey:
			if len(pub) != ed25519.PublicKeySize {
				return nil, fmt.Errorf("jose: key %d: an Ed25519 key must be 32 bytes", i)
			}
		default:
			return nil, fmt.Errorf("jose: key %d: unsupported key type %T", i, k.Public)
		}
		set.Keys = append(set.Keys, gojose.JSONWebKey{Key: k.Public, KeyID: k.KeyID, Algorithm: k.Alg, Use: "sig"})
	}
	data, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("jose: JWKS: %v", err)
	}
	return data, nil
}

// Thumbprint is the RFC 7638 JWK thumbprint of pub, a public key of a type
// [MarshalJWKS] takes: the base64url SHA-256 of its required members, as
// go-jose computes it.
func Thumbprint(pub crypto.PublicKey) (string, error) {
	jk := gojose.JSONWebKey{Key: pub}
	sum, err := jk.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("jose: thumbprint: %s", goJoseText(err))
	}
	return encode(sum), nil
}
