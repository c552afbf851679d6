package push

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/jose"
)

// Receiver limits and defaults.
const (
	// DefaultMaxBody is the largest body a [Receiver] reads when
	// [WithMaxBody] does not say; a larger one is answered 413.
	DefaultMaxBody = 1 << 20
	// DefaultLeeway is the clock skew allowed when checking "iat" and
	// "exp", when [WithLeeway] does not say.
	DefaultLeeway = time.Minute
	// DefaultDedupWindow is how many handled events a [Receiver]
	// remembers to drop repeats of, when [WithDedupWindow] does not say.
	DefaultDedupWindow = 10000

	jwksMinMaxAge    = time.Minute
	jwksDefaultAge   = 10 * time.Minute
	jwksMaxMaxAge    = 24 * time.Hour
	jwksRefetchEvery = 30 * time.Second
	jwksMaxBytes     = 64 << 10
	jwksTimeout      = 10 * time.Second
)

// Event is one push notification, authenticated and decoded, as a
// [Receiver] hands it to its callback.
type Event struct {
	// TaskID is the task the event is about (the body's taskId, or the
	// task's id for a whole Task).
	TaskID string
	// Event is the body's StreamResponse member: *a2a.Task,
	// *a2a.Message, *a2a.TaskStatusUpdateEvent or
	// *a2a.TaskArtifactUpdateEvent.
	Event a2a.Event
	// Body is the body exactly as received.
	Body []byte
	// Signature describes the verified JWT; nil when the receiver does not
	// check signatures.
	Signature *Signature
}

// Signature is what a verified push JWT says.
type Signature struct {
	KeyID    string    // "kid" of the header
	Issuer   string    // "iss", "" when absent
	ID       string    // "jti", "" when absent
	EventID  string    // [ClaimEventID], "" when absent
	IssuedAt time.Time // "iat"
	Expires  time.Time // "exp"
}

// Receiver is an [http.Handler] for a webhook: it checks that a push
// notification is authentic, is about a task this receiver expects, and
// has not been handled already, then hands it to a callback (A2A §4.3.3,
// §13.2; REQUIREMENTS R191-R194). Make one with [NewReceiver]; it is safe
// for concurrent use.
//
// Authentication is every check configured, all of which must pass:
// the JWT of [SignatureHeader] against a JWK set ([WithJWKSURL],
// [WithJWKS], [WithSigner]), the token of [TokenHeader] ([WithToken]) and
// the Authorization header ([WithAuthorization]). A receiver with none of
// them cannot be made. The JWT must be ES256, within its "iat" and "exp"
// (with [WithLeeway]), signed by a key of the set, with [ClaimBodySHA256]
// the hash of the body received (so a body changed on the way is
// refused) and [ClaimTaskID] the task of the body's event.
//
// Answers: 200 when the callback returned nil, or the event was handled
// before; 400 for a body that is not a StreamResponse; 401 when
// authentication fails, with the reason in the body; 403 for a task the
// receiver does not expect; 405 for a method other than POST; 413 for a
// body over the limit; 415 for a Content-Type other than
// application/a2a+json or application/json; 500 when the callback failed,
// so that the sender retries; 503 when the JWK set cannot be fetched, or
// while the same event is being handled by another request. Neither the
// answers nor [WithRejectHook] ever hold a token, credentials or a JWT.
type Receiver struct {
	handle  func(context.Context, Event) error
	maxBody int64
	leeway  time.Duration
	now     func() time.Time
	reject  func(r *http.Request, status int, reason string)

	token, authz []byte // sha256 of the expected values, nil when not checked
	jwt          bool
	static       *jose.KeySet
	cache        *jose.RemoteKeySet
	issuer       string
	client       *http.Client

	tasksMu sync.RWMutex
	tasks   map[string]bool // nil: no set given
	filters []func(context.Context, string) bool

	dedup *dedup
}

// ReceiverOption configures a [Receiver].
type ReceiverOption func(*Receiver) error

