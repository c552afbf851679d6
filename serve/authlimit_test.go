package serve

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/auth"
)

// authClock is a clock that moves only when told.
type authClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *authClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *authClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

const (
	goodKey = "good-key-0123456789abcdef"
	badKey  = "bad-key-0123456789abcdef"
)

// authLimitRig is an authLimiter in front of auth.APIKey in front of an
// app, with counts of what reached the authenticator and the app.
type authLimitRig struct {
	t       *testing.T
	clock   *authClock
	lim     *authLimiter
	h       http.Handler
	checked atomic.Int64    // requests the authenticator saw
	served  atomic.Int64    // requests the app saw
	log     strings.Builder // written by the rig's calls, one at a time
}

func newAuthLimitRig(t *testing.T, burst int) *authLimitRig {
	rig := &authLimitRig{t: t, clock: &authClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}
	log := slog.New(slog.NewTextHandler(&rig.log, nil))
	rig.lim = newAuthLimiter(burst, rig.clock.Now, log)
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rig.served.Add(1)
		switch r.URL.Path {
		case "/app401": // the app's own refusals are not the authenticators'
			w.WriteHeader(http.StatusUnauthorized)
		case "/app403":
			w.WriteHeader(http.StatusForbidden)
		default:
			io.WriteString(w, "ok")
		}
	})
	guard := func(app http.Handler) http.Handler {
		keyed := auth.APIKey(map[string]string{goodKey: "alice"}, app)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rig.checked.Add(1)
			switch r.Header.Get("X-Test") {
			case "403": // as auth.JWT answers a token short of a scope
				w.WriteHeader(http.StatusForbidden)
			case "503": // as auth.JWT answers when the JWKS cannot be had
				w.WriteHeader(http.StatusServiceUnavailable)
			default:
				keyed.ServeHTTP(w, r)
			}
		})
	}
	rig.h = rig.lim.guard(app, guard)
	return rig
}

// call sends a request from remote with key (and X-Test: test) and returns
// the recorded answer.
func (rig *authLimitRig) call(remote, path, key, test string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", path, nil)
	req.RemoteAddr = remote
	if key != "" {
		req.Header.Set(auth.APIKeyHeader, key)
	}
	if test != "" {
		req.Header.Set("X-Test", test)
	}
	rec := httptest.NewRecorder()
	rig.h.ServeHTTP(rec, req)
	return rec
}

func (rig *authLimitRig) want(remote, path, key, test string, status int) *httptest.ResponseRecorder {
	rig.t.Helper()
	rec := rig.call(remote, path, key, test)
	if rec.Code != status {
		rig.t.Errorf("%s %s key %q test %q: status %d, want %d: %s", remote, path, key, test, rec.Code, status, rec.Body)
	}
	return rec
}

