package push

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Defaults of a [Guard]; see [WithTimeout] and [WithMaxRedirects].
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxRedirects = 3
)

// Resolver looks up the addresses of a host name, as [net.Resolver]
// does; network is "ip", "ip4" or "ip6". [WithResolver] sets it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DialFunc opens a connection, as [net.Dialer.DialContext] does. A [Guard]
// calls it only with a literal IP address and port that it has checked.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// Guard makes the HTTP client that webhook calls go through, safe against
// server-side request forgery (SSRF): a client registering a webhook must
// not be able to make the server call into its own network, such as an
// admin port on loopback, a database on a private address or the cloud
// metadata service at 169.254.169.254 (A2A §13.2, REQUIREMENTS R189).
//
// The check happens when a connection is made, after DNS resolution: every
// address a host name resolves to is checked, one refused address refuses
// the host, and the connection goes to the checked address itself, never
// to a second lookup of the name, so that DNS rebinding between check and
// connection gains nothing. Every redirect is checked the same way, since
// it needs a connection of its own. Refused are loopback, private (RFC
// 1918, fc00::/7), shared CGNAT (100.64.0.0/10), link-local (169.254.0.0/16
// with the metadata address, fe80::/10), multicast, unspecified, broadcast
// and reserved addresses, the documentation and benchmarking ranges, and
// IPv6 forms that carry a refused IPv4 address (IPv4-mapped, NAT64, 6to4)
// or hide one (Teredo), unless the allow-list of [WithAllow] admits them.
// See [Refusal] for the list.
//
// A Guard is safe for concurrent use; make one and share its [Guard.Client].
type Guard struct {
	allowAddrs   []netip.Prefix
	allowNames   map[string]bool
	timeout      time.Duration
	maxRedirects int
	resolver     Resolver
	dial         DialFunc
	tlsConfig    *tls.Config
	client       *http.Client
}

// GuardOption configures a [Guard].
type GuardOption func(*Guard) error

// WithAllow admits webhook addresses that the guard would otherwise refuse.
// Each entry is one of:
//
//   - an IP address ("127.0.0.1", "::1", "[::1]"), admitting exactly that
//     address, however the webhook URL names it;
//   - a CIDR prefix ("10.1.2.0/24", "fd00::/8"), admitting the addresses in
//     it;
//   - a host name ("localhost", "hooks.internal.example"), admitting every
//     address that this name (and only this name, not its subdomains)
//     resolves to when it is the host of the webhook URL. Admitting a name
//     trusts its DNS: whoever controls the name's records can point it
//     anywhere.
//
// Ports are not part of an entry; wildcards are not supported. An entry
// that is none of these fails [NewGuard] with an error naming it. Repeated
// WithAllow options add up. An IPv4 entry also admits its IPv4-mapped IPv6
// form. The default is an empty list: everything refusable is refused.
func WithAllow(entries ...string) GuardOption {
	return func(g *Guard) error {
		for _, e := range entries {
			if err := g.addAllow(e); err != nil {
				return err
			}
		}
		return nil
	}
}

