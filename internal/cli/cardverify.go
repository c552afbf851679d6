package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/goa2a/a2a/auth"
)

// cardCheck verifies the signatures of the card a2a card fetches, for
// --jwks, from the bytes received. It records the outcome instead of
// rejecting the card, so that the card is shown either way.
type cardCheck struct {
	v   *auth.CardVerifier
	res auth.VerifiedCardSignature
	err error
}

// VerifyCardJSON makes cardCheck a client.CardSignatureVerifier.
func (c *cardCheck) VerifyCardJSON(ctx context.Context, cardJSON []byte) error {
	c.res, c.err = c.v.Verify(ctx, cardJSON)
	return nil
}

// status is the outcome as the signatures line shows it.
func (c *cardCheck) status() string {
	if c.err != nil {
		return "not verified: " + strings.ReplaceAll(strings.TrimPrefix(c.err.Error(), "auth: "), "\n", "; ")
	}
	via := ""
	if c.res.JWKSURL != "" {
		via = ", key from " + c.res.JWKSURL
	}
	return fmt.Sprintf("verified (kid %s, %s%s)", c.res.KeyID, c.res.Alg, via)
}

// maxJWKSFile bounds the JWK set --jwks reads.
const maxJWKSFile = 1 << 20

// loadCardKeys reads the trust store of --jwks: a JWK set in a file, or at
// an http(s) URL that the user names and so trusts. hc may be nil.
func loadCardKeys(ctx context.Context, hc *http.Client, src string, timeout time.Duration) (*auth.CardKeys, error) {
	var data []byte
	if strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://") {
		if hc == nil {
			hc = &http.Client{}
		}
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
		if err != nil {
			return nil, usageError(fmt.Sprintf("--jwks %q: %v", src, err))
		}
		req.Header.Set("Accept", "application/jwk-set+json, application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("--jwks: fetching the key set: %w", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("--jwks: fetching %s: HTTP %d", src, resp.StatusCode)
		}
		if data, err = io.ReadAll(io.LimitReader(resp.Body, maxJWKSFile+1)); err != nil {
			return nil, fmt.Errorf("--jwks: fetching %s: %w", src, err)
		}
	} else {
		f, err := os.Open(src)
		if err != nil {
			return nil, usageError(fmt.Sprintf("--jwks: %v", err))
		}
		defer f.Close()
		if data, err = io.ReadAll(io.LimitReader(f, maxJWKSFile+1)); err != nil {
			return nil, usageError(fmt.Sprintf("--jwks: %v", err))
		}
	}
	if len(data) > maxJWKSFile {
		return nil, usageError(fmt.Sprintf("--jwks %s: larger than %d bytes", src, maxJWKSFile))
	}
	keys, err := auth.ParseCardKeys(data)
	if err != nil {
		return nil, usageError(fmt.Sprintf("--jwks %s: %v", src, err))
	}
	if keys.Len() == 0 {
		return nil, usageError(fmt.Sprintf("--jwks %s: no usable signature key (ES256, RS256 or EdDSA) in the set", src))
	}
	return keys, nil
}

// errNotVerified is the outcome of a2a card --jwks for a card whose
// signature does not verify.
var errNotVerified = errors.New("the agent card's signature is not verified")
