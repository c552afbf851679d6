package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// ErrInvalidOption is wrapped by the error [New] and [NewFromCard] return
// for an option given bad input.
var ErrInvalidOption = errors.New("client: invalid option")

// Option configures a [Client]. Options are applied in order, after the
// defaults, and checked when the Client is made.
type Option func(*config) error

// Default backoff of [Client.Follow]'s polling and reconnections.
const (
	DefaultBackoffInitial = 250 * time.Millisecond
	DefaultBackoffMax     = 5 * time.Second
)

// config is what the options set.
type config struct {
	httpClient  *http.Client
	bindings    []string // preferred bindings, in order; nil means the card's order
	header      http.Header
	bearer      string
	credentials map[string]func(context.Context) (string, error) // by security scheme name
	extensions  []string
	timeout     time.Duration
	verifier    func(context.Context, *a2a.AgentCard) error
	signatures  CardSignatureVerifier // WithCardSignatures
	backoffMin  time.Duration
	backoffMax  time.Duration
	transports  map[string]dialFunc            // WithTransport, by binding name as given
	onReconnect func(taskID string, err error) // WithReconnectHook

	interceptors []Interceptor // WithInterceptors, outermost first
}

func newConfig(opts []Option) (*config, error) {
	c := &config{
		httpClient: &http.Client{},
		header:     make(http.Header),
		backoffMin: DefaultBackoffInitial,
		backoffMax: DefaultBackoffMax,
	}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: nil Option", ErrInvalidOption)
		}
		if err := o(c); err != nil {
			return nil, err
		}
	}
	// WithBindings is checked last, to accept the bindings of WithTransport
	// whatever the order of the options.
	for i, b := range c.bindings {
		name, ok := c.supportedBinding(b)
		if !ok {
			return nil, optionError("WithBindings", "binding %q is not supported by this client (use %s, or give its transport with WithTransport)", b, strings.Join(c.bindingNames(), " or "))
		}
		c.bindings[i] = name
	}
	if c.bearer != "" && c.header.Get("Authorization") != "" {
		return nil, fmt.Errorf("%w: WithBearerToken and WithHeader(\"Authorization\", ...) both set Authorization", ErrInvalidOption)
	}
	return c, nil
}

func optionError(option, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidOption, option, fmt.Sprintf(format, args...))
}

// WithHTTPClient sets the HTTP client of every request. The default is a
// new http.Client on http.DefaultTransport. A client with a Timeout also
// cuts streams at that time; prefer [WithTimeout], which streams ignore.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *config) error {
		if hc == nil {
			return optionError("WithHTTPClient", "nil *http.Client")
		}
		c.httpClient = hc
		return nil
	}
}

// WithBindings sets the protocol bindings the client may use, most
// preferred first: "JSONRPC" and "HTTP+JSON" ([a2a.BindingJSONRPC],
// [a2a.BindingHTTPJSON]), and those given to [WithTransport] (such as
// "GRPC"), in any order of the options. The client takes the card's first
// interface of the first listed binding that the card offers. By default
// it takes the card's first interface of any binding it speaks, as A2A
// §8.3.2 asks.
func WithBindings(bindings ...string) Option {
	return func(c *config) error {
		if len(bindings) == 0 {
			return optionError("WithBindings", "no binding given")
		}
		c.bindings = slices.Clone(bindings) // checked by newConfig
		return nil
	}
}

// builtinBinding returns the canonical name of a binding this package
// implements. Names compare without regard to case.
func builtinBinding(b string) (string, bool) {
	switch {
	case strings.EqualFold(b, a2a.BindingJSONRPC):
		return a2a.BindingJSONRPC, true
	case strings.EqualFold(b, a2a.BindingHTTPJSON):
		return a2a.BindingHTTPJSON, true
	}
	return "", false
}

// supportedBinding returns the canonical name of a binding this client
// speaks: a built-in one, or one of [WithTransport] under the name it was
// given. Names compare without regard to case.
func (c *config) supportedBinding(b string) (string, bool) {
	if name, ok := builtinBinding(b); ok {
		return name, true
	}
	for name := range c.transports {
		if strings.EqualFold(name, b) {
			return name, true
		}
	}
	return "", false
}

// bindingNames lists the bindings the client speaks, for messages.
func (c *config) bindingNames() []string {
	names := []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON}
	extra := make([]string, 0, len(c.transports))
	for name := range c.transports {
		extra = append(extra, name)
	}
	slices.Sort(extra)
	return append(names, extra...)
}

// reservedHeaders are set by the client itself.
var reservedHeaders = []string{a2a.HeaderVersion, a2a.HeaderExtensions, "Accept", "Content-Type", "Content-Length", a2a.HeaderLastEventID, "Host"}

