package auth

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/goa2a/a2a/internal/jose"
)

// JWKS cache limits. A fetched set is kept for the max-age of its
// Cache-Control header, bounded to [MinJWKSMaxAge, MaxJWKSMaxAge], or for
// DefaultJWKSMaxAge without one. Between two fetches at least
// JWKSRefetchInterval passes, whatever the reason for the second one (a
// token signed by a key the set lacks, an expired set, a failed fetch):
// tokens with made-up key IDs cannot make the server hammer the JWKS host.
const (
	DefaultJWKSMaxAge   = 10 * time.Minute
	MinJWKSMaxAge       = time.Minute
	MaxJWKSMaxAge       = 24 * time.Hour
	JWKSRefetchInterval = 30 * time.Second

	maxJWKSBytes = 1 << 20
	jwksTimeout  = 10 * time.Second
)

// ErrKeysUnavailable is the error of a token that cannot be checked because
// the JWKS has never been fetched successfully: the fault is the server's
// (or the key host's), not the client's, so [JWT] answers 503 rather than
// 401. Once a set has been fetched, a failed refresh keeps the last good
// set in use.
var ErrKeysUnavailable = errors.New("auth: the JWKS cannot be fetched")

// checkJWKSURL checks that raw is an absolute http or https URL with a host.
func checkJWKSURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the JWKS URL is not a URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("the JWKS URL %q must be http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("the JWKS URL %q has no host", raw)
	}
	if u.User != nil {
		return nil, errors.New("the JWKS URL must not hold a user name or password")
	}
	return u, nil
}

// newKeyCache is the cache of the JWK set at url: kept for its max-age
// within [MinJWKSMaxAge, MaxJWKSMaxAge], refetched at most once per
// JWKSRefetchInterval.
func newKeyCache(url string, client *http.Client, now func() time.Time) *jose.RemoteKeySet {
	return &jose.RemoteKeySet{
		URL: url, Client: client, Now: now,
		RefetchEvery: JWKSRefetchInterval, Timeout: jwksTimeout, MaxBytes: maxJWKSBytes,
		DefaultAge: DefaultJWKSMaxAge, MinAge: MinJWKSMaxAge, MaxAge: MaxJWKSMaxAge,
		Check: func(set *jose.KeySet) error {
			if len(set.Keys) > 0 {
				return nil
			}
			why := ""
			if len(set.Skipped) > 0 {
				why = " (left out: " + strings.Join(set.Skipped, "; ") + ")"
			}
			return fmt.Errorf("the JWKS has no usable ES256, RS256 or EdDSA signing key%s", why)
		},
	}
}
