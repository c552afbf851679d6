package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// WellKnownCardPath is where an agent publishes its card, relative to its
// base URL (A2A §8.2).
const WellKnownCardPath = "/.well-known/agent-card.json"

// ErrInvalidCard is wrapped by the error for an agent card that lacks what
// the client needs: a name, a version and at least one complete interface.
// A fetched card that is invalid is also an [a2a.ErrInvalidAgentResponse].
var ErrInvalidCard = errors.New("client: invalid agent card")

// ErrNoSupportedInterface is wrapped by the error for an agent card that
// offers no interface this client can use: JSON-RPC or HTTP+JSON, or a
// binding of [WithTransport] (or those allowed by [WithBindings]), at
// protocol version 1.0.
var ErrNoSupportedInterface = errors.New("client: no supported interface")

// state is everything one agent card decides: the card, the interface
// chosen from it, the transport of that interface, and the cache
// validators of the fetch that brought it. A state never changes; a
// refreshed card makes a new one.
type state struct {
	card  *a2a.AgentCard
	iface a2a.AgentInterface
	t     transport
	cache cacheInfo

	public *a2a.AgentCard // the public card, when card is the extended one
}

// tenant is the tenant of a request: the interface's, when it has one, or
// else what the caller set (REQUIREMENTS R116).
func (st *state) tenant(requested string) string {
	if st.iface.Tenant != "" {
		return st.iface.Tenant
	}
	return requested
}

// cacheInfo is what RefreshCard needs to revalidate the card (A2A §8.6,
// RFC 9111).
type cacheInfo struct {
	etag         string
	lastModified string
	expires      time.Time // fresh until then; zero means revalidate
}

// cardURL returns the card location for a base URL. A URL that already
// ends in the well-known path is taken as it is.
func cardURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("client: base URL %q is not an absolute http or https URL", base)
	}
	if strings.HasSuffix(u.Path, WellKnownCardPath) {
		return base, nil
	}
	u.Path = strings.TrimRight(u.Path, "/") + WellKnownCardPath
	u.RawPath = ""
	return u.String(), nil
}

// fetchCard GETs the card, conditionally when prev holds validators. It
// reports a 304 answer as notModified with a nil card.
func (c *Client) fetchCard(ctx context.Context, prev *cacheInfo) (card *a2a.AgentCard, info cacheInfo, notModified bool, err error) {
	const op = "fetching the agent card"
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	cn := &conn{hc: c.cfg.httpClient, cfg: c.cfg}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cardURL, nil)
	if err != nil {
		return nil, info, false, fmt.Errorf("client: %s: %w", op, err)
	}
	for k, vs := range cn.cfg.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	// The card is public: no credentials (A2A §8.2).
	req.Header.Set(headerVersion, a2a.ProtocolVersion)
	req.Header.Set("Accept", mediaJSON)
	if prev != nil {
		if prev.etag != "" {
			req.Header.Set("If-None-Match", prev.etag)
		}
		if prev.lastModified != "" {
			req.Header.Set("If-Modified-Since", prev.lastModified)
		}
	}
	start := time.Now()
	resp, err := cn.do(op, req)
	if err != nil {
		return nil, info, false, err
	}
	if resp.StatusCode == http.StatusNotModified && prev != nil {
		_ = resp.Body.Close()
		info = cacheFrom(resp, start)
		if info.etag == "" {
			info.etag = prev.etag
		}
		if info.lastModified == "" {
			info.lastModified = prev.lastModified
		}
		return nil, info, true, nil
	}
	data, err := readBody(op, resp, maxCardBytes)
	if err != nil {
		return nil, info, false, err
	}
	if resp.StatusCode != http.StatusOK {
		e := restError(resp.StatusCode, data)
		e.Message = op + " from " + c.cardURL + ": " + e.Text()
		return nil, info, false, e
	}
	// A card whose members repeat, or differ from the schema in case only,
	// reads differently to other clients (and to a signature verifier):
	// unmarshal refuses it.
	card = new(a2a.AgentCard)
	if err := unmarshal(data, card); err != nil {
		return nil, info, false, invalidResponseCause(err, "%s from %s: malformed card: %v", op, c.cardURL, err)
	}
	if err := validateCard(card); err != nil {
		return nil, info, false, invalidResponseCause(err, "%s from %s: %v", op, c.cardURL, err)
	}
	if err := c.checkSignatures(ctx, data); err != nil {
		return nil, info, false, fmt.Errorf("%w (card from %s)", err, c.cardURL)
	}
	return card, cacheFrom(resp, start), false, nil
}

