package serve

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// The limit of refused authentications ([WithAuthFailureLimit]): each 401
// or 403 that the authenticators answer costs the client address a token
// of a bucket of the limit's size, which refills at authFailureRefill.
// While an address has no token left, its requests to the A2A bindings are
// refused with 429 before the authenticators see them: a caller cannot try
// keys or tokens without limit (A2A §13.4), nor make the server check
// signatures without limit. Requests that authenticate cost nothing, and
// the card, its keys and the probes are never limited (they are served
// before authentication).
//
// An address is a client key ([ClientKey]): an IPv4 address or an IPv6
// /64. Loopback is not counted, for the reason withClientKey gives: behind
// a reverse proxy on this machine every caller is 127.0.0.1, and one of
// them failing would lock out all of them, so behind such a proxy it is
// the proxy's to limit by the real client address. Nothing like
// X-Forwarded-For is honoured: a caller could write any address in it.
const (
	// DefaultAuthFailures is the limit of refused authentications per
	// client address when authentication is configured.
	DefaultAuthFailures = 10
	authFailureRefill   = 1 // tokens a second
	// maxAuthBuckets bounds the addresses remembered. Only addresses that
	// failed recently are, so the bound is reached only by an attacker
	// with that many addresses; then arbitrary ones are forgotten.
	maxAuthBuckets = 100_000
	minAuthSweep   = 1024
)

// authLimiter holds the buckets of the addresses that failed to
// authenticate recently. A nil authLimiter limits nothing.
type authLimiter struct {
	burst      float64
	now        func() time.Time
	log        *slog.Logger
	maxBuckets int

	mu      sync.Mutex
	buckets map[string]*authBucket
	sweepAt int
}

// authBucket is a token bucket as of at. Tokens may go below zero when
// failures that passed the check together all fail, down to -burst.
type authBucket struct {
	tokens float64
	at     time.Time
}

// newAuthLimiter returns a limiter of burst failures per address, or nil
// for burst 0 (no limit).
func newAuthLimiter(burst int, now func() time.Time, log *slog.Logger) *authLimiter {
	if burst <= 0 {
		return nil
	}
	return &authLimiter{
		burst: float64(burst), now: now, log: log, maxBuckets: maxAuthBuckets,
		buckets: make(map[string]*authBucket), sweepAt: minAuthSweep,
	}
}

// guard returns guard(app) behind the limit. Without authenticators
// (guard(app) is app itself) or without a limit, nothing is put in front.
func (l *authLimiter) guard(app http.Handler, guard func(app http.Handler) http.Handler) http.Handler {
	marked := &admitted{next: app}
	guarded := guard(marked)
	if guarded == http.Handler(marked) {
		return app
	}
	if l == nil {
		return guarded
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := ClientKey(r.RemoteAddr)
		if key == "" {
			guarded.ServeHTTP(w, r)
			return
		}
		if wait := l.check(key); wait > 0 {
			l.refuse(w, wait)
			return
		}
		st := new(authState)
		sw := &statusWriter{ResponseWriter: w}
		guarded.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), authStateKey{}, st)))
		if !st.admitted && (sw.code == http.StatusUnauthorized || sw.code == http.StatusForbidden) {
			l.fail(key)
		}
	})
}

// authState notes whether the authenticators let a request through.
type authState struct{ admitted bool }

type authStateKey struct{}

// admitted is the app as the authenticators see it: reaching it marks the
// request admitted, so that the app's own 401 and 403 do not count.
type admitted struct{ next http.Handler }

func (a *admitted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if st, _ := r.Context().Value(authStateKey{}).(*authState); st != nil {
		st.admitted = true
	}
	a.next.ServeHTTP(w, r)
}

// refillLocked brings b up to now.
func (l *authLimiter) refillLocked(b *authBucket, now time.Time) {
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(l.burst, b.tokens+d.Seconds()*authFailureRefill)
		b.at = now
	}
}

// check returns how long until the address at key has a token again, or
// 0 if it has one now. It takes nothing: only a failure costs a token.
func (l *authLimiter) check(key string) time.Duration {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		return 0
	}
	l.refillLocked(b, now)
	if b.tokens >= 1 {
		return 0
	}
	return time.Duration(math.Ceil((1 - b.tokens) / authFailureRefill * float64(time.Second)))
}

// fail takes a token from the address at key for a refused
// authentication, and logs the address once it has none left.
func (l *authLimiter) fail(key string) {
	now := l.now()
	l.mu.Lock()
	b := l.buckets[key]
	if b == nil {
		if n := len(l.buckets); n >= l.sweepAt || n >= l.maxBuckets {
			l.sweepLocked(now)
		}
		b = &authBucket{tokens: l.burst, at: now}
		l.buckets[key] = b
	}
	l.refillLocked(b, now)
	ranOut := b.tokens >= 1 && b.tokens-1 < 1
	b.tokens = max(-l.burst, b.tokens-1)
	l.mu.Unlock()
	if ranOut {
		l.log.Warn("too many refused authentications from a client address; refusing its requests until it earns a token back",
			"client", key, "limit", int(l.burst), "per_second", authFailureRefill)
	}
}

// sweepLocked forgets the buckets that have refilled (a full bucket is the
// same as none), then, over the cap, arbitrary ones. The next sweep waits
// until the map has doubled, which keeps the cost per failure constant.
func (l *authLimiter) sweepLocked(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*authFailureRefill >= l.burst {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) < l.maxBuckets {
			break
		}
		delete(l.buckets, k)
	}
	l.sweepAt = max(minAuthSweep, 2*len(l.buckets))
}

// size is how many addresses are remembered.
func (l *authLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// refuse answers 429 with Retry-After and a google.rpc.Status body, the
// shape of the HTTP+JSON binding's errors and of the authenticators' 401,
// on either binding: the request was not authenticated, so it gets no
// binding's answer.
func (l *authLimiter) refuse(w http.ResponseWriter, wait time.Duration) {
	limit := strconv.Itoa(int(l.burst))
	e := a2a.NewError(a2a.CodeResourceExhausted, "too many refused authentications from this address (limit "+limit+
		", then "+strconv.Itoa(authFailureRefill)+" a second); try again later").
		With("limit", "maxAuthFailures").With("value", limit)
	e.RetryAfter = wait
	type status struct {
		Code    int    `json:"code"`
		Status  string `json:"status"`
		Message string `json:"message"`
		Details []any  `json:"details,omitempty"`
	}
	body, err := json.Marshal(struct {
		Error status `json:"error"`
	}{status{http.StatusTooManyRequests, e.Code.GRPCStatusName(), e.Text(), e.WireDetails()}})
	if err != nil {
		body = []byte(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"too many refused authentications"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(body)
}

// statusWriter notes the status of a response. It unwraps for
// http.ResponseController, and flushes for handlers that assert
// http.Flusher, since admitted requests (streams too) are answered through
// it.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.code == 0 && code >= 200 {
		s.code = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// StreamDetached lets a stream go on after the handler returns
// ([server.StreamWatcher]): its status is known by then.
func (s *statusWriter) StreamDetached() (func(bool), bool) { return func(bool) {}, true }

func (s *statusWriter) Flush() {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
