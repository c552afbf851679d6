package auth

import (
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
)

// KeyID names a public key for the "kid" of signatures: prefix and the
// start of the SHA-256 of its PKIX encoding, so that the same key always
// gets the same id (replicas that share a key publish the same JWK).
func KeyID(prefix string, pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return prefix + base64.RawURLEncoding.EncodeToString(sum[:12]), nil
}
