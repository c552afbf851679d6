package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/jose"
	"github.com/goa2a/a2a/server"
)

// DefaultJWTLeeway is the clock skew [JWTConfig.Leeway] allows when not set.
const DefaultJWTLeeway = time.Minute

// JWTConfig configures a [JWTVerifier]. Exactly one of JWKSURL and Keys
// gives the keys; Audience is required.
type JWTConfig struct {
	// JWKSURL is where the issuer publishes its keys (a JWK set, RFC 7517
	// §5), an http or https URL. The set is fetched at first use, or by
	// [JWTVerifier.Refresh], and kept as jwks.go's limits say
	// ([DefaultJWKSMaxAge], [JWKSRefetchInterval]).
	JWKSURL string
	// Client fetches JWKSURL; nil means a client with a 10-second timeout.
	Client *http.Client
	// Keys is a fixed set of keys instead of a JWKS URL, for tests and
	// embedded use.
	Keys *jose.KeySet

	// Issuer, when set, must be the token's "iss". Set it: without it any
	// token signed by a key of the set is accepted whoever issued it.
	Issuer string
	// Audience must be the token's "aud" or one of its members (RFC 7519
	// §4.1.3): a token minted for another service is refused.
	Audience string
	// Algorithms are the signature algorithms accepted; the default is
	// ES256, RS256 and EdDSA. HS256 may be added only with Keys holding a
	// shared secret: a JWKS publishes public keys, and accepting HS256 with
	// them would let anyone who read the set sign tokens.
	Algorithms []string
	// Leeway is the clock skew allowed when checking "exp" and "nbf";
	// 0 means [DefaultJWTLeeway], and a negative value none.
	Leeway time.Duration
	// Scopes are OAuth 2.0 scopes every token must grant, from its "scope"
	// claim (a space-separated string, RFC 9068 §2.2.3) or "scp" (an array
	// of strings, or a string as "scope").
	Scopes []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// JWTVerifier checks bearer JWTs (RFC 7519, RFC 9068 access tokens): the
// signature against a key of the issuer's set, then "exp" (required),
// "nbf", "iss", "aud", "sub" (required: it names the principal) and the
// required scopes. It is safe for concurrent use.
type JWTVerifier struct {
	issuer, audience string
	algs             []string
	leeway           time.Duration
	scopes           []string
	now              func() time.Time

	static *jose.KeySet
	cache  *jose.RemoteKeySet
}

// NewJWTVerifier checks cfg and returns its verifier. It fetches nothing;
// call [JWTVerifier.Refresh] to fetch the JWKS at once and learn whether
// that works.
func NewJWTVerifier(cfg JWTConfig) (*JWTVerifier, error) {
	v := &JWTVerifier{
		issuer:   cfg.Issuer,
		audience: cfg.Audience,
		leeway:   cfg.Leeway,
		scopes:   slices.Clone(cfg.Scopes),
		now:      cfg.Now,
		static:   cfg.Keys,
	}
	if v.now == nil {
		v.now = time.Now
	}
	switch {
	case v.leeway == 0:
		v.leeway = DefaultJWTLeeway
	case v.leeway < 0:
		v.leeway = 0
	}
	if cfg.Audience == "" {
		return nil, errors.New("auth: JWT: an audience is required: a token minted for another service must not be accepted here")
	}
	for _, s := range v.scopes {
		if !ValidScope(s) {
			return nil, fmt.Errorf("auth: JWT: scope %q is empty or holds spaces, quotes, backslashes or control characters (RFC 6749 §3.3)", s)
		}
	}
	v.algs = slices.Clone(cfg.Algorithms)
	if len(v.algs) == 0 {
		v.algs = []string{jose.ES256, jose.RS256, jose.EdDSA}
	}
	for _, a := range v.algs {
		switch a {
		case jose.ES256, jose.RS256, jose.EdDSA:
		case jose.HS256:
			if cfg.Keys == nil {
				return nil, errors.New("auth: JWT: HS256 needs Keys with a shared secret; it is never used with a JWKS URL")
			}
		default:
			return nil, fmt.Errorf("auth: JWT: unsupported algorithm %q (supported: ES256, RS256, EdDSA, HS256)", a)
		}
	}
	switch {
	case cfg.JWKSURL != "" && cfg.Keys != nil:
		return nil, errors.New("auth: JWT: give a JWKS URL or keys, not both")
	case cfg.JWKSURL != "":
		u, err := checkJWKSURL(cfg.JWKSURL)
		if err != nil {
			return nil, fmt.Errorf("auth: JWT: %w", err)
		}
		client := cfg.Client
		if client == nil {
			client = &http.Client{Timeout: jwksTimeout}
		}
		v.cache = newKeyCache(u.String(), client, v.now)
	case cfg.Keys == nil:
		return nil, errors.New("auth: JWT: a JWKS URL or keys are required")
	}
	return v, nil
}

// ValidScope reports whether s can be a required scope: a scope-token
// (RFC 6749 §3.3), printable ASCII without space, quote or backslash.
func ValidScope(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return r <= 0x20 || r >= 0x7f || r == '"' || r == '\\'
	})
}

