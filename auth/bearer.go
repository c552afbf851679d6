// Package auth authenticates A2A requests in front of the protocol: an
// authenticator is HTTP middleware that refuses a request without valid
// credentials before any A2A method runs (A2A §7.4), and otherwise tells the
// server who the caller is with [server.WithPrincipal], so that tasks are
// owned per principal (A2A §13.1).
//
// Authenticators: [Bearer] for static bearer tokens (RFC 6750), [APIKey]
// for API keys in a header, query parameter or cookie, [JWT] for bearer
// JWTs verified against a JWK set, and [MutualTLS] for client
// certificates. Each has a function that describes it for the agent card
// (such as [APIKeyScheme]). The package also signs agent cards and
// verifies their signatures ([SignCard], [CardVerifier], A2A §8.4).
package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/goa2a/a2a/server"
)

// DefaultRealm is the realm of the challenge when [WithRealm] is not given.
const DefaultRealm = "a2a"

// Option configures [Bearer] and [APIKey].
type Option func(*settings)

// settings are what the options set, shared by the authenticators.
type settings struct {
	realm string

	keyIn, keyName string // where APIKey reads the key; see WithKeyIn
	prefix         string // of every principal; see WithPrincipalPrefix
}

// WithRealm sets the realm named in the WWW-Authenticate challenge
// (RFC 9110 §11.6.1). The default is [DefaultRealm]. A realm with control
// characters makes [Bearer] and [APIKey] panic.
func WithRealm(realm string) Option {
	return func(s *settings) { s.realm = realm }
}

// WithPrincipalPrefix puts prefix before every principal the
// authenticator names: "jwt:" makes the JWT subject alice the principal
// "jwt:alice". Give each authenticator its own prefix when several guard
// one server, so that the principals of different schemes (alice as the
// name of an API key, alice as a JWT subject, alice as a certificate's
// common name) stay apart and never share tasks. [MutualTLSConfig.Allow]
// lists principals without the prefix.
func WithPrincipalPrefix(prefix string) Option {
	return func(s *settings) { s.prefix = prefix }
}

