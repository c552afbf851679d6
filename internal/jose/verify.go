package jose

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	gojose "github.com/go-jose/go-jose/v4"
)

// The order of P-256 and half of it: an ES256 signature's S is at most
// the half (low S).
var (
	p256Order     = elliptic.P256().Params().N
	p256HalfOrder = new(big.Int).Rsh(p256Order, 1)
)

// Verify checks sig over signingInput with key for alg. alg must be on the
// allow-list allowed ("none" never counts, even when listed) and must fit
// the key: ES256 a P-256 ECDSA key, RS256 an RSA key of at least
// [MinRSABits] bits, EdDSA an Ed25519 key, HS256 a secret of at least
// [MinSecretBytes] bytes. A key whose own Alg is set must name alg.
// Checking the fit is what stops algorithm confusion (an HS256 token
// "signed" with a public key's bytes). An ES256 signature must be 64 bytes,
// R||S, with R and S in [1, n-1] and the low S (S <= n/2): the high-S twin
// of a valid signature, which ECDSA itself accepts, is refused.
//
// signingInput must be a JWS's, BASE64URL(header) '.' BASE64URL(payload),
// in canonical base64url with a header as [DecodeHeader] wants it, naming
// alg; go-jose parses the JWS with the allow-list and verifies it. A
// signature that does not verify gives an error that wraps [ErrSignature].
func Verify(allowed []string, alg string, key Key, signingInput, sig []byte) error {
	vk, err := verificationKey(allowed, alg, key, sig)
	if err != nil {
		return err
	}
	protected, payloadB64, ok := strings.Cut(string(signingInput), ".")
	if !ok || strings.Contains(payloadB64, ".") {
		return fmt.Errorf("%w: the signing input is not two dot-separated segments", ErrSignature)
	}
	payload, err := decode(payloadB64)
	if err != nil {
		return fmt.Errorf("%w: the payload segment of the signing input is not base64url without padding", ErrSignature)
	}
	return verifyJWS(allowed, alg, vk, protected, payload, sig)
}

// VerifyDetached checks sig, the signature of a JWS whose payload is
// detached (RFC 7515 appendix F), such as an agent card's: protected is
// the base64url protected header as sent, payload the bytes signed (not
// their base64url form). Its policy is [Verify]'s; go-jose parses the JWS
// with the allow-list and verifies it.
func VerifyDetached(allowed []string, alg string, key Key, protected string, payload, sig []byte) error {
	vk, err := verificationKey(allowed, alg, key, sig)
	if err != nil {
		return err
	}
	return verifyJWS(allowed, alg, vk, protected, payload, sig)
}

// verificationKey applies the policy of [Verify] to alg, key and sig, and
// returns the key in the form go-jose takes: the public key, or the secret
// for HS256.
func verificationKey(allowed []string, alg string, key Key, sig []byte) (any, error) {
	if alg == "" || strings.EqualFold(alg, "none") {
		return nil, errors.New(`jose: algorithm "none" is not accepted`)
	}
	if !slices.Contains(allowed, alg) {
		return nil, fmt.Errorf("jose: algorithm %q is not allowed", alg)
	}
	if key.Alg != "" && key.Alg != alg {
		return nil, fmt.Errorf("jose: the key is for %s, not %s", key.Alg, alg)
	}
	switch alg {
	case HS256:
		if key.Public != nil || len(key.Secret) < MinSecretBytes {
			return nil, fmt.Errorf("jose: HS256 needs a shared secret key of at least %d bytes", MinSecretBytes)
		}
		return key.Secret, nil
	case ES256:
		pub, ok := key.Public.(*ecdsa.PublicKey)
		if !ok || pub == nil || pub.Curve != elliptic.P256() || pub.X == nil || pub.Y == nil || key.Secret != nil {
			return nil, errors.New("jose: ES256 needs a P-256 ECDSA public key")
		}
		if err := checkES256(sig); err != nil {
			return nil, err
		}
		return pub, nil
	case RS256:
		pub, ok := key.Public.(*rsa.PublicKey)
		if !ok || pub == nil || pub.N == nil || key.Secret != nil {
			return nil, errors.New("jose: RS256 needs an RSA public key")
		}
		if pub.N.BitLen() < MinRSABits {
			return nil, fmt.Errorf("jose: the RSA key has fewer than %d bits", MinRSABits)
		}
		return pub, nil
	case EdDSA:
		pub, ok := key.Public.(ed25519.PublicKey)
		if !ok || len(pub) != ed25519.PublicKeySize || key.Secret != nil {
			return nil, errors.New("jose: EdDSA needs an Ed25519 public key")
		}
		return pub, nil
	}
	return nil, fmt.Errorf("jose: unsupported algorithm %q", alg)
}

// checkES256 checks the form of an ES256 signature, which go-jose leaves to
// crypto/ecdsa, which accepts a high S: 64 bytes, R and S in [1, n-1], and
// S at most n/2.
func checkES256(sig []byte) error {
	if len(sig) != 64 {
		return fmt.Errorf("%w: an ES256 signature must be 64 bytes, not %d", ErrSignature, len(sig))
	}
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:])
	if r.Sign() == 0 || s.Sign() == 0 || r.Cmp(p256Order) >= 0 || s.Cmp(p256Order) >= 0 {
		return fmt.Errorf("%w: an ES256 signature's R and S must be between 1 and n-1", ErrSignature)
	}
	if s.Cmp(p256HalfOrder) > 0 {
		// (R, N-S) verifies whenever (R, S) does: accepting both would
		// make every signature malleable. Only the low S is accepted.
		return fmt.Errorf("%w: a high-S ES256 signature (only the low S of the pair is accepted)", ErrSignature)
	}
	return nil
}

// verifyJWS has go-jose parse the JWS of protected, payload and sig,
// refusing an algorithm not on allowed, and verify it with vk. The header
// is checked by [DecodeHeader] first: go-jose's own decoding is not this
// strict.
func verifyJWS(allowed []string, alg string, vk any, protected string, payload, sig []byte) error {
	h, err := DecodeHeader(protected)
	if err != nil {
		return err
	}
	if h.Alg != alg {
		return fmt.Errorf("jose: the header's alg is %q, not %s", h.Alg, alg)
	}
	var algs []gojose.SignatureAlgorithm
	for _, a := range allowed {
		if a == ES256 || a == RS256 || a == EdDSA || a == HS256 {
			algs = append(algs, gojose.SignatureAlgorithm(a))
		}
	}
	if payload == nil {
		payload = []byte{} // go-jose takes nil for "not detached"
	}
	obj, err := gojose.ParseDetached(protected+".."+encode(sig), payload, algs)
	if err != nil {
		return fmt.Errorf("jose: %s", goJoseText(err))
	}
	if err := obj.DetachedVerify(payload, vk); err != nil {
		if errors.Is(err, gojose.ErrCryptoFailure) {
			return ErrSignature
		}
		return fmt.Errorf("jose: %s", goJoseText(err))
	}
	return nil
}

// goJoseText is the text of a go-jose error without its package prefix.
func goJoseText(err error) string {
	return strings.TrimPrefix(err.Error(), "go-jose/go-jose: ")
}