// Refresh fetches the JWKS now, so that a wrong URL shows at start-up
// rather than at the first request. It is a no-op with fixed keys.
func (v *JWTVerifier) Refresh(ctx context.Context) error {
	if v.cache == nil {
		return nil
	}
	return v.cache.Refresh(ctx)
}

// Issuer is the required issuer, "" when any is accepted.
func (v *JWTVerifier) Issuer() string { return v.issuer }

// Audience is the required audience.
func (v *JWTVerifier) Audience() string { return v.audience }

// Scopes are the scopes every token must grant.
func (v *JWTVerifier) Scopes() []string { return slices.Clone(v.scopes) }

// Claims are the checked claims of a token.
type Claims struct {
	Subject   string         // "sub", the principal
	Issuer    string         // "iss"
	Audience  []string       // "aud"
	Expiry    time.Time      // "exp"
	NotBefore time.Time      // "nbf", zero when absent
	Scopes    []string       // from "scope" or "scp"
	Raw       map[string]any // every claim as decoded, numbers as json.Number
}

// TokenError is the error of a token that is not valid. Reason says which
// check failed, in words that can be shown to the client: it never holds
// the token or any part of it.
type TokenError struct{ Reason string }

func (e *TokenError) Error() string { return "auth: JWT: " + e.Reason }

// ScopeError is the error of a valid token that lacks required scopes.
type ScopeError struct {
	Missing []string // the required scopes the token does not grant
}

func (e *ScopeError) Error() string {
	return "auth: JWT: the token lacks the scope " + strings.Join(e.Missing, " ")
}

func invalid(reason string) error { return &TokenError{Reason: reason} }

// maxKeysTried bounds the keys a token's signature is checked against when
// several fit (a token without "kid"), so that a large key set does not
// make one forged token cost many verifications.
const maxKeysTried = 8

// acceptedTypes are the "typ" header values of a JWT access token
// (RFC 7519 §5.1, RFC 9068 §2.1), compared case-insensitively. A token
// typed as something else (a DPoP proof, a logout token) is not a bearer
// credential.
var acceptedTypes = []string{"jwt", "at+jwt", "application/jwt", "application/at+jwt"}