// ParseAllowList splits a comma-separated list of [WithAllow] entries, such
// as the value of a --push-allow-hosts flag, dropping blanks and spaces
// around entries. It does not check the entries; [NewGuard] does.
func ParseAllowList(s string) []string {
	var out []string
	for e := range strings.SplitSeq(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// WithTimeout bounds each webhook call, redirects and reading the response
// body included (default [DefaultTimeout], 10 s; A2A §13.2 suggests 10 to
// 30 s). It must be positive.
func WithTimeout(d time.Duration) GuardOption {
	return func(g *Guard) error {
		if d <= 0 {
			return fmt.Errorf("push: WithTimeout: the timeout must be positive, got %v", d)
		}
		g.timeout = d
		return nil
	}
}

// WithMaxRedirects sets how many redirects a webhook call follows (default
// [DefaultMaxRedirects], 3); zero follows none, so a redirect response is
// returned as it is. Only 307 and 308 redirects are followed, since they
// repeat the POST with its body; a 301, 302 or 303 would turn the
// notification into a bodiless GET that a receiver could answer with 200
// without having received anything, so it fails the call instead. Every
// hop is checked like the first, must stay http or https, and does not
// carry the Authorization, [TokenHeader], [SignatureHeader] or Cookie
// header to a host, port or scheme other than the webhook's (REQUIREMENTS
// B4). n must not be negative.
func WithMaxRedirects(n int) GuardOption {
	return func(g *Guard) error {
		if n < 0 {
			return fmt.Errorf("push: WithMaxRedirects: the count must not be negative, got %d", n)
		}
		g.maxRedirects = n
		return nil
	}
}

// WithResolver makes the guard look host names up with r instead of
// [net.DefaultResolver]; tests use it to resolve names to addresses of
// their choosing without DNS.
func WithResolver(r Resolver) GuardOption {
	return func(g *Guard) error {
		if r == nil {
			return errors.New("push: WithResolver: the resolver is nil")
		}
		g.resolver = r
		return nil
	}
}

// WithDialer makes the guard open connections with dial instead of a
// [net.Dialer]. The guard calls it only after the checks, with the checked
// literal address, so a test can record what would have been dialled and
// prove that a refused address never is.
func WithDialer(dial DialFunc) GuardOption {
	return func(g *Guard) error {
		if dial == nil {
			return errors.New("push: WithDialer: the dial function is nil")
		}
		g.dial = dial
		return nil
	}
}

// WithTLSConfig sets the TLS configuration of https webhook calls, for
// example to trust a private certificate authority (default: the system's
// roots). The guard uses a clone.
func WithTLSConfig(c *tls.Config) GuardOption {
	return func(g *Guard) error {
		g.tlsConfig = c.Clone()
		return nil
	}
}

// NewGuard returns a guard configured by opts: nothing refusable admitted,
// a 10 s timeout and at most 3 redirects unless opts say otherwise. It
// fails on a bad option, such as an allow-list entry that is not an
// address, prefix or host name.
func NewGuard(opts ...GuardOption) (*Guard, error) {
	g := &Guard{
		allowNames:   make(map[string]bool),
		timeout:      DefaultTimeout,
		maxRedirects: DefaultMaxRedirects,
		resolver:     net.DefaultResolver,
	}
	for _, o := range opts {
		if err := o(g); err != nil {
			return nil, err
		}
	}
	if g.dial == nil {
		d := &net.Dialer{Timeout: g.timeout, KeepAlive: 30 * time.Second, ControlContext: g.control}
		g.dial = d.DialContext
	}
	t := &http.Transport{
		Proxy:                  nil, // a proxy would connect on our behalf, unchecked
		DialContext:            g.dialContext,
		TLSClientConfig:        g.tlsConfig,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    DefaultWorkers, // a busy receiver gets one call per worker at once
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    g.timeout,
		ResponseHeaderTimeout:  g.timeout,
		MaxResponseHeaderBytes: 64 << 10,
	}
	g.client = &http.Client{
		Transport:     &guardTransport{base: t},
		CheckRedirect: g.checkRedirect,
		Timeout:       g.timeout,
	}
	return g, nil
}

// Client returns the guarded HTTP client. It refuses a URL that is not
// http or https before any connection, checks every address it connects
// to, uses no proxy (the environment's HTTP_PROXY included, since a proxy
// would make the connection unchecked), and follows redirects as
// [WithMaxRedirects] describes.
//
// Errors from the client are [*url.Error] values that hold the request URL,
// which may carry a secret in its path or query; log what [Guard.Do]
// returns instead, or the [*RefusedError] inside.
func (g *Guard) Client() *http.Client { return g.client }

// Do sends req through [Guard.Client]. Its errors name the webhook by
// scheme and host only, never by path, query or user information, which
// may hold secrets.
func (g *Guard) Do(req *http.Request) (*http.Response, error) {
	resp, err := g.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = &url.Error{Op: ue.Op, URL: redactURL(ue.URL), Err: ue.Err}
		}
	}
	return resp, err
}

// redactURL keeps the scheme and host of a URL.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "(webhook URL)"
	}
	return u.Scheme + "://" + u.Host
}

// A RefusedError reports a webhook that the guard refused to call: an
// address in a refused range, or a URL that is not http or https.
type RefusedError struct {
	// Host is the host of the webhook URL, a name or a literal address.
	Host string
	// Addr is the refused address, or invalid when the URL itself was
	// refused.
	Addr netip.Addr
	// Reason says why: for an address, its kind as [Refusal] names it
	// ("loopback", "private", "link-local", ...).
	Reason string
}

func (e *RefusedError) Error() string {
	if !e.Addr.IsValid() {
		return "webhook " + e.Reason
	}
	var b strings.Builder
	b.WriteString("webhook address ")
	b.WriteString(e.Addr.String())
	if h := strings.Trim(e.Host, "[]"); h != "" && h != e.Addr.String() {
		b.WriteString(" (resolved from ")
		b.WriteString(h)
		b.WriteString(")")
	}
	b.WriteString(" is ")
	b.WriteString(e.Reason)
	b.WriteString("; only an allow-list entry admits it (a2a serve --push-allow-hosts)")
	return b.String()
}

// A RedirectError reports a redirect the guard would not follow: too
// many, or one that changes the method (301, 302, 303 turn a POST into a
// GET). Retrying would not change it.
type RedirectError struct{ msg string }

func (e *RedirectError) Error() string { return e.msg }

