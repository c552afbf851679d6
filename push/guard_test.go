package push

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// guardNet is a fake network for guard tests: a resolver with fixed
// answers and a dialer that records every address it is asked for and
// connects for real only to 127.0.0.1, where the tests' own servers
// listen. Nothing else is ever dialled: the recorded attempt is all.
type guardNet struct {
	names map[string][]netip.Addr

	mu      sync.Mutex
	lookups []string
	dials   []string
}

func newGuardNet() *guardNet {
	a := netip.MustParseAddr
	return &guardNet{names: map[string][]netip.Addr{
		"localhost":        {a("127.0.0.1"), a("::1")},
		"internal.example": {a("10.1.2.3")},
		"other.example":    {a("10.1.2.3")},
		"metadata.example": {a("169.254.169.254")},
		"mixed.example":    {a("93.184.215.14"), a("192.168.1.1")},
		"public.example":   {a("93.184.215.14"), a("2606:2800:21f:cb07:6820:80da:af6b:8b2c")},
		"nat64.example":    {a("64:ff9b::a9fe:a9fe")},
	}}
}

func (n *guardNet) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	n.mu.Lock()
	n.lookups = append(n.lookups, host)
	n.mu.Unlock()
	if network != "ip" {
		return nil, errors.New("fake resolver: unexpected network " + network)
	}
	addrs, ok := n.names[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return addrs, nil
}

func (n *guardNet) dial(ctx context.Context, network, address string) (net.Conn, error) {
	n.mu.Lock()
	n.dials = append(n.dials, address)
	n.mu.Unlock()
	if host, _, _ := net.SplitHostPort(address); host == "127.0.0.1" {
		var d net.Dialer
		return d.DialContext(ctx, network, address)
	}
	return nil, errors.New("fake dialer: not dialling " + address)
}

func (n *guardNet) attempts() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.dials)
}

