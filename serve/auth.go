package serve

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
)

// Authentication. The schemes of WithAPIKeys, WithJWT and WithMutualTLS
// are alternatives, declared in the card in that order, each a security
// requirement of its own: a request is admitted by whichever its
// credentials are for, and one with no credentials at all is answered 401
// with a challenge for every scheme. WithAuth middleware wraps them.
// Refused authentications are limited per client address
// ([WithAuthFailureLimit]). The agent card, its keys and the probes are
// served before any of it.

// Names of the card's security schemes.
const (
	APIKeyScheme    = "apiKey"
	JWTScheme       = "jwt"
	MutualTLSScheme = "mtls"
)

type authConfig struct {
	custom   []func(http.Handler) http.Handler
	apiKeys  map[string]string
	apiOpts  []auth.Option
	jwt      *auth.JWTVerifier
	jwtOpts  []auth.Option
	mtls     *auth.MutualTLSConfig
	mtlsOpts []auth.Option
	failures int  // refused authentications per address (WithAuthFailureLimit)
	setLimit bool // failures was set; else DefaultAuthFailures
}

// WithAuth authenticates every call of the A2A bindings, on HTTP and gRPC,
// with mw, HTTP middleware that admits a request by calling next with the
// caller's principal in its context ([server.WithPrincipal]), or answers
// it itself (401, 403). A gRPC call is presented to mw as an HTTP request
// with the call's metadata as headers and refused with the status of mw's
// answer, before its message is decoded. Several WithAuth wrap in order,
// the first outermost, around the schemes of WithAPIKeys, WithJWT and
// WithMutualTLS. The card's securitySchemes for mw are the caller's to
// declare.
func WithAuth(mw func(next http.Handler) http.Handler) Option {
	return func(c *config) error {
		if mw == nil {
			return errors.New("serve: WithAuth: nil middleware")
		}
		c.authn.custom = append(c.authn.custom, mw)
		return nil
	}
}

// WithAPIKeys admits the requests that carry one of keys (key ->
// principal) in the X-API-Key header ([auth.APIKey]), as that principal,
// and declares the scheme in the card as [APIKeyScheme].
func WithAPIKeys(keys map[string]string, opts ...auth.Option) Option {
	return func(c *config) error {
		if len(keys) == 0 {
			return errors.New("serve: WithAPIKeys: no key given")
		}
		c.authn.apiKeys, c.authn.apiOpts = keys, opts
		return nil
	}
}

// WithJWT admits the requests that carry a bearer JWT v accepts
// ([auth.JWT]), and declares the scheme in the card as [JWTScheme], with
// v's scopes.
func WithJWT(v *auth.JWTVerifier, opts ...auth.Option) Option {
	return func(c *config) error {
		if v == nil {
			return errors.New("serve: WithJWT: nil verifier")
		}
		c.authn.jwt, c.authn.jwtOpts = v, opts
		return nil
	}
}

// WithMutualTLS admits the requests whose connection presented a client
// certificate that the TLS config's ClientCAs verify ([auth.MutualTLS]),
// as the principal cfg names, and declares the scheme in the card as
// [MutualTLSScheme]. It needs [WithTLS] with ClientCAs and a ClientAuth of
// tls.VerifyClientCertIfGiven (the card and the probes stay reachable
// without a certificate, and a caller without one gets a 401 challenge
// rather than a TLS alert) or stricter.
func WithMutualTLS(cfg auth.MutualTLSConfig, opts ...auth.Option) Option {
	return func(c *config) error {
		c.authn.mtls, c.authn.mtlsOpts = &cfg, opts
		return nil
	}
}

// WithAuthFailureLimit sets how many refused authentications (401, 403)
// one client address may have before its requests to the A2A bindings are
// refused with 429, unchecked; it earns one back each second. An address
// is an IPv4 address or an IPv6 /64; loopback is not counted. The default
// is [DefaultAuthFailures]; 0 turns the limit off.
func WithAuthFailureLimit(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("serve: WithAuthFailureLimit: %d is negative (0 turns the limit off)", n)
		}
		c.authn.failures, c.authn.setLimit = n, true
		return nil
	}
}

// declareAuth checks the authentication settings and declares their
// schemes in card.
func (s *Server) declareAuth(card *a2a.AgentCard) error {
	a := &s.cfg.authn
	if a.mtls != nil && (s.cfg.tls == nil || s.cfg.tls.ClientCAs == nil) {
		return errors.New("serve: WithMutualTLS needs WithTLS with a config whose ClientCAs verify the client certificates")
	}
	declare := func(name string, scheme a2a.SecurityScheme, req a2a.SecurityRequirement) {
		if card.SecuritySchemes == nil {
			card.SecuritySchemes = make(map[string]a2a.SecurityScheme)
		}
		card.SecuritySchemes[name] = scheme
		card.SecurityRequirements = append(card.SecurityRequirements, req)
	}
	none := func(name string) a2a.SecurityRequirement {
		return a2a.SecurityRequirement{Schemes: map[string]a2a.StringList{name: {List: []string{}}}}
	}
	if a.apiKeys != nil {
		declare(APIKeyScheme, auth.APIKeyScheme(), none(APIKeyScheme))
	}
	if a.jwt != nil {
		declare(JWTScheme, auth.JWTScheme(a.jwt), auth.JWTRequirement(JWTScheme, a.jwt))
	}
	if a.mtls != nil {
		declare(MutualTLSScheme, auth.MutualTLSScheme(), none(MutualTLSScheme))
	}
	return nil
}