// guardTransport refuses URLs that are not http or https before the
// transport sees them, with an error that says so.
type guardTransport struct{ base *http.Transport }

func (t *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkURL(req.URL); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections lets [http.Client.CloseIdleConnections] reach the
// transport.
func (t *guardTransport) CloseIdleConnections() { t.base.CloseIdleConnections() }

// checkURL refuses a URL that is not http or https with a host.
func checkURL(u *url.URL) error {
	if u == nil {
		return &RefusedError{Reason: "request has no URL"}
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return &RefusedError{Host: u.Host, Reason: "URL scheme " + strconv.Quote(u.Scheme) + " is not http or https"}
	}
	if u.Hostname() == "" {
		return &RefusedError{Reason: "URL has no host"}
	}
	return nil
}

// checkRedirect is the client's redirect policy; see WithMaxRedirects.
func (g *Guard) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > g.maxRedirects {
		if g.maxRedirects == 0 {
			return http.ErrUseLastResponse
		}
		return &RedirectError{fmt.Sprintf("webhook redirected more than %d times", g.maxRedirects)}
	}
	first := via[0]
	if req.Method != first.Method {
		code := 0
		if req.Response != nil {
			code = req.Response.StatusCode
		}
		return &RedirectError{fmt.Sprintf("webhook answered %d, a redirect that would turn the %s into a %s without the notification; register the webhook's final URL", code, first.Method, req.Method)}
	}
	if err := checkURL(req.URL); err != nil {
		return err
	}
	if canonicalHost(req.URL) != canonicalHost(first.URL) {
		for _, h := range crossHostHeaders {
			req.Header.Del(h)
		}
	}
	return nil
}

// crossHostHeaders are the credentials a redirect to another host must
// not carry (REQUIREMENTS B4): the config's authentication and token, the
// v0.3 name of the token header, the signed JWT (a replayable proof while
// it lasts) and cookies. The transport drops Authorization and Cookie on
// its own for hosts other than the first and its subdomains; here any
// other host, port or scheme counts.
var crossHostHeaders = []string{"Authorization", TokenHeader, legacyTokenHeader, SignatureHeader, "Cookie"}

// canonicalHost is scheme://host:port with the default port filled in.
func canonicalHost(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = "80"
		if scheme == "https" {
			port = "443"
		}
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return scheme + "://" + net.JoinHostPort(host, port)
}

// dialContext resolves the host of address, checks every address it
// resolves to, and connects to the checked addresses in turn.
func (g *Guard) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("webhook address %q: %w", address, err)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		ipNet := "ip"
		switch network {
		case "tcp4":
			ipNet = "ip4"
		case "tcp6":
			ipNet = "ip6"
		}
		addrs, err = g.resolver.LookupNetIP(ctx, ipNet, host)
		if err != nil {
			return nil, fmt.Errorf("webhook host %s: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("webhook host %s has no addresses", host)
		}
	}
	// Every address is checked before any is dialled: a name with one
	// public and one private address is refused as a whole, not tried
	// until the private one happens to answer.
	for _, a := range addrs {
		if err := g.checkAddr(host, a); err != nil {
			return nil, err
		}
	}
	var errs []error
	for _, a := range addrs {
		a = a.Unmap()
		c, err := g.dial(context.WithValue(ctx, admittedKey{}, a), network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// admittedKey marks, in the context of a dial, the address dialContext
// checked and admitted.
type admittedKey struct{}

// control re-checks, in the real dialer, the address the socket is about
// to connect to: a second line in case a connection ever reaches the
// dialer some other way than through dialContext. The address that
// dialContext admitted (perhaps by the host name it came from) passes.
func (g *Guard) control(ctx context.Context, network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook address %q: %w", address, err)
	}
	if a, ok := ctx.Value(admittedKey{}).(netip.Addr); ok && a == ap.Addr().Unmap() {
		return nil
	}
	return g.checkAddr("", ap.Addr())
}

// CheckAddr returns a [*RefusedError] if the guard would refuse to connect
// to a, whose host name (or "" for a literal address) was host, and nil if
// it would connect.
func (g *Guard) CheckAddr(host string, a netip.Addr) error {
	return g.checkAddr(host, a)
}

func (g *Guard) checkAddr(host string, a netip.Addr) error {
	if host != "" && g.allowNames[canonicalName(host)] {
		return nil
	}
	reason := Refusal(a)
	if reason == "" || g.allowed(a) {
		return nil
	}
	return &RefusedError{Host: host, Addr: a.WithZone(""), Reason: reason}
}

// allowed reports whether the allow-list admits a, or the IPv4 address an
// IPv6 form of it carries.
func (g *Guard) allowed(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	for _, p := range g.allowAddrs {
		if p.Contains(a) {
			return true
		}
	}
	if v4, ok := embeddedV4(a); ok {
		return g.allowed(v4)
	}
	return false
}

func (g *Guard) addAllow(e string) error {
	orig := e
	e = strings.TrimSpace(e)
	bad := func(why string) error {
		return fmt.Errorf("push: allow-list entry %q is not an IP address, CIDR prefix or host name: %s", orig, why)
	}
	if e == "" {
		return bad("it is empty")
	}
	if strings.Contains(e, "/") {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return bad(err.Error())
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(0, p.Bits()-96))
		}
		g.allowAddrs = append(g.allowAddrs, p.Masked())
		return nil
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(e, "["), "]")); err == nil {
		if a.Zone() != "" {
			return bad("zones are not supported")
		}
		a = a.Unmap()
		g.allowAddrs = append(g.allowAddrs, netip.PrefixFrom(a, a.BitLen()))
		return nil
	}
	if strings.ContainsAny(e, ":[]") {
		return bad("ports are not part of an entry; give the host alone")
	}
	name := canonicalName(e)
	if !validHostName(name) {
		return bad("a host name has letters, digits, hyphens, underscores and dots")
	}
	g.allowNames[name] = true
	return nil
}

