package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/serve"
)

// jwtSettings are the flags of bearer JWT authentication: --jwks, --audience,
// --issuer and --scope.
type jwtSettings struct {
	jwksURL  string
	audience string
	issuer   string
	scopes   scopesFlag

	jwt *auth.JWTVerifier // made by validate when --jwks is set
}

func (j *jwtSettings) register(fs *flag.FlagSet) {
	fs.StringVar(&j.jwksURL, "jwks", "", "admit requests to the A2A bindings that carry a bearer JWT (Authorization: Bearer <JWT>) signed by a key of the\n"+
		"JWK set at `URL` (ES256, RS256 or EdDSA), as its subject (sub); needs --audience. The set is fetched at start-up and kept\n"+
		"as its Cache-Control says (1 minute to 24 hours, default 10 minutes). With --api-key too, either credential is accepted")
	fs.StringVar(&j.audience, "audience", "", "with --jwks, the audience (aud) a token must be for: this agent's identifier at the issuer")
	fs.StringVar(&j.issuer, "issuer", "", "with --jwks, the issuer (iss) a token must come from (recommended; default: any issuer that signs with the set's keys)")
	fs.Var(&j.scopes, "scope", "with --jwks, an OAuth scope every token must grant in its scope or scp claim (repeatable); a valid token without it gets 403")
}

// validate checks the flags and makes the verifier. set tells which
// settings were given.
func (j *jwtSettings) validate(set map[string]bool) []error {
	var errs []error
	if j.jwksURL == "" {
		for _, name := range []string{"audience", "issuer", "scope"} {
			if set[name] {
				errs = append(errs, fmt.Errorf("--%s applies to --jwks, which is not set", name))
			}
		}
		return errs
	}
	if j.audience == "" {
		errs = append(errs, errors.New("--jwks needs --audience AUD: the audience (aud) tokens for this agent are minted for"))
	}
	for _, sc := range j.scopes {
		if !auth.ValidScope(sc) {
			errs = append(errs, fmt.Errorf("--scope %q: a scope is printable ASCII without quotes or backslashes (RFC 6749 §3.3)", sc))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	v, err := auth.NewJWTVerifier(auth.JWTConfig{
		JWKSURL:  j.jwksURL,
		Client:   &http.Client{Timeout: 10 * time.Second},
		Issuer:   j.issuer,
		Audience: j.audience,
		Scopes:   j.scopes,
	})
	if err != nil {
		return append(errs, fmt.Errorf("--jwks: %s", strings.TrimPrefix(err.Error(), "auth: JWT: ")))
	}
	j.jwt = v
	return errs
}

// scopesFlag collects repeated --scope values; a value may also hold
// several space-separated scopes, as a token's scope claim does.
type scopesFlag []string

func (s *scopesFlag) String() string { return strings.Join(*s, " ") }

func (s *scopesFlag) Set(v string) error {
	fields := strings.Fields(v)
	if len(fields) == 0 {
		return errors.New("empty scope")
	}
	*s = append(*s, fields...)
	return nil
}

func (s *scopesFlag) setList(list []string) error {
	for _, v := range list {
		if err := s.Set(v); err != nil {
			return err
		}
	}
	return nil
}

// setupJWT fetches the JWKS once, so that a wrong --jwks fails at
// start-up with the reason rather than at the first request, and returns
// the option that requires a bearer JWT (an alternative to any other
// scheme, with the --scope scopes).
func (s *serveRun) setupJWT(ctx context.Context) ([]serve.Option, error) {
	v := s.cfg.jwt
	if v == nil {
		return nil, nil
	}
	if err := v.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("--jwks %s: cannot fetch the JWK set: %s", s.cfg.jwksURL, strings.TrimPrefix(err.Error(), "GET "+s.cfg.jwksURL+": "))
	}
	if u, err := url.Parse(s.cfg.jwksURL); err == nil && u.Scheme == "http" && !loopback(u.Hostname()) {
		s.log.Warn("the JWK set is fetched over plain HTTP: anyone on the way can replace the keys and sign tokens", "jwks", s.cfg.jwksURL)
	}
	if s.cfg.issuer == "" {
		s.log.Warn("--issuer is not set: tokens from any issuer whose keys are in the JWK set are accepted", "jwks", s.cfg.jwksURL)
	}
	return []serve.Option{serve.WithJWT(v, auth.WithPrincipalPrefix(jwtPrincipalPrefix))}, nil
}

// loopback reports whether host is a loopback address or localhost.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// jwtOn reports whether --jwks is in use.
func (s *serveRun) jwtOn() bool { return s.cfg.jwt != nil }

// printJWT prints the banner's auth line of --jwks.
func (s *serveRun) printJWT() {
	v := s.cfg.jwt
	if v == nil {
		return
	}
	issuer := "any issuer"
	if v.Issuer() != "" {
		issuer = "issuer " + v.Issuer()
	}
	scopes := ""
	if sc := v.Scopes(); len(sc) > 0 {
		scopes = ", scopes " + strings.Join(sc, " ")
	}
	fmt.Fprintf(s.stdout, "  auth        JWT bearer (%s, audience %s%s), JWKS %s\n", issuer, v.Audience(), scopes, s.cfg.jwksURL)
}