// newTestGuard returns a guard on a fresh fake network.
func newTestGuard(t *testing.T, opts ...GuardOption) (*Guard, *guardNet) {
	t.Helper()
	n := newGuardNet()
	g, err := NewGuard(append([]GuardOption{WithResolver(n), WithDialer(n.dial)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return g, n
}

// hitServer is a test server on 127.0.0.1 that counts its requests.
type hitServer struct {
	*httptest.Server
	mu      sync.Mutex
	hits    int
	headers []http.Header
}

func newHitServer(t *testing.T, h http.HandlerFunc) *hitServer {
	t.Helper()
	s := &hitServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits++
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		if h != nil {
			h(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *hitServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}

// guardPost sends a webhook-like POST through g, with credentials in every
// header that carries them.
func guardPost(g *Guard, u string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(`{"statusUpdate":{}}`))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/a2a+json")
	req.Header.Set("Authorization", "Bearer cred-SECRET")
	req.Header.Set(TokenHeader, "tok-SECRET")
	req.Header.Set(SignatureHeader, "jwt-SECRET")
	resp, err := g.Do(req)
	if resp != nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return resp, err
}

// wantRefused fails unless err holds a RefusedError for addr (or, with
// addr "", for the URL) whose message says why, and no credential.
func wantRefused(t *testing.T, err error, addr, reason string) *RefusedError {
	t.Helper()
	var re *RefusedError
	if !errors.As(err, &re) {
		t.Fatalf("error %v, want a RefusedError", err)
	}
	if addr != "" && re.Addr != netip.MustParseAddr(addr) {
		t.Errorf("refused %v, want %s", re.Addr, addr)
	}
	if !strings.Contains(re.Reason, reason) {
		t.Errorf("reason %q, want it to say %q", re.Reason, reason)
	}
	if msg := err.Error(); strings.Contains(msg, "SECRET") || !strings.Contains(msg, reason) || (addr != "" && !strings.Contains(msg, addr)) {
		t.Errorf("message %q must name %s and %q, and no secret", msg, addr, reason)
	}
	return re
}

func TestGuardRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	live := newHitServer(t, nil) // a real server on 127.0.0.1: refused all the same
	port := live.Listener.Addr().(*net.TCPAddr).Port
	p := ":" + strconv.Itoa(port)
	tests := []struct {
		url, addr, reason string
	}{
		{"http://127.0.0.1" + p + "/hook", "127.0.0.1", "loopback"},
		{"http://127.1.2.3/hook", "127.1.2.3", "loopback"},
		{"http://localhost" + p + "/hook", "127.0.0.1", "loopback"},
		{"http://[::1]" + p + "/hook", "::1", "loopback"},
		{"http://10.0.0.1/hook", "10.0.0.1", "private"},
		{"http://172.16.5.4/hook", "172.16.5.4", "private"},
		{"http://192.168.0.10:8080/hook", "192.168.0.10", "private"},
		{"http://169.254.169.254/latest/meta-data/", "169.254.169.254", "link-local"},
		{"http://metadata.example/latest/meta-data/", "169.254.169.254", "link-local"},
		{"https://internal.example/hook", "10.1.2.3", "private"},
		{"http://mixed.example/hook", "192.168.1.1", "private"},
		{"http://0.0.0.0" + p + "/hook", "0.0.0.0", "unspecified"},
		{"http://[::]" + p + "/hook", "::", "unspecified"},
		{"http://100.64.0.1/hook", "100.64.0.1", "carrier-grade NAT"},
		{"http://224.0.0.1/hook", "224.0.0.1", "multicast"},
		{"http://[ff02::1]/hook", "ff02::1", "multicast"},
		{"http://255.255.255.255/hook", "255.255.255.255", "broadcast"},
		{"http://[fe80::1]/hook", "fe80::1", "link-local"},
		{"http://[fd12:3456::1]/hook", "fd12:3456::1", "private"},
		{"http://[::ffff:10.0.0.1]/hook", "::ffff:10.0.0.1", "private"},
		{"http://[::ffff:127.0.0.1]" + p + "/hook", "::ffff:127.0.0.1", "loopback"},
		{"http://[64:ff9b::a9fe:a9fe]/hook", "64:ff9b::a9fe:a9fe", "link-local"},
		{"http://nat64.example/hook", "64:ff9b::a9fe:a9fe", "link-local"},
		{"http://[2002:7f00:1::]" + p + "/hook", "2002:7f00:1::", "loopback"},
		{"http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"},
		{"http://192.0.2.1/hook", "192.0.2.1", "documentation"},
		{"http://198.18.0.1/hook", "198.18.0.1", "benchmarking"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			g, n := newTestGuard(t)
			_, err := guardPost(g, tc.url)
			wantRefused(t, err, tc.addr, tc.reason)
			if d := n.attempts(); len(d) > 0 {
				t.Errorf("dialled %q; a refused address must never be dialled", d)
			}
		})
	}
	if n := live.count(); n != 0 {
		t.Errorf("the loopback server got %d requests, want none", n)
	}
}

func TestGuardErrorNamesHostNotSecrets(t *testing.T) {
	t.Parallel()
	g, _ := newTestGuard(t)
	_, err := guardPost(g, "http://user:pw-SECRET@internal.example/hooks/path-SECRET?token=q-SECRET")
	re := wantRefused(t, err, "10.1.2.3", "private")
	if re.Host != "internal.example" {
		t.Errorf("host %q, want internal.example", re.Host)
	}
	msg := err.Error()
	for _, want := range []string{"10.1.2.3", "resolved from internal.example", "is private", "--push-allow-hosts"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	var ue *url.Error
	if !errors.As(err, &ue) || ue.URL != "http://internal.example" {
		t.Errorf("url.Error %v, want the URL cut to http://internal.example", ue)
	}
}

func TestGuardAdmitsPublicAddresses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url   string
		dials []string
	}{
		// The fake dialer refuses all of these: no traffic leaves, but the
		// attempts show the guard let them through, every address in turn,
		// always as the checked literal address.
		{"http://93.184.215.14/hook", []string{"93.184.215.14:80"}},
		{"https://public.example/hook", []string{"93.184.215.14:443", "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443"}},
		{"http://[64:ff9b::5db8:d70e]:8080/hook", []string{"[64:ff9b::5db8:d70e]:8080"}},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			g, n := newTestGuard(t)
			_, err := guardPost(g, tc.url)
			var re *RefusedError
			if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), "fake dialer") {
				t.Fatalf("error %v, want the fake dialer's", err)
			}
			if d := n.attempts(); !slices.Equal(d, tc.dials) {
				t.Errorf("dialled %q, want %q", d, tc.dials)
			}
		})
	}
}