// newSettings applies opts over the defaults; who names the caller in a
// panic.
func newSettings(who string, opts []Option) settings {
	s := settings{realm: DefaultRealm, keyIn: KeyInHeader, keyName: APIKeyHeader}
	for _, o := range opts {
		o(&s)
	}
	if strings.ContainsFunc(s.realm, isControl) {
		panic("auth: " + who + ": the realm holds control characters")
	}
	if strings.ContainsFunc(s.prefix, isControl) {
		panic("auth: " + who + ": the principal prefix holds control characters")
	}
	return s
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

type credential struct {
	digest    [sha256.Size]byte // of the secret; the secret itself is not kept
	principal string
}

// keyring holds the digests of an authenticator's secrets (bearer tokens,
// API keys) with their principals.
type keyring []credential

// newKeyring keeps the digest of each secret of secrets (secret ->
// principal); who and what name the caller and its secrets in a panic.
func newKeyring(who, what string, secrets map[string]string) keyring {
	k := make(keyring, 0, len(secrets))
	for secret, principal := range secrets {
		if secret == "" || principal == "" {
			panic(fmt.Sprintf("auth: %s: every %s needs a non-empty %s and principal", who, what, what))
		}
		k = append(k, credential{digest: sha256.Sum256([]byte(secret)), principal: principal})
	}
	return k
}

type bearer struct {
	realm  string
	prefix string
	creds  keyring
	next   http.Handler

	missing []byte // response bodies, encoded once
	invalid []byte
}

// Bearer returns middleware that admits a request only when its
// Authorization header carries one of the tokens ("Authorization: Bearer
// <token>"), and calls next with the token's principal attached to the
// request context by [server.WithPrincipal]. tokens maps each token to its
// principal; it is copied, so later changes to the map have no effect.
//
// Any other request gets HTTP 401 with a WWW-Authenticate challenge
// (RFC 6750 §3) and a google.rpc.Status JSON body with status
// UNAUTHENTICATED, the same on every binding, since no A2A method has run
// yet. A request with no bearer credentials gets a challenge without an
// error code; one with a wrong or malformed token gets error="invalid_token"
// (RFC 6750 §3.1).
//
// Tokens are compared in constant time: the request's token is hashed and
// its digest compared with every known digest, all of them every time, so
// neither the time taken nor its early exit tells which bytes matched.
// Tokens are never logged and not kept in memory beyond their digests.
//
// Bearer panics, as [http.ServeMux.Handle] does for a bad pattern, when a
// token or principal is empty (an empty principal would share the
// anonymous owner's tasks) or when the realm holds control characters.
func Bearer(tokens map[string]string, next http.Handler, opts ...Option) http.Handler {
	if next == nil {
		panic("auth: Bearer: nil handler")
	}
	s := newSettings("Bearer", opts)
	return &bearer{
		realm:   s.realm,
		prefix:  s.prefix,
		creds:   newKeyring("Bearer", "token", tokens),
		next:    next,
		missing: statusBody("Send Authorization: Bearer <token>"),
		invalid: statusBody("The bearer token is not valid. Send Authorization: Bearer <token>"),
	}
}

func (b *bearer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	token, present := bearerToken(r.Header)
	if !present {
		b.refuse(w, "", b.missing)
		return
	}
	principal, ok := b.creds.lookup(token)
	if !ok {
		b.refuse(w, "invalid_token", b.invalid)
		return
	}
	b.next.ServeHTTP(w, r.WithContext(server.WithPrincipal(r.Context(), b.prefix+principal)))
}

// refuse answers 401 with the Bearer challenge, naming errCode when not
// empty.
func (b *bearer) refuse(w http.ResponseWriter, errCode string, body []byte) {
	refuse(w, challenge("Bearer", b.realm, errCode), body)
}

// lookup finds the principal of secret, comparing digests in constant time
// against every credential.
func (k keyring) lookup(secret string) (string, bool) {
	if secret == "" {
		return "", false
	}
	d := sha256.Sum256([]byte(secret))
	principal, found := "", 0
	for i := range k {
		eq := subtle.ConstantTimeCompare(d[:], k[i].digest[:])
		if eq == 1 {
			principal = k[i].principal
		}
		found |= eq
	}
	return principal, found == 1
}

// bearerToken returns the token of a single "Authorization: Bearer <token>"
// header; present reports whether the request offered bearer credentials
// at all (the scheme name is case-insensitive, RFC 9110 §11.1). A request
// with several Authorization headers, or a Bearer one without a token,
// offers credentials that are not valid.
func bearerToken(h http.Header) (token string, present bool) {
	values := h.Values("Authorization")
	if len(values) == 0 {
		return "", false
	}
	if len(values) > 1 {
		return "", true
	}
	scheme, rest, _ := strings.Cut(values[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimLeft(rest, " ")
	if strings.ContainsAny(token, " \t") {
		return "", true
	}
	return token, true
}

// challenge is a WWW-Authenticate challenge (RFC 9110 §11.6.1) for scheme
// in realm, with the auth-params params (name, value pairs) and then
// error=errCode when errCode is not empty.
func challenge(scheme, realm, errCode string, params ...string) string {
	var sb strings.Builder
	sb.WriteString(scheme)
	sb.WriteString(" realm=")
	sb.WriteString(quote(realm))
	for i := 0; i+1 < len(params); i += 2 {
		fmt.Fprintf(&sb, ", %s=%s", params[i], quote(params[i+1]))
	}
	if errCode != "" {
		fmt.Fprintf(&sb, ", error=%s", quote(errCode))
	}
	return sb.String()
}

// refuse answers 401 with the challenge and the google.rpc.Status body.
func refuse(w http.ResponseWriter, challenge string, body []byte) {
	h := w.Header()
	h.Set("WWW-Authenticate", challenge)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(body)
}

// quote writes s as an RFC 9110 quoted-string.
func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// statusBody is the google.rpc.Status JSON of a 401, the shape the
// HTTP+JSON binding uses for errors (A2A §11.6).
func statusBody(message string) []byte {
	return statusBodyCode(http.StatusUnauthorized, "UNAUTHENTICATED", message)
}

// statusBodyCode is the google.rpc.Status JSON of an HTTP error code with
// the status name status (such as 403 and PERMISSION_DENIED).
func statusBodyCode(code int, statusName, message string) []byte {
	type status struct {
		Code    int    `json:"code"`
		Status  string `json:"status"`
		Message string `json:"message"`
	}
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false) // keep "<token>" readable
	if err := enc.Encode(struct {
		Error status `json:"error"`
	}{status{Code: code, Status: statusName, Message: message}}); err != nil {
		panic(err) // a constant shape; cannot fail
	}
	return []byte(sb.String())
}
