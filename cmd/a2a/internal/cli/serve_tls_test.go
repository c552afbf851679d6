package cli

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/serve"
	"github.com/goa2a/a2a/server"
)

// pki is a test CA with the certificates it issued, written as PEM files.
type pki struct {
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // the CA certificate
}

var testSerial atomic.Int64

func newPKI(t *testing.T, name string) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir()}
	var der []byte
	p.key, der = makeCert(t, &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil, nil)
	var err error
	if p.cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	p.file = writePEM(t, p.dir, name+".crt", "CERTIFICATE", der)
	return p
}

// makeCert signs tmpl with parent's key (self-signed when parent is nil)
// and returns the new key and the certificate's DER.
func makeCert(t *testing.T, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(testSerial.Add(1))
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return key, der
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// issued is a certificate and key the test CA issued, in files.
type issued struct {
	certFile, keyFile string
	keyDER            []byte
	pair              tls.Certificate
}

// issue makes a certificate for name (a server's IP or a client's CN),
// valid from notBefore to notAfter (an hour around now when zero).
func (p *pki) issue(t *testing.T, name string, server bool, notBefore, notAfter time.Time) issued {
	t.Helper()
	if notBefore.IsZero() {
		notBefore, notAfter = time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	}
	tmpl := &x509.Certificate{
		Subject:   pkix.Name{CommonName: name, Organization: []string{"Example"}},
		NotBefore: notBefore,
		NotAfter:  notAfter,
		KeyUsage:  x509.KeyUsageDigitalSignature,
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP(name)}
	} else {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	key, der := makeCert(t, tmpl, p.cert, p.key)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	n := testSerial.Add(1)
	is := issued{
		certFile: writePEM(t, p.dir, name+"-"+big.NewInt(n).String()+".crt", "CERTIFICATE", der),
		keyFile:  writePEM(t, p.dir, name+"-"+big.NewInt(n).String()+".key", "PRIVATE KEY", keyDER),
		keyDER:   keyDER,
	}
	if is.pair, err = tls.LoadX509KeyPair(is.certFile, is.keyFile); err != nil {
		t.Fatal(err)
	}
	return is
}

// tlsClient is an HTTP client that trusts roots and presents certs.
func tlsClient(roots *x509.Certificate, certs ...tls.Certificate) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(roots)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, Certificates: certs}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// do sends one request with c and returns the response with its body read.
func do(t *testing.T, c *http.Client, method, url, body string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestServeTLSFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", "c.pem"}, "--tls-cert needs --tls-key"},
		{[]string{"--tls-key", "k.pem"}, "--tls-key needs --tls-cert"},
		{[]string{"--tls-self-signed", "--tls-cert", "c.pem", "--tls-key", "k.pem"}, "--tls-self-signed and --tls-cert/--tls-key exclude each other"},
		{[]string{"--client-ca", "ca.pem"}, "--client-ca needs TLS"},
		{[]string{"--tls-self-signed", "--client-ca", "ca.pem", "--client-principal", "email"}, `--client-principal must be subject, cn or uri, got "email"`},
		{[]string{"--tls-self-signed", "--client-principal", "cn"}, "--client-principal applies to --client-ca"},
		{[]string{"--tls-self-signed", "--public-url", "http://agent.example"}, `--public-url "http://agent.example" is http:// but the server speaks TLS`},
		{[]string{"--header-timeout", "0s"}, "--header-timeout must be positive, got 0s"},
		{[]string{"--idle-timeout", "-1s"}, "--idle-timeout must be positive, got -1s"},
	} {
		var stderr bytes.Buffer
		cfg, code := parseServeArgs(tc.args, &stderr)
		if cfg != nil || code != ExitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, %q; want usage error %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	// Valid combinations pass, in flags and in the config file.
	dir := t.TempDir()
	conf := filepath.Join(dir, "serve.json")
	if err := os.WriteFile(conf, []byte(`{"tls-self-signed": true, "client-ca": "ca.pem", "client-principal": "uri", "header-timeout": "2s", "idle-timeout": "30s"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cfg, _ := parseServeArgs([]string{"--config", conf}, &stderr)
	if cfg == nil {
		t.Fatalf("config file: %s", stderr.String())
	}
	if !cfg.tlsSelfSigned || cfg.clientCA != "ca.pem" || cfg.clientPrincipal != principalURI || cfg.headerTimeout != 2*time.Second || cfg.idleTimeout != 30*time.Second {
		t.Errorf("config file: %+v", cfg.tlsSettings)
	}
}

// TestServeTLSFiles: a problem with a file fails the start with an error
// naming the flag, the file and the problem, and never the key.
func TestServeTLSFiles(t *testing.T) {
	t.Parallel()
	ca := newPKI(t, "server CA")
	good := ca.issue(t, "127.0.0.1", true, time.Time{}, time.Time{})
	other := ca.issue(t, "127.0.0.1", true, time.Time{}, time.Time{})
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not PEM at all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing certificate", []string{"--tls-cert", missing, "--tls-key", good.keyFile}, "--tls-cert " + missing + ": cannot read: no such file or directory"},
		{"missing key", []string{"--tls-cert", good.certFile, "--tls-key", missing}, "--tls-key " + missing + ": cannot read: no such file or directory"},
		{"certificate not PEM", []string{"--tls-cert", garbage, "--tls-key", good.keyFile}, "--tls-cert " + garbage + ": no PEM certificate in it"},
		{"key not PEM", []string{"--tls-cert", good.certFile, "--tls-key", garbage}, "--tls-key " + garbage + ": no PEM private key in it"},
		{"swapped", []string{"--tls-cert", good.keyFile, "--tls-key", good.certFile}, "--tls-cert " + good.keyFile + ": holds a private key, not a certificate"},
		{"key twice", []string{"--tls-cert", good.certFile, "--tls-key", good.certFile}, "--tls-key " + good.certFile + ": holds a certificate, not a private key"},
		{"key of another certificate", []string{"--tls-cert", good.certFile, "--tls-key", other.keyFile}, "--tls-key " + other.keyFile + " does not go with --tls-cert " + good.certFile},
		{"client CA not PEM", []string{"--tls-cert", good.certFile, "--tls-key", good.keyFile, "--client-ca", garbage}, "--client-ca " + garbage + ": no PEM certificate in it"},
		{"client CA missing", []string{"--tls-cert", good.certFile, "--tls-key", good.keyFile, "--client-ca", missing}, "--client-ca " + missing + ": cannot read"},
	} {
		var stderr bytes.Buffer
		cfg, _ := parseServeArgs(append([]string{"--addr", "127.0.0.1:0", "--store", "memory", "--data-dir", t.TempDir()}, tc.args...), &stderr)
		if cfg == nil {
			t.Fatalf("%s: %s", tc.name, stderr.String())
		}
		s, err := newServeRun(cfg, io.Discard, &stderr)
		if err == nil {
			s.close()
			t.Errorf("%s: started", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		for _, is := range []issued{good, other} {
			if b64 := base64.StdEncoding.EncodeToString(is.keyDER); strings.Contains(err.Error()+stderr.String(), b64[:24]) {
				t.Errorf("%s: the error shows the key", tc.name)
			}
		}
	}
}

// TestServeTLSExpiredCert: an expired certificate is served with a
// warning (the operator may be replacing it), and clients refuse it.
func TestServeTLSExpiredCert(t *testing.T) {
	t.Parallel()
	ca := newPKI(t, "server CA")
	old := ca.issue(t, "127.0.0.1", true, time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	ts := startServe(t, "--store", "memory", "--tls-cert", old.certFile, "--tls-key", old.keyFile)
	if !strings.Contains(ts.stderr.String(), "--tls-cert "+old.certFile+": the certificate expired on") {
		t.Errorf("no warning: %s", ts.stderr.String())
	}
	_, err := tlsClient(ca.cert).Get(ts.base + server.WellKnownCardPath)
	var invalid x509.CertificateInvalidError
	if !errors.As(err, &invalid) || invalid.Reason != x509.Expired {
		t.Errorf("client: %v, want an expired certificate error", err)
	}
}

// TestServeTLS: with --tls-cert, --tls-key and --client-ca, the card and
// its interfaces are https, responses carry HSTS, TLS below 1.2 is refused,
// the card and probes need no client certificate, both bindings refuse a
// request without one with the MutualTLS challenge, and a client with a
// certificate of the client CA runs as its subject, over the client
// library on both bindings.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	serverCA, clientCA := newPKI(t, "server CA"), newPKI(t, "client CA")
	srvCert := serverCA.issue(t, "127.0.0.1", true, time.Time{}, time.Time{})
	alice := clientCA.issue(t, "alice", false, time.Time{}, time.Time{})
	ts := startServe(t, "--agent", "echo", "--store", "memory",
		"--tls-cert", srvCert.certFile, "--tls-key", srvCert.keyFile, "--client-ca", clientCA.file)
	if !strings.HasPrefix(ts.base, "https://127.0.0.1:") {
		t.Fatalf("base %s", ts.base)
	}
	leaf, err := x509.ParseCertificate(srvCert.pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	out := ts.stdout.String()
	for _, want := range []string{"  tls         " + srvCert.certFile, "  sha256      " + fingerprint(leaf), "  auth        client certificates (mutual TLS) of CN=client CA, caller named by subject"} {
		if !strings.Contains(out, want) {
			t.Errorf("banner lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "auth        none") {
		t.Errorf("banner says the server is open:\n%s", out)
	}
	anonymous, withCert := tlsClient(serverCA.cert), tlsClient(serverCA.cert, alice.pair)

	resp, body := do(t, anonymous, http.MethodGet, ts.base+server.WellKnownCardPath, "")
	var card a2a.AgentCard
	if err := json.Unmarshal([]byte(body), &card); resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("card: %d %v %s", resp.StatusCode, err, body)
	}
	if resp.TLS == nil || resp.TLS.Version != tls.VersionTLS13 {
		t.Errorf("TLS %+v, want TLS 1.3", resp.TLS)
	}
	if got := resp.Header.Get("Strict-Transport-Security"); got != serve.DefaultHSTS {
		t.Errorf("Strict-Transport-Security %q", got)
	}
	for _, in := range card.SupportedInterfaces {
		if !strings.HasPrefix(in.URL, ts.base+"/a2a/") {
			t.Errorf("interface %s: %s", in.ProtocolBinding, in.URL)
		}
	}
	if s, ok := card.SecuritySchemes["mtls"]; !ok || s.MutualTLS == nil || len(card.SecuritySchemes) != 1 {
		t.Errorf("securitySchemes %s", mustJSON(t, card.SecuritySchemes))
	}
	if len(card.SecurityRequirements) != 1 || len(card.SecurityRequirements[0].Schemes) != 1 {
		t.Errorf("securityRequirements %s", mustJSON(t, card.SecurityRequirements))
	} else if _, ok := card.SecurityRequirements[0].Schemes["mtls"]; !ok {
		t.Errorf("securityRequirements %s", mustJSON(t, card.SecurityRequirements))
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		if resp, body := do(t, anonymous, http.MethodGet, ts.base+path, ""); resp.StatusCode != http.StatusOK {
			t.Errorf("%s without a certificate: %d %s", path, resp.StatusCode, body)
		}
	}

	// TLS 1.1 and below are refused.
	old := tlsClient(serverCA.cert, alice.pair)
	old.Transport.(*http.Transport).TLSClientConfig.MinVersion = tls.VersionTLS10
	old.Transport.(*http.Transport).TLSClientConfig.MaxVersion = tls.VersionTLS11
	if _, err := old.Get(ts.base + server.WellKnownCardPath); err == nil || !strings.Contains(err.Error(), "protocol version") {
		t.Errorf("TLS 1.1: %v, want a protocol version alert", err)
	}
	// TLS 1.2 is still served.
	v12 := tlsClient(serverCA.cert)
	v12.Transport.(*http.Transport).TLSClientConfig.MaxVersion = tls.VersionTLS12
	if resp, _ := do(t, v12, http.MethodGet, ts.base+server.WellKnownCardPath, ""); resp.TLS.Version != tls.VersionTLS12 {
		t.Errorf("TLS 1.2 client got %x", resp.TLS.Version)
	}

	for _, tc := range []struct{ name, url, body string }{
		{"JSON-RPC", ts.base + "/a2a/jsonrpc", sendJSONRPC},
		{"HTTP+JSON", ts.base + "/a2a/rest/message:send", sendREST},
		{"unknown path", ts.base + "/nothing", ""},
	} {
		method := http.MethodPost
		if tc.body == "" {
			method = http.MethodGet
		}
		resp, body := do(t, anonymous, method, tc.url, tc.body)
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != `MutualTLS realm="a2a"` {
			t.Errorf("%s without a certificate: %d %q %s", tc.name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
		if !strings.Contains(body, "Present a client certificate signed by the server's client CA") {
			t.Errorf("%s without a certificate: body %s", tc.name, body)
		}
	}

	// Expired client certificates and those of another CA fail the
	// handshake: the client gets a TLS alert, not a response.
	expired := clientCA.issue(t, "alice", false, time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	stranger := newPKI(t, "client CA").issue(t, "alice", false, time.Time{}, time.Time{})
	// (Over HTTP/2 the client's error does not say more than that, but the
	// server logs why.)
	for _, tc := range []struct {
		name   string
		cert   tls.Certificate
		reason string
	}{
		{"expired", expired.pair, "x509: certificate has expired"},
		{"another CA", stranger.pair, "x509: certificate signed by unknown authority"},
	} {
		logged := strings.Count(ts.stderr.String(), tc.reason)
		resp, err := tlsClient(serverCA.cert, tc.cert).Post(ts.base+"/a2a/jsonrpc", "application/json", strings.NewReader(sendJSONRPC))
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s client certificate: %d, want a handshake error", tc.name, resp.StatusCode)
		}
		waitFor(t, "the handshake error in the log", func() bool { return strings.Count(ts.stderr.String(), tc.reason) > logged })
	}

	const alicePrincipal = "mtls:CN=alice,O=Example" // the certificate's subject, in the namespace of --client-ca
	for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON} {
		c, err := client.New(t.Context(), ts.base, client.WithBindings(binding), client.WithHTTPClient(withCert))
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.SendMessage(t.Context(), textRequest("hello over TLS"))
		if err != nil {
			t.Fatalf("%s: %v", binding, err)
		}
		task, ok := res.Result.(*a2a.Task)
		if !ok {
			t.Fatalf("%s: %T", binding, res.Result)
		}
		if _, err := ts.run.srv.Handler().GetTask(server.WithPrincipal(context.Background(), alicePrincipal), &a2a.GetTaskRequest{ID: task.ID}); err != nil {
			t.Errorf("%s: the task is not alice's: %v", binding, err)
		}
		if _, err := ts.run.srv.Handler().GetTask(context.Background(), &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("%s: the anonymous owner sees the task: %v", binding, err)
		}
	}
}

// TestServeTLSAPIKeyOrCertificate: with --api-key and --client-ca, the
// card offers either scheme; a request with a client certificate runs as
// its subject, one without as its key's principal, and one with neither
// gets the API key challenge.
func TestServeTLSAPIKeyOrCertificate(t *testing.T) {
	t.Parallel()
	serverCA, clientCA := newPKI(t, "server CA"), newPKI(t, "client CA")
	srvCert := serverCA.issue(t, "127.0.0.1", true, time.Time{}, time.Time{})
	alice := clientCA.issue(t, "alice", false, time.Time{}, time.Time{})
	ts := startServe(t, "--agent", "echo", "--store", "memory", "--api-key", "bob="+keyBob,
		"--tls-cert", srvCert.certFile, "--tls-key", srvCert.keyFile, "--client-ca", clientCA.file)
	anonymous, withCert := tlsClient(serverCA.cert), tlsClient(serverCA.cert, alice.pair)

	_, body := do(t, anonymous, http.MethodGet, ts.base+server.WellKnownCardPath, "")
	var card a2a.AgentCard
	if err := json.Unmarshal([]byte(body), &card); err != nil {
		t.Fatal(err)
	}
	if len(card.SecuritySchemes) != 2 || card.SecuritySchemes["mtls"].MutualTLS == nil || card.SecuritySchemes["apiKey"].APIKey == nil {
		t.Errorf("securitySchemes %s", mustJSON(t, card.SecuritySchemes))
	}
	if len(card.SecurityRequirements) != 2 {
		t.Errorf("securityRequirements %s", mustJSON(t, card.SecurityRequirements))
	}

	owner := func(c *http.Client, key string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.base+"/a2a/rest/message:send", strings.NewReader(sendREST))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var res struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		}
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return resp.StatusCode, strings.Join(resp.Header.Values("WWW-Authenticate"), " | ")
		}
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"mtls:CN=alice,O=Example", "bob"} {
			if _, err := ts.run.srv.Handler().GetTask(server.WithPrincipal(context.Background(), p), &a2a.GetTaskRequest{ID: res.Task.ID}); err == nil {
				return resp.StatusCode, p
			}
		}
		return resp.StatusCode, "?"
	}
	for _, tc := range []struct {
		name   string
		c      *http.Client
		key    string
		code   int
		result string
	}{
		{"certificate", withCert, "", http.StatusOK, "mtls:CN=alice,O=Example"},
		{"key", anonymous, keyBob, http.StatusOK, "bob"},
		{"neither", anonymous, "", http.StatusUnauthorized, `APIKey realm="a2a", header="X-API-Key" | MutualTLS realm="a2a"`},
		{"wrong key", anonymous, "nope", http.StatusUnauthorized, `APIKey realm="a2a", header="X-API-Key", error="invalid_key"`},
	} {
		if code, result := owner(tc.c, tc.key); code != tc.code || result != tc.result {
			t.Errorf("%s: %d %q, want %d %q", tc.name, code, result, tc.code, tc.result)
		}
	}
}

// TestServeTLSSelfSigned: --tls-self-signed makes a certificate for the
// loopback names, keeps it under --data-dir and reuses it, prints its
// fingerprint, sends no HSTS, and a2a card trusts it with --cacert only.
func TestServeTLSSelfSigned(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	ts := startServe(t, "--store", "memory", "--data-dir", dataDir, "--tls-self-signed")
	certFile := filepath.Join(dataDir, "tls", "self-signed.crt")
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pemBytes)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dataDir, "tls", "self-signed.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v", fi, err)
	}
	if _, ok := leaf.PublicKey.(*ecdsa.PublicKey); !ok {
		t.Errorf("key %T, want ECDSA", leaf.PublicKey)
	}
	for _, h := range []string{"127.0.0.1", "localhost", "::1"} {
		if err := leaf.VerifyHostname(h); err != nil {
			t.Errorf("not for %s: %v", h, err)
		}
	}
	if life := leaf.NotAfter.Sub(leaf.NotBefore); life > 8*24*time.Hour {
		t.Errorf("valid for %v", life)
	}
	fp := fingerprint(leaf)
	if !strings.Contains(ts.stdout.String(), "  sha256      "+fp) || !strings.Contains(ts.stdout.String(), "DEVELOPMENT ONLY") {
		t.Errorf("banner:\n%s", ts.stdout.String())
	}
	if !strings.Contains(ts.stderr.String(), "self-signed certificate: for development only") || !strings.Contains(ts.stderr.String(), fp) {
		t.Errorf("log:\n%s", ts.stderr.String())
	}
	resp, _ := do(t, tlsClient(leaf), http.MethodGet, ts.base+server.WellKnownCardPath, "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Strict-Transport-Security") != "" {
		t.Errorf("card: %d, HSTS %q", resp.StatusCode, resp.Header.Get("Strict-Transport-Security"))
	}

	var stdout, stderr bytes.Buffer
	if code := Main(t.Context(), []string{"card", ts.base, "--json", "--cacert", certFile}, &stdout, &stderr); code != ExitOK {
		t.Errorf("a2a card --cacert: exit %d: %s", code, stderr.String())
	} else if !strings.Contains(stdout.String(), ts.base+"/a2a/jsonrpc") {
		t.Errorf("a2a card --cacert: %s", stdout.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := Main(t.Context(), []string{"card", ts.base}, &stdout, &stderr); code != ExitConnection || !strings.Contains(stderr.String(), "certificate") ||
		!strings.Contains(stderr.String(), "--cacert") {
		t.Errorf("a2a card without --cacert: exit %d: %s", code, stderr.String())
	}

	// A second run reuses the certificate.
	ts.stop(t)
	ts2 := startServe(t, "--store", "memory", "--data-dir", dataDir, "--tls-self-signed")
	if !strings.Contains(ts2.stdout.String(), "  sha256      "+fp) {
		t.Errorf("a new certificate on restart:\n%s", ts2.stdout.String())
	}
}

// TestSelfSignedRenewed: the kept certificate is replaced when it has less
// than a day left or is not for the hosts asked for.
func TestSelfSignedRenewed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	now := time.Now()
	hosts := []string{"127.0.0.1", "localhost"}
	first, _, err := selfSignedCert(dir, hosts, now)
	if err != nil {
		t.Fatal(err)
	}
	same, _, err := selfSignedCert(dir, hosts, now.Add(5*24*time.Hour))
	if err != nil || fingerprint(same.Leaf) != fingerprint(first.Leaf) {
		t.Errorf("replaced with 2 days left (%v)", err)
	}
	late, _, err := selfSignedCert(dir, hosts, now.Add(6*24*time.Hour+time.Hour))
	if err != nil || fingerprint(late.Leaf) == fingerprint(first.Leaf) {
		t.Errorf("kept with less than a day left (%v)", err)
	}
	other, _, err := selfSignedCert(dir, append(hosts, "agent.example"), now.Add(6*24*time.Hour+time.Hour))
	if err != nil || fingerprint(other.Leaf) == fingerprint(late.Leaf) || other.Leaf.VerifyHostname("agent.example") != nil {
		t.Errorf("kept for other hosts (%v)", err)
	}
}

// TestClientTLSFlags: a2a's client commands present --cert/--key to a
// mutual-TLS agent and trust --cacert; bad files are usage errors naming
// the flag and the file.
func TestClientTLSFlags(t *testing.T) {
	t.Parallel()
	serverCA, clientCA := newPKI(t, "server CA"), newPKI(t, "client CA")
	srvCert := serverCA.issue(t, "127.0.0.1", true, time.Time{}, time.Time{})
	alice := clientCA.issue(t, "alice", false, time.Time{}, time.Time{})
	other := clientCA.issue(t, "other", false, time.Time{}, time.Time{})
	ts := startServe(t, "--agent", "echo", "--store", "memory",
		"--tls-cert", srvCert.certFile, "--tls-key", srvCert.keyFile, "--client-ca", clientCA.file)

	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := Main(t.Context(), args, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	if code, out, errOut := run("send", ts.base, "hello", "--json", "--cacert", serverCA.file, "--cert", alice.certFile, "--key", alice.keyFile); code != ExitOK || !strings.Contains(out, "hello") {
		t.Errorf("send with a certificate: exit %d: %s %s", code, out, errOut)
	}
	if code, _, errOut := run("send", ts.base, "hello", "--cacert", serverCA.file); code != ExitProtocol || !strings.Contains(errOut, "client certificate") {
		t.Errorf("send without a certificate: exit %d: %s", code, errOut)
	}
	missing := filepath.Join(t.TempDir(), "missing.pem")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cert", alice.certFile}, "--cert needs --key"},
		{[]string{"--key", alice.keyFile}, "--key needs --cert"},
		{[]string{"--cacert", missing}, "--cacert " + missing + ": cannot read"},
		{[]string{"--cacert", alice.keyFile}, "--cacert " + alice.keyFile + ": holds a private key, not a certificate"},
		{[]string{"--cert", alice.certFile, "--key", other.keyFile}, "--key " + other.keyFile + " does not go with --cert " + alice.certFile},
	} {
		code, _, errOut := run(append([]string{"card", ts.base}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d: %s, want %q", tc.args, code, errOut, tc.want)
		}
		if b64 := base64.StdEncoding.EncodeToString(other.keyDER); strings.Contains(errOut, b64[:24]) {
			t.Errorf("%q: the error shows the key", tc.args)
		}
	}
}