// Verify checks token and returns its claims. Errors are a *[TokenError]
// (401), a *[ScopeError] (403) or [ErrKeysUnavailable] (503).
func (v *JWTVerifier) Verify(ctx context.Context, token string) (*Claims, error) {
	h, payload, input, sig, err := jose.ParseCompact(token)
	if err != nil {
		return nil, invalid("the token is not a well-formed compact JWS")
	}
	if !slices.Contains(v.algs, h.Alg) {
		if slices.Contains([]string{jose.ES256, jose.RS256, jose.EdDSA, jose.HS256}, h.Alg) {
			return nil, invalid("the token's algorithm " + h.Alg + " is not accepted")
		}
		return nil, invalid("the token's algorithm is not accepted")
	}
	if h.Type != "" && !slices.Contains(acceptedTypes, strings.ToLower(h.Type)) {
		return nil, invalid("the token's type (typ) is not a JWT access token")
	}
	var keys []jose.Key
	if v.cache != nil {
		if keys, err = v.cache.Keys(ctx, h.KeyID, h.Alg); errors.Is(err, jose.ErrNoKeySet) {
			return nil, ErrKeysUnavailable
		} else if err != nil {
			return nil, err
		}
	} else {
		keys = v.static.Find(h.KeyID, h.Alg)
	}
	if len(keys) == 0 {
		return nil, invalid("the token is signed by an unknown key")
	}
	verified := false
	for _, k := range keys[:min(len(keys), maxKeysTried)] {
		if jose.Verify(v.algs, h.Alg, k, input, sig) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, invalid("the token's signature does not verify")
	}
	raw, err := jose.DecodeObject(payload)
	if err != nil {
		return nil, invalid("the token's claims are not a JSON object")
	}
	c, err := v.check(raw)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, s := range v.scopes {
		if !slices.Contains(c.Scopes, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return c, &ScopeError{Missing: missing}
	}
	return c, nil
}

// check checks the verified claims.
func (v *JWTVerifier) check(raw map[string]any) (*Claims, error) {
	c := &Claims{Raw: raw}
	now := v.now()
	exp, ok, err := numericDate(raw, "exp")
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, invalid("the token has no expiry (exp)")
	case !now.Before(exp.Add(v.leeway)):
		return nil, invalid("the token has expired")
	}
	c.Expiry = exp
	nbf, ok, err := numericDate(raw, "nbf")
	switch {
	case err != nil:
		return nil, err
	case ok && now.Add(v.leeway).Before(nbf):
		return nil, invalid("the token is not valid yet (nbf)")
	}
	c.NotBefore = nbf
	if c.Issuer, err = stringClaim(raw, "iss"); err != nil {
		return nil, err
	}
	if v.issuer != "" && c.Issuer != v.issuer {
		return nil, invalid("the token is from another issuer")
	}
	switch aud := raw["aud"].(type) {
	case string:
		c.Audience = []string{aud}
	case []any:
		for _, a := range aud {
			s, ok := a.(string)
			if !ok {
				return nil, invalid("the token's audience (aud) is not a string or an array of strings")
			}
			c.Audience = append(c.Audience, s)
		}
	case nil:
	default:
		return nil, invalid("the token's audience (aud) is not a string or an array of strings")
	}
	if !slices.Contains(c.Audience, v.audience) {
		return nil, invalid("the token is for another audience")
	}
	if c.Subject, err = stringClaim(raw, "sub"); err != nil {
		return nil, err
	}
	if c.Subject == "" {
		return nil, invalid("the token has no subject (sub)")
	}
	if c.Scopes, err = scopes(raw); err != nil {
		return nil, err
	}
	return c, nil
}

// numericDate reads a NumericDate claim (RFC 7519 §2), seconds since the
// epoch, fractions allowed.
func numericDate(raw map[string]any, name string) (time.Time, bool, error) {
	v, ok := raw[name]
	if !ok {
		return time.Time{}, false, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return time.Time{}, false, invalid("the token's " + name + " is not a number")
	}
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1<<40 {
		return time.Time{}, false, invalid("the token's " + name + " is not a valid date")
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true, nil
}

func stringClaim(raw map[string]any, name string) (string, error) {
	v, ok := raw[name]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", invalid("the token's " + name + " is not a string")
	}
	return s, nil
}

// scopes reads "scope" (a space-separated string) and "scp" (an array of
// strings or such a string); a token may carry either, or both.
func scopes(raw map[string]any) ([]string, error) {
	var out []string
	for _, name := range []string{"scope", "scp"} {
		switch s := raw[name].(type) {
		case nil:
		case string:
			out = append(out, strings.Fields(s)...)
		case []any:
			if name == "scope" {
				return nil, invalid("the token's scope is not a string")
			}
			for _, e := range s {
				str, ok := e.(string)
				if !ok {
					return nil, invalid("the token's scp is not an array of strings")
				}
				out = append(out, str)
			}
		default:
			return nil, invalid("the token's " + name + " is not a string")
		}
	}
	return out, nil
}

// JWTScheme is the agent card's description of what [JWT] checks: an
// httpAuthSecurityScheme with scheme "Bearer" and bearerFormat "JWT"
// (A2A §4.5.3). Required scopes go in the card's securityRequirements, as
// the list of this scheme's entry (see [JWTRequirement]): an
// oauth2SecurityScheme would have to name the issuer's token endpoint and
// flows, which the verifier does not know.
func JWTScheme(v *JWTVerifier) a2a.SecurityScheme {
	desc := "A JWT access token, sent as Authorization: Bearer <token>, for audience " + v.audience
	if v.issuer != "" {
		desc += " from issuer " + v.issuer
	}
	if len(v.scopes) > 0 {
		desc += ", granting the scopes " + strings.Join(v.scopes, " ")
	}
	return a2a.SecurityScheme{HTTPAuth: &a2a.HTTPAuthSecurityScheme{
		Description:  desc + ".",
		Scheme:       "Bearer",
		BearerFormat: "JWT",
	}}
}

