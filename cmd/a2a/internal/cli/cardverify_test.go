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

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/kit/deployer"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
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

// startSignedExtended serves a deployer whose card is signed by a new
// key, published at deployer.JWKSPath, and whose extended card is signed by
// that key too (sameKey) or by other.
func startSignedExtended(t *testing.T, sameKey bool, other *auth.CardSigner) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	signer, err := deployer.NewSigner(base + deployer.JWKSPath)
	if err != nil {
		t.Fatal(err)
	}
	extSigner := other
	if sameKey {
		extSigner = signer
	}
	in := a2ahttp.Interfaces(base)
	ext, err := auth.SignCard(deployer.ExtendedCard(in[0].URL, in[1].URL), extSigner)
	if err != nil {
		t.Fatal(err)
	}
	handler, h, err := deployer.NewServerWithSigner(base, "tok", signer, server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) {
		return ext, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = handler
	srv.Start()
	t.Cleanup(func() { srv.Close(); _ = h.Close(context.Background()) })
	return base
}

// With credentials a2a card shows the extended card, and its signatures
// line describes that card, not the public one that was verified.
func TestCardJWKSExtended(t *testing.T) {
	t.Parallel()
	other, err := deployer.NewSigner("http://127.0.0.1:1/jwks.json") // same kid, another key
	if err != nil {
		t.Fatal(err)
	}
	unsignedBase := startDeployer(t)
	publicOK := "public card: 1, verified (kid deployer-key-1, ES256)"

	type want struct {
		code   int
		out    []string // in stdout
		notOut []string // not in stdout
		err    string   // in stderr
	}
	check := func(name string, r result, w want) {
		t.Helper()
		if r.code != w.code {
			t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", name, r.code, w.code, r.stdout, r.stderr)
			return
		}
		for _, s := range w.out {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("%s: stdout does not contain %q:\n%s", name, s, r.stdout)
			}
		}
		for _, s := range w.notOut {
			if strings.Contains(r.stdout, s) {
				t.Errorf("%s: stdout contains %q:\n%s", name, s, r.stdout)
			}
		}
		if !strings.Contains(r.stderr, w.err) {
			t.Errorf("%s: stderr does not contain %q:\n%s", name, w.err, r.stderr)
		}
	}

	// The deployer: a signed public card, an unsigned extended card.
	check("deployer", run(t, unsignedBase, "card", unsignedBase, "--jwks", unsignedBase+deployer.JWKSPath, "--token", "tok"), want{
		code: 0,
		out: []string{"rollback", "the extended card",
			"signatures    0 (not verified: the extended card came over the authenticated connection)", publicOK},
		notOut: []string{"0, verified"},
	})
	check("deployer --json", run(t, unsignedBase, "card", unsignedBase, "--json", "--jwks", unsignedBase+deployer.JWKSPath, "--token", "tok"), want{
		code: 0, out: []string{`"rollback"`},
	})
	// Without credentials nothing changes: the public card is shown.
	check("deployer, no token", run(t, unsignedBase, "card", unsignedBase, "--jwks", unsignedBase+deployer.JWKSPath), want{
		code: 0, out: []string{"signatures    1, verified (kid deployer-key-1, ES256)"}, notOut: []string{"public card:", "rollback"},
	})

	// An extended card signed by the agent's key is verified.
	goodBase := startSignedExtended(t, true, other)
	check("signed extended card", run(t, goodBase, "card", goodBase, "--jwks", goodBase+deployer.JWKSPath, "--token", "tok"), want{
		code: 0, out: []string{"rollback", "signatures    1, verified (kid deployer-key-1, ES256)", publicOK},
	})
	// One signed by another key is not, and the exit status says so.
	badBase := startSignedExtended(t, false, other)
	check("extended card signed by another key", run(t, badBase, "card", badBase, "--jwks", badBase+deployer.JWKSPath, "--token", "tok"), want{
		code: 1, out: []string{"rollback", "signatures    1, not verified: the card signature does not verify", publicOK},
	})
	check("extended card signed by another key, --json", run(t, badBase, "card", badBase, "--json", "--jwks", badBase+deployer.JWKSPath, "--token", "tok"), want{
		code: 1, out: []string{`"rollback"`}, err: "a2a card: the extended agent card's signature is not verified: the card signature does not verify",
	})
}