// WithJWKSURL verifies the JWT of each notification against the JWK set
// published at u, an absolute http or https URL (the sending server's base
// URL plus [JWKSPath]). The set is fetched at first use or by
// [Receiver.Refresh], kept for its Cache-Control max-age (between one
// minute and a day; ten minutes without one), and fetched again, at most
// every 30 seconds, when a JWT names a key it lacks. A failed fetch keeps
// the last good set.
func WithJWKSURL(u string) ReceiverOption {
	return func(r *Receiver) error {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("push: receiver: JWKS URL %q is not an absolute http or https URL", u)
		}
		if p.User != nil {
			return errors.New("push: receiver: the JWKS URL must not hold a user name or password")
		}
		if r.static != nil || r.cache != nil {
			return errors.New("push: receiver: give one key source: a JWKS URL, a JWK set or a signer")
		}
		r.jwt, r.cache = true, &jose.RemoteKeySet{
			URL: p.String(), RefetchEvery: jwksRefetchEvery, Timeout: jwksTimeout, MaxBytes: jwksMaxBytes,
			DefaultAge: jwksDefaultAge, MinAge: jwksMinMaxAge, MaxAge: jwksMaxMaxAge,
			Check: func(set *jose.KeySet) error {
				if len(set.Find("", jose.ES256)) == 0 {
					return errors.New("no ES256 key in the set")
				}
				return nil
			},
		}
		return nil
	}
}

// WithJWKS verifies the JWT of each notification against the keys of
// jwks, a JWK set such as [Signer.JWKS] returns. Only its ES256 keys are
// used.
func WithJWKS(jwks []byte) ReceiverOption {
	return func(r *Receiver) error {
		ks, err := jose.ParseJWKS(jwks)
		if err != nil {
			return fmt.Errorf("push: receiver: %w", err)
		}
		if len(ks.Find("", jose.ES256)) == 0 {
			return errors.New("push: receiver: the JWK set has no ES256 key")
		}
		if r.static != nil || r.cache != nil {
			return errors.New("push: receiver: give one key source: a JWKS URL, a JWK set or a signer")
		}
		r.jwt, r.static = true, ks
		return nil
	}
}

// WithSigner verifies the JWT of each notification against the public key
// of s, for a receiver in the same program as the sender (tests, demos).
func WithSigner(s *Signer) ReceiverOption {
	return func(r *Receiver) error {
		if s == nil {
			return errors.New("push: receiver: nil signer")
		}
		return WithJWKS(s.JWKS())(r)
	}
}

// WithHTTPClient is the client [WithJWKSURL] fetches the set with; the
// default has a 10-second timeout. A no-op without [WithJWKSURL].
func WithHTTPClient(c *http.Client) ReceiverOption {
	return func(r *Receiver) error { r.client = c; return nil }
}

// WithExpectedIssuer requires the JWT's "iss" to be iss (see
// [WithIssuer]). A no-op without a key source.
func WithExpectedIssuer(iss string) ReceiverOption {
	return func(r *Receiver) error {
		if iss == "" {
			return errors.New("push: receiver: empty issuer")
		}
		r.issuer = iss
		return nil
	}
}

// WithToken requires the [TokenHeader] header to be token, the token of
// the push config registered for this webhook. It is compared in constant
// time.
func WithToken(token string) ReceiverOption {
	return func(r *Receiver) error {
		if token == "" {
			return errors.New("push: receiver: empty token")
		}
		sum := sha256.Sum256([]byte(token))
		r.token = sum[:]
		return nil
	}
}

// WithAuthorization requires the Authorization header to be value, the
// config's authentication as the sender presents it: "<scheme>
// <credentials>", such as "Bearer abc". The scheme is compared without
// regard to case, the credentials exactly and in constant time.
func WithAuthorization(value string) ReceiverOption {
	return func(r *Receiver) error {
		scheme, creds, ok := strings.Cut(strings.TrimSpace(value), " ")
		if !ok || scheme == "" || strings.TrimSpace(creds) == "" {
			return errors.New(`push: receiver: the expected Authorization must be "<scheme> <credentials>"`)
		}
		r.authz = authzSum(scheme, creds)
		return nil
	}
}

