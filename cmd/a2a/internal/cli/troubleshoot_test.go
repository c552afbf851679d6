package cli_test

// Tests of what a person reads when a client command goes wrong or is
// interrupted (issue 16): no agent card at the URL, http for https, a
// lost stream, Ctrl-C; and of the message input, the credentials and the
// rendering of messages. Their goldens keep the exit status, stdout and
// stderr apart (runGolden).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/kit/testrunner"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// runGolden compares a run with testdata/name.golden: its exit status,
// then its stdout and its stderr, each in its own section.
func runGolden(t *testing.T, name string, r result) {
	t.Helper()
	golden(t, name, fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr))
}

// invocation is a run of the binary with more control than run gives.
type invocation struct {
	args    []string
	env     []string          // added to the environment
	stdin   string            // standard input; none when empty
	replace map[string]string // replacements in the output, such as a base URL by "URL"
}

// invoke runs the binary. The environment's own A2A_TOKEN and A2A_API_KEY
// are left out, so that a developer's credentials change nothing.
func invoke(t *testing.T, in invocation) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, in.args...)
	cmd.Env = append(testEnv(), in.env...)
	if in.stdin != "" {
		cmd.Stdin = strings.NewReader(in.stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("a2a %v: %v", in.args, err)
	}
	return result{replaceAll(stdout.String(), in.replace), replaceAll(stderr.String(), in.replace), code}
}

func testEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "A2A_TOKEN=") && !strings.HasPrefix(kv, "A2A_API_KEY=") {
			env = append(env, kv)
		}
	}
	return append(env, "NO_COLOR=1")
}

func replaceAll(s string, r map[string]string) string {
	for from, to := range r {
		s = strings.ReplaceAll(s, from, to)
	}
	return s
}

// agentSetup is what startAgentWith serves.
type agentSetup struct {
	card  func(jsonrpcURL, restURL string) *a2a.AgentCard
	agent server.Agent
	edit  func(*a2a.AgentCard)            // changes the card before use
	wrap  func(http.Handler) http.Handler // middleware around the mux
}

// startAgentWith is startAgent with middleware and an edited card.
func startAgentWith(t *testing.T, s agentSetup) string {
	t.Helper()
	var mu sync.Mutex
	n := 0
	clock := time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	card := s.card(base+a2ahttp.JSONRPCPath, base+a2ahttp.RESTPath)
	if s.edit != nil {
		s.edit(card)
	}
	h, err := server.NewHandler(card, s.agent,
		server.WithIDGenerator(func() string { mu.Lock(); defer mu.Unlock(); n++; return fmt.Sprintf("id-%d", n) }),
		server.WithClock(func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			clock = clock.Add(250 * time.Millisecond)
			return clock
		}))
	if err != nil {
		t.Fatal(err)
	}
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var handler http.Handler = mux
	if s.wrap != nil {
		handler = s.wrap(mux)
	}
	srv.Config.Handler = handler
	srv.Start()
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); _ = h.Close(context.Background()) })
	return base
}

// TestNoAgentCard: a URL that serves no agent card, or the wrong one of
// http and https, is a connection problem (exit 4) said with what to do,
// not an A2A error of the agent.
func TestNoAgentCard(t *testing.T) {
	agent := startAgent(t, testrunner.Card, &testrunner.Agent{})
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A web application that answers every path with its index.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!DOCTYPE html>\n<html><head><title>Home</title></head><body>Welcome</body></html>\n")
	}))
	t.Cleanup(site.Close)
	notCard := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"ok"}`)
	}))
	t.Cleanup(notCard.Close)
	tlsAgent := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsAgent.Close)
	alert := tlsAlertServer(t)

	host := func(u string) string { return strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://") }
	cases := []struct {
		name     string // of the golden file
		args     []string
		base, as string // base is replaced by as in the output
		code     int
	}{
		{"card-not-found", []string{"card", notFound.URL}, notFound.URL, "URL", 4},
		{"card-endpoint-url", []string{"card", agent + "/a2a/jsonrpc"}, agent, "URL", 4},
		{"card-rest-endpoint-url", []string{"card", agent + "/a2a/rest/"}, agent, "URL", 4},
		{"card-web-page", []string{"card", site.URL + "/app/home"}, site.URL, "URL", 4},
		{"card-http-to-https", []string{"card", "http://" + host(tlsAgent.URL)}, host(tlsAgent.URL), "HOST", 4},
		{"card-https-to-http", []string{"card", "https://" + host(agent)}, host(agent), "HOST", 4},
		{"card-tls-alert", []string{"card", "http://" + alert}, alert, "HOST", 4},
		{"send-endpoint-url", []string{"send", agent + "/a2a/rest", "hello"}, agent, "URL", 4},
		// JSON that is not a valid card came from something that means to
		// be an agent: the agent's error, as before.
		{"card-invalid-json", []string{"card", notCard.URL}, notCard.URL, "URL", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := invoke(t, invocation{args: c.args, replace: map[string]string{c.base: c.as}})
			wantExit(t, r, c.code)
			runGolden(t, c.name, r)
		})
	}
}

// tlsAlertServer accepts connections on 127.0.0.1 and answers whatever
// comes with a TLS alert record, as TLS servers other than Go's answer a
// plain HTTP request. It returns its host:port.
func tlsAlertServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(10 * time.Second))
				buf := make([]byte, 4096)
				conn.Read(buf)
				conn.Write([]byte("\x15\x03\x01\x00\x02\x02\x46")) // alert: protocol_version
			})
		}
	})
	return ln.Addr().String()
}
