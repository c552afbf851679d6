package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var cardLine = regexp.MustCompile(`agent card  (http://\S+)`)

// TestServe runs a2a serve as a user would: it prints where it serves,
// answers on both bindings, and stops cleanly when interrupted.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"serve", "--agent", "echo", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, &stdout, &stderr)
	}()

	var cardURL string
	deadline := time.Now().Add(10 * time.Second)
	for cardURL == "" {
		if time.Now().After(deadline) {
			t.Fatalf("serve printed no card URL:\n%s\n%s", stdout.String(), stderr.String())
		}
		if m := cardLine.FindStringSubmatch(stdout.String()); m != nil {
			cardURL = m[1]
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Get(cardURL)
	if err != nil {
		t.Fatal(err)
	}
	var card a2a.AgentCard
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if err != nil || card.Name != "echo" || len(card.SupportedInterfaces) != 2 {
		t.Fatalf("card %+v: %v", card, err)
	}
	for _, in := range card.SupportedInterfaces {
		var req *http.Request
		switch in.ProtocolBinding {
		case a2a.BindingJSONRPC:
			req, _ = http.NewRequest("POST", in.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"ping"}]}}}`))
		case a2a.BindingHTTPJSON:
			req, _ = http.NewRequest("POST", in.URL+"/message:send", strings.NewReader(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"ping"}]}}`))
			req.Header.Set("Content-Type", a2a.MediaTypeA2AJSON)
		}
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"echo: ping"`) {
			t.Errorf("%s: %d %s", in.ProtocolBinding, resp.StatusCode, b)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK || !strings.Contains(stdout.String(), "stopped") {
			t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func TestServeUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--agent", "nope"},
		{"serve", "extra"},
		{"serve", "--max-body", "0"},
		{"frobnicate"},
		{},
	} {
		var stdout, stderr syncBuffer
		if code := Main(t.Context(), args, &stdout, &stderr); code != ExitUsage || stderr.String() == "" {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}