func TestGuardRefusesOtherSchemes(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"ftp://93.184.215.14/hook", "file:///etc/passwd", "gopher://127.0.0.1:70/", "unix:///var/run/docker.sock", "http:///no-host"} {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			g, n := newTestGuard(t, WithAllow("127.0.0.1"))
			_, err := guardPost(g, u)
			var re *RefusedError
			if !errors.As(err, &re) || re.Addr.IsValid() {
				t.Fatalf("error %v, want the URL refused", err)
			}
			if len(n.lookups) > 0 || len(n.attempts()) > 0 {
				t.Errorf("looked up %q and dialled %q, want neither", n.lookups, n.attempts())
			}
		})
	}
}

func TestGuardAllowListAdmitsExactlyWhatItNames(t *testing.T) {
	t.Parallel()
	a := netip.MustParseAddr
	g, _ := newTestGuard(t, WithAllow("127.0.0.1", "10.1.2.0/24", "hooks.internal.example", "[fd00::7]"), WithAllow("::ffff:192.168.7.0/120"))
	tests := []struct {
		host  string
		addr  netip.Addr
		admit bool
	}{
		{"", a("127.0.0.1"), true},
		{"localhost", a("127.0.0.1"), true},
		{"", a("::ffff:127.0.0.1"), true},
		{"", a("127.0.0.2"), false},
		{"localhost", a("::1"), false},
		{"", a("10.1.2.3"), true},
		{"", a("10.1.2.255"), true},
		{"", a("10.1.3.1"), false},
		{"", a("10.0.0.1"), false},
		{"", a("64:ff9b::a01:203"), true}, // 10.1.2.3 by NAT64
		{"", a("64:ff9b::a01:301"), false},
		{"hooks.internal.example", a("10.9.9.9"), true},
		{"HOOKS.internal.example.", a("169.254.169.254"), true},
		{"sub.hooks.internal.example", a("10.9.9.9"), false},
		{"internal.example", a("10.9.9.9"), false},
		{"", a("fd00::7"), true},
		{"", a("fd00::8"), false},
		{"", a("192.168.7.20"), true},
		{"", a("192.168.8.20"), false},
		{"", a("169.254.169.254"), false},
	}
	for _, tc := range tests {
		err := g.CheckAddr(tc.host, tc.addr)
		if got := err == nil; got != tc.admit {
			t.Errorf("CheckAddr(%q, %v) = %v, want admitted %v", tc.host, tc.addr, err, tc.admit)
		}
	}
}

func TestGuardAllowedLoopbackServer(t *testing.T) {
	t.Parallel()
	s := newHitServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	g, n := newTestGuard(t, WithAllow("127.0.0.1"))
	resp, err := guardPost(g, s.URL+"/hook")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNoContent || s.count() != 1 {
		t.Errorf("status %d after %d requests, want 204 after 1", resp.StatusCode, s.count())
	}
	if d := n.attempts(); len(d) != 1 || d[0] != s.Listener.Addr().String() {
		t.Errorf("dialled %q, want only the test server", d)
	}
}

