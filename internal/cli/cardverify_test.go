package cli_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/kit/deployer"
)

// startDeployer serves a deployer that signs its card with a new ES256 key
// and publishes it at deployer.JWKSPath.
func startDeployer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	handler, h, err := deployer.NewServer(base, "tok")
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = handler
	srv.Start()
	t.Cleanup(func() { srv.Close(); _ = h.Close(context.Background()) })
	return base
}

// writeJWKS writes the JWK set of a new key under kid.
func writeJWKS(t *testing.T, kid string) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := auth.NewCardSigner(kid, k, "")
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := s.JWKS()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), kid+".json")
	if err := os.WriteFile(path, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCardJWKS(t *testing.T) {
	t.Parallel()
	base := startDeployer(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"keys": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{"no --jwks", []string{"card", base}, 0, "signatures    1 (not verified)", ""},
		{"the agent's JWKS URL", []string{"card", base, "--jwks", base + deployer.JWKSPath}, 0,
			"signatures    1, verified (kid deployer-key-1, ES256)", ""},
		{"another key, same kid", []string{"card", base, "--jwks", writeJWKS(t, "deployer-key-1")}, 1,
			"signatures    1, not verified: the card signature does not verify: ES256, kid \"deployer-key-1\"", ""},
		{"another kid", []string{"card", base, "--jwks", writeJWKS(t, "other")}, 1,
			"not verified: no trusted key for the card signature: no ES256 key with kid \"deployer-key-1\" in the trust store", ""},
		{"--json, not verified", []string{"card", base, "--json", "--jwks", writeJWKS(t, "other")}, 1,
			`"signatures":[{"protected":`, "a2a card: the agent card's signature is not verified: no trusted key"},
		{"missing file", []string{"card", base, "--jwks", filepath.Join(t.TempDir(), "none.json")}, 2, "", "--jwks"},
		{"broken JWKS", []string{"card", base, "--jwks", bad}, 2, "", "--jwks"},
		{"JWKS URL not found", []string{"card", base, "--jwks", base + "/nothing.json"}, 4, "", "HTTP 401"},
	}
	for _, c := range cases {
		r := run(t, base, c.args...)
		if r.code != c.code {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.name, r.code, c.code, r.stdout, r.stderr)
			continue
		}
		if !strings.Contains(r.stdout, c.out) {
			t.Errorf("%s: stdout does not contain %q:\n%s", c.name, c.out, r.stdout)
		}
		if !strings.Contains(r.stderr, c.err) {
			t.Errorf("%s: stderr does not contain %q:\n%s", c.name, c.err, r.stderr)
		}
	}
}
