package a2agrpc_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/internal/grpcpb"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2agrpc"
)

func apiKeys(next http.Handler) http.Handler {
	return auth.APIKey(map[string]string{"key-alice": "alice", "key-bob": "bob"}, next)
}

func TestAPIKey(t *testing.T) {
	t.Parallel()
	f := start(t, setup{grpcOpts: []a2agrpc.Option{a2agrpc.WithHTTPAuth(apiKeys)}})
	alice := func() context.Context { return call(t, "x-api-key", "key-alice") }
	bob := func() context.Context { return call(t, "x-api-key", "key-bob") }

	// No key: refused before the Handler, with the challenge as metadata.
	var hdr metadata.MD
	_, err := f.client.SendMessage(call(t), send("task"), grpc.Header(&hdr))
	st := wantCode(t, err, codes.Unauthenticated)
	if got := hdr.Get("www-authenticate"); len(got) != 1 || got[0] != `APIKey realm="a2a", header="X-API-Key"` {
		t.Errorf("www-authenticate %q", got)
	}
	if st.Message() != "Send the API key in the X-API-Key header." {
		t.Errorf("message %q, want the one of auth.APIKey's body", st.Message())
	}
	list, err := f.client.ListTasks(alice(), &grpcpb.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetTasks()) != 0 {
		t.Fatalf("the refused call made a task: %v", list)
	}

	// A wrong key, on a stream.
	s, err := f.client.SubscribeToTask(call(t, "x-api-key", "key-mallory"), &grpcpb.SubscribeToTaskRequest{Id: "any"})
	if err != nil {
		t.Fatal(err)
	}
	frames, err := drain(t, s)
	wantCode(t, err, codes.Unauthenticated)
	sh, herr := s.Header()
	if herr != nil {
		t.Fatal(herr)
	}
	if got := sh.Get("www-authenticate"); len(frames) != 0 || len(got) != 1 || !strings.Contains(got[0], `error="invalid_key"`) {
		t.Errorf("frames %v, www-authenticate %q", frames, got)
	}

	// A good key: the task is alice's.
	res, err := f.client.SendMessage(alice(), send("task"))
	if err != nil {
		t.Fatal(err)
	}
	id := res.GetTask().GetId()
	if _, err := f.client.GetTask(alice(), &grpcpb.GetTaskRequest{Id: id}); err != nil {
		t.Errorf("alice's GetTask: %v", err)
	}
	_, err = f.client.GetTask(bob(), &grpcpb.GetTaskRequest{Id: id})
	if ei := errorInfo(t, wantCode(t, err, codes.NotFound)); ei.GetReason() != "TASK_NOT_FOUND" {
		t.Errorf("bob's GetTask: %v", ei)
	}
	for who, ctx := range map[string]context.Context{"alice": alice(), "bob": bob()} {
		list, err := f.client.ListTasks(ctx, &grpcpb.ListTasksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if mine := len(list.GetTasks()) == 1 && list.GetTasks()[0].GetId() == id; mine != (who == "alice") {
			t.Errorf("%s lists %v", who, list)
		}
	}

	// On a stream too: alice may follow her task, bob may not see it.
	res, err = f.client.SendMessage(alice(), sendNow("wait"))
	if err != nil {
		t.Fatal(err)
	}
	waiting := res.GetTask().GetId()
	s, err = f.client.SubscribeToTask(bob(), &grpcpb.SubscribeToTaskRequest{Id: waiting})
	if err != nil {
		t.Fatal(err)
	}
	_, err = drain(t, s)
	wantCode(t, err, codes.NotFound)
	s, err = f.client.SubscribeToTask(alice(), &grpcpb.SubscribeToTaskRequest{Id: waiting})
	if err != nil {
		t.Fatal(err)
	}
	if first, err := s.Recv(); err != nil || first.GetTask().GetId() != waiting {
		t.Fatalf("alice's subscription: %v, %v", first, err)
	}
	f.agent.release()
	if _, err := drain(t, s); err != nil {
		t.Errorf("alice's subscription: %v", err)
	}

	// The principal reaches the extended card source.
	card, err := f.client.GetExtendedAgentCard(bob(), &grpcpb.GetExtendedAgentCardRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if card.GetName() != "extended for bob" {
		t.Errorf("extended card %q, want bob's", card.GetName())
	}
}

// refuse is middleware that answers every request with status, headers
// hdr (name, value pairs) and body.
func refuse(status int, body string, hdr ...string) func(http.Handler) http.Handler {
	return func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for i := 0; i+1 < len(hdr); i += 2 {
				w.Header().Add(hdr[i], hdr[i+1])
			}
			if status != 0 {
				w.WriteHeader(status)
			}
			_, _ = w.Write([]byte(body))
		})
	}
}

func TestHTTPAuthRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		mw      func(http.Handler) http.Handler
		code    codes.Code
		message string
		retry   time.Duration
	}{
		{"forbidden", refuse(403, `{"error":{"code":403,"status":"PERMISSION_DENIED","message":"not for you"}}`),
			codes.PermissionDenied, "not for you", 0},
		{"too many", refuse(429, `{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"slow down"}}`, "Retry-After", "7"),
			codes.ResourceExhausted, "slow down", 7 * time.Second},
		{"unavailable", refuse(503, `{"error":{"code":503,"status":"UNAVAILABLE","message":"keys unavailable"}}`, "Retry-After", "30"),
			codes.Unavailable, "keys unavailable", 30 * time.Second},
		{"not JSON", refuse(500, "oops"), codes.Internal, "HTTP 500", 0},
		{"teapot", refuse(418, `{"error":{"message":"short and stout"}}`), codes.Internal, "short and stout", 0},
		{"said nothing", refuse(0, ""), codes.Internal, "HTTP 200", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := start(t, setup{grpcOpts: []a2agrpc.Option{a2agrpc.WithHTTPAuth(tc.mw)}})
			_, err := f.client.GetTask(call(t), &grpcpb.GetTaskRequest{Id: "any"})
			st := wantCode(t, err, tc.code)
			if !strings.Contains(st.Message(), tc.message) {
				t.Errorf("message %q, want %q in it", st.Message(), tc.message)
			}
			var retry time.Duration
			for _, d := range st.Details() {
				if ri, ok := d.(*errdetails.RetryInfo); ok {
					retry = ri.GetRetryDelay().AsDuration()
				}
			}
			if retry != tc.retry {
				t.Errorf("RetryInfo %v, want %v", retry, tc.retry)
			}
		})
	}
}

