package auth

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

// APIKeyHeader is the header that carries the key [APIKey] checks, as
// [APIKeyScheme] declares it.
const APIKeyHeader = "X-API-Key"

// apiKeyChallenge is the auth-scheme of the challenge [APIKey] sends. API
// keys have no registered HTTP authentication scheme; the challenge names
// one anyway so that clients see what to send, and its header parameter
// says where.
const apiKeyChallenge = "APIKey"

// Where an API key travels: the locations of an apiKeySecurityScheme
// (A2A §4.5.2), for [WithKeyIn].
const (
	KeyInHeader = "header"
	KeyInQuery  = "query"
	KeyInCookie = "cookie"
)

// WithKeyIn makes [APIKey] read the key from the query parameter, cookie
// or header called name (location [KeyInQuery], [KeyInCookie] or
// [KeyInHeader]) instead of the [APIKeyHeader] header, and [APIKeyScheme]
// declare it there. Other authenticators ignore it. An unknown location,
// or a name that location cannot carry, makes them panic.
//
// Prefer the header: a key in a query string is written into the access
// logs of every proxy on the way and into browser histories. [APIKey]
// removes a query key from the request it passes on, so that nothing after
// it (the bindings, request logs) sees the key.
func WithKeyIn(location, name string) Option {
	return func(s *settings) { s.keyIn, s.keyName = location, name }
}

// APIKeyScheme is the agent card's description of what [APIKey] checks: an
// apiKeySecurityScheme (A2A §4.5.2) with location "header" and name
// [APIKeyHeader], or where [WithKeyIn] among opts says. Declare it in
// AgentCard.SecuritySchemes, and require it in
// AgentCard.SecurityRequirements, so that clients know to send the key.
func APIKeyScheme(opts ...Option) a2a.SecurityScheme {
	s := newSettings("APIKeyScheme", opts)
	return a2a.SecurityScheme{APIKey: &a2a.APIKeySecurityScheme{
		Description: "An API key issued by the operator of this server, sent in the " + s.keyPlace() + ".",
		Location:    s.keyIn,
		Name:        s.keyName,
	}}
}

// keyPlace names where the key goes, for people: "X-API-Key header",
// "api_key query parameter", "session cookie".
func (s settings) keyPlace() string {
	switch s.keyIn {
	case KeyInQuery:
		return s.keyName + " query parameter"
	case KeyInCookie:
		return s.keyName + " cookie"
	}
	return s.keyName + " header"
}

// checkKeyIn panics when the location of WithKeyIn is unknown or its name
// cannot be carried there.
func (s settings) checkKeyIn(who string) {
	var ok bool
	switch s.keyIn {
	case KeyInHeader, KeyInCookie:
		// A header field name and a cookie name are both RFC 9110 tokens.
		ok = s.keyName != "" && !strings.ContainsFunc(s.keyName, func(r rune) bool { return !isTokenChar(r) })
	case KeyInQuery:
		ok = s.keyName != "" && !strings.ContainsFunc(s.keyName, isControl)
	default:
		panic(fmt.Sprintf("auth: %s: unknown API key location %q (want header, query or cookie)", who, s.keyIn))
	}
	if !ok {
		panic(fmt.Sprintf("auth: %s: %q cannot name a %s", who, s.keyName, s.keyIn))
	}
}

// isTokenChar reports whether r may appear in an RFC 9110 token.
func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

type apiKey struct {
	realm          string
	keyIn, keyName string
	prefix         string
	creds          keyring
	next           http.Handler

	missing []byte // response bodies, encoded once
	invalid []byte
	several []byte
}

// APIKey returns middleware that admits a request only when it has exactly
// one [APIKeyHeader] header and its value is one of the keys, and calls next
// with the key's principal attached to the request context by
// [server.WithPrincipal]. keys maps each key to its principal; a principal
// may have several keys (to rotate them). The map is copied, so later
// changes to it have no effect.
//
// Any other request gets HTTP 401, before any A2A method runs (A2A §7.4),
// with the challenge
//
//	WWW-Authenticate: APIKey realm="a2a", header="X-API-Key"
//
// and a google.rpc.Status JSON body with status UNAUTHENTICATED that says
// which header to send, the same on every binding. When the request sent
// the header but its key is wrong or empty, or it sent the header more than
// once, the challenge adds error="invalid_key" (after RFC 6750 §3.1's
// invalid_token).
//
// Keys are compared as [Bearer] compares tokens: the request's key is
// hashed and its digest compared in constant time with every known digest,
// all of them every time. Keys are never logged and not kept in memory
// beyond their digests.
//
// APIKey panics, as [http.ServeMux.Handle] does for a bad pattern, when a
// key or principal is empty (an empty principal would share the anonymous
// owner's tasks), when a key cannot be sent in a header (it holds control
// characters other than tab, or starts or ends with a space or tab, which
// HTTP strips), or when the realm holds control characters.
func APIKey(keys map[string]string, next http.Handler, opts ...Option) http.Handler {
	if next == nil {
		panic("auth: APIKey: nil handler")
	}
	s := newSettings("APIKey", opts)
	s.checkKeyIn("APIKey")
	for key := range keys {
		if !ValidAPIKey(key) && key != "" {
			panic("auth: APIKey: a key holds control characters or starts or ends with a space; a header cannot carry it")
		}
	}
	send := "Send the API key in the " + s.keyPlace() + "."
	return &apiKey{
		realm:   s.realm,
		keyIn:   s.keyIn,
		keyName: s.keyName,
		prefix:  s.prefix,
		creds:   newKeyring("APIKey", "key", keys),
		next:    next,
		missing: statusBody(send),
		invalid: statusBody("The API key is not valid. " + send),
		several: statusBody("Send one " + s.keyPlace() + ", not several."),
	}
}

// ValidAPIKey reports whether key can be an [APIKey] key: not empty, and
// carried by a header unchanged (RFC 9110 §5.5: no control characters but
// tab, no space or tab at either end).
func ValidAPIKey(key string) bool {
	return key != "" &&
		!strings.ContainsFunc(key, func(r rune) bool { return r != '\t' && isControl(r) }) &&
		strings.Trim(key, " \t") == key
}

func (a *apiKey) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var values []string
	switch a.keyIn {
	case KeyInHeader:
		values = r.Header.Values(a.keyName)
	case KeyInQuery:
		values = r.URL.Query()[a.keyName]
	case KeyInCookie:
		for _, c := range r.CookiesNamed(a.keyName) {
			values = append(values, c.Value)
		}
	}
	switch len(values) {
	case 0:
		a.refuse(w, "", a.missing)
		return
	case 1:
	default:
		// Which of them would count is a guess; refuse rather than guess.
		a.refuse(w, "invalid_key", a.several)
		return
	}
	principal, ok := a.creds.lookup(values[0])
	if !ok {
		a.refuse(w, "invalid_key", a.invalid)
		return
	}
	r = r.WithContext(server.WithPrincipal(r.Context(), a.prefix+principal))
	if a.keyIn == KeyInQuery {
		// Pass the request on without the key, so that nothing after this
		// sees it or takes it for a parameter of the operation.
		q := r.URL.Query()
		q.Del(a.keyName)
		u := *r.URL
		u.RawQuery = q.Encode()
		r.URL = &u
		r.RequestURI = u.RequestURI()
	}
	a.next.ServeHTTP(w, r)
}

func (a *apiKey) refuse(w http.ResponseWriter, errCode string, body []byte) {
	refuse(w, challenge(apiKeyChallenge, a.realm, errCode, a.keyIn, a.keyName), body)
}
