package auth

import (
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

// APIKeyScheme is the agent card's description of what [APIKey] checks: an
// apiKeySecurityScheme (A2A §4.5.2) with location "header" and name
// [APIKeyHeader]. Declare it in AgentCard.SecuritySchemes, and require it
// in AgentCard.SecurityRequirements, so that clients know to send the key.
func APIKeyScheme() a2a.SecurityScheme {
	return a2a.SecurityScheme{APIKey: &a2a.APIKeySecurityScheme{
		Description: "An API key issued by the operator of this server, sent in the " + APIKeyHeader + " header.",
		Location:    "header",
		Name:        APIKeyHeader,
	}}
}

type apiKey struct {
	realm string
	creds keyring
	next  http.Handler

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
	for key := range keys {
		if !ValidAPIKey(key) && key != "" {
			panic("auth: APIKey: a key holds control characters or starts or ends with a space; a header cannot carry it")
		}
	}
	const send = "Send the API key in the " + APIKeyHeader + " header."
	return &apiKey{
		realm:   s.realm,
		creds:   newKeyring("APIKey", "key", keys),
		next:    next,
		missing: statusBody(send),
		invalid: statusBody("The API key is not valid. " + send),
		several: statusBody("Send one " + APIKeyHeader + " header, not several."),
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
	values := r.Header.Values(APIKeyHeader)
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
	a.next.ServeHTTP(w, r.WithContext(server.WithPrincipal(r.Context(), principal)))
}

func (a *apiKey) refuse(w http.ResponseWriter, errCode string, body []byte) {
	refuse(w, challenge(apiKeyChallenge, a.realm, errCode, "header", APIKeyHeader), body)
}