// wantLimited checks a 429 of the limiter: Retry-After, and a
// google.rpc.Status RESOURCE_EXHAUSTED body naming the limit.
func wantLimited(t *testing.T, rec *httptest.ResponseRecorder, limit int, retryAfter string) {
	t.Helper()
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429: %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("Retry-After"); got != retryAfter {
		t.Errorf("Retry-After %q, want %q", got, retryAfter)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var body struct {
		Error struct {
			Code    int              `json:"code"`
			Status  string           `json:"status"`
			Message string           `json:"message"`
			Details []map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	e := body.Error
	if e.Code != 429 || e.Status != "RESOURCE_EXHAUSTED" {
		t.Errorf("body %s: want code 429, status RESOURCE_EXHAUSTED", rec.Body)
	}
	if want := "too many refused authentications from this address (limit " + strconv.Itoa(limit) + ", then 1 a second)"; !strings.Contains(e.Message, want) {
		t.Errorf("message %q, want it to contain %q", e.Message, want)
	}
	var info, retry bool
	for _, d := range e.Details {
		switch d["@type"] {
		case "type.googleapis.com/google.rpc.ErrorInfo":
			md, _ := d["metadata"].(map[string]any)
			info = d["reason"] == "RESOURCE_EXHAUSTED" && md["limit"] == "maxAuthFailures" && md["value"] == strconv.Itoa(limit)
		case "type.googleapis.com/google.rpc.RetryInfo":
			retry = d["retryDelay"] != ""
		}
	}
	if !info || !retry {
		t.Errorf("details %v: want an ErrorInfo naming maxAuthFailures %d and a RetryInfo", e.Details, limit)
	}
}

// TestAuthFailureLimit: refused authentications cost the client address a
// token; once they are spent, its requests are refused before the
// authenticator runs, the right key included, until a token is due.
func TestAuthFailureLimit(t *testing.T) {
	t.Parallel()
	rig := newAuthLimitRig(t, 3)
	const ip = "192.0.2.1:1000"

	// Successes cost nothing.
	for range 20 {
		rig.want(ip, "/a2a/rest/tasks", goodKey, "", 200)
	}
	for range 3 {
		rig.want(ip, "/a2a/rest/tasks", badKey, "", 401)
	}
	checked, served := rig.checked.Load(), rig.served.Load()
	rec := rig.want("192.0.2.1:2000", "/a2a/rest/tasks", goodKey, "", 429) // another port, the same address
	wantLimited(t, rec, 3, "1")
	wantLimited(t, rig.call(ip, "/a2a/jsonrpc", badKey, ""), 3, "1")
	wantLimited(t, rig.call(ip, "/a2a/rest/tasks", "", ""), 3, "1")
	if rig.checked.Load() != checked || rig.served.Load() != served {
		t.Errorf("refused requests reached the authenticator (%d) or the app (%d)", rig.checked.Load()-checked, rig.served.Load()-served)
	}
	// Other addresses are not affected.
	rig.want("192.0.2.2:1000", "/a2a/rest/tasks", badKey, "", 401)
	rig.want("192.0.2.2:1000", "/a2a/rest/tasks", goodKey, "", 200)

	// A second later one token is due: one request is checked.
	rig.clock.advance(999 * time.Millisecond)
	wantLimited(t, rig.call(ip, "/a2a/rest/tasks", goodKey, ""), 3, "1")
	rig.clock.advance(time.Millisecond)
	rig.want(ip, "/a2a/rest/tasks", goodKey, "", 200)
	rig.want(ip, "/a2a/rest/tasks", badKey, "", 401)
	wantLimited(t, rig.call(ip, "/a2a/rest/tasks", goodKey, ""), 3, "1")
	// After a quiet spell the address has its whole allowance again.
	rig.clock.advance(time.Hour)
	for range 3 {
		rig.want(ip, "/a2a/rest/tasks", badKey, "", 401)
	}
	wantLimited(t, rig.call(ip, "/a2a/rest/tasks", goodKey, ""), 3, "1")
}

// TestAuthFailureLimitCounts: 401 and 403 of the authenticators count;
// other answers of theirs and the app's own 401 and 403 do not.
func TestAuthFailureLimitCounts(t *testing.T) {
	t.Parallel()
	rig := newAuthLimitRig(t, 2)
	const ip = "198.51.100.7:1"
	for range 10 {
		rig.want(ip, "/a2a/rest/tasks", goodKey, "503", 503)
		rig.want(ip, "/app401", goodKey, "", 401)
		rig.want(ip, "/app403", goodKey, "", 403)
	}
	rig.want(ip, "/a2a/rest/tasks", goodKey, "403", 403)
	rig.want(ip, "/a2a/rest/tasks", "", "", 401) // no credentials at all counts too
	wantLimited(t, rig.call(ip, "/a2a/rest/tasks", goodKey, ""), 2, "1")
}

// TestAuthFailureLimitAddresses: IPv6 callers are counted by their /64,
// IPv4 by their address; loopback is never limited.
func TestAuthFailureLimitAddresses(t *testing.T) {
	t.Parallel()
	rig := newAuthLimitRig(t, 2)
	rig.want("[2001:db8::1]:1", "/x", badKey, "", 401)
	rig.want("[2001:db8::ffff]:2", "/x", badKey, "", 401)
	wantLimited(t, rig.call("[2001:db8::2]:1", "/x", goodKey, ""), 2, "1")
	rig.want("[2001:db8:0:1::1]:1", "/x", goodKey, "", 200)
	rig.want("[::ffff:192.0.2.5]:1", "/x", badKey, "", 401)
	rig.want("192.0.2.5:1", "/x", badKey, "", 401)
	wantLimited(t, rig.call("192.0.2.5:2", "/x", goodKey, ""), 2, "1")
	rig.want("192.0.2.6:1", "/x", goodKey, "", 200)
	for _, remote := range []string{"127.0.0.1:1", "[::1]:1", "127.0.0.2:1"} {
		for range 10 {
			rig.want(remote, "/x", badKey, "", 401)
		}
		rig.want(remote, "/x", goodKey, "", 200)
	}
}

// TestAuthFailureLimitLog: an address that runs out is logged once, by
// its key, without the credentials it tried.
func TestAuthFailureLimitLog(t *testing.T) {
	t.Parallel()
	rig := newAuthLimitRig(t, 2)
	rig.want("192.0.2.9:1", "/x", badKey, "", 401)
	if rig.log.String() != "" {
		t.Errorf("logged before the limit: %s", rig.log.String())
	}
	rig.want("192.0.2.9:1", "/x", badKey, "", 401) // the last token
	for range 5 {
		rig.call("192.0.2.9:1", "/x", badKey, "")
	}
	log := rig.log.String()
	if n := strings.Count(log, "\n"); n != 1 || !strings.Contains(log, "level=WARN") ||
		!strings.Contains(log, "client=192.0.2.9") || !strings.Contains(log, "limit=2") {
		t.Errorf("log %q: want one warning naming the address and the limit", log)
	}
	if strings.Contains(log, badKey) || strings.Contains(log, goodKey) {
		t.Errorf("log holds a key: %s", log)
	}
}

// TestAuthFailureLimitForgets: the addresses kept are those that failed
// recently, and never more than the cap.
func TestAuthFailureLimitForgets(t *testing.T) {
	t.Parallel()
	rig := newAuthLimitRig(t, 1)
	addr := func(i int) string {
		return "10." + strconv.Itoa(i>>16&255) + "." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255) + ":1"
	}
	const first, second = 3000, 5000
	for i := range first {
		rig.want(addr(i), "/x", badKey, "", 401)
	}
	if n := rig.lim.size(); n != first {
		t.Errorf("%d addresses kept, want %d", n, first)
	}
	rig.clock.advance(time.Minute) // every one of them refills
	for i := first; i < first+second; i++ {
		rig.want(addr(i), "/x", badKey, "", 401)
	}
	if n := rig.lim.size(); n > second {
		t.Errorf("%d addresses kept, want at most the %d recent ones", n, second)
	}
	// The recent ones are still limited.
	wantLimited(t, rig.call(addr(first+second-1), "/x", goodKey, ""), 1, "1")

	capped := newAuthLimitRig(t, 1)
	capped.lim.maxBuckets = 100
	for i := range 1000 {
		capped.want(addr(i), "/x", badKey, "", 401)
	}
	if n := capped.lim.size(); n > 100 {
		t.Errorf("%d addresses kept, want at most the cap of 100", n)
	}
}

// TestAuthFailureLimitOff: a limit of 0 and a server without
// authentication put nothing in front.
func TestAuthFailureLimitOff(t *testing.T) {
	t.Parallel()
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
	var off *authLimiter = newAuthLimiter(0, time.Now, slog.Default())
	h := off.guard(app, func(app http.Handler) http.Handler { return app })
	for range 20 {
		req := httptest.NewRequest("GET", "/x", nil)
		req.RemoteAddr = "192.0.2.1:1"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 401 {
			t.Fatalf("limit 0: status %d", rec.Code)
		}
	}
	// Without authenticators the app is served as it is.
	on := newAuthLimiter(3, time.Now, slog.Default())
	mux := http.NewServeMux()
	if h := on.guard(mux, func(a http.Handler) http.Handler { return a }); h != http.Handler(mux) {
		t.Errorf("without authenticators: %T, want the app itself", h)
	}
}