func TestGuardRedirects(t *testing.T) {
	t.Parallel()
	redirect := func(code int, to func() string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/final" {
				w.WriteHeader(http.StatusOK)
				return
			}
			http.Redirect(w, r, to(), code)
		}
	}
	t.Run("to a refused address", func(t *testing.T) {
		t.Parallel()
		for _, target := range []struct{ url, addr string }{
			{"http://10.0.0.1/hook", "10.0.0.1"},
			{"http://169.254.169.254/latest/meta-data/", "169.254.169.254"},
			{"http://internal.example/hook", "10.1.2.3"},
			{"http://[::1]:1/hook", "::1"},
		} {
			s := newHitServer(t, redirect(http.StatusTemporaryRedirect, func() string { return target.url }))
			g, n := newTestGuard(t, WithAllow("127.0.0.1"))
			_, err := guardPost(g, s.URL+"/hook")
			wantRefused(t, err, target.addr, "")
			if d := n.attempts(); !slices.Equal(d, []string{s.Listener.Addr().String()}) {
				t.Errorf("redirect to %s: dialled %q, want only the allowed first hop", target.url, d)
			}
		}
	})
	t.Run("to another scheme", func(t *testing.T) {
		t.Parallel()
		s := newHitServer(t, redirect(http.StatusPermanentRedirect, func() string { return "ftp://93.184.215.14/x" }))
		g, n := newTestGuard(t, WithAllow("127.0.0.1"))
		_, err := guardPost(g, s.URL+"/hook")
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "not http or https") {
			t.Errorf("error %v, want the scheme refused", err)
		}
		if d := n.attempts(); len(d) != 1 {
			t.Errorf("dialled %q, want only the first hop", d)
		}
	})
	t.Run("that would drop the body", func(t *testing.T) {
		t.Parallel()
		for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther} {
			var s *hitServer
			s = newHitServer(t, redirect(code, func() string { return s.URL + "/final" }))
			g, _ := newTestGuard(t, WithAllow("127.0.0.1"))
			_, err := guardPost(g, s.URL+"/hook")
			if err == nil || !strings.Contains(err.Error(), "without the notification") {
				t.Errorf("%d: error %v, want the redirect refused", code, err)
			}
			if n := s.count(); n != 1 {
				t.Errorf("%d: %d requests, want 1 (no GET follows)", code, n)
			}
		}
	})
	t.Run("too many", func(t *testing.T) {
		t.Parallel()
		var s *hitServer
		s = newHitServer(t, redirect(http.StatusTemporaryRedirect, func() string { return s.URL + "/again" }))
		g, _ := newTestGuard(t, WithAllow("127.0.0.1"), WithMaxRedirects(2))
		_, err := guardPost(g, s.URL+"/hook")
		if err == nil || !strings.Contains(err.Error(), "more than 2") {
			t.Errorf("error %v, want the redirect limit named", err)
		}
		if n := s.count(); n != 3 {
			t.Errorf("%d requests, want 3: the first and two redirects", n)
		}
	})
	t.Run("none followed", func(t *testing.T) {
		t.Parallel()
		var s *hitServer
		s = newHitServer(t, redirect(http.StatusTemporaryRedirect, func() string { return s.URL + "/final" }))
		g, _ := newTestGuard(t, WithAllow("127.0.0.1"), WithMaxRedirects(0))
		resp, err := guardPost(g, s.URL+"/hook")
		if err != nil || resp.StatusCode != http.StatusTemporaryRedirect || s.count() != 1 {
			t.Errorf("got %v, %v after %d requests; want the 307 itself", resp, err, s.count())
		}
	})
	t.Run("credentials stay with their host", func(t *testing.T) {
		t.Parallel()
		other := newHitServer(t, nil) // another port: another host
		var same *hitServer
		same = newHitServer(t, func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/hook":
				http.Redirect(w, r, same.URL+"/moved", http.StatusPermanentRedirect)
			case "/moved":
				http.Redirect(w, r, other.URL+"/elsewhere", http.StatusTemporaryRedirect)
			}
		})
		g, _ := newTestGuard(t, WithAllow("127.0.0.1"))
		if _, err := guardPost(g, same.URL+"/hook"); err != nil {
			t.Fatal(err)
		}
		if len(same.headers) != 2 || len(other.headers) != 1 {
			t.Fatalf("requests %d and %d, want 2 and 1", len(same.headers), len(other.headers))
		}
		for _, h := range []string{"Authorization", TokenHeader, SignatureHeader} {
			if same.headers[1].Get(h) == "" {
				t.Errorf("the same-host redirect lost %s", h)
			}
			if v := other.headers[0].Get(h); v != "" {
				t.Errorf("the cross-host redirect carried %s: %s", h, v)
			}
		}
		if other.headers[0].Get("Content-Type") != "application/a2a+json" {
			t.Errorf("the cross-host redirect lost Content-Type")
		}
	})
}