// cacheFrom reads the caching headers of a card response: ETag and
// Last-Modified to revalidate, and Cache-Control max-age (less Age) or
// Expires for freshness. no-cache and no-store mean "revalidate each time";
// no-store also forgets the validators.
func cacheFrom(resp *http.Response, start time.Time) cacheInfo {
	info := cacheInfo{etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified")}
	maxAge, hasMaxAge := time.Duration(0), false
	for d := range strings.SplitSeq(resp.Header.Get("Cache-Control"), ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), "=")
		switch strings.ToLower(name) {
		case "no-store":
			return cacheInfo{}
		case "no-cache":
			return cacheInfo{etag: info.etag, lastModified: info.lastModified}
		case "max-age":
			if n, err := strconv.ParseInt(strings.Trim(value, `"`), 10, 64); err == nil && n >= 0 {
				maxAge, hasMaxAge = time.Duration(min(n, 1<<31))*time.Second, true
			}
		}
	}
	switch {
	case hasMaxAge:
		if age, err := strconv.ParseInt(resp.Header.Get("Age"), 10, 64); err == nil && age > 0 {
			maxAge -= time.Duration(min(age, 1<<31)) * time.Second
		}
		if maxAge > 0 {
			info.expires = start.Add(maxAge)
		}
	case resp.Header.Get("Expires") != "":
		if t, err := http.ParseTime(resp.Header.Get("Expires")); err == nil {
			if date, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
				info.expires = start.Add(t.Sub(date)) // immune to clock skew
			} else {
				info.expires = t
			}
		}
	}
	return info
}

// validateCard checks what the client relies on: a name, a version, and at
// least one interface with a URL, a binding and a protocol version.
func validateCard(card *a2a.AgentCard) error {
	switch {
	case card.Name == "":
		return fmt.Errorf("%w: name is required", ErrInvalidCard)
	case card.Version == "":
		return fmt.Errorf("%w: version is required", ErrInvalidCard)
	}
	for _, in := range card.SupportedInterfaces {
		if in.URL != "" && in.ProtocolBinding != "" && in.ProtocolVersion != "" {
			return nil
		}
	}
	return fmt.Errorf("%w: at least one supported interface with url, protocolBinding and protocolVersion is required", ErrInvalidCard)
}

// selectInterface picks the interface by A2A §8.3.2 (REQUIREMENTS R116):
// the first entry of supportedInterfaces whose binding this client speaks
// at protocol version 1.0; with preferred bindings, the first such entry of
// the first preferred binding the card offers. An interface of a built-in
// binding needs an http(s) URL; one of a [WithTransport] binding, any
// non-empty URL, which its transport interprets. Interfaces in skip
// (binding and URL, as returned before) are passed over: their transport
// could not be set up.
func selectInterface(cfg *config, card *a2a.AgentCard, skip map[[2]string]bool) (a2a.AgentInterface, error) {
	preferred := cfg.bindings
	usable := func(in a2a.AgentInterface) (string, bool) {
		b, ok := cfg.supportedBinding(in.ProtocolBinding)
		if !ok || !versionMatches(in.ProtocolVersion) || in.URL == "" || skip[[2]string{b, in.URL}] {
			return "", false
		}
		if _, builtin := builtinBinding(b); builtin {
			u, err := url.Parse(in.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return "", false
			}
		}
		return b, true
	}
	if preferred == nil {
		for _, in := range card.SupportedInterfaces {
			if b, ok := usable(in); ok {
				in.ProtocolBinding = b
				return in, nil
			}
		}
	}
	for _, p := range preferred {
		for _, in := range card.SupportedInterfaces {
			if b, ok := usable(in); ok && b == p {
				in.ProtocolBinding = b
				return in, nil
			}
		}
	}
	var offered []string
	for _, in := range card.SupportedInterfaces {
		offered = append(offered, fmt.Sprintf("%s %s at %q", in.ProtocolBinding, in.ProtocolVersion, in.URL))
	}
	want := cfg.bindingNames()
	if preferred != nil {
		want = preferred
	}
	over := " over http(s)"
	for _, b := range want {
		if _, builtin := builtinBinding(b); !builtin {
			over = ""
		}
	}
	return a2a.AgentInterface{}, fmt.Errorf("%w: want %s at protocol version %s%s; the card offers %s",
		ErrNoSupportedInterface, strings.Join(want, " or "), a2a.ProtocolVersion, over, strings.Join(offered, ", "))
}

