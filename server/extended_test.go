package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// securedCard declares an extended card behind a bearer scheme.
func securedCard(c *a2a.AgentCard) {
	c.Capabilities.ExtendedAgentCard = a2a.Ptr(true)
	c.SecuritySchemes = map[string]a2a.SecurityScheme{
		"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}},
	}
	c.SecurityRequirements = []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{"bearer": {}}}}
}

// perCaller is an extended card source that shows each principal its own
// skill.
func perCaller() server.Option {
	return server.WithExtendedCard(func(ctx context.Context) (*a2a.AgentCard, error) {
		p := server.PrincipalFrom(ctx)
		c := testCard(securedCard, func(c *a2a.AgentCard) { c.Version = "1.0.0+ext" })
		c.Skills = append(c.Skills, a2a.AgentSkill{ID: "for-" + p, Name: "Only for " + p, Description: "A skill shown to " + p + ".", Tags: []string{p}})
		return c, nil
	})
}

func TestExtendedCardNeedsPrincipal(t *testing.T) {
	t.Parallel()
	called := false
	h := newHandler(t, testCard(securedCard), scripted, server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) {
		called = true
		return testCard(securedCard), nil
	}))
	_, err := h.GetExtendedAgentCard(v1(testCtx(t)), &a2a.GetExtendedAgentCardRequest{})
	e := wantErr(t, err, a2a.ErrUnauthenticated)
	if !strings.Contains(e.Text(), "authenticated caller") || e.Metadata["schemes"] != "bearer" {
		t.Errorf("error %q (metadata %v) does not say what is missing", e.Text(), e.Metadata)
	}
	if called {
		t.Error("the card source was called for an anonymous caller")
	}
	// Still UnsupportedOperation first when no extended card is declared.
	plain := newHandler(t, testCard(), scripted, perCaller())
	_, err = plain.GetExtendedAgentCard(v1(testCtx(t)), &a2a.GetExtendedAgentCardRequest{})
	wantErr(t, err, a2a.ErrUnsupportedOperation)
}

func TestExtendedCardPerPrincipal(t *testing.T) {
	t.Parallel()
	h := newHandler(t, testCard(securedCard), scripted, perCaller())
	skills := map[string]string{}
	for _, p := range []string{"alice", "bob"} {
		card, err := h.GetExtendedAgentCard(server.WithPrincipal(v1(testCtx(t)), p), &a2a.GetExtendedAgentCardRequest{})
		if err != nil {
			t.Fatal(err)
		}
		last := card.Skills[len(card.Skills)-1]
		skills[p] = last.ID
		if card.Version != "1.0.0+ext" {
			t.Errorf("%s's card version %q", p, card.Version)
		}
	}
	if skills["alice"] != "for-alice" || skills["bob"] != "for-bob" {
		t.Errorf("extra skills %v, want each principal's own", skills)
	}
}

func TestExtendedCardValidated(t *testing.T) {
	t.Parallel()
	for name, mod := range map[string]func(*a2a.AgentCard){
		"no version":    func(c *a2a.AgentCard) { c.Version = "" },
		"no name":       func(c *a2a.AgentCard) { c.Name = "" },
		"no interfaces": func(c *a2a.AgentCard) { c.SupportedInterfaces = nil },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHandler(t, testCard(securedCard), scripted, server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) {
				return testCard(securedCard, mod), nil
			}))
			_, err := h.GetExtendedAgentCard(server.WithPrincipal(v1(testCtx(t)), "alice"), &a2a.GetExtendedAgentCardRequest{})
			wantErr(t, err, a2a.ErrInternal)
		})
	}
}

func TestWithExtendedCardMaxAge(t *testing.T) {
	t.Parallel()
	if _, err := server.NewHandler(testCard(), server.AgentFunc(scripted), server.WithExtendedCardMaxAge(-time.Second)); err == nil ||
		!strings.Contains(err.Error(), "WithExtendedCardMaxAge") {
		t.Errorf("negative max age: %v, want an error naming the option", err)
	}
	if h := newHandler(t, testCard(securedCard), scripted); h.ExtendedCardMaxAge() != server.DefaultExtendedCardMaxAge {
		t.Errorf("default max age %v", h.ExtendedCardMaxAge())
	}
	if h := newHandler(t, testCard(securedCard), scripted, server.WithExtendedCardMaxAge(0)); h.ExtendedCardMaxAge() != 0 {
		t.Errorf("max age %v, want 0", h.ExtendedCardMaxAge())
	}
}

// Over JSON-RPC the extended card travels in a POST answer, which no cache
// may keep; an anonymous call is -31401.
func TestExtendedCardJSONRPC(t *testing.T) {
	t.Parallel()
	h := newHandler(t, testCard(securedCard), scripted, perCaller())
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.Header.Get("X-Test-Principal"); p != "" {
			r = r.WithContext(server.WithPrincipal(r.Context(), p))
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	call := func(principal string) (*http.Response, map[string]any) {
		t.Helper()
		req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, srv.URL+a2ahttp.JSONRPCPath,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		if principal != "" {
			req.Header.Set("X-Test-Principal", principal)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return resp, body
	}
	resp, body := call("alice")
	result, _ := body["result"].(map[string]any)
	if result == nil || result["version"] != "1.0.0+ext" {
		t.Fatalf("answer %v", body)
	}
	if got := resp.Header.Get("Cache-Control"); got != "private, no-store" {
		t.Errorf("Cache-Control %q, want private, no-store", got)
	}
	if resp.Header.Get("ETag") != "" {
		t.Errorf("a POST answer has an ETag %q", resp.Header.Get("ETag"))
	}
	_, body = call("")
	e, _ := body["error"].(map[string]any)
	if e == nil || e["code"] != float64(-31401) {
		t.Errorf("anonymous answer %v, want error -31401", body)
	}
}