func authzSum(scheme, creds string) []byte {
	sum := sha256.Sum256([]byte(strings.ToLower(scheme) + " " + strings.TrimSpace(creds)))
	return sum[:]
}

// WithTasks makes the receiver accept notifications about the tasks ids
// (and those added by [Receiver.Expect]) and answer 403 to others, as a
// client MUST check (R193). Without it or [WithTaskFilter], every task is
// expected, and the check falls to the callback.
func WithTasks(ids ...string) ReceiverOption {
	return func(r *Receiver) error {
		if r.tasks == nil {
			r.tasks = map[string]bool{}
		}
		for _, id := range ids {
			if id == "" {
				return errors.New("push: receiver: empty task ID")
			}
			r.tasks[id] = true
		}
		return nil
	}
}

// WithTaskFilter makes the receiver accept a task when ok says so (or
// when it is in the set of [WithTasks]) and answer 403 to others.
func WithTaskFilter(ok func(ctx context.Context, taskID string) bool) ReceiverOption {
	return func(r *Receiver) error {
		if ok == nil {
			return errors.New("push: receiver: nil task filter")
		}
		r.filters = append(r.filters, ok)
		return nil
	}
}

// WithLeeway is the clock skew allowed when checking "iat" and "exp";
// [DefaultLeeway] when not given, none when negative.
func WithLeeway(d time.Duration) ReceiverOption {
	return func(r *Receiver) error { r.leeway = max(d, 0); return nil }
}

// WithMaxBody is the largest body read, in bytes; [DefaultMaxBody] when
// not given.
func WithMaxBody(n int64) ReceiverOption {
	return func(r *Receiver) error {
		if n <= 0 {
			return fmt.Errorf("push: receiver: body limit %d is not positive", n)
		}
		r.maxBody = n
		return nil
	}
}

// WithDedupWindow is how many handled events are remembered so that a
// repeat of one is answered 200 without calling the callback again;
// [DefaultDedupWindow] when not given. The oldest are forgotten first.
func WithDedupWindow(n int) ReceiverOption {
	return func(r *Receiver) error {
		if n <= 0 {
			return fmt.Errorf("push: receiver: dedup window %d is not positive", n)
		}
		r.dedup = newDedup(n)
		return nil
	}
}

// WithClock is the receiver's clock; time.Now when not given.
func WithClock(now func() time.Time) ReceiverOption {
	return func(r *Receiver) error { r.now = now; return nil }
}

// WithRejectHook calls f for every notification refused, with the status
// answered and the reason, for logs. The reason never holds a token,
// credentials or a JWT.
func WithRejectHook(f func(r *http.Request, status int, reason string)) ReceiverOption {
	return func(r *Receiver) error { r.reject = f; return nil }
}

// NewReceiver returns a receiver that hands each new, authentic event to
// handle; an error from handle answers 500, so that the sender retries.
// At least one of [WithJWKSURL], [WithJWKS], [WithSigner], [WithToken] and
// [WithAuthorization] is required: a webhook that takes anything from
// anyone is refused.
func NewReceiver(handle func(ctx context.Context, ev Event) error, opts ...ReceiverOption) (*Receiver, error) {
	if handle == nil {
		return nil, errors.New("push: receiver: nil callback")
	}
	r := &Receiver{handle: handle, maxBody: DefaultMaxBody, leeway: DefaultLeeway, now: time.Now}
	for _, o := range opts {
		if err := o(r); err != nil {
			return nil, err
		}
	}
	if !r.jwt && r.token == nil && r.authz == nil {
		return nil, errors.New("push: receiver: no authentication: give a JWKS URL, a JWK set, a signer, a token or an Authorization value")
	}
	if r.dedup == nil {
		r.dedup = newDedup(DefaultDedupWindow)
	}
	if r.cache != nil {
		r.cache.Client = r.client
		if r.cache.Client == nil {
			r.cache.Client = &http.Client{Timeout: jwksTimeout}
		}
		r.cache.Now = r.now
	}
	return r, nil
}

