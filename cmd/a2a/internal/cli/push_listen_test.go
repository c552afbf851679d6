package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/push"
)

var webhookLine = regexp.MustCompile(`webhook at (http://127\.0\.0\.1:\d+/)`)

// startListen runs a2a push listen with args and returns its webhook URL.
func startListen(t *testing.T, args ...string) (url string, stdout, stderr *syncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, append([]string{"push", "listen", "--addr", "127.0.0.1:0"}, args...), stdout, stderr)
	}()
	waitFor(t, "the webhook line", func() bool {
		return webhookLine.MatchString(stdout.String() + stderr.String())
	})
	url = webhookLine.FindStringSubmatch(stdout.String() + stderr.String())[1]
	stopped := false
	stop = func() int {
		if stopped {
			return ExitOK
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { stop() })
	return url, stdout, stderr, stop
}

func postPush(t *testing.T, url string, body []byte, headers map[string]string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/a2a+json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestPushListenSigned(t *testing.T) {
	signer, err := push.GenerateSigner("k1")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(push.JWKSPath, signer.JWKSHandler())
	keySrv := httptest.NewServer(mux)
	defer keySrv.Close()
	keys := keySrv.URL

	url, stdout, stderr, stop := startListen(t, "--jwks", keys+push.JWKSPath, "--task", "task-1")
	ev := &a2a.TaskStatusUpdateEvent{TaskID: "task-1", ContextID: "c", Status: a2a.TaskStatus{
		State: a2a.TaskStateCompleted, Message: a2a.NewTextMessage(a2a.RoleAgent, "m1", "all done")}}
	body, _ := a2a.StreamResponse{Event: ev}.MarshalJSON()
	tok, err := signer.Sign("task-1", body, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if code := postPush(t, url, body, map[string]string{push.SignatureHeader: tok}); code != http.StatusOK {
		t.Fatalf("signed notification: %d; stderr %s", code, stderr.String())
	}
	// An altered body is refused and said so on stderr.
	altered := bytes.Replace(body, []byte("all done"), []byte("all gone"), 1)
	if code := postPush(t, url, altered, map[string]string{push.SignatureHeader: tok}); code != http.StatusUnauthorized {
		t.Fatalf("altered notification: %d", code)
	}
	if code := stop(); code != ExitOK {
		t.Fatalf("exit %d; stderr %s", code, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "push for task task-1") || !strings.Contains(out, "completed: all done") {
		t.Errorf("stdout:\n%s", out)
	}
	if strings.Contains(out, "all gone") {
		t.Errorf("the altered event was printed:\n%s", out)
	}
	if e := stderr.String(); !strings.Contains(e, "401") || !strings.Contains(e, "does not match the signature") || strings.Contains(e, tok) {
		t.Errorf("stderr:\n%s", e)
	}
}

func TestPushListenTokenJSON(t *testing.T) {
	url, stdout, stderr, stop := startListen(t, "--token", "tok-123", "--json")
	ev := &a2a.TaskStatusUpdateEvent{TaskID: "t9", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	body, _ := a2a.StreamResponse{Event: ev}.MarshalJSON()
	if code := postPush(t, url, body, map[string]string{push.TokenHeader: "wrong"}); code != http.StatusUnauthorized {
		t.Fatalf("wrong token: %d", code)
	}
	if code := postPush(t, url, body, map[string]string{push.TokenHeader: "tok-123"}); code != http.StatusOK {
		t.Fatalf("right token: %d", code)
	}
	stop()
	if got := strings.TrimSpace(stdout.String()); got != string(body) {
		t.Errorf("stdout = %q, want the one event %s", got, body)
	}
	if e := stderr.String(); strings.Contains(e, "tok-123") || strings.Contains(e, "wrong\n") || !strings.Contains(e, "401") {
		t.Errorf("stderr holds a token:\n%s", stderr.String())
	}
}

func TestPushListenNeedsAuthentication(t *testing.T) {
	var stdout, stderr syncBuffer
	code := Main(t.Context(), []string{"push", "listen"}, &stdout, &stderr)
	if code != ExitUsage || !strings.Contains(stderr.String(), "--token") {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
	code = Main(t.Context(), []string{"push", "listen", "--jwks", "ftp://x/keys"}, &stdout, &stderr)
	if code != ExitUsage || !strings.Contains(stderr.String(), "not an absolute http or https URL") {
		t.Fatalf("exit %d, stderr %s", code, stderr.String())
	}
}
