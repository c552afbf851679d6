package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

const cardToken = "cli-card-token-9d3e"

// startGuarded serves an echo agent whose public card is open and whose
// bindings want cardToken; its extended card adds a skill.
func startGuarded(t *testing.T) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	card := echo.Card(base+a2ahttp.JSONRPCPath, base+a2ahttp.RESTPath)
	card.Capabilities.ExtendedAgentCard = a2a.Ptr(true)
	card.SecuritySchemes = map[string]a2a.SecurityScheme{"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}}}
	card.SecurityRequirements = []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{"bearer": {}}}}
	h, err := server.NewHandler(card, echo.Agent{}, server.WithExtendedCard(func(ctx context.Context) (*a2a.AgentCard, error) {
		c := *card
		c.Skills = append(append([]a2a.AgentSkill(nil), card.Skills...),
			a2a.AgentSkill{ID: "audit", Name: "Audit log", Description: "Shown to " + server.PrincipalFrom(ctx) + ".", Tags: []string{"audit"}})
		return &c, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	guarded := auth.Bearer(map[string]string{cardToken: "operator"}, mux)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == server.WellKnownCardPath {
			mux.ServeHTTP(w, r)
			return
		}
		guarded.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(func() { srv.Close(); _ = h.Close(context.Background()) })
	return base
}

func TestCardExtended(t *testing.T) {
	base := startGuarded(t)

	public := run(t, base, "card", base)
	wantExit(t, public, 0)
	if strings.Contains(public.stdout, "Audit log") || strings.Contains(public.stdout, "the extended card") {
		t.Errorf("without credentials the card shows the extended one:\n%s", public.stdout)
	}

	ext := run(t, base, "card", base, "--token", cardToken)
	wantExit(t, ext, 0)
	if !strings.Contains(ext.stdout, "Audit log") || !strings.Contains(ext.stdout, "the extended card") {
		t.Errorf("with a token the card lacks the extended skill:\n%s", ext.stdout)
	}

	js := run(t, base, "card", base, "--binding", "rest", "--header", "Authorization: Bearer "+cardToken, "--json")
	wantExit(t, js, 0)
	var card a2a.AgentCard
	if err := json.Unmarshal([]byte(js.stdout), &card); err != nil {
		t.Fatalf("--json: %v\n%s", err, js.stdout)
	}
	if len(card.Skills) == 0 || card.Skills[len(card.Skills)-1].Description != "Shown to operator." {
		t.Errorf("--json card skills %+v, want the extended card", card.Skills)
	}

	bad := run(t, base, "card", base, "--token", "wrong-token-value")
	if bad.code == 0 || !strings.Contains(bad.stderr, "Unauthenticated") {
		t.Errorf("a wrong token: exit %d, stderr %q; want a failure that says so", bad.code, bad.stderr)
	}
	if strings.Contains(bad.stderr+bad.stdout, "wrong-token-value") {
		t.Errorf("the token appears in the output: %s%s", bad.stdout, bad.stderr)
	}
}
