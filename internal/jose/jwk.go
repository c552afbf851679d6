package jose

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
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

// jwk is the JSON form of one key (RFC 7517 §4, RFC 7518 §6, RFC 8037 §2).
type jwk struct {
	Kty string `json:"kty"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
	Kid string `json:"kid,omitempty"`
	Crv string `json:"crv,omitempty"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
	K   string `json:"k,omitempty"`
	D   string `json:"d,omitempty"`
}

// ParseJWKS parses a JWK set. Keys this package cannot use are skipped:
// another kty (oct keys among them: a shared secret has no place in a
// published set), another crv, a use other than "sig", an alg other than
// ES256, RS256 or EdDSA. A usable key type with bad parameters (a point
// off the curve, an RSA key under [MinRSABits] bits, bad base64url, an alg
// that does not fit the type) is skipped too, and named with the reason in
// KeySet.Skipped: one legacy or broken key must not take down the keys
// beside it. A private key ("d") is an error: a JWKS served by an issuer
// must hold public keys only, and one that does has leaked its secrets. A
// set with no usable key is not an error; Find finds nothing in it.
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
		var j jwk
		if err := json.Unmarshal(raw, &j); err != nil {
			return nil, fmt.Errorf("jose: JWKS: key %d: %v", i, err)
		}
		name := fmt.Sprintf("key %d", i)
		if j.Kid != "" {
			name = fmt.Sprintf("key %d (kid %q)", i, j.Kid)
		}
		if j.Use != "" && j.Use != "sig" {
			continue
		}
		if j.Alg != "" && j.Alg != ES256 && j.Alg != RS256 && j.Alg != EdDSA {
			continue
		}
		if j.D != "" {
			return nil, fmt.Errorf("jose: JWKS: %s: the key is private (has \"d\"); publish public keys only", name)
		}
		k, ok, err := j.key()
		if err != nil {
			ks.Skipped = append(ks.Skipped, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		if !ok {
			continue
		}
		ks.Keys = append(ks.Keys, k)
	}
	return ks, nil
}

// key builds the verification key of j; ok is false for a key type or
// curve this package does not use.
func (j jwk) key() (k Key, ok bool, err error) {
	k = Key{KeyID: j.Kid, Alg: j.Alg}
	fits := func(alg string) error {
		if j.Alg != "" && j.Alg != alg {
			return fmt.Errorf("alg %s does not fit a %s key", j.Alg, j.Kty)
		}
		if j.D != "" {
			return errors.New("the key is private (has \"d\"); publish public keys only")
		}
		return nil
	}
	switch j.Kty {
	case "EC":
		if j.Crv != "P-256" {
			return Key{}, false, nil
		}
		if err := fits(ES256); err != nil {
			return Key{}, false, err
		}
		x, err1 := decodeFixed("x", j.X, 32)
		y, err2 := decodeFixed("y", j.Y, 32)
		if err := errors.Join(err1, err2); err != nil {
			return Key{}, false, err
		}
		// The uncompressed point form lets ecdh check it is on the curve.
		pt := append(append([]byte{4}, x...), y...)
		pub, err := ecdsaFromPoint(pt)
		if err != nil {
			return Key{}, false, err
		}
		k.Public = pub
	case "RSA":
		if err := fits(RS256); err != nil {
			return Key{}, false, err
		}
		n, err := decode(j.N)
		if err != nil || len(n) == 0 || n[0] == 0 {
			return Key{}, false, errors.New(`"n" is not a base64url unsigned integer without leading zeros`)
		}
		e, err := decode(j.E)
		if err != nil || len(e) == 0 || len(e) > 4 || e[0] == 0 {
			return Key{}, false, errors.New(`"e" is not a base64url unsigned integer of at most 4 bytes`)
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < MinRSABits {
			return Key{}, false, fmt.Errorf("the RSA modulus has %d bits; at least %d are needed", pub.N.BitLen(), MinRSABits)
		}
		if pub.E < 3 || pub.E%2 == 0 {
			return Key{}, false, errors.New(`"e" is not an odd exponent of at least 3`)
		}
		k.Public = pub
	case "OKP":
		if j.Crv != "Ed25519" {
			return Key{}, false, nil
		}
		if err := fits(EdDSA); err != nil {
			return Key{}, false, err
		}
		x, err := decodeFixed("x", j.X, ed25519.PublicKeySize)
		if err != nil {
			return Key{}, false, err
		}
		k.Public = ed25519.PublicKey(x)
	default:
		return Key{}, false, nil
	}
	return k, true, nil
}

func decodeFixed(name, s string, size int) ([]byte, error) {
	b, err := decode(s)
	if err != nil {
		return nil, fmt.Errorf("%q: %v", name, err)
	}
	if len(b) != size {
		return nil, fmt.Errorf("%q must be %d bytes, not %d", name, size, len(b))
	}
	return b, nil
}

// ecdsaFromPoint parses an uncompressed P-256 point, checking that it is on
// the curve.
func ecdsaFromPoint(pt []byte) (*ecdsa.PublicKey, error) {
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pt)
	if err != nil {
		return nil, errors.New("the point is not on curve P-256")
	}
	return pub, nil
}

// MarshalJWKS encodes keys as a JWK set of their public parts, with "use":
// "sig", and "alg" and "kid" when set. An HS256 key is refused: a shared
// secret must not be published.
func MarshalJWKS(keys ...Key) ([]byte, error) {
	out := make([]jwk, 0, len(keys))
	for i, k := range keys {
		if k.Public == nil || k.Secret != nil {
			return nil, fmt.Errorf("jose: key %d: only public keys can be published (an HS256 secret is refused)", i)
		}
		j := jwk{Use: "sig", Alg: k.Alg, Kid: k.KeyID}
		switch pub := k.Public.(type) {
		case *ecdsa.PublicKey:
			if pub.Curve != elliptic.P256() {
				return nil, fmt.Errorf("jose: key %d: an ECDSA key must be on curve P-256", i)
			}
			pt, err := pub.Bytes()
			if err != nil {
				return nil, fmt.Errorf("jose: key %d: %v", i, err)
			}
			j.Kty, j.Crv, j.X, j.Y = "EC", "P-256", encode(pt[1:33]), encode(pt[33:])
		case *rsa.PublicKey:
			if pub.N.BitLen() < MinRSABits {
				return nil, fmt.Errorf("jose: key %d: an RSA key must have at least %d bits", i, MinRSABits)
			}
			j.Kty, j.N, j.E = "RSA", encode(pub.N.Bytes()), encode(big.NewInt(int64(pub.E)).Bytes())
		case ed25519.PublicKey:
			if len(pub) != ed25519.PublicKeySize {
				return nil, fmt.Errorf("jose: key %d: an Ed25519 key must be 32 bytes", i)
			}
			j.Kty, j.Crv, j.X = "OKP", "Ed25519", encode(pub)
		default:
			return nil, fmt.Errorf("jose: key %d: unsupported key type %T", i, k.Public)
		}
		out = append(out, j)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(struct {
		Keys []jwk `json:"keys"`
	}{out}); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
