package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
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

// jwksCache fetches a JWKS and keeps it.
type jwksCache struct {
	url    string
	client *http.Client
	now    func() time.Time

	fetchMu sync.Mutex // held for a fetch, so that fetches do not overlap

	mu      sync.Mutex
	set     *jose.KeySet // nil until a fetch succeeds
	expires time.Time
	tried   time.Time // of the last fetch, good or bad
	fetches int       // fetches attempted, for tests
	lastErr error
}

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

// keys returns the keys for alg with key ID kid, fetching the set when it
// has none yet, when it has expired, or when it lacks the key (at most once
// per JWKSRefetchInterval). ErrKeysUnavailable means no set was ever
// fetched.
func (c *jwksCache) keys(ctx context.Context, kid, alg string) ([]jose.Key, error) {
	c.mu.Lock()
	set, expires, tried := c.set, c.expires, c.tried
	c.mu.Unlock()
	now := c.now()
	found := set.Find(kid, alg)
	if set != nil && len(found) > 0 && now.Before(expires) {
		return found, nil
	}
	if tried.IsZero() || now.Sub(tried) >= JWKSRefetchInterval {
		c.refresh(ctx, tried)
		c.mu.Lock()
		set = c.set
		c.mu.Unlock()
		found = set.Find(kid, alg)
	}
	if set == nil {
		return nil, ErrKeysUnavailable
	}
	return found, nil
}

// refresh fetches the set unless another fetch has happened since
// seen. The fetch outlives the request that asked for it (a client that
// hangs up must not cut it short), up to jwksTimeout.
func (c *jwksCache) refresh(ctx context.Context, seen time.Time) {
	c.fetchMu.Lock()
	defer c.fetchMu.Unlock()
	c.mu.Lock()
	again := !c.tried.Equal(seen)
	c.mu.Unlock()
	if again {
		return // someone else fetched while we waited
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jwksTimeout)
	defer cancel()
	set, maxAge, err := c.fetch(ctx)
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tried = now
	c.fetches++
	c.lastErr = err
	if err != nil {
		return // keep the last good set, if any
	}
	c.set, c.expires = set, now.Add(maxAge)
}

// fetch gets and parses the set, with its max-age.
func (c *jwksCache) fetch(ctx context.Context) (*jose.KeySet, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", c.url, unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("GET %s: HTTP %s", c.url, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := mime.ParseMediaType(ct)
		if mt != "application/json" && mt != "application/jwk-set+json" {
			return nil, 0, fmt.Errorf("GET %s: Content-Type %q, want application/json or application/jwk-set+json", c.url, mt)
		}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", c.url, err)
	}
	if len(data) > maxJWKSBytes {
		return nil, 0, fmt.Errorf("GET %s: the JWKS is larger than %d bytes", c.url, maxJWKSBytes)
	}
	set, err := jose.ParseJWKS(data)
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", c.url, err)
	}
	if len(set.Keys) == 0 {
		why := ""
		if len(set.Skipped) > 0 {
			why = " (left out: " + strings.Join(set.Skipped, "; ") + ")"
		}
		return nil, 0, fmt.Errorf("GET %s: the JWKS has no usable ES256, RS256 or EdDSA signing key%s", c.url, why)
	}
	return set, maxAge(resp.Header), nil
}

// unwrapURLError drops the *url.Error wrapper, which repeats the URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// maxAge is the Cache-Control max-age of h, bounded to [MinJWKSMaxAge,
// MaxJWKSMaxAge]; DefaultJWKSMaxAge without one. no-store and no-cache
// count as the minimum: keys cannot be fetched for every request.
func maxAge(h http.Header) time.Duration {
	return jose.CacheAge(h, DefaultJWKSMaxAge, MinJWKSMaxAge, MaxJWKSMaxAge)
}
