package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/client"
)

// The environment variables that give credentials when the flags do not,
// so that they stay out of shell histories and process listings.
const (
	envToken  = "A2A_TOKEN"
	envAPIKey = "A2A_API_KEY"
)

// credentials fills --token and --api-key from the environment where the
// flags left them empty, and checks them. Errors never quote a credential.
func (f *clientFlags) credentials() error {
	if f.token == "" {
		f.token = os.Getenv(envToken)
	}
	if f.apiKey == "" {
		f.apiKey = os.Getenv(envAPIKey)
	}
	if f.token != "" && strings.ContainsAny(f.token, " \t\r\n\x00") {
		return usageError("--token (or $" + envToken + "): the token contains white space or a control character")
	}
	if f.apiKey != "" && !auth.ValidAPIKey(f.apiKey) {
		return usageError("--api-key (or $" + envAPIKey + "): the key contains a control character or starts or ends with a space")
	}
	return nil
}

// authenticated reports whether the command has credentials to present.
func (f *clientFlags) authenticated() bool {
	return f.token != "" || f.apiKey != "" || len(f.headers) > 0
}

// apiKeyAuth sends --api-key where the agent card says: in the header (or
// cookie) of the card's API-key security scheme, else in X-API-Key. It is
// an interceptor, so the key goes with every A2A call but not with the
// card fetch, which is public (A2A §8.2).
type apiKeyAuth struct {
	key    string
	header string // set by use before the first call
	cookie string // or the cookie name
}

// use decides where the key goes for card.
func (a *apiKeyAuth) use(card *a2a.AgentCard) error {
	s := apiKeyScheme(card)
	if s == nil {
		a.header = auth.APIKeyHeader
		return nil
	}
	switch strings.ToLower(s.Location) {
	case auth.KeyInHeader:
		a.header = s.Name
	case auth.KeyInCookie:
		a.cookie = s.Name
	default:
		// A key in a URL ends up in the logs of every proxy on the way.
		where := s.Location
		if strings.EqualFold(where, auth.KeyInQuery) {
			where = "query parameter"
		}
		return usageError(fmt.Sprintf("--api-key: the agent wants its API key in the %s %q; a2a sends keys in headers and cookies only, never in URLs", where, s.Name))
	}
	return nil
}

// apiKeyScheme is the card's API-key scheme: the first that a security
// requirement names, else the first by name; nil if it declares none.
func apiKeyScheme(card *a2a.AgentCard) *a2a.APIKeySecurityScheme {
	for _, r := range card.SecurityRequirements {
		names := make([]string, 0, len(r.Schemes))
		for n := range r.Schemes {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if s := card.SecuritySchemes[n].APIKey; s != nil {
				return s
			}
		}
	}
	names := make([]string, 0, len(card.SecuritySchemes))
	for n := range card.SecuritySchemes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if s := card.SecuritySchemes[n].APIKey; s != nil {
			return s
		}
	}
	return nil
}

func (a *apiKeyAuth) add(h http.Header) {
	if a.cookie != "" {
		h.Add("Cookie", a.cookie+"="+a.key)
		return
	}
	h.Set(a.header, a.key)
}

func (a *apiKeyAuth) WrapUnary(next client.UnaryFunc) client.UnaryFunc {
	return func(ctx context.Context, call *client.Call, out any) error {
		a.add(call.Header)
		return next(ctx, call, out)
	}
}

func (a *apiKeyAuth) WrapStream(next client.StreamFunc) client.StreamFunc {
	return func(ctx context.Context, call *client.Call) (client.Stream, error) {
		a.add(call.Header)
		return next(ctx, call)
	}
}
