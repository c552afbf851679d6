package jose

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// ErrNoKeySet is returned by [RemoteKeySet.Keys] while no fetch of the set
// has succeeded.
var ErrNoKeySet = errors.New("the JWK set could not be fetched")

// RemoteKeySet is a JWK set fetched from a URL and kept for its cache age:
// the key sets of JWT issuers (package auth) and of push notification
// senders (package push). Set the fields before the first call; the zero
// values of the optional ones are the defaults named below.
type RemoteKeySet struct {
	URL    string
	Client *http.Client // default http.DefaultClient
	Now    func() time.Time
	// RefetchEvery bounds how often an unknown key ID, or an expired set,
	// makes it fetch again (default 30 s).
	RefetchEvery time.Duration
	// Timeout bounds a fetch, which outlives the request that caused it
	// (default 10 s).
	Timeout time.Duration
	// MaxBytes bounds the set's size (default 64 KiB).
	MaxBytes int64
	// DefaultAge, MinAge and MaxAge bound how long a set is kept, from its
	// Cache-Control (see [CacheAge]); defaults 10 min, 1 min, 24 h.
	DefaultAge, MinAge, MaxAge time.Duration
	// Check refuses a fetched set that lacks what the caller needs (for
	// example a key for its algorithm); the last good set stays.
	Check func(*KeySet) error

	fetchMu sync.Mutex // held for a fetch, so that fetches do not overlap

	mu      sync.Mutex
	set     *KeySet // nil until a fetch succeeds
	expires time.Time
	tried   time.Time // of the last fetch, good or bad
	lastErr error
}

func (c *RemoteKeySet) defaults() {
	if c.Client == nil {
		c.Client = http.DefaultClient
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.RefetchEvery == 0 {
		c.RefetchEvery = 30 * time.Second
	}
	if c.Timeout == 0 {
		c.Timeout = 10 * time.Second
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = 64 << 10
	}
	if c.DefaultAge == 0 {
		c.DefaultAge = 10 * time.Minute
	}
	if c.MinAge == 0 {
		c.MinAge = time.Minute
	}
	if c.MaxAge == 0 {
		c.MaxAge = 24 * time.Hour
	}
}

// Keys returns the keys for alg with key ID kid (any ID when kid is
// empty), fetching the set when it has none yet, when it has expired, or
// when it lacks the key, at most once per RefetchEvery. It returns
// ErrNoKeySet while no fetch has succeeded; after one, it answers from the
// last good set even when later fetches fail.
func (c *RemoteKeySet) Keys(ctx context.Context, kid, alg string) ([]Key, error) {
	c.mu.Lock()
	c.defaults()
	set, expires, tried := c.set, c.expires, c.tried
	c.mu.Unlock()
	now := c.Now()
	found := set.Find(kid, alg)
	if len(found) > 0 && now.Before(expires) {
		return found, nil
	}
	if tried.IsZero() || now.Sub(tried) >= c.RefetchEvery {
		c.refresh(ctx, tried)
		c.mu.Lock()
		set = c.set
		c.mu.Unlock()
		found = set.Find(kid, alg)
	}
	if set == nil {
		return nil, ErrNoKeySet
	}
	return found, nil
}

// Refresh fetches the set now (or waits for a fetch under way) and
// returns the error of the last fetch: for a wrong URL to show at start-up
// rather than at the first request.
func (c *RemoteKeySet) Refresh(ctx context.Context) error {
	c.mu.Lock()
	seen := c.tried
	c.mu.Unlock()
	c.refresh(ctx, seen)
	return c.LastError()
}

// refresh fetches the set unless another fetch happened since seen. The
// fetch outlives ctx's cancellation (a client that hangs up must not cut
// it short), up to Timeout.
func (c *RemoteKeySet) refresh(ctx context.Context, seen time.Time) {
	c.fetchMu.Lock()
	defer c.fetchMu.Unlock()
	c.mu.Lock()
	c.defaults()
	again := !c.tried.Equal(seen)
	c.mu.Unlock()
	if again {
		return // someone else fetched while we waited
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.Timeout)
	defer cancel()
	set, age, err := c.fetch(ctx)
	now := c.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tried = now
	c.lastErr = err
	if err == nil {
		c.set, c.expires = set, now.Add(age)
	}
}

// LastError is the error of the last fetch, nil if it succeeded.
func (c *RemoteKeySet) LastError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// fetch gets, parses and checks the set, with how long to keep it.
func (c *RemoteKeySet) fetch(ctx context.Context) (*KeySet, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := c.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it repeats the URL
		}
		return nil, 0, fmt.Errorf("GET %s: %w", c.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("GET %s: HTTP %s", c.URL, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := mime.ParseMediaType(ct)
		if mt != "application/json" && mt != "application/jwk-set+json" {
			return nil, 0, fmt.Errorf("GET %s: Content-Type %q, want application/json or application/jwk-set+json", c.URL, mt)
		}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.MaxBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", c.URL, err)
	}
	if int64(len(data)) > c.MaxBytes {
		return nil, 0, fmt.Errorf("GET %s: the JWK set is larger than %d bytes", c.URL, c.MaxBytes)
	}
	set, err := ParseJWKS(data)
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", c.URL, err)
	}
	if c.Check != nil {
		if err := c.Check(set); err != nil {
			return nil, 0, fmt.Errorf("GET %s: %w", c.URL, err)
		}
	}
	return set, CacheAge(resp.Header, c.DefaultAge, c.MinAge, c.MaxAge), nil
}
