package push

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// recorder collects the events a receiver hands on.
type recorder struct {
	mu   sync.Mutex
	evs  []Event
	fail error
}

func (c *recorder) handle(_ context.Context, ev Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail != nil {
		return c.fail
	}
	c.evs = append(c.evs, ev)
	return nil
}

func (c *recorder) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.evs)
}

func statusBody(t *testing.T, taskID string, st a2a.TaskState) []byte {
	t.Helper()
	b, err := a2a.StreamResponse{Event: &a2a.TaskStatusUpdateEvent{TaskID: taskID, ContextID: "c1", Status: a2a.TaskStatus{State: st}}}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newReceiverServer(t *testing.T, rec *recorder, opts ...ReceiverOption) (*Receiver, string) {
	t.Helper()
	r, err := NewReceiver(rec.handle, opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Fatalf("test server not on 127.0.0.1: %s", srv.URL)
	}
	return r, srv.URL
}

// post sends body with headers and returns the status and response text.
func post(t *testing.T, u string, body []byte, headers map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/a2a+json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(text)
}

func sign(t *testing.T, s *Signer, taskID string, body []byte, now time.Time) map[string]string {
	t.Helper()
	tok, err := s.Sign(taskID, body, now)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{SignatureHeader: tok}
}

func TestReceiverVerifiesSignatureOnceAndDedups(t *testing.T) {
	s, _ := GenerateSigner("k1")
	rec := &recorder{}
	_, u := newReceiverServer(t, rec, WithSigner(s), WithTasks("t1"))
	body := statusBody(t, "t1", a2a.TaskStateWorking)
	h := sign(t, s, "t1", body, time.Now())

	if code, text := post(t, u, body, h); code != http.StatusOK {
		t.Fatalf("signed delivery: %d %s", code, text)
	}
	if rec.count() != 1 {
		t.Fatalf("callback ran %d times", rec.count())
	}
	ev := rec.evs[0]
	su, ok := ev.Event.(*a2a.TaskStatusUpdateEvent)
	if !ok || ev.TaskID != "t1" || su.Status.State != a2a.TaskStateWorking || ev.Signature == nil || ev.Signature.KeyID != "k1" {
		t.Fatalf("event = %+v", ev)
	}
	// The same delivery again, and a retry signed afresh: acknowledged,
	// not handed on again.
	if code, _ := post(t, u, body, h); code != http.StatusOK {
		t.Fatalf("replay: %d", code)
	}
	if code, _ := post(t, u, body, sign(t, s, "t1", body, time.Now())); code != http.StatusOK {
		t.Fatalf("re-signed retry: %d", code)
	}
	if rec.count() != 1 {
		t.Fatalf("callback ran %d times after repeats", rec.count())
	}
	// A new event goes through.
	body2 := statusBody(t, "t1", a2a.TaskStateCompleted)
	if code, _ := post(t, u, body2, sign(t, s, "t1", body2, time.Now())); code != http.StatusOK || rec.count() != 2 {
		t.Fatalf("second event: %d, %d calls", code, rec.count())
	}
}

func TestReceiverRejectsAlteredBody(t *testing.T) {
	s, _ := GenerateSigner("k1")
	rec := &recorder{}
	_, u := newReceiverServer(t, rec, WithSigner(s))
	body := statusBody(t, "t1", a2a.TaskStateWorking)
	h := sign(t, s, "t1", body, time.Now())
	altered := bytes.Replace(body, []byte("WORKING"), []byte("WORKINH"), 1)
	if bytes.Equal(altered, body) {
		t.Fatal("the body was not altered")
	}
	code, text := post(t, u, altered, h)
	if code != http.StatusUnauthorized || !strings.Contains(text, "does not match the signature") {
		t.Fatalf("altered body: %d %q", code, text)
	}
	if rec.count() != 0 {
		t.Fatal("the callback saw an altered body")
	}
}

func TestReceiverRejections(t *testing.T) {
	s, _ := GenerateSigner("k1")
	other, _ := GenerateSigner("k1") // same kid, another key
	now := time.Now()
	body := statusBody(t, "t1", a2a.TaskStateWorking)
	b64 := base64.RawURLEncoding.EncodeToString
	algNone := b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + b64([]byte(`{"taskId":"t1"}`)) + ".AA"
	// An HS256 token "signed" with the public JWKS bytes (algorithm
	// confusion) must not pass either.
	hs := b64([]byte(`{"alg":"HS256","typ":"JWT","kid":"k1"}`)) + "." + b64([]byte(`{"taskId":"t1"}`)) + "." + b64(bytes.Repeat([]byte{1}, 32))
	bodyT2 := statusBody(t, "t2", a2a.TaskStateWorking)

	for _, c := range []struct {
		name    string
		body    []byte
		headers map[string]string
		code    int
		reason  string
	}{
		{"missing signature", body, nil, 401, "not signed"},
		{"wrong key", body, sign(t, other, "t1", body, now), 401, "does not verify"},
		{"expired", body, sign(t, s, "t1", body, now.Add(-DefaultLifetime-2*DefaultLeeway)), 401, "expired"},
		{"issued in the future", body, sign(t, s, "t1", body, now.Add(10*time.Minute)), 401, "future"},
		{"other task in the signature", body, sign(t, s, "t2", body, now), 401, "another task"},
		{"unexpected task", bodyT2, sign(t, s, "t2", bodyT2, now), 403, "not expected"},
		{"alg none", body, map[string]string{SignatureHeader: algNone}, 401, "not ES256"},
		{"alg HS256", body, map[string]string{SignatureHeader: hs}, 401, "not ES256"},
		{"garbage", body, map[string]string{SignatureHeader: "not a jwt"}, 401, "compact JWS"},
		{"malformed body", []byte(`{"nope":1}`), sign(t, s, "t1", []byte(`{"nope":1}`), now), 400, "StreamResponse"},
		{"no task in body", []byte(`{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]}}`),
			sign(t, s, "t1", []byte(`{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]}}`), now), 400, "names no task"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{}
			_, u := newReceiverServer(t, rec, WithSigner(s), WithTasks("t1"))
			code, text := post(t, u, c.body, c.headers)
			if code != c.code || !strings.Contains(text, c.reason) {
				t.Fatalf("got %d %q, want %d with %q", code, text, c.code, c.reason)
			}
			if rec.count() != 0 {
				t.Fatal("the callback ran")
			}
		})
	}
}