// The middleware sees the call as an HTTP request, and what it attaches to
// the request context is the call's.
func TestHTTPAuthRequest(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen []*http.Request
	)
	mw := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r)
			mu.Unlock()
			next.ServeHTTP(w, r.WithContext(server.WithPrincipal(r.Context(), "p-"+r.Header.Get("X-Caller"))))
		})
	}
	f := start(t, setup{grpcOpts: []a2agrpc.Option{a2agrpc.WithHTTPAuth(mw)}})
	card, err := f.client.GetExtendedAgentCard(call(t, "x-caller", "dave", "x-caller", "ignored"), &grpcpb.GetExtendedAgentCardRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if card.GetName() != "extended for p-dave" {
		t.Errorf("extended card %q, want the principal the middleware named", card.GetName())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 {
		t.Fatalf("the middleware saw %d requests", len(seen))
	}
	r := seen[0]
	if r.Method != http.MethodPost || r.URL.Path != grpcpb.A2AService_GetExtendedAgentCard_FullMethodName ||
		r.Host != f.addr || r.TLS != nil {
		t.Errorf("request %s %s host %q TLS %v", r.Method, r.URL.Path, r.Host, r.TLS)
	}
	if got := r.Header.Values("X-Caller"); len(got) != 2 || r.Header.Get("A2a-Version") != "1.0" {
		t.Errorf("header %v", r.Header)
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err != nil || host != "127.0.0.1" {
		t.Errorf("RemoteAddr %q", r.RemoteAddr)
	}
}

// auth.MutualTLS reads the peer's TLS state.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	creds := credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{pki.server},
		ClientCAs:    pki.pool,
		ClientAuth:   tls.VerifyClientCertIfGiven,
		MinVersion:   tls.VersionTLS13,
	})
	mtls := func(next http.Handler) http.Handler {
		return auth.MutualTLS(auth.MutualTLSConfig{Principal: auth.CommonNamePrincipal}, next)
	}
	f := start(t, setup{grpcOpts: []a2agrpc.Option{
		a2agrpc.WithHTTPAuth(mtls),
		a2agrpc.WithServerOptions(grpc.Creds(creds)),
	}})
	dial := func(certs ...tls.Certificate) grpcpb.A2AServiceClient {
		conn, err := grpc.NewClient(f.addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
			RootCAs: pki.pool, Certificates: certs, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13,
		})))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return grpcpb.NewA2AServiceClient(conn)
	}
	card, err := dial(pki.client).GetExtendedAgentCard(call(t), &grpcpb.GetExtendedAgentCardRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if card.GetName() != "extended for carol" {
		t.Errorf("extended card %q, want carol's", card.GetName())
	}
	var hdr metadata.MD
	_, err = dial().GetExtendedAgentCard(call(t), &grpcpb.GetExtendedAgentCardRequest{}, grpc.Header(&hdr))
	wantCode(t, err, codes.Unauthenticated)
	if got := hdr.Get("www-authenticate"); len(got) != 1 || !strings.HasPrefix(got[0], "MutualTLS ") {
		t.Errorf("www-authenticate %q", got)
	}
}

type pki struct {
	pool           *x509.CertPool
	server, client tls.Certificate
}

// newPKI makes a CA, a server certificate for 127.0.0.1 and a client
// certificate for "carol".
func newPKI(t *testing.T) pki {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	now := time.Now()
	caKey := key()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(serial int64, tmpl *x509.Certificate) tls.Certificate {
		k := key()
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pki{
		pool: pool,
		server: issue(2, &x509.Certificate{Subject: pkix.Name{CommonName: "server"},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}),
		client: issue(3, &x509.Certificate{Subject: pkix.Name{CommonName: "carol"},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}),
	}
}

// rawCodec sends the bytes it is given as they are: a client of garbage.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return v.([]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// TestAuthBeforeDecode: a unary call without credentials is refused
// UNAUTHENTICATED before its message is decoded, whatever it carries;
// with credentials, the same garbage fails to decode instead.
func TestAuthBeforeDecode(t *testing.T) {
	t.Parallel()
	f := start(t, setup{grpcOpts: []a2agrpc.Option{a2agrpc.WithHTTPAuth(apiKeys)}})
	conn, err := grpc.NewClient(f.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Field 1 (message) as a length-delimited field that runs past the
	// end: no decoder accepts it.
	garbage := []byte{0x0a, 0xff, 0xff, 0xff, 0x0f, 'x'}
	for _, method := range []string{grpcpb.A2AService_SendMessage_FullMethodName, grpcpb.A2AService_GetTask_FullMethodName} {
		var out []byte
		err := conn.Invoke(call(t), method, garbage, &out, grpc.ForceCodec(rawCodec{}))
		wantCode(t, err, codes.Unauthenticated)
		err = conn.Invoke(call(t, "x-api-key", "key-alice"), method, garbage, &out, grpc.ForceCodec(rawCodec{}))
		if st, _ := status.FromError(err); err == nil || st.Code() == codes.Unauthenticated || st.Code() == codes.OK {
			t.Errorf("%s with a key and garbage: %v, want a decoding failure", method, err)
		}
	}
}
