package cli

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

func TestShellWord(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080":                "http://127.0.0.1:8080",
		"https://agent.example.com/a/b":        "https://agent.example.com/a/b",
		"id-1":                                 "id-1",
		"6f1c2e9a-0b7d-4c1e-9f00-1a2b3c4d5e6f": "6f1c2e9a-0b7d-4c1e-9f00-1a2b3c4d5e6f",
		"http://host/?a=1&b=2":                 "'http://host/?a=1&b=2'",
		"task one":                             "'task one'",
		"it's":                                 `'it'\''s'`,
		"":                                     "''",
	} {
		if got := shellWord(in); got != want {
			t.Errorf("shellWord(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestBaseURLHint(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:1/a2a/jsonrpc":                                     "give the agent's base URL, such as http://h:1",
		"http://h:1/a2a/rest/":                                       "give the agent's base URL, such as http://h:1",
		"https://h/agents/x/a2a/jsonrpc":                             "give the agent's base URL, such as https://h/agents/x",
		"https://h/agents/x/a2a/jsonrpc/.well-known/agent-card.json": "give the agent's base URL, such as https://h/agents/x",
		"http://h:1/docs/index.html":                                 "give the agent's base URL, such as http://h:1",
		"http://h:1/":                                                "give the agent's base URL, the one its card is published under (BASE/.well-known/agent-card.json)",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := baseURLHint(u); got != want {
			t.Errorf("baseURLHint(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestGuessMediaType(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for _, c := range []struct {
		path    string
		content []byte
		want    string
	}{
		{"a.json", []byte("{}"), "application/json"},
		{"a.PNG", nil, "image/png"},
		{"fix.diff", []byte("--- a\n+++ b\n"), "text/x-diff"},
		{"pixel", png, "image/png"},
		{"notes", []byte("plain words\n"), "text/plain"},
		{"blob", []byte{0, 1, 2}, "application/octet-stream"},
		{"empty", nil, "text/plain"},
	} {
		if got := guessMediaType(c.path, c.content); got != c.want {
			t.Errorf("guessMediaType(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}

// TestGRPCWithCACertAndAPIKey: over gRPC, --cacert still reaches the TLS
// of the gRPC connection (the card probe hides the *http.Transport it used
// to be read from) and --api-key travels as metadata.
func TestGRPCWithCACertAndAPIKey(t *testing.T) {
	dataDir := t.TempDir()
	ts := startServe(t, "--store", "memory", "--data-dir", dataDir, "--tls-self-signed", "--grpc-addr", "127.0.0.1:0", "--api-key", "alice=key-a")
	certFile := filepath.Join(dataDir, "tls", "self-signed.crt")
	var stdout, stderr syncBuffer
	if code := Main(t.Context(), []string{"send", "--binding", "grpc", "--cacert", certFile, "--api-key", "key-a", ts.base, "hello"}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("a2a send --binding grpc --cacert: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "completed") {
		t.Errorf("a2a send --binding grpc: %s", stdout.String())
	}
}