func TestReceiverHTTPChecks(t *testing.T) {
	rec := &recorder{}
	_, u := newReceiverServer(t, rec, WithToken("secret-token"), WithMaxBody(100))
	h := map[string]string{TokenHeader: "secret-token"}
	body := statusBody(t, "t1", a2a.TaskStateWorking)

	big := append(bytes.Repeat([]byte(" "), 200), body...)
	if code, _ := post(t, u, big, h); code != http.StatusRequestEntityTooLarge {
		t.Errorf("big body: %d", code)
	}
	req, _ := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set(TokenHeader, "secret-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d", resp.StatusCode)
	}
	resp, err = http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", resp.StatusCode)
	}
	// application/json is accepted too.
	req, _ = http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set(TokenHeader, "secret-token")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || rec.count() != 1 {
		t.Errorf("application/json: %d, %d calls", resp.StatusCode, rec.count())
	}
}

func TestReceiverTokenMode(t *testing.T) {
	rec := &recorder{}
	var reasons []string
	var mu sync.Mutex
	_, u := newReceiverServer(t, rec, WithToken("right-token"), WithRejectHook(func(_ *http.Request, status int, reason string) {
		mu.Lock()
		reasons = append(reasons, reason)
		mu.Unlock()
	}))
	body := statusBody(t, "t1", a2a.TaskStateWorking)
	code, text := post(t, u, body, map[string]string{TokenHeader: "wrong-token"})
	if code != http.StatusUnauthorized || strings.Contains(text, "wrong-token") || strings.Contains(text, "right-token") {
		t.Fatalf("wrong token: %d %q", code, text)
	}
	if code, _ := post(t, u, body, nil); code != http.StatusUnauthorized {
		t.Fatalf("no token: %d", code)
	}
	if code, _ := post(t, u, body, map[string]string{TokenHeader: "right-token"}); code != http.StatusOK || rec.count() != 1 {
		t.Fatalf("right token: %d, %d calls", code, rec.count())
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range reasons {
		if strings.Contains(r, "token-") {
			t.Errorf("a reason holds the token: %q", r)
		}
	}
	if len(reasons) != 2 {
		t.Errorf("reject hook saw %d rejections, want 2", len(reasons))
	}
}

func TestReceiverAuthorizationMode(t *testing.T) {
	rec := &recorder{}
	_, u := newReceiverServer(t, rec, WithAuthorization("Bearer abc"))
	body := statusBody(t, "t1", a2a.TaskStateWorking)
	if code, _ := post(t, u, body, map[string]string{"Authorization": "Bearer abd"}); code != http.StatusUnauthorized {
		t.Fatalf("wrong credentials: %d", code)
	}
	if code, _ := post(t, u, body, map[string]string{"Authorization": "bearer abc"}); code != http.StatusOK || rec.count() != 1 {
		t.Fatalf("right credentials: %d", code)
	}
}

func TestReceiverCallbackErrorRetries(t *testing.T) {
	s, _ := GenerateSigner("k1")
	rec := &recorder{fail: errors.New("database down: password=hunter2")}
	_, u := newReceiverServer(t, rec, WithSigner(s))
	body := statusBody(t, "t1", a2a.TaskStateWorking)
	code, text := post(t, u, body, sign(t, s, "t1", body, time.Now()))
	if code != http.StatusInternalServerError || strings.Contains(text, "hunter2") {
		t.Fatalf("failing callback: %d %q", code, text)
	}
	rec.mu.Lock()
	rec.fail = nil
	rec.mu.Unlock()
	// The retry is handled: a failed event is not remembered as done.
	if code, _ := post(t, u, body, sign(t, s, "t1", body, time.Now())); code != http.StatusOK || rec.count() != 1 {
		t.Fatalf("retry: %d, %d calls", code, rec.count())
	}
}

func TestReceiverEventIDDedup(t *testing.T) {
	s, _ := GenerateSigner("k1")
	rec := &recorder{}
	_, u := newReceiverServer(t, rec, WithSigner(s))
	// Two distinct chunks with the same bytes: told apart by their event IDs.
	b, _ := a2a.StreamResponse{Event: &a2a.TaskArtifactUpdateEvent{TaskID: "t1", ContextID: "c", Append: true,
		Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("x")}}}}.MarshalJSON()
	for _, id := range []string{"1", "2", "2"} {
		tok, _ := s.SignEvent("t1", id, b, time.Now())
		if code, _ := post(t, u, b, map[string]string{SignatureHeader: tok}); code != http.StatusOK {
			t.Fatalf("event %s: %d", id, code)
		}
	}
	if rec.count() != 2 {
		t.Fatalf("callback ran %d times, want 2", rec.count())
	}
}

