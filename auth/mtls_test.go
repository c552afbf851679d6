package auth_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

var serial atomic.Int64

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial.Add(1)),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// leafSpec is what a client certificate says.
type leafSpec struct {
	subject   pkix.Name
	notBefore time.Time
	notAfter  time.Time
	eku       []x509.ExtKeyUsage
	uris      []string
}

// issue signs a client certificate; by default valid now for an hour, for
// client authentication.
func (ca *testCA) issue(t *testing.T, spec leafSpec) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if spec.notBefore.IsZero() {
		spec.notBefore = time.Now().Add(-time.Minute)
	}
	if spec.notAfter.IsZero() {
		spec.notAfter = time.Now().Add(time.Hour)
	}
	if spec.eku == nil {
		spec.eku = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      spec.subject,
		NotBefore:    spec.notBefore,
		NotAfter:     spec.notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  spec.eku,
	}
	for _, u := range spec.uris {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		tmpl.URIs = append(tmpl.URIs, pu)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// connState is the TLS state of a connection that presented cert, as the
// server sees it; verified says whether the server verified it.
func connState(cert tls.Certificate, ca *testCA, verified bool) *tls.ConnectionState {
	cs := &tls.ConnectionState{Version: tls.VersionTLS13, HandshakeComplete: true, PeerCertificates: []*x509.Certificate{cert.Leaf}}
	if verified {
		cs.VerifiedChains = [][]*x509.Certificate{{cert.Leaf, ca.cert}}
	}
	return cs
}

// TestMutualTLS: the middleware admits a verified client certificate as its
// principal and refuses everything else with the MutualTLS challenge.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "client CA")
	alice := ca.issue(t, leafSpec{subject: pkix.Name{CommonName: "alice", Organization: []string{"Example"}}})
	noCN := ca.issue(t, leafSpec{subject: pkix.Name{Organization: []string{"Example"}}})
	const (
		missing = `MutualTLS realm="a2a"`
		invalid = `MutualTLS realm="a2a", error="invalid_certificate"`
	)
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	earlier := func() time.Time { return time.Now().Add(-time.Hour) }
	tests := []struct {
		name      string
		cfg       auth.MutualTLSConfig
		tls       *tls.ConnectionState
		challenge string // "" means admitted
		message   string // part of the refusal's message
		principal string
	}{
		{"plain HTTP", auth.MutualTLSConfig{}, nil, missing, "Present a client certificate", ""},
		{"TLS without a certificate", auth.MutualTLSConfig{}, &tls.ConnectionState{Version: tls.VersionTLS13}, missing, "Present a client certificate", ""},
		{"certificate not verified", auth.MutualTLSConfig{}, connState(alice, ca, false), invalid, "not verified", ""},
		{"expired since the handshake", auth.MutualTLSConfig{Now: later}, connState(alice, ca, true), invalid, "expired", ""},
		{"not yet valid", auth.MutualTLSConfig{Now: earlier}, connState(alice, ca, true), invalid, "not yet valid", ""},
		{"not in Allow", auth.MutualTLSConfig{Allow: []string{"CN=bob,O=Example"}}, connState(alice, ca, true), invalid, "not admitted", ""},
		{"no common name", auth.MutualTLSConfig{Principal: auth.CommonNamePrincipal}, connState(noCN, ca, true), invalid, "names no principal", ""},
		{"no URI", auth.MutualTLSConfig{Principal: auth.URIPrincipal}, connState(alice, ca, true), invalid, "names no principal", ""},
		{"subject", auth.MutualTLSConfig{}, connState(alice, ca, true), "", "", "CN=alice,O=Example"},
		{"in Allow", auth.MutualTLSConfig{Allow: []string{"CN=bob,O=Example", "CN=alice,O=Example"}}, connState(alice, ca, true), "", "", "CN=alice,O=Example"},
		{"common name", auth.MutualTLSConfig{Principal: auth.CommonNamePrincipal}, connState(alice, ca, true), "", "", "alice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			next := newTaskMaker(t)
			h := auth.MutualTLS(tt.cfg, next)
			req := httptest.NewRequest(http.MethodPost, "/a2a/jsonrpc", nil)
			req.TLS = tt.tls
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if tt.challenge == "" {
				if !next.called || rec.Code != http.StatusNoContent {
					t.Fatalf("refused: %d %s", rec.Code, rec.Body)
				}
				if got := next.owner("", "alice", "CN=alice,O=Example"); got != tt.principal {
					t.Errorf("ran as %q, want %q", got, tt.principal)
				}
				return
			}
			if next.called {
				t.Fatal("the next handler ran")
			}
			if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") != tt.challenge {
				t.Fatalf("%d %q, want 401 %q", rec.Code, rec.Header().Get("WWW-Authenticate"), tt.challenge)
			}
			var body struct {
				Error struct {
					Code    int    `json:"code"`
					Status  string `json:"status"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %s: %v", rec.Body, err)
			}
			if body.Error.Code != 401 || body.Error.Status != "UNAUTHENTICATED" || !strings.Contains(body.Error.Message, tt.message) {
				t.Errorf("body %s, want a message with %q", rec.Body, tt.message)
			}
		})
	}
}

func TestMutualTLSPrincipals(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "client CA")
	c := ca.issue(t, leafSpec{
		subject: pkix.Name{CommonName: "agent-a", OrganizationalUnit: []string{"agents"}, Organization: []string{"Example, Inc."}},
		uris:    []string{"spiffe://example.org/agent/a", "https://example.org/a"},
	}).Leaf
	for _, tt := range []struct {
		name string
		f    func(*x509.Certificate) string
		want string
	}{
		{"subject", auth.SubjectPrincipal, `CN=agent-a,OU=agents,O=Example\, Inc.`},
		{"common name", auth.CommonNamePrincipal, "agent-a"},
		{"first URI", auth.URIPrincipal, "spiffe://example.org/agent/a"},
	} {
		if got := tt.f(c); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestMutualTLSPanics(t *testing.T) {
	t.Parallel()
	next := http.NotFoundHandler()
	for name, f := range map[string]func(){
		"nil handler":       func() { auth.MutualTLS(auth.MutualTLSConfig{}, nil) },
		"empty allowed":     func() { auth.MutualTLS(auth.MutualTLSConfig{Allow: []string{"a", ""}}, next) },
		"realm with a CRLF": func() { auth.MutualTLS(auth.MutualTLSConfig{}, next, auth.WithRealm("a\r\nb")) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestMutualTLSScheme(t *testing.T) {
	t.Parallel()
	s := auth.MutualTLSScheme()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]map[string]string
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 1 || back["mtlsSecurityScheme"]["description"] == "" {
		t.Errorf("scheme %s", b)
	}
}

// mtlsServer is an A2A server on 127.0.0.1 over TLS that verifies client
// certificates against a client CA when given (tls.VerifyClientCertIfGiven)
// and puts MutualTLS in front of both bindings; the card stays open.
type mtlsServer struct {
	srv   *httptest.Server
	h     *server.Handler
	calls atomic.Int64 // runs of the agent
	log   lockedBuffer // the http.Server's error log: handshake errors
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newMTLSServer(t *testing.T, clientCA *testCA, cfg auth.MutualTLSConfig) *mtlsServer {
	t.Helper()
	ms := &mtlsServer{}
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		ms.calls.Add(1)
		return w.Reject(ctx, "no")
	})
	ms.srv = httptest.NewUnstartedServer(nil)
	card := &a2a.AgentCard{Name: "t", Version: "1", SupportedInterfaces: a2ahttp.Interfaces("https://" + ms.srv.Listener.Addr().String())}
	h, err := server.NewHandler(card, agent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	ms.h = h
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	guarded := auth.MutualTLS(cfg, mux)
	ms.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == server.WellKnownCardPath {
			mux.ServeHTTP(w, r)
			return
		}
		guarded.ServeHTTP(w, r)
	})
	ms.srv.Config.ErrorLog = log.New(&ms.log, "", 0)
	ms.srv.TLS = &tls.Config{ClientCAs: clientCA.pool(), ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12}
	ms.srv.StartTLS()
	t.Cleanup(ms.srv.Close)
	return ms
}

// client returns an HTTP client that trusts the server and presents certs,
// on a transport of its own (no connection shared with another client).
func (ms *mtlsServer) client(certs ...tls.Certificate) *http.Client {
	tr := ms.srv.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.Certificates = certs
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// call sends one A2A SendMessage over binding and returns the response
// with its body read, or the error of the exchange.
func (ms *mtlsServer) call(t *testing.T, c *http.Client, binding string) (*http.Response, string, error) {
	t.Helper()
	// Each call is a new message: a messageId sent again is a retry of
	// the first message with it, answered without running the agent.
	msg := `{"message":{"messageId":"m` + strconv.FormatInt(callIDs.Add(1), 10) + `","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	url, body := ms.srv.URL+a2ahttp.JSONRPCPath, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`+msg+`}`
	if binding == a2a.BindingHTTPJSON {
		url, body = ms.srv.URL+a2ahttp.RESTPath+"/message:send", msg
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// callIDs numbers the messages of mtlsServer.call.
var callIDs atomic.Int64

// taskID finds the task's id in a SendMessage response of either binding.
func taskID(t *testing.T, binding, body string) string {
	t.Helper()
	var res struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	raw := []byte(body)
	if binding == a2a.BindingJSONRPC {
		var env struct {
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(raw, &env); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		raw = env.Result
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Task.ID == "" {
		t.Fatalf("no task in %s (%v)", body, err)
	}
	return res.Task.ID
}

// handshakeRefused reports whether err is the TLS alert of a server that
// refused the client's certificate in the handshake.
func handshakeRefused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error" && strings.Contains(op.Err.Error(), "tls:")
}

// TestMutualTLSBindings: over a real TLS connection, on both bindings, a
// valid client certificate runs as its subject; no certificate gets the
// 401 challenge; expired, untrusted-CA (the wrong signature: a CA with the
// same name but another key) and server-only (no client-auth EKU)
// certificates are refused in the handshake with a TLS alert; a valid
// certificate of a subject not in Allow (the "wrong audience" of mutual
// TLS: good credentials, not for this server) gets 401
// invalid_certificate. No refused request runs the agent, and the server
// keeps serving the valid client after every refusal.
func TestMutualTLSBindings(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "client CA")
	forger := newTestCA(t, "client CA") // same name, another key
	aliceName := pkix.Name{CommonName: "alice", Organization: []string{"Example"}}
	alice := ca.issue(t, leafSpec{subject: aliceName})
	mallory := ca.issue(t, leafSpec{subject: pkix.Name{CommonName: "mallory", Organization: []string{"Example"}}})
	expired := ca.issue(t, leafSpec{subject: aliceName, notBefore: time.Now().Add(-48 * time.Hour), notAfter: time.Now().Add(-24 * time.Hour)})
	forged := forger.issue(t, leafSpec{subject: aliceName})
	serverOnly := ca.issue(t, leafSpec{subject: aliceName, eku: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	const alicePrincipal = "CN=alice,O=Example"

	ms := newMTLSServer(t, ca, auth.MutualTLSConfig{Allow: []string{alicePrincipal}})
	valid := ms.client(alice)

	// The card needs no certificate.
	resp, err := ms.client().Get(ms.srv.URL + server.WellKnownCardPath)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("card without a certificate: %v %v", resp, err)
	}
	resp.Body.Close()

	for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON} {
		t.Run(binding, func(t *testing.T) {
			check := func(what string) {
				t.Helper()
				before := ms.calls.Load()
				resp, body, err := ms.call(t, valid, binding)
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("after %s: valid certificate: %v %v %s", what, resp, err, body)
				}
				id := taskID(t, binding, body)
				if _, err := ms.h.GetTask(server.WithPrincipal(context.Background(), alicePrincipal), &a2a.GetTaskRequest{ID: id}); err != nil {
					t.Errorf("after %s: task %s is not alice's: %v", what, id, err)
				}
				if _, err := ms.h.GetTask(context.Background(), &a2a.GetTaskRequest{ID: id}); !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Errorf("after %s: task %s is visible to the anonymous owner: %v", what, id, err)
				}
				if ms.calls.Load() != before+1 {
					t.Errorf("after %s: the agent ran %d times", what, ms.calls.Load()-before)
				}
			}
			check("start")

			refused401 := func(name string, c *http.Client, challenge, message string) {
				t.Helper()
				before := ms.calls.Load()
				resp, body, err := ms.call(t, c, binding)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != challenge {
					t.Errorf("%s: %d %q %s, want 401 %q", name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body, challenge)
				}
				if !strings.Contains(body, `"status":"UNAUTHENTICATED"`) || !strings.Contains(body, message) {
					t.Errorf("%s: body %s", name, body)
				}
				if ms.calls.Load() != before {
					t.Errorf("%s: the agent ran", name)
				}
				check(name)
			}
			refused401("missing certificate", ms.client(), `MutualTLS realm="a2a"`, "Present a client certificate signed by the server's client CA.")
			refused401("subject not admitted", ms.client(mallory), `MutualTLS realm="a2a", error="invalid_certificate"`, "not admitted")

			for _, tc := range []struct {
				name   string
				cert   tls.Certificate
				reason string // in the server's log of the handshake
			}{
				{"expired certificate", expired, "certificate has expired"},
				{"certificate of another CA", forged, "certificate signed by unknown authority"},
				{"certificate without client authentication", serverOnly, "incompatible key usage"},
			} {
				before := ms.calls.Load()
				logged := strings.Count(ms.log.String(), tc.reason)
				resp, body, err := ms.call(t, ms.client(tc.cert), binding)
				if err == nil {
					t.Errorf("%s: %d %s, want a handshake error", tc.name, resp.StatusCode, body)
				} else if !handshakeRefused(err) {
					t.Errorf("%s: %v, want a TLS alert from the server", tc.name, err)
				}
				if ms.calls.Load() != before {
					t.Errorf("%s: the agent ran", tc.name)
				}
				// The server logs the refused handshake on its own goroutine,
				// which may come after the client has read the alert.
				deadline := time.Now().Add(5 * time.Second)
				for strings.Count(ms.log.String(), tc.reason) < logged+1 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if strings.Count(ms.log.String(), tc.reason) != logged+1 {
					t.Errorf("%s: the server did not log a handshake refused for %q:\n%s", tc.name, tc.reason, ms.log.String())
				}
				check(tc.name)
			}
		})
	}
}

// TestMutualTLSPrincipalPrefix: WithPrincipalPrefix applies to the
// principal the certificate names, after Allow has admitted it unprefixed.
func TestMutualTLSPrincipalPrefix(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "client CA")
	alice := ca.issue(t, leafSpec{subject: pkix.Name{CommonName: "alice"}})
	next := newTaskMaker(t)
	h := auth.MutualTLS(auth.MutualTLSConfig{Principal: auth.CommonNamePrincipal, Allow: []string{"alice"}}, next, auth.WithPrincipalPrefix("mtls:"))
	req := httptest.NewRequest(http.MethodPost, "/a2a/jsonrpc", nil)
	req.TLS = connState(alice, ca, true)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if !next.called || rec.Code != http.StatusNoContent {
		t.Fatalf("refused: %d %s", rec.Code, rec.Body)
	}
	if got := next.owner("", "alice", "mtls:alice"); got != "mtls:alice" {
		t.Errorf("ran as %q, want mtls:alice", got)
	}
}
