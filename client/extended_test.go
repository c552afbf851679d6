package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

const extToken = "ext-test-token"

// extServer is an agent whose public card declares no streaming and whose
// extended card, for callers with extToken, adds streaming and a skill.
// Its public card is served with no caching headers, so every RefreshCard
// fetches it, and its version can be changed.
type extServer struct {
	URL string

	mu      sync.Mutex
	version string   // of the public card
	methods []string // A2A methods called, in order
	extURL  string   // the extended card's interface URL ("" for the same)

	pubSigner, extSigner *auth.CardSigner // sign the public, the extended card (nil: unsigned)
}

func newExtServer(t *testing.T) *extServer {
	t.Helper()
	es := &extServer{version: "1.0.0"}
	srv := httptest.NewUnstartedServer(nil)
	es.URL = "http://" + srv.Listener.Addr().String()
	public := es.publicCard()
	h, err := server.NewHandler(public, server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.Submit(ctx); err != nil {
			return err
		}
		return w.Complete(ctx, "done")
	}), server.WithExtendedCard(func(ctx context.Context) (*a2a.AgentCard, error) {
		c := es.publicCard()
		c.Version += "+ext"
		c.Capabilities.Streaming = a2a.Ptr(true)
		c.Skills = append(c.Skills, a2a.AgentSkill{ID: "rollback", Name: "Roll back", Description: "For " + server.PrincipalFrom(ctx) + ".", Tags: []string{"deploy"}})
		es.mu.Lock()
		if es.extURL != "" {
			for i := range c.SupportedInterfaces {
				c.SupportedInterfaces[i].URL = es.extURL
			}
		}
		s := es.extSigner
		es.mu.Unlock()
		if s != nil {
			return auth.SignCard(c, s)
		}
		return c, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{KeepAlive: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == client.WellKnownCardPath {
			card := es.publicCard()
			es.mu.Lock()
			s := es.pubSigner
			es.mu.Unlock()
			if s != nil {
				var err error
				if card, err = auth.SignCard(card, s); err != nil {
					http.Error(w, err.Error(), http.StatusInternalServerError)
					return
				}
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(card)
			return
		}
		es.record(r)
		if r.Header.Get("Authorization") == "Bearer "+extToken {
			r = r.WithContext(server.WithPrincipal(r.Context(), "alice"))
		}
		mux.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		_ = h.Close(context.Background())
	})
	return es
}

func (es *extServer) publicCard() *a2a.AgentCard {
	es.mu.Lock()
	defer es.mu.Unlock()
	c := testCard(es.URL)
	c.Version = es.version
	c.Capabilities.Streaming = nil
	c.SecuritySchemes = map[string]a2a.SecurityScheme{"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}}}
	c.SecurityRequirements = []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{"bearer": {}}}}
	return c
}

// record notes the A2A method of r: the JSON-RPC method, or the HTTP+JSON
// path's last segment.
func (es *extServer) record(r *http.Request) {
	m := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	if r.URL.Path == a2ahttp.JSONRPCPath {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var env struct{ Method string }
		_ = json.Unmarshal(b, &env)
		m = env.Method
	}
	es.mu.Lock()
	es.methods = append(es.methods, m)
	es.mu.Unlock()
}

func (es *extServer) called() []string {
	es.mu.Lock()
	defer es.mu.Unlock()
	return slices.Clone(es.methods)
}

func (es *extServer) set(f func(*extServer)) {
	es.mu.Lock()
	defer es.mu.Unlock()
	f(es)
}

func hasSkill(c *a2a.AgentCard, id string) bool {
	return slices.ContainsFunc(c.Skills, func(s a2a.AgentSkill) bool { return s.ID == id })
}

// TestExtendedCardSwap: once fetched, the extended card is the card in
// use, its capabilities decide (streaming here), and it stays until the
// public card's version changes.
func TestExtendedCardSwap(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			es := newExtServer(t)
			c := newClient(t, es.URL, b, client.WithBearerToken(extToken))
			public := c.Card()
			iface := c.Interface()
			follow := func() string {
				t.Helper()
				before := len(es.called())
				for _, err := range c.SendAndFollow(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("go")}) {
					if err != nil {
						t.Fatal(err)
					}
				}
				return es.called()[before]
			}
			sendOp, streamOp := "SendMessage", "SendStreamingMessage"
			if b == a2a.BindingHTTPJSON {
				sendOp, streamOp = "message:send", "message:stream"
			}
			if got := follow(); got != sendOp {
				t.Fatalf("with the public card SendAndFollow called %q, want %q", got, sendOp)
			}

			ext, err := c.UseExtendedCard(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if c.Card() != ext || !hasSkill(ext, "rollback") || ext.Version != "1.0.0+ext" {
				t.Fatalf("card in use %+v, want the extended card", c.Card())
			}
			if c.Interface() != iface {
				t.Errorf("interface %+v, want %+v kept", c.Interface(), iface)
			}
			if got := follow(); got != streamOp {
				t.Errorf("with the extended card SendAndFollow called %q, want %q (it declares streaming)", got, streamOp)
			}

			// Same public version: the extended card stays.
			if got, err := c.RefreshCard(t.Context()); err != nil || got != ext {
				t.Fatalf("RefreshCard = %v, %v; want the extended card kept", got, err)
			}
			// A new public version: the public card is back.
			es.set(func(es *extServer) { es.version = "1.1.0" })
			got, err := c.RefreshCard(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got.Version != "1.1.0" || hasSkill(got, "rollback") || c.Card() != got {
				t.Errorf("after a version change the card in use is %q (skills %v), want the new public card", got.Version, got.Skills)
			}
			if public.Version != "1.0.0" {
				t.Errorf("the first public card changed: %q", public.Version)
			}
		})
	}
}