func TestReceiverJWKSURL(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	s, _ := NewSigner("k1", key, WithIssuer("https://agent.example"))
	noIss, _ := NewSigner("k1", key)
	var fetches int
	var mu sync.Mutex
	mux := http.NewServeMux()
	jwks := s.JWKSHandler()
	mux.HandleFunc(JWKSPath, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fetches++
		mu.Unlock()
		jwks.ServeHTTP(w, r)
	})
	keySrv := httptest.NewServer(mux)
	defer keySrv.Close()
	rec := &recorder{}
	_, u := newReceiverServer(t, rec, WithJWKSURL(keySrv.URL+JWKSPath), WithExpectedIssuer("https://agent.example"))
	body := statusBody(t, "t1", a2a.TaskStateWorking)
	if code, text := post(t, u, body, sign(t, s, "t1", body, time.Now())); code != http.StatusOK {
		t.Fatalf("JWKS URL: %d %s", code, text)
	}
	body2 := statusBody(t, "t1", a2a.TaskStateCompleted)
	if code, text := post(t, u, body2, sign(t, noIss, "t1", body2, time.Now())); code != http.StatusUnauthorized || !strings.Contains(text, "issuer") {
		t.Fatalf("no issuer: %d %s", code, text)
	}
	mu.Lock()
	defer mu.Unlock()
	if fetches != 1 {
		t.Errorf("fetched the JWKS %d times, want 1", fetches)
	}
}

func TestNewReceiverNeedsAuthentication(t *testing.T) {
	if _, err := NewReceiver(func(context.Context, Event) error { return nil }); err == nil || !strings.Contains(err.Error(), "no authentication") {
		t.Fatalf("err = %v", err)
	}
	if _, err := NewReceiver(func(context.Context, Event) error { return nil }, WithJWKSURL("file:///etc/passwd")); err == nil {
		t.Fatal("a file JWKS URL accepted")
	}
}