// Authentication describes what the A2A bindings require: "none", or the
// schemes joined with "+" ("api-key", "jwt", "mtls", "custom" for WithAuth
// middleware), as the "serving" log line says.
func (s *Server) Authentication() string {
	a := &s.cfg.authn
	var modes []string
	if a.apiKeys != nil {
		modes = append(modes, "api-key")
	}
	if a.jwt != nil {
		modes = append(modes, "jwt")
	}
	if a.mtls != nil {
		modes = append(modes, "mtls")
	}
	if len(a.custom) > 0 {
		modes = append(modes, "custom")
	}
	if len(modes) == 0 {
		return "none"
	}
	return strings.Join(modes, "+")
}

// authChain is the authentication in front of app: the failure limit, the
// WithAuth middleware, then the built-in schemes as alternatives. Without
// any, app itself.
func (s *Server) authChain(app http.Handler) http.Handler {
	a := &s.cfg.authn
	limit := DefaultAuthFailures
	if a.setLimit {
		limit = a.failures
	}
	guard := func(app http.Handler) http.Handler {
		h := s.schemes(app)
		for i := len(a.custom) - 1; i >= 0; i-- {
			h = a.custom[i](h)
		}
		return h
	}
	return newAuthLimiter(limit, time.Now, s.log).guard(app, guard)
}

// schemes puts the built-in schemes in front of app, as alternatives:
// client certificates for a request whose connection presented one (or
// every request, when mutual TLS is the only scheme); otherwise an API key
// for a request with an X-API-Key header and no Authorization header, a
// JWT for any other. A request with no credentials at all gets the
// challenges of every scheme in its 401.
func (s *Server) schemes(app http.Handler) http.Handler {
	a := &s.cfg.authn
	var keyed, jwt http.Handler
	if a.apiKeys != nil {
		keyed = auth.APIKey(a.apiKeys, app, a.apiOpts...)
	}
	if a.jwt != nil {
		jwt = auth.JWT(a.jwt, app, a.jwtOpts...)
	}
	others := app // what a request without a client certificate goes to
	switch {
	case keyed != nil && jwt != nil:
		keyChallenge := fmt.Sprintf("APIKey realm=%q, header=%q", auth.DefaultRealm, auth.APIKeyHeader)
		others = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hasKey, hasAuth := len(r.Header.Values(auth.APIKeyHeader)) > 0, len(r.Header.Values("Authorization")) > 0
			switch {
			case hasKey && !hasAuth:
				keyed.ServeHTTP(w, r)
			case !hasKey && !hasAuth:
				jwt.ServeHTTP(&extraChallenge{ResponseWriter: w, challenge: keyChallenge}, r)
			default:
				jwt.ServeHTTP(w, r)
			}
		})
	case keyed != nil:
		others = keyed
	case jwt != nil:
		others = jwt
	}
	if a.mtls == nil {
		return others
	}
	mtls := auth.MutualTLS(*a.mtls, app, a.mtlsOpts...)
	if keyed == nil && jwt == nil {
		return mtls
	}
	mtlsChallenge := fmt.Sprintf("MutualTLS realm=%q", auth.DefaultRealm)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case auth.HasClientCertificate(r):
			mtls.ServeHTTP(w, r)
		case len(r.Header.Values("Authorization")) == 0 && len(r.Header.Values(auth.APIKeyHeader)) == 0:
			// No credentials at all: the 401 names every scheme.
			others.ServeHTTP(&extraChallenge{ResponseWriter: w, challenge: mtlsChallenge}, r)
		default:
			others.ServeHTTP(w, r)
		}
	})
}

// extraChallenge adds a WWW-Authenticate challenge to a 401, so that a
// client that sent no credentials learns every scheme it may use.
type extraChallenge struct {
	http.ResponseWriter
	challenge string
}

func (e *extraChallenge) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		e.Header().Add("WWW-Authenticate", e.challenge)
	}
	e.ResponseWriter.WriteHeader(code)
}

// Unwrap is for http.ResponseController.
func (e *extraChallenge) Unwrap() http.ResponseWriter { return e.ResponseWriter }

// StreamDetached lets a stream go on after the handler returns
// ([server.StreamWatcher]): the challenge only concerns a 401.
func (e *extraChallenge) StreamDetached() (func(bool), bool) { return func(bool) {}, true }
