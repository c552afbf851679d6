package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

func iface(binding, version, url string) a2a.AgentInterface {
	return a2a.AgentInterface{URL: url, ProtocolBinding: binding, ProtocolVersion: version}
}

// TestInterfaceSelection picks interfaces by A2A §8.3.2.
func TestInterfaceSelection(t *testing.T) {
	t.Parallel()
	const (
		rpcURL  = "https://agent.example.com/rpc"
		restURL = "https://agent.example.com/rest"
	)
	cases := []struct {
		name    string
		ifaces  []a2a.AgentInterface
		opts    []client.Option
		wantURL string // "" for ErrNoSupportedInterface
	}{
		{"first entry", []a2a.AgentInterface{iface("JSONRPC", "1.0", rpcURL), iface("HTTP+JSON", "1.0", restURL)}, nil, rpcURL},
		{"card order, not ours", []a2a.AgentInterface{iface("HTTP+JSON", "1.0", restURL), iface("JSONRPC", "1.0", rpcURL)}, nil, restURL},
		{"unsupported binding skipped", []a2a.AgentInterface{iface("GRPC", "1.0", "agent.example.com:443"), iface("HTTP+JSON", "1.0", restURL), iface("JSONRPC", "1.0", rpcURL)}, nil, restURL},
		{"custom binding skipped", []a2a.AgentInterface{iface("https://example.com/binding/x", "1.0", rpcURL), iface("JSONRPC", "1.0", rpcURL)}, nil, rpcURL},
		{"old version skipped", []a2a.AgentInterface{iface("JSONRPC", "0.3", rpcURL+"/v03"), iface("HTTP+JSON", "1.0", restURL)}, nil, restURL},
		{"patch version ignored", []a2a.AgentInterface{iface("JSONRPC", "1.0.2", rpcURL)}, nil, rpcURL},
		{"other minor version", []a2a.AgentInterface{iface("JSONRPC", "1.1", rpcURL)}, nil, ""},
		{"binding name case", []a2a.AgentInterface{iface("http+json", "1.0", restURL)}, nil, restURL},
		{"not an http URL", []a2a.AgentInterface{iface("JSONRPC", "1.0", "agent.example.com:443"), iface("JSONRPC", "1.0", rpcURL)}, nil, rpcURL},
		{"preference", []a2a.AgentInterface{iface("JSONRPC", "1.0", rpcURL), iface("HTTP+JSON", "1.0", restURL)}, []client.Option{client.WithBindings("HTTP+JSON", "JSONRPC")}, restURL},
		{"preference falls back", []a2a.AgentInterface{iface("JSONRPC", "1.0", rpcURL)}, []client.Option{client.WithBindings("HTTP+JSON", "JSONRPC")}, rpcURL},
		{"preference restricts", []a2a.AgentInterface{iface("JSONRPC", "1.0", rpcURL)}, []client.Option{client.WithBindings("HTTP+JSON")}, ""},
		{"only gRPC", []a2a.AgentInterface{iface("GRPC", "1.0", "agent.example.com:443")}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			card := testCard("https://agent.example.com")
			card.SupportedInterfaces = tc.ifaces
			c, err := client.NewFromCard(t.Context(), card, tc.opts...)
			if tc.wantURL == "" {
				if !errors.Is(err, client.ErrNoSupportedInterface) {
					t.Fatalf("err = %v, want ErrNoSupportedInterface", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Interface().URL; got != tc.wantURL {
				t.Errorf("URL = %q, want %q", got, tc.wantURL)
			}
			if b := c.Binding(); b != a2a.BindingJSONRPC && b != a2a.BindingHTTPJSON {
				t.Errorf("Binding() = %q, not canonical", b)
			}
		})
	}
}

// TestInvalidCards refuses cards the client cannot use.
func TestInvalidCards(t *testing.T) {
	t.Parallel()
	for name, edit := range map[string]func(*a2a.AgentCard){
		"no name":       func(c *a2a.AgentCard) { c.Name = "" },
		"no version":    func(c *a2a.AgentCard) { c.Version = "" },
		"no interfaces": func(c *a2a.AgentCard) { c.SupportedInterfaces = nil },
		"incomplete iface": func(c *a2a.AgentCard) {
			c.SupportedInterfaces = []a2a.AgentInterface{{URL: "https://x", ProtocolBinding: "JSONRPC"}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			card := testCard("https://agent.example.com")
			edit(card)
			if _, err := client.NewFromCard(t.Context(), card); !errors.Is(err, client.ErrInvalidCard) {
				t.Errorf("NewFromCard: %v", err)
			}
			base := fakePeer(t, a2a.BindingJSONRPC, edit, http.NotFound)
			_, err := client.New(t.Context(), base)
			if !errors.Is(err, client.ErrInvalidCard) || !errors.Is(err, a2a.ErrInvalidAgentResponse) {
				t.Errorf("New: %v", err)
			}
		})
	}
	if _, err := client.NewFromCard(t.Context(), nil); err == nil {
		t.Error("nil card accepted")
	}
}

// TestCardFetch covers the ways New finds, reads and checks a card.
func TestCardFetch(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	ts := newTestServer(t, serverOpts{wrap: rec.wrap})
	for _, base := range []string{ts.URL, ts.URL + "/", ts.URL + client.WellKnownCardPath} {
		if _, err := client.New(t.Context(), base); err != nil {
			t.Errorf("New(%q): %v", base, err)
		}
	}
	for _, r := range rec.all() {
		if r.path != client.WellKnownCardPath || r.header.Get("A2A-Version") != "1.0" || r.header.Get("Authorization") != "" {
			t.Errorf("card request %s %v", r.path, r.header)
		}
	}
	for _, bad := range []string{"", "agent.example.com", "ftp://x/", "http://"} {
		if _, err := client.New(t.Context(), bad); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
	// No card there: the 404 is a missing route.
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()
	if _, err := client.New(t.Context(), missing.URL); !errors.Is(err, a2a.ErrMethodNotFound) {
		t.Errorf("no card: %v", err)
	}
	garbled := httptest.NewServer(answer(200, "application/json", "{"))
	defer garbled.Close()
	if _, err := client.New(t.Context(), garbled.URL); !errors.Is(err, a2a.ErrInvalidAgentResponse) {
		t.Errorf("garbled card: %v", err)
	}
	// A card whose name is given twice, or whose interfaces' member is in
	// another case, reads differently to other readers: refused.
	for _, body := range []string{
		`{"name":"a","name":"b","version":"1","supportedInterfaces":[{"url":"http://127.0.0.1:1/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
		`{"name":"a","version":"1","supportedInterfaces":[{"URL":"http://127.0.0.1:1/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`,
	} {
		srv := httptest.NewServer(answer(200, "application/json", body))
		_, err := client.New(t.Context(), srv.URL)
		srv.Close()
		if !errors.Is(err, a2a.ErrInvalidAgentResponse) || !strings.Contains(err.Error(), "malformed card") {
			t.Errorf("card %s: %v, want a malformed card", body, err)
		}
	}
}

// TestCardVerifier runs the verifier on every card put to use.
func TestCardVerifier(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, serverOpts{})
	var calls atomic.Int32
	errBad := errors.New("bad signature")
	verify := func(reject bool) client.Option {
		return client.WithCardVerifier(func(ctx context.Context, card *a2a.AgentCard) error {
			calls.Add(1)
			if card.Name != "test" {
				t.Errorf("verifier got card %q", card.Name)
			}
			if reject {
				return errBad
			}
			return nil
		})
	}
	if _, err := client.New(t.Context(), ts.URL, verify(false)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.New(t.Context(), ts.URL, verify(true)); !errors.Is(err, errBad) {
		t.Errorf("rejected card: %v", err)
	}
	if _, err := client.NewFromCard(t.Context(), ts.h.Card(), verify(true)); !errors.Is(err, errBad) {
		t.Errorf("rejected given card: %v", err)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("verifier called %d times, want 3", n)
	}
}

// TestTenant chooses an interface after an unsupported first entry and
// copies its tenant into every request: on HTTP+JSON as the path prefix,
// on JSON-RPC in the params.
func TestTenant(t *testing.T) {
	t.Parallel()
	const tenant = "acme:eu west"
	rec := &recorder{}
	ts := newTestServer(t, serverOpts{wrap: rec.wrap, card: func(c *a2a.AgentCard) {
		rpc, rest := c.SupportedInterfaces[0], c.SupportedInterfaces[1]
		rpc.Tenant, rest.Tenant = tenant, tenant
		c.SupportedInterfaces = []a2a.AgentInterface{iface("GRPC", "1.0", "127.0.0.1:1"), rest, rpc}
	}})
	plainCard := testCard(ts.URL) // the same server, no tenant
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) { // not parallel: they share rec
			opts := []client.Option{}
			if b == a2a.BindingJSONRPC {
				opts = append(opts, client.WithBindings(b))
			}
			c, err := client.New(t.Context(), ts.URL, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if c.Binding() != b || c.Interface().Tenant != tenant {
				t.Fatalf("chose %+v", c.Interface())
			}
			before := len(rec.all())
			task := send(t, c, "hello", false)
			if _, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID, Tenant: "ignored"}); err != nil {
				t.Fatal(err)
			}
			page, err := c.ListTasks(t.Context(), nil)
			if err != nil || len(page.Tasks) == 0 {
				t.Fatalf("ListTasks: %v, %v", page, err)
			}
			collect(t, c.Follow(t.Context(), task.ID))
			if _, err := c.GetExtendedAgentCard(t.Context()); err != nil {
				t.Fatal(err)
			}
			reqs := rec.all()[before:]
			if len(reqs) < 5 {
				t.Fatalf("%d requests", len(reqs))
			}
			for _, r := range reqs {
				switch b {
				case a2a.BindingHTTPJSON:
					if !strings.HasPrefix(r.path, a2ahttp.RESTPath+"/acme%3Aeu%20west/") {
						t.Errorf("request %s %s has no tenant prefix", r.method, r.path)
					}
				default:
					var env struct{ Params struct{ Tenant string } }
					if json.Unmarshal([]byte(r.body), &env); env.Params.Tenant != tenant {
						t.Errorf("request %s carries tenant %q", r.body, env.Params.Tenant)
					}
				}
			}
			// The task lives in the tenant: without it, it does not exist.
			other, err := client.NewFromCard(t.Context(), plainCard, client.WithBindings(b))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := other.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("outside the tenant: %v", err)
			}
			// With no tenant on the interface, the request's own is sent.
			if _, err := other.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID, Tenant: tenant}); err != nil {
				t.Errorf("explicit tenant: %v", err)
			}
		})
	}
}

