package server

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/goa2a/a2a/store"
)

// Page tokens are opaque to clients and tamper-evident: the payload (a
// keyset cursor) is followed by an HMAC that binds it to what it pages
// through (the operation, the caller's tenant and owner, and for push
// configs the task), so a forged token, an altered one, or one minted for
// another principal is refused as InvalidParams and never reveals data.
//
// The key comes from WithTokenKey, else from the store when it can keep a
// secret for every process that shares it (store.Secrets: tokens then
// survive restarts and work across replicas), else it is random for the
// life of the Handler.

// tokenSecretName is the name of the page-token key in a store.Secrets.
const tokenSecretName = "page-token-hmac"

// tokenMACSize is how much of the HMAC-SHA256 a token carries.
const tokenMACSize = 16

// errBadToken reports a token this server did not issue for this use.
var errBadToken = errors.New("pageToken is not a token this server issued")

type tokenKey struct {
	mu  sync.Mutex
	key []byte
}

// WithTokenKey sets the key that signs page tokens. Replicas that share a
// store must share it too, unless the store keeps it (store.Secrets). It
// must be at least 32 bytes.
func WithTokenKey(key []byte) Option {
	return func(h *Handler) error {
		if len(key) < 32 {
			return fmt.Errorf("server: token key has %d bytes, need at least 32", len(key))
		}
		h.tokens.key = append([]byte(nil), key...)
		return nil
	}
}

// tokenKey returns the page-token key, fetching it from the store on first
// use.
func (h *Handler) tokenKey(ctx context.Context) ([]byte, error) {
	h.tokens.mu.Lock()
	defer h.tokens.mu.Unlock()
	if h.tokens.key != nil {
		return h.tokens.key, nil
	}
	if s, ok := h.store.(store.Secrets); ok {
		k, err := s.Secret(ctx, tokenSecretName)
		if err != nil {
			return nil, fmt.Errorf("server: reading the page-token key from the store: %w", err)
		}
		h.tokens.key = k
		return k, nil
	}
	k := make([]byte, 32)
	rand.Read(k)
	h.tokens.key = k
	return k, nil
}

// tokenMAC authenticates payload for its use: kind, scope and bound.
func tokenMAC(key []byte, kind string, scope store.Scope, bound string, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	var b []byte
	for _, f := range []string{kind, scope.Tenant, scope.Owner, bound} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	m.Write(b)
	m.Write(payload)
	return m.Sum(nil)[:tokenMACSize]
}

// sealToken makes a page token of payload.
func (h *Handler) sealToken(ctx context.Context, kind string, scope store.Scope, bound string, payload []byte) (string, error) {
	key, err := h.tokenKey(ctx)
	if err != nil {
		return "", err
	}
	b := append(payload[:len(payload):len(payload)], tokenMAC(key, kind, scope, bound, payload)...)
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// openToken returns the payload of a token made by sealToken for the same
// use, or errBadToken.
func (h *Handler) openToken(ctx context.Context, kind string, scope store.Scope, bound, token string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) <= tokenMACSize {
		return nil, errBadToken
	}
	key, err := h.tokenKey(ctx)
	if err != nil {
		return nil, err
	}
	payload, mac := b[:len(b)-tokenMACSize], b[len(b)-tokenMACSize:]
	if !hmac.Equal(mac, tokenMAC(key, kind, scope, bound, payload)) {
		return nil, errBadToken
	}
	return payload, nil
}
