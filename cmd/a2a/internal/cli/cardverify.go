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

// cardCheck verifies the signatures of the cards a2a card fetches, for
// --jwks, from the bytes received: the public card, and the extended card
// when it is signed. It records the outcomes instead of rejecting a card,
// so that the card is shown either way.
type cardCheck struct {
	v          *auth.CardVerifier
	public     cardOutcome
	extended   cardOutcome
	inExtended bool // set before fetching the extended card
}

// cardOutcome is the outcome of verifying one card.
type cardOutcome struct {
	checked bool
	res     auth.VerifiedCardSignature
	err     error
}

// VerifyCardJSON makes cardCheck a client.CardSignatureVerifier. The
// client calls it for the public card, then, once inExtended is set, for a
// signed extended card.
func (c *cardCheck) VerifyCardJSON(ctx context.Context, cardJSON []byte) error {
	o := &c.public
	if c.inExtended {
		o = &c.extended
	}
	o.res, o.err = c.v.Verify(ctx, cardJSON)
	o.checked = true
	return nil
}

// failed reports whether a card that was checked did not verify.
func (c *cardCheck) failed() bool { return c.public.err != nil || c.extended.err != nil }

// status is the outcome as the signatures line shows it.
func (o *cardOutcome) status() string {
	if o.err != nil {
		return "not verified: " + strings.ReplaceAll(strings.TrimPrefix(o.err.Error(), "auth: "), "\n", "; ")
	}
	via := ""
	if o.res.JWKSURL != "" {
		via = ", key from " + o.res.JWKSURL
	}
	return fmt.Sprintf("verified (kid %s, %s%s)", o.res.KeyID, o.res.Alg, via)
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

// errNotVerified and errExtendedNotVerified are the outcomes of a2a card
// --jwks for a public or extended card whose signature does not verify.
var (
	errNotVerified         = errors.New("the agent card's signature is not verified")
	errExtendedNotVerified = errors.New("the extended agent card's signature is not verified")
)