// swappable serves a card handler that tests replace.
type swappable struct {
	mu       sync.Mutex
	h        http.Handler
	requests []string // the If-None-Match of each card request
}

func (s *swappable) set(h http.Handler) {
	s.mu.Lock()
	s.h = h
	s.mu.Unlock()
}

func (s *swappable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h := s.h
	s.requests = append(s.requests, r.Header.Get("If-None-Match"))
	s.mu.Unlock()
	h.ServeHTTP(w, r)
}

func (s *swappable) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// TestRefreshCard revalidates the card with its ETag, reuses it on 304,
// skips the request while it is fresh, and adopts a changed card.
func TestRefreshCard(t *testing.T) {
	t.Parallel()
	cards := &swappable{}
	ts := newTestServer(t, serverOpts{wrap: func(next http.Handler) http.Handler {
		mux := http.NewServeMux()
		mux.Handle(server.WellKnownCardPath, cards)
		mux.Handle("/", next)
		return mux
	}})
	card := *ts.h.Card()
	serve := func(c *a2a.AgentCard, maxAge time.Duration) {
		h, err := a2ahttp.CardHandler(c, maxAge)
		if err != nil {
			t.Fatal(err)
		}
		cards.set(h)
	}
	serve(&card, 0) // max-age=0: revalidate every time
	c, err := client.New(t.Context(), ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	first := c.Card()
	got, err := c.RefreshCard(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	seen := cards.seen()
	if len(seen) != 2 || seen[0] != "" || seen[1] == "" {
		t.Fatalf("If-None-Match of the card requests = %q", seen)
	}
	if got != first || c.Card() != first {
		t.Error("a 304 did not keep the card")
	}

	// A fresh card is not fetched again.
	serve(&card, time.Hour)
	if _, err := c.RefreshCard(t.Context()); err != nil { // revalidates: max-age was 0
		t.Fatal(err)
	}
	if _, err := c.RefreshCard(t.Context()); err != nil { // fresh now
		t.Fatal(err)
	}
	if n := len(cards.seen()); n != 3 {
		t.Errorf("%d card requests, want 3", n)
	}

	// A changed card is adopted, with its new interfaces.
	changed := card
	changed.Version = "2.0.0"
	changed.SupportedInterfaces = changed.SupportedInterfaces[1:] // HTTP+JSON only
	serve(&changed, 0)
	c2, err := client.New(t.Context(), ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	serve(&card, 0)
	got, err = c2.RefreshCard(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != "1.0.0" || c2.Card().Version != "1.0.0" || c2.Binding() != a2a.BindingJSONRPC {
		t.Errorf("after a change: version %q, binding %q", c2.Card().Version, c2.Binding())
	}
	// An unusable card is refused and the previous one kept.
	broken := card
	broken.SupportedInterfaces = []a2a.AgentInterface{iface("GRPC", "1.0", "x:1")}
	serve(&broken, 0)
	if _, err := c2.RefreshCard(t.Context()); !errors.Is(err, client.ErrNoSupportedInterface) {
		t.Errorf("unusable card: %v", err)
	}
	if c2.Card().Version != "1.0.0" {
		t.Error("the unusable card replaced the good one")
	}
	// A client made from a card cannot refresh it.
	c3, err := client.NewFromCard(t.Context(), &card)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c3.RefreshCard(t.Context()); err == nil {
		t.Error("RefreshCard on a client made from a card succeeded")
	}
}