// canonicalName lowers a host name and drops a trailing dot.
func canonicalName(h string) string {
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

func validHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// refusedRanges are the ranges [Refusal] refuses outright, most specific
// first where they nest.
var refusedRanges = []struct {
	prefix netip.Prefix
	reason string
}{
	// IPv4.
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified (\"this network\")"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (carrier-grade NAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata lives here)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved (IETF protocol assignments)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved for documentation"},
	{netip.MustParsePrefix("192.88.99.0/24"), "reserved (6to4 relay anycast)"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved for benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved for documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved for documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	// IPv6.
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "reserved (IPv4-compatible IPv6)"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "reserved (IPv4-translated, RFC 2765, which a SIIT translator may still route)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "private (local-use NAT64)"},
	{netip.MustParsePrefix("100::/64"), "reserved (discard-only)"},
	{netip.MustParsePrefix("100:0:0:1::/64"), "reserved (dummy IPv6 prefix)"},
	{netip.MustParsePrefix("2001::/32"), "reserved (Teredo tunnelling)"},
	{netip.MustParsePrefix("2001::/23"), "reserved (IETF protocol assignments)"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved for documentation"},
	{netip.MustParsePrefix("3fff::/20"), "reserved for documentation"},
	{netip.MustParsePrefix("5f00::/16"), "reserved (segment routing SIDs)"},
	{netip.MustParsePrefix("fc00::/7"), "private (unique local)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "private (site-local)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// Refusal says why a webhook may not connect to a by default (its kind,
// such as "loopback", "private" or "link-local"), or returns "" for an
// address the guard admits without an allow-list entry. Refused, besides
// the ranges of A2A §13.2 (127.0.0.0/8, 10.0.0.0/8, 172.16.0.0/12,
// 192.168.0.0/16, link-local, ::1, fc00::/7, fe80::/10):
//
//   - unspecified 0.0.0.0/8 and ::, which reach the local host;
//   - shared address space 100.64.0.0/10, private to a carrier or cloud;
//   - multicast, broadcast and the reserved 240.0.0.0/4;
//   - the documentation ranges (192.0.2.0/24, 198.51.100.0/24,
//     203.0.113.0/24, 2001:db8::/32, 3fff::/20) and benchmarking
//     198.18.0.0/15, which are never a real public receiver and are often
//     used inside networks;
//   - 192.0.0.0/24 and 2001::/23 (IETF protocol assignments, a few
//     anycast services among them that no webhook is), discard-only
//     100::/64, the dummy prefix 100:0:0:1::/64, local-use NAT64
//     64:ff9b:1::/48, segment routing 5f00::/16, deprecated site-local
//     fec0::/10 and the IPv4-translated ::ffff:0:a.b.c.d (RFC 2765);
//   - IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4
//     (2002:aabb:ccdd::) addresses that carry a refused IPv4 address, and
//     the deprecated IPv4-compatible ::/96; Teredo 2001::/32 entirely,
//     since it hides the IPv4 address it reaches.
func Refusal(a netip.Addr) string {
	a = a.WithZone("").Unmap()
	if !a.IsValid() {
		return "not a valid address"
	}
	for _, r := range refusedRanges {
		if r.prefix.Contains(a) {
			return r.reason
		}
	}
	if v4, ok := embeddedV4(a); ok {
		if why := Refusal(v4); why != "" {
			return why + " (" + v4.String() + " inside an IPv6 address)"
		}
	}
	return ""
}

// embeddedV4 returns the IPv4 address that a NAT64 or 6to4 address
// carries.
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}