func TestExtendedCardAnonymous(t *testing.T) {
	t.Parallel()
	es := newExtServer(t)
	c := newClient(t, es.URL, a2a.BindingHTTPJSON)
	public := c.Card()
	_, err := c.GetExtendedAgentCard(t.Context())
	if !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Fatalf("GetExtendedAgentCard without credentials: %v, want Unauthenticated", err)
	}
	if c.Card() != public {
		t.Error("a refused call changed the card in use")
	}
}

func TestExtendedCardOtherInterface(t *testing.T) {
	t.Parallel()
	es := newExtServer(t)
	es.set(func(es *extServer) { es.extURL = "http://127.0.0.1:1/elsewhere" })
	c := newClient(t, es.URL, a2a.BindingJSONRPC, client.WithBearerToken(extToken))
	public := c.Card()
	_, err := c.GetExtendedAgentCard(t.Context())
	if !errors.Is(err, client.ErrExtendedCardInterface) || !strings.Contains(err.Error(), es.URL) {
		t.Fatalf("error %v, want ErrExtendedCardInterface naming the interface in use", err)
	}
	if c.Card() != public {
		t.Error("the card in use changed")
	}
}

func TestUseExtendedCardNotDeclared(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	ts := newTestServer(t, serverOpts{wrap: rec.wrap, card: func(c *a2a.AgentCard) { c.Capabilities.ExtendedAgentCard = nil }})
	c := newClient(t, ts.URL, a2a.BindingJSONRPC)
	before := len(rec.all())
	card, err := c.UseExtendedCard(t.Context())
	if err != nil || card != c.Card() || card.Description != "An agent for the client's tests." {
		t.Errorf("UseExtendedCard = %v, %v; want the public card", card, err)
	}
	if n := len(rec.all()) - before; n != 0 {
		t.Errorf("UseExtendedCard sent %d requests, want none", n)
	}
}

// TestExtendedCardVerifierHook: the hook of WithCardVerifier runs on the
// extended card before it is put to use; its error is returned and the
// public card stays in use.
func TestExtendedCardVerifierHook(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			es := newExtServer(t)
			errExt := errors.New("extended cards are not for us")
			var mu sync.Mutex
			var seen []string
			c := newClient(t, es.URL, b, client.WithBearerToken(extToken), client.WithCardVerifier(func(ctx context.Context, card *a2a.AgentCard) error {
				mu.Lock()
				seen = append(seen, card.Version)
				mu.Unlock()
				if strings.HasSuffix(card.Version, "+ext") {
					return errExt
				}
				return nil
			}))
			public := c.Card()
			_, err := c.GetExtendedAgentCard(t.Context())
			if !errors.Is(err, errExt) {
				t.Errorf("GetExtendedAgentCard: %v, want the hook's error", err)
			}
			if _, err := c.UseExtendedCard(t.Context()); !errors.Is(err, errExt) {
				t.Errorf("UseExtendedCard: %v, want the hook's error", err)
			}
			if c.Card() != public {
				t.Errorf("the card in use is %q, want the public card kept", c.Card().Version)
			}
			mu.Lock()
			defer mu.Unlock()
			if want := []string{"1.0.0", "1.0.0+ext", "1.0.0+ext"}; !slices.Equal(seen, want) {
				t.Errorf("the hook saw versions %q, want %q", seen, want)
			}
		})
	}
}

// TestExtendedCardSignatures: with WithCardSignatures, a signed extended
// card is verified before it is put to use, and one that does not verify
// is refused with the public card kept; an unsigned one is accepted.
func TestExtendedCardSignatures(t *testing.T) {
	t.Parallel()
	trusted := signer(t, "card-key")
	cases := []struct {
		name    string
		ext     *auth.CardSigner
		wantErr error // nil: the extended card is put to use
	}{
		{"unsigned", nil, nil},
		{"signed by the trusted key", trusted, nil},
		{"signed by another kid", signer(t, "other-key"), auth.ErrCardKeyUnknown},
		{"signed by another key, same kid", signer(t, "card-key"), auth.ErrCardSignature},
	}
	for _, b := range bindings {
		for _, tc := range cases {
			t.Run(b+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				es := newExtServer(t)
				es.set(func(es *extServer) { es.pubSigner, es.extSigner = trusted, tc.ext })
				v := &auth.CardVerifier{Keys: auth.CardKeysOf(trusted)}
				c := newClient(t, es.URL, b, client.WithBearerToken(extToken), client.WithCardSignatures(v))
				public := c.Card()
				ext, err := c.UseExtendedCard(t.Context())
				if tc.wantErr == nil {
					if err != nil || c.Card() != ext || ext.Version != "1.0.0+ext" {
						t.Fatalf("UseExtendedCard = %v, %v; want the extended card in use", ext, err)
					}
					return
				}
				if !errors.Is(err, client.ErrCardNotVerified) || !errors.Is(err, tc.wantErr) {
					t.Errorf("UseExtendedCard: %v, want ErrCardNotVerified wrapping %v", err, tc.wantErr)
				}
				if c.Card() != public {
					t.Errorf("the card in use is %q, want the public card kept", c.Card().Version)
				}
			})
		}
	}
}