// Expect adds taskID to the tasks the receiver accepts, such as a task the
// program has just created with a push config for this webhook. It makes
// a receiver without [WithTasks] accept only the tasks so added (and
// those its filters accept).
func (r *Receiver) Expect(taskID string) {
	r.tasksMu.Lock()
	defer r.tasksMu.Unlock()
	if r.tasks == nil {
		r.tasks = map[string]bool{}
	}
	r.tasks[taskID] = true
}

// Forget removes taskID from the tasks the receiver accepts.
func (r *Receiver) Forget(taskID string) {
	r.tasksMu.Lock()
	defer r.tasksMu.Unlock()
	delete(r.tasks, taskID)
}

// Refresh fetches the JWK set of [WithJWKSURL] now, to learn at start-up
// whether it can be had. A no-op for other key sources.
func (r *Receiver) Refresh(ctx context.Context) error {
	if r.cache == nil {
		return nil
	}
	if err := r.cache.Refresh(ctx); err != nil {
		return fmt.Errorf("push: JWKS: %w", err)
	}
	return nil
}

// failure is a refusal: the status and a reason safe to show.
type failure struct {
	status int
	reason string
}

func fail(status int, format string, args ...any) *failure {
	return &failure{status, fmt.Sprintf(format, args...)}
}

// ServeHTTP handles one notification; see [Receiver].
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if f := r.serve(w, req); f != nil {
		if r.reject != nil {
			r.reject(req, f.status, f.reason)
		}
		switch f.status {
		case http.StatusUnauthorized:
			for _, c := range r.challenges() {
				w.Header().Add("WWW-Authenticate", c)
			}
		case http.StatusMethodNotAllowed:
			w.Header().Set("Allow", http.MethodPost)
		case http.StatusServiceUnavailable:
			w.Header().Set("Retry-After", "1")
		}
		http.Error(w, "push: "+f.reason, f.status)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// challenges name what a 401 wants, one per configured check.
func (r *Receiver) challenges() []string {
	var c []string
	if r.jwt {
		c = append(c, SignatureHeader+` realm="a2a-push"`)
	}
	if r.token != nil {
		c = append(c, TokenHeader+` realm="a2a-push"`)
	}
	return c
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) *failure {
	if req.Method != http.MethodPost {
		return fail(http.StatusMethodNotAllowed, "method %s not allowed; notifications are POSTed", req.Method)
	}
	mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err != nil || (mt != "application/a2a+json" && mt != "application/json") {
		return fail(http.StatusUnsupportedMediaType, "Content-Type must be application/a2a+json or application/json")
	}
	if req.ContentLength > r.maxBody {
		return fail(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", r.maxBody)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, r.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return fail(http.StatusRequestEntityTooLarge, "the body is larger than %d bytes", r.maxBody)
		}
		return fail(http.StatusBadRequest, "reading the body: %v", err)
	}
	sig, f := r.authenticate(req, body)
	if f != nil {
		return f
	}
	if err := a2a.CheckDepth(body, a2a.DefaultMaxDepth); err != nil {
		return fail(http.StatusBadRequest, "the body nests deeper than %d levels", a2a.DefaultMaxDepth)
	}
	var sr a2a.StreamResponse
	if err := a2a.Unmarshal(body, &sr); err != nil {
		return fail(http.StatusBadRequest, "the body is not a StreamResponse: %v", err)
	}
	// A member given twice, or in another case than the field's, reads
	// as another event to a reader taking the first or the exact one.
	if err := a2a.CheckMembers(body, &sr); err != nil {
		return fail(http.StatusBadRequest, "the body is not a strict StreamResponse: %v", err)
	}
	taskID := taskOf(sr.Event)
	if taskID == "" {
		return fail(http.StatusBadRequest, "the body's event names no task")
	}
	if sig != nil && sig.taskID != taskID {
		return fail(http.StatusUnauthorized, "the signature is for another task than the body's")
	}
	if !r.expected(req.Context(), taskID) {
		return fail(http.StatusForbidden, "task %q is not expected here", taskID)
	}
	key := taskID + "\x00"
	if sig != nil && sig.EventID != "" {
		key += "event:" + sig.EventID
	} else {
		sum := sha256.Sum256(body)
		key += "body:" + hex.EncodeToString(sum[:])
	}
	switch r.dedup.reserve(key) {
	case seen:
		return nil // handled before: acknowledge, do not call back again
	case busy:
		return fail(http.StatusServiceUnavailable, "the same event is being handled; retry")
	}
	done := false
	defer func() {
		if done {
			r.dedup.finish(key)
		} else {
			r.dedup.release(key)
		}
	}()
	ev := Event{TaskID: taskID, Event: sr.Event, Body: body}
	if sig != nil {
		ev.Signature = &sig.Signature
	}
	if err := r.handle(req.Context(), ev); err != nil {
		return fail(http.StatusInternalServerError, "the event could not be handled; retry later")
	}
	done = true
	return nil
}

// taskOf is the task an event is about.
func taskOf(ev a2a.Event) string {
	switch e := ev.(type) {
	case *a2a.Task:
		return e.ID
	case *a2a.Message:
		return e.TaskID
	case *a2a.TaskStatusUpdateEvent:
		return e.TaskID
	case *a2a.TaskArtifactUpdateEvent:
		return e.TaskID
	}
	return ""
}

func (r *Receiver) expected(ctx context.Context, taskID string) bool {
	r.tasksMu.RLock()
	set, in := r.tasks != nil, r.tasks[taskID]
	r.tasksMu.RUnlock()
	if in {
		return true
	}
	for _, f := range r.filters {
		if f(ctx, taskID) {
			return true
		}
	}
	return !set && len(r.filters) == 0
}

// verified is a checked JWT.
type verified struct {
	Signature
	taskID string
}

// authenticate runs every configured check.
func (r *Receiver) authenticate(req *http.Request, body []byte) (*verified, *failure) {
	if r.token != nil {
		vals := req.Header.Values(TokenHeader)
		if len(vals) == 0 {
			return nil, fail(http.StatusUnauthorized, "no %s header", TokenHeader)
		}
		sum := sha256.Sum256([]byte(vals[0]))
		if len(vals) != 1 || subtle.ConstantTimeCompare(sum[:], r.token) != 1 {
			return nil, fail(http.StatusUnauthorized, "the %s does not match", TokenHeader)
		}
	}
	if r.authz != nil {
		v := req.Header.Get("Authorization")
		if v == "" {
			return nil, fail(http.StatusUnauthorized, "no Authorization header")
		}
		scheme, creds, _ := strings.Cut(strings.TrimSpace(v), " ")
		if subtle.ConstantTimeCompare(authzSum(scheme, creds), r.authz) != 1 {
			return nil, fail(http.StatusUnauthorized, "the Authorization credentials do not match")
		}
	}
	if !r.jwt {
		return nil, nil
	}
	return r.verifyJWT(req, body)
}

func (r *Receiver) verifyJWT(req *http.Request, body []byte) (*verified, *failure) {
	bad := func(format string, args ...any) (*verified, *failure) {
		return nil, fail(http.StatusUnauthorized, format, args...)
	}
	vals := req.Header.Values(SignatureHeader)
	switch {
	case len(vals) == 0 || vals[0] == "":
		return bad("no %s header: the notification is not signed", SignatureHeader)
	case len(vals) > 1:
		return bad("more than one %s header", SignatureHeader)
	}
	h, payload, input, sigBytes, err := jose.ParseCompact(strings.TrimSpace(vals[0]))
	if err != nil {
		return bad("the %s is not a well-formed compact JWS", SignatureHeader)
	}
	if h.Alg != jose.ES256 {
		return bad("the signature's algorithm is not ES256")
	}
	if h.Type != "" && !strings.EqualFold(h.Type, "JWT") {
		return bad("the signature's type (typ) is not JWT")
	}
	var keys []jose.Key
	if r.cache != nil {
		keys, err = r.cache.Keys(req.Context(), h.KeyID, jose.ES256)
		if err != nil {
			return nil, fail(http.StatusServiceUnavailable, "the sender's JWK set cannot be fetched")
		}
	} else {
		keys = r.static.Find(h.KeyID, jose.ES256)
	}
	if len(keys) == 0 {
		return bad("the signature names an unknown key")
	}
	ok := false
	for _, k := range keys[:min(len(keys), 8)] {
		if jose.Verify([]string{jose.ES256}, jose.ES256, k, input, sigBytes) == nil {
			ok = true
			break
		}
	}
	if !ok {
		return bad("the signature does not verify")
	}
	raw, err := jose.DecodeObject(payload)
	if err != nil {
		return bad("the signature's claims are not a JSON object")
	}
	v := &verified{}
	v.KeyID = h.KeyID
	var f *failure
	date := func(name string) time.Time {
		n, ok := raw[name].(json.Number)
		if !ok {
			f = fail(http.StatusUnauthorized, "the signature has no numeric %q", name)
			return time.Time{}
		}
		x, err := n.Float64()
		if err != nil || math.IsNaN(x) || x < 0 || x > 1<<40 {
			f = fail(http.StatusUnauthorized, "the signature's %q is not a valid date", name)
			return time.Time{}
		}
		return time.Unix(int64(x), 0)
	}
	str := func(name string, required bool) string {
		x, present := raw[name]
		s, ok := x.(string)
		if (present && !ok) || (required && s == "") {
			f = fail(http.StatusUnauthorized, "the signature has no string %q", name)
		}
		return s
	}
	v.IssuedAt, v.Expires = date("iat"), date("exp")
	v.taskID, v.Issuer, v.ID, v.EventID = str(ClaimTaskID, true), str("iss", false), str("jti", false), str(ClaimEventID, false)
	bodyHash := str(ClaimBodySHA256, true)
	if f != nil {
		return nil, f
	}
	now := r.now()
	switch {
	case !now.Before(v.Expires.Add(r.leeway)):
		return bad("the signature has expired")
	case now.Add(r.leeway).Before(v.IssuedAt):
		return bad("the signature is issued in the future (iat)")
	case v.Expires.Sub(v.IssuedAt) > MaxLifetime:
		return bad("the signature is valid for longer than %v", MaxLifetime)
	case r.issuer != "" && v.Issuer != r.issuer:
		return bad("the signature is from another issuer")
	}
	sum := sha256.Sum256(body)
	if subtle.ConstantTimeCompare([]byte(b64.EncodeToString(sum[:])), []byte(bodyHash)) != 1 {
		return bad("the body does not match the signature (%s)", ClaimBodySHA256)
	}
	return v, nil
}

// Dedup states.
const (
	fresh = iota
	seen
	busy
)

// dedup remembers the keys of the events handled, the last n of them, and
// those being handled.
type dedup struct {
	mu     sync.Mutex
	n      int
	done   map[string]bool
	order  []string // ring of done keys, oldest at next
	next   int
	active map[string]bool
}

func newDedup(n int) *dedup {
	return &dedup{n: n, done: map[string]bool{}, active: map[string]bool{}}
}

// reserve says whether key was handled (seen), is being handled (busy),
// or neither (fresh), in which case it is now being handled.
func (d *dedup) reserve(key string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.done[key]:
		return seen
	case d.active[key]:
		return busy
	}
	d.active[key] = true
	return fresh
}

// release forgets a key whose handling failed, so that a retry handles it.
func (d *dedup) release(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.active, key)
}

// finish records key as handled, forgetting the oldest beyond n.
func (d *dedup) finish(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.active, key)
	if len(d.order) < d.n {
		d.order = append(d.order, key)
	} else {
		delete(d.done, d.order[d.next])
		d.order[d.next] = key
		d.next = (d.next + 1) % d.n
	}
	d.done[key] = true
}