// WithHeader adds a header to every request, the card fetch included. It
// may be given several times; values of one key accumulate. The headers the
// client manages itself (A2A-Version, A2A-Extensions, Accept,
// Content-Type, Content-Length, Last-Event-ID, Host) are refused; use
// [WithExtensions] for extensions.
func WithHeader(key, value string) Option {
	return func(c *config) error {
		if !validHeaderName(key) {
			return optionError("WithHeader", "%q is not a valid header name", key)
		}
		for _, r := range reservedHeaders {
			if strings.EqualFold(key, r) {
				return optionError("WithHeader", "%s is set by the client", r)
			}
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			return optionError("WithHeader", "the value of %s contains a line break or NUL", key)
		}
		c.header.Add(key, value)
		return nil
	}
}

// WithBearerToken sends "Authorization: Bearer token" on every A2A request
// (not on the card fetch, which needs no credentials), whatever the card
// declares. For credentials chosen by the card's security schemes, use
// [WithCredentials].
func WithBearerToken(token string) Option {
	return func(c *config) error {
		if token == "" || strings.ContainsAny(token, "\r\n\x00 ") {
			return optionError("WithBearerToken", "the token is empty or contains white space")
		}
		c.bearer = token
		return nil
	}
}

// WithCredentials supplies the credential of the card's security scheme
// named scheme (a key of the card's securitySchemes, A2A §7.3): fn is called
// before every A2A request, with that request's context, and its result is
// sent as the scheme declares:
//
//   - httpAuthSecurityScheme: "Authorization: <scheme> <credential>"; for
//     the Basic scheme fn returns "user:password", which is base64-encoded.
//   - apiKeySecurityScheme: the credential as the named header, query
//     parameter or cookie.
//   - oauth2SecurityScheme and openIdConnectSecurityScheme: fn returns an
//     access token, sent as "Authorization: Bearer <token>".
//
// Mutual TLS is configured on the http.Client's transport instead, and is
// refused here. The card must declare the scheme; an error from fn fails the
// request before it is sent. The option may be given for several schemes.
func WithCredentials(scheme string, fn func(ctx context.Context) (string, error)) Option {
	return func(c *config) error {
		if scheme == "" {
			return optionError("WithCredentials", "empty security scheme name")
		}
		if fn == nil {
			return optionError("WithCredentials", "nil credential function for scheme %q", scheme)
		}
		if c.credentials == nil {
			c.credentials = make(map[string]func(context.Context) (string, error))
		}
		c.credentials[scheme] = fn
		return nil
	}
}

// WithExtensions declares the extensions the client supports; their URIs
// are sent comma-separated in the A2A-Extensions header of every request
// (A2A §3.2.6, §4.6).
func WithExtensions(uris ...string) Option {
	return func(c *config) error {
		for _, u := range uris {
			if u == "" || strings.ContainsAny(u, ", \t\r\n\x00") {
				return optionError("WithExtensions", "%q is not a valid extension URI", u)
			}
		}
		c.extensions = append(c.extensions, uris...)
		return nil
	}
}

// WithTimeout bounds each unary call (the card fetch and every operation
// other than the two streams) whose context has no deadline. By default
// calls are bounded only by their context. Streams are never given this
// timeout: bound them with their context. Note that a blocking SendMessage
// waits for the task to settle, which may take long.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return optionError("WithTimeout", "timeout must be positive, got %v", d)
		}
		c.timeout = d
		return nil
	}
}

// WithCardVerifier sets a check run on every agent card the client is
// about to use: after each fetch (in [New] and [Client.RefreshCard]), in
// [NewFromCard], and on the extended card of [Client.GetExtendedAgentCard]
// and [Client.UseExtendedCard] before it is put to use. An error rejects
// the card. It is the hook for verifying
// the card's JWS signatures (A2A §8.4.3). By default cards are not
// verified.
func WithCardVerifier(verify func(ctx context.Context, card *a2a.AgentCard) error) Option {
	return func(c *config) error {
		if verify == nil {
			return optionError("WithCardVerifier", "nil verifier")
		}
		c.verifier = verify
		return nil
	}
}

// WithBackoff sets how [Client.Follow] paces itself: the first wait
// between two polls of GetTask, or before reconnecting a failed stream, and
// limit, the cap of its exponential growth (and of a stream's "retry:"
// hint). The defaults are [DefaultBackoffInitial] and [DefaultBackoffMax].
func WithBackoff(initial, limit time.Duration) Option {
	return func(c *config) error {
		if initial <= 0 || limit < initial {
			return optionError("WithBackoff", "want 0 < initial <= limit, got %v and %v", initial, limit)
		}
		c.backoffMin, c.backoffMax = initial, limit
		return nil
	}
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