// JWTRequirement is the security requirement of scheme name (as declared
// with [JWTScheme]) with the verifier's required scopes as its list.
func JWTRequirement(name string, v *JWTVerifier) a2a.SecurityRequirement {
	return a2a.SecurityRequirement{Schemes: map[string]a2a.StringList{name: {List: v.Scopes()}}}
}

type jwtAuth struct {
	v      *JWTVerifier
	realm  string
	prefix string
	next   http.Handler

	missing     []byte // response bodies that do not vary, encoded once
	unavailable []byte
}

// send is the hint every refusal ends with.
const sendJWT = "Send Authorization: Bearer <JWT>"

// JWT returns middleware that admits a request only when its Authorization
// header carries a bearer JWT that v accepts ("Authorization: Bearer
// <JWT>"), and calls next with the token's subject ("sub") as the
// principal, attached by [server.WithPrincipal]. The subject is used as
// is, not prefixed by the issuer: a verifier trusts the keys of one
// issuer, whose subjects are unique (OpenID Connect Core §2), so two
// principals cannot collide.
//
// Refusals come before any A2A method runs, the same on every binding:
//   - no bearer credentials: 401 with the challenge `Bearer realm="a2a"`;
//   - a token that is not valid (malformed, alg "none" or not accepted, an
//     unknown key, a bad signature, expired, not valid yet, another issuer
//     or audience, no subject): 401 with error="invalid_token" and an
//     error_description saying which check failed (RFC 6750 §3.1);
//   - a valid token without a required scope: 403 with
//     error="insufficient_scope" and scope="<required scopes>";
//   - no key set fetched yet and the JWKS host unreachable: 503, since the
//     client did nothing wrong and may retry.
//
// Each has a google.rpc.Status JSON body (UNAUTHENTICATED,
// PERMISSION_DENIED, UNAVAILABLE) with the same explanation. Tokens are
// never logged, nor echoed in a refusal.
//
// JWT panics when v or next is nil or the realm holds control characters.
func JWT(v *JWTVerifier, next http.Handler, opts ...Option) http.Handler {
	if v == nil || next == nil {
		panic("auth: JWT: nil verifier or handler")
	}
	s := newSettings("JWT", opts)
	return &jwtAuth{
		v:           v,
		realm:       s.realm,
		prefix:      s.prefix,
		next:        next,
		missing:     statusBody(sendJWT),
		unavailable: statusBodyCode(http.StatusServiceUnavailable, "UNAVAILABLE", "The keys that verify bearer tokens cannot be fetched now; try again later."),
	}
}

func (j *jwtAuth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, present := bearerToken(r.Header)
	if !present {
		refuse(w, challenge("Bearer", j.realm, ""), j.missing)
		return
	}
	if token == "" {
		j.refuseInvalid(w, "the Authorization header does not hold one bearer token")
		return
	}
	c, err := j.v.Verify(r.Context(), token)
	var te *TokenError
	var se *ScopeError
	switch {
	case err == nil:
		j.next.ServeHTTP(w, r.WithContext(server.WithPrincipal(r.Context(), j.prefix+c.Subject)))
	case errors.As(err, &se):
		scope := strings.Join(j.v.scopes, " ")
		h := w.Header()
		h.Set("WWW-Authenticate", challenge("Bearer", j.realm, "", "error", "insufficient_scope", "scope", scope))
		h.Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write(statusBodyCode(http.StatusForbidden, "PERMISSION_DENIED",
			"The bearer token lacks the scope "+strings.Join(se.Missing, " ")+"; this agent requires "+scope+"."))
	case errors.As(err, &te):
		j.refuseInvalid(w, te.Reason)
	case errors.Is(err, ErrKeysUnavailable):
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Retry-After", fmt.Sprint(int(JWKSRefetchInterval/time.Second)))
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write(j.unavailable)
	default:
		j.refuseInvalid(w, "the token cannot be checked")
	}
}

// refuseInvalid answers 401 with error="invalid_token" and reason as the
// error_description; reasons are fixed texts, never parts of the token.
func (j *jwtAuth) refuseInvalid(w http.ResponseWriter, reason string) {
	refuse(w, challenge("Bearer", j.realm, "", "error", "invalid_token", "error_description", reason),
		statusBody("The bearer token is not valid: "+reason+". "+sendJWT))
}