// TestGuardControl checks the second line: the real dialer's Control
// refuses what dialContext did not admit.
func TestGuardControl(t *testing.T) {
	t.Parallel()
	g, err := NewGuard(WithAllow("internal.example"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	wantRefused(t, g.control(ctx, "tcp4", "10.1.2.3:80", nil), "10.1.2.3", "private")
	wantRefused(t, g.control(ctx, "tcp6", "[::1]:80", nil), "::1", "loopback")
	admitted := context.WithValue(ctx, admittedKey{}, netip.MustParseAddr("10.1.2.3"))
	if err := g.control(admitted, "tcp4", "10.1.2.3:80", nil); err != nil {
		t.Errorf("admitted address refused: %v", err)
	}
	wantRefused(t, g.control(admitted, "tcp4", "10.1.2.4:80", nil), "10.1.2.4", "private")
	if err := g.control(ctx, "tcp4", "93.184.215.14:443", nil); err != nil {
		t.Errorf("public address refused: %v", err)
	}
}

func TestGuardDefaults(t *testing.T) {
	t.Parallel()
	g, err := NewGuard()
	if err != nil {
		t.Fatal(err)
	}
	c := g.Client()
	if c.Timeout != DefaultTimeout {
		t.Errorf("timeout %v, want %v", c.Timeout, DefaultTimeout)
	}
	tr := c.Transport.(*guardTransport).base
	if tr.Proxy != nil {
		t.Error("the transport uses a proxy, which would bypass the guard")
	}
	if g.maxRedirects != DefaultMaxRedirects || len(g.allowAddrs) != 0 || len(g.allowNames) != 0 {
		t.Errorf("redirects %d, allow %v %v; want %d and nothing admitted", g.maxRedirects, g.allowAddrs, g.allowNames, DefaultMaxRedirects)
	}
}

func TestNewGuardRejectsBadOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		opt  GuardOption
		want string
	}{
		{WithAllow("127.0.0.1:8080"), `"127.0.0.1:8080"`},
		{WithAllow("localhost:8080"), `"localhost:8080"`},
		{WithAllow("*.example.com"), `"*.example.com"`},
		{WithAllow(""), `""`},
		{WithAllow("10.0.0.0/33"), `"10.0.0.0/33"`},
		{WithAllow("fe80::1%eth0"), `"fe80::1%eth0"`},
		{WithAllow("http://example.com"), `"http://example.com"`},
		{WithTimeout(0), "positive"},
		{WithMaxRedirects(-1), "negative"},
		{WithResolver(nil), "nil"},
		{WithDialer(nil), "nil"},
	}
	for _, tc := range tests {
		if _, err := NewGuard(tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one naming %s", err, tc.want)
		}
	}
}

func TestParseAllowList(t *testing.T) {
	t.Parallel()
	got := ParseAllowList(" 127.0.0.1, ,localhost,10.0.0.0/8 ,")
	if want := []string{"127.0.0.1", "localhost", "10.0.0.0/8"}; !slices.Equal(got, want) {
		t.Errorf("ParseAllowList = %q, want %q", got, want)
	}
}

func TestRefusal(t *testing.T) {
	t.Parallel()
	for addr, refused := range map[string]bool{
		"8.8.8.8": false, "93.184.215.14": false, "1.1.1.1": false, "100.63.255.255": false, "100.128.0.0": false,
		"172.15.255.255": false, "172.32.0.0": false, "2606:4700::1111": false, "2a00:1450::1": false,
		"64:ff9b::808:808": false, "2002:808:808::1": false, "::ffff:8.8.8.8": false,
		"127.0.0.1": true, "10.255.255.255": true, "172.31.0.1": true, "192.168.255.1": true, "169.254.0.1": true,
		"0.0.0.0": true, "0.1.2.3": true, "100.64.0.0": true, "100.127.255.255": true, "239.255.255.250": true,
		"240.0.0.1": true, "255.255.255.255": true, "192.0.0.170": true, "203.0.113.9": true, "198.51.100.1": true,
		"::": true, "::1": true, "::a00:1": true, "fc00::1": true, "fdff::1": true, "fe80::1": true, "febf::1": true,
		"fec0::1": true, "ff05::2": true, "2001:db8::1": true, "3fff::1": true, "100::1": true,
		"::ffff:169.254.169.254": true, "64:ff9b::7f00:1": true, "64:ff9b:1::1": true, "2002:c0a8:101::": true,
	} {
		if got := Refusal(netip.MustParseAddr(addr)); (got != "") != refused {
			t.Errorf("Refusal(%s) = %q, want refused %v", addr, got, refused)
		}
	}
}
