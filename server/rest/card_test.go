package rest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/internal/wire"
)

// testPrincipalHeader names the principal of a test request, standing in
// for an authenticator in front of the binding.
const testPrincipalHeader = "X-Test-Principal"

// alice is the header of a request from the principal "alice".
var alice = map[string]string{testPrincipalHeader: "alice"}

// asTestPrincipal attaches the principal named by testPrincipalHeader, if
// any, as an authenticator would.
func asTestPrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.Header.Get(testPrincipalHeader); p != "" {
			r = r.WithContext(server.WithPrincipal(r.Context(), p))
		}
		next.ServeHTTP(w, r)
	})
}

// perPrincipal is an extended card source whose description names the
// caller.
func perPrincipal() server.Option {
	return server.WithExtendedCard(func(ctx context.Context) (*a2a.AgentCard, error) {
		c := testCard()
		c.Description = "extended for " + server.PrincipalFrom(ctx)
		return c, nil
	})
}

func TestExtendedAgentCardAnonymous(t *testing.T) {
	f := newFixture(t)
	r := f.do(t, request{method: "GET", path: "/extendedAgentCard"})
	r.fail(t, http.StatusUnauthorized, "UNAUTHENTICATED", "")
	if !strings.Contains(string(r.body), "authenticated caller") {
		t.Errorf("body %s does not say what is missing", r.body)
	}
	if strings.Contains(string(r.body), "supportedInterfaces") {
		t.Errorf("an anonymous caller got card content: %s", r.body)
	}
	if cc := r.header.Get("Cache-Control"); strings.Contains(cc, "max-age") {
		t.Errorf("the refusal is marked cacheable: Cache-Control %q", cc)
	}
}

func TestExtendedAgentCardCaching(t *testing.T) {
	f := newFixtureWith(t, testCard(), []server.Option{perPrincipal(), server.WithExtendedCardMaxAge(90 * time.Second)})
	r := f.do(t, request{method: "GET", path: "/extendedAgentCard", headers: alice})
	var card a2a.AgentCard
	r.ok(t, &card)
	if card.Description != "extended for alice" {
		t.Errorf("description %q", card.Description)
	}
	if got := r.header.Get("Cache-Control"); got != "private, max-age=90" {
		t.Errorf("Cache-Control %q, want private, max-age=90", got)
	}
	if got := r.header.Get("Vary"); got != wire.ExtendedCardVary {
		t.Errorf("Vary %q, want %q", got, wire.ExtendedCardVary)
	}
	etag := r.header.Get("ETag")
	if !strings.HasPrefix(etag, `"`) || len(etag) < 10 {
		t.Fatalf("ETag %q is not a strong tag", etag)
	}

	// A matching If-None-Match is answered 304, with the same validators.
	nm := f.do(t, request{method: "GET", path: "/extendedAgentCard", headers: map[string]string{testPrincipalHeader: "alice", "If-None-Match": etag}})
	if nm.status != http.StatusNotModified || len(nm.body) != 0 {
		t.Errorf("revalidation: %d %q, want 304 with no body", nm.status, nm.body)
	}
	if nm.header.Get("ETag") != etag || nm.header.Get("Cache-Control") != "private, max-age=90" {
		t.Errorf("304 headers: ETag %q, Cache-Control %q", nm.header.Get("ETag"), nm.header.Get("Cache-Control"))
	}

	// Another principal's card differs, and so does its ETag: alice's tag
	// does not revalidate bob's card.
	b := f.do(t, request{method: "GET", path: "/extendedAgentCard", headers: map[string]string{testPrincipalHeader: "bob", "If-None-Match": etag}})
	b.ok(t, &card)
	if card.Description != "extended for bob" {
		t.Errorf("bob's description %q", card.Description)
	}
	if b.header.Get("ETag") == etag {
		t.Errorf("bob's card has alice's ETag %q", etag)
	}
}

func TestExtendedAgentCardDefaultMaxAge(t *testing.T) {
	f := newFixture(t)
	r := f.do(t, request{method: "GET", path: "/extendedAgentCard", headers: alice})
	r.ok(t, nil)
	want := "private, max-age=" + "300"
	if server.DefaultExtendedCardMaxAge != 300*time.Second {
		t.Fatalf("DefaultExtendedCardMaxAge = %v; update this test", server.DefaultExtendedCardMaxAge)
	}
	if got := r.header.Get("Cache-Control"); got != want {
		t.Errorf("Cache-Control %q, want %q", got, want)
	}
}