// versionMatches compares Major.Minor with the version this client speaks;
// a patch version does not count (A2A §3.6).
func versionMatches(v string) bool {
	major, rest, _ := strings.Cut(strings.TrimSpace(v), ".")
	minor, _, _ := strings.Cut(rest, ".")
	wantMajor, wantMinor, _ := strings.Cut(a2a.ProtocolVersion, ".")
	return major == wantMajor && minor == wantMinor
}

// newState checks a card and derives the state to use it: the verifier,
// the interface, the credentials, the transport.
func (c *Client) newState(ctx context.Context, card *a2a.AgentCard) (*state, error) {
	if err := validateCard(card); err != nil {
		return nil, err
	}
	if c.cardURL == "" { // NewFromCard: a fetched card was checked in fetchCard
		if err := c.checkCardSignatures(ctx, card); err != nil {
			return nil, err
		}
	}
	if c.cfg.verifier != nil {
		if err := c.cfg.verifier(ctx, card); err != nil {
			return nil, fmt.Errorf("client: agent card verification failed: %w", err)
		}
	}
	creds, err := compileCredentials(c.cfg, card)
	if err != nil {
		return nil, err
	}
	cn := &conn{hc: c.cfg.httpClient, cfg: c.cfg, creds: creds, ids: &c.ids}
	// An interface whose transport cannot be set up (a URL form it does
	// not take, say) gives way to the next usable one; its error is
	// returned if none is left.
	var dialErr error
	skip := map[[2]string]bool{}
	for {
		iface, err := selectInterface(c.cfg, card, skip)
		if err != nil {
			if dialErr != nil {
				return nil, dialErr
			}
			return nil, err
		}
		st := &state{card: card, iface: iface}
		switch iface.ProtocolBinding {
		case a2a.BindingJSONRPC:
			st.t = &jsonrpcTransport{cn: cn, url: iface.URL}
		case a2a.BindingHTTPJSON:
			st.t = &restTransport{cn: cn, base: strings.TrimRight(iface.URL, "/")}
		default:
			if st.t, err = c.dial(ctx, iface, cn); err != nil {
				dialErr = cmp.Or(dialErr, err)
				skip[[2]string{iface.ProtocolBinding, iface.URL}] = true
				continue
			}
		}
		return st, nil
	}
}

// RefreshCard brings the agent card up to date and returns the card in
// use. While the card fetched last is fresh by its Cache-Control max-age
// (or Expires), nothing is sent. Otherwise the card is fetched again,
// conditionally with If-None-Match (and If-Modified-Since), so that an
// unchanged card costs a 304 (A2A §8.6). A changed card is validated,
// verified and put to use, the interface chosen anew; if it is not usable,
// the error is returned and the previous card stays in use. A Client made
// by [NewFromCard] has no card URL, and RefreshCard returns an error.
// An extended card in use ([Client.GetExtendedAgentCard]) stays in use
// until the public card comes back with another version.
//
// Calls in flight keep the card they started with.
func (c *Client) RefreshCard(ctx context.Context) (*a2a.AgentCard, error) {
	if c.cardURL == "" {
		return nil, errors.New("client: RefreshCard: the client was made from a card, not a URL")
	}
	c.refresh.Lock()
	defer c.refresh.Unlock()
	st := c.st()
	if !st.cache.expires.IsZero() && time.Now().Before(st.cache.expires) {
		return st.card, nil
	}
	card, info, notModified, err := c.fetchCard(ctx, &st.cache)
	if err != nil {
		return nil, err
	}
	if notModified {
		next := *st
		next.cache = info
		c.state.Store(&next)
		return st.card, nil
	}
	if st.public != nil && card.Version == st.public.Version {
		// The extended card in use stays until the public card's
		// version changes (A2A §3.1.11; extended.go).
		next := *st
		next.public, next.cache = card, info
		c.state.Store(&next)
		return st.card, nil
	}
	next, err := c.newState(ctx, card)
	if err != nil {
		return nil, err
	}
	next.cache = info
	c.state.Store(next)
	return card, nil
}
