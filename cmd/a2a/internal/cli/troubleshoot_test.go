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
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/kit/testrunner"
	"github.com/goa2a/a2a/server"
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
	tlsAgent := httptest.NewUnstartedServer(http.NotFoundHandler())
	tlsAgent.Config.ErrorLog = log.New(io.Discard, "", 0) // the plain request's handshake error is the point
	tlsAgent.StartTLS()
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

// hangingAgent reports working and then waits, until the test ends.
type hangingAgent struct{ release chan struct{} }

func (a hangingAgent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	if err := w.Working(ctx, "thinking it over"); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-a.release:
		return w.Complete(ctx, "done")
	}
}

// syncBuffer is a bytes.Buffer written by a process and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// interrupt starts the binary, sends it SIGINT once its stdout holds
// marker, and returns what it printed and its exit status.
func interrupt(t *testing.T, base, marker string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = testEnv()
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(stdout.String(), marker) {
		if ctx.Err() != nil {
			t.Fatalf("a2a %v never printed %q:\n%s%s", args, marker, stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("a2a %v: %v", args, err)
	}
	clean := func(s string) string { return strings.ReplaceAll(s, base, "URL") }
	return result{clean(stdout.String()), clean(stderr.String()), code}
}

// TestInterruptedStream: Ctrl-C while following a task says how to pick
// it up again and exits 130; the task goes on.
func TestInterruptedStream(t *testing.T) {
	release := make(chan struct{})
	base := startAgentWith(t, agentSetup{card: testrunner.Card, agent: hangingAgent{release}})
	t.Cleanup(func() { close(release) }) // before the server closes

	r := interrupt(t, base, "● working", "send", "--stream", base, "Think it over")
	wantExit(t, r, 130)
	runGolden(t, "interrupt-send-stream", r)

	r = invoke(t, invocation{args: []string{"send", "--async", "--json", base, "Think it over"}})
	wantExit(t, r, 0)
	var res a2a.SendMessageResponse
	if err := a2a.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	id := res.Result.(*a2a.Task).ID
	waitWorking(t, base, id)
	r = interrupt(t, base, "thinking it over", "watch", base, id)
	wantExit(t, r, 130)
	runGolden(t, "interrupt-watch", r)

	r = interrupt(t, base, `"state":"TASK_STATE_WORKING"`, "watch", "--json", base, id)
	wantExit(t, r, 130)
	if !strings.Contains(r.stderr, "a2a watch URL "+id+"\n") || strings.Contains(r.stdout, "a2a watch") {
		t.Errorf("with --json, the resume commands go to stderr only:\n--- stdout\n%s--- stderr\n%s", r.stdout, r.stderr)
	}
}

// waitWorking waits for the task to be working.
func waitWorking(t *testing.T, base, id string) {
	t.Helper()
	c, err := client.New(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		task, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: id})
		if err == nil && task.Status.State == a2a.TaskStateWorking {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s never got to working: %v, %v", id, task, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cutFirstStream tears down the connection of the first SSE stream after
// frames events, once, as a proxy that drops a connection.
func cutFirstStream(frames int) func(http.Handler) http.Handler {
	var once sync.Once
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cut := false
			if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
				once.Do(func() { cut = true })
			}
			if cut {
				w = &dropWriter{ResponseWriter: w, left: frames}
			}
			next.ServeHTTP(w, r)
		})
	}
}

type dropWriter struct {
	http.ResponseWriter
	left int
}

func (w *dropWriter) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte("data:")) {
		if w.left == 0 {
			panic(http.ErrAbortHandler) // net/http drops the connection
		}
		w.left--
	}
	return w.ResponseWriter.Write(b)
}

func (w *dropWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestLostStream: a stream cut mid-task is resumed; stderr says so once
// and the output is what an uncut stream prints.
func TestLostStream(t *testing.T) {
	for _, binding := range []string{"jsonrpc", "rest"} {
		t.Run(binding, func(t *testing.T) {
			base := startAgentWith(t, agentSetup{card: testrunner.Card, agent: &testrunner.Agent{}, wrap: cutFirstStream(2)})
			r := run(t, base, "send", "--stream", "--binding", binding, base, "Run the unit tests for payments-api at commit a41d7c3")
			wantExit(t, r, 0)
			runGolden(t, "send-stream-lost", r)
		})
	}
}

// partsAgent completes each task with an artifact that lists the parts
// of the message it got, and a status message of several lines and parts.
type partsAgent struct{}

func (partsAgent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	var b strings.Builder
	for _, p := range req.Message.Parts {
		switch c := p.Content.(type) {
		case a2a.Text:
			fmt.Fprintf(&b, "text %q\n", string(c))
		case a2a.Raw:
			fmt.Fprintf(&b, "file %s, %s, %d bytes\n", p.Filename, p.MediaType, len(c))
		case a2a.Data:
			fmt.Fprintf(&b, "data %s (%s)\n", c, p.MediaType)
		}
	}
	if err := w.Status(ctx, a2a.TaskStateWorking, w.NewMessage(a2a.TextPart("Reading the parts:\none by one"), a2a.TextPart("then listing them"))); err != nil {
		return err
	}
	if err := w.Artifact(ctx, a2a.Artifact{ArtifactID: "parts", Parts: []a2a.Part{a2a.TextPart(b.String())}}); err != nil {
		return err
	}
	return w.Complete(ctx, fmt.Sprintf("%d parts", len(req.Message.Parts)))
}

func partsCard(jsonrpcURL, restURL string) *a2a.AgentCard {
	c := testrunner.Card(jsonrpcURL, restURL)
	c.Name, c.Skills = "parts", nil
	c.DefaultInputModes = []string{"*/*"}
	return c
}

// TestMessageInput: TEXT - reads standard input, --file guesses the media
// type (--file-type overrides it), --data takes JSON; mistakes are usage
// errors (exit 2) that name the file or the flag.
func TestMessageInput(t *testing.T) {
	base := startAgentWith(t, agentSetup{card: partsCard, agent: partsAgent{}})
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	png := write("pixel", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"))
	jsonFile := write("config.json", []byte(`{"retries":3}`))
	blob := write("blob.bin", []byte{0, 1, 2, 3})
	replace := map[string]string{base: "URL", dir: "DIR"}

	r := invoke(t, invocation{args: []string{"send", base, "-"}, stdin: "hi\n", replace: replace})
	wantExit(t, r, 0)
	runGolden(t, "send-stdin", r)

	r = invoke(t, invocation{args: []string{"send", base, "-", "--file", png, "--file", jsonFile, "--file", blob, "--file-type", "image/webp", "--data", `{"n":1}`},
		stdin: "Look at these.\nAll of them.\n\n", replace: replace})
	wantExit(t, r, 0)
	runGolden(t, "send-parts", r)

	for _, c := range []struct {
		name string
		args []string
	}{
		{"send-missing-file", []string{"send", base, "x", "--file", filepath.Join(dir, "missing.png")}},
		{"send-directory-file", []string{"send", base, "x", "--file", dir}},
		{"send-bad-data", []string{"send", base, "x", "--data", `{"n":}`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := invoke(t, invocation{args: c.args, replace: replace})
			wantExit(t, r, 2)
			runGolden(t, c.name, r)
		})
	}
	// Flag syntax errors print the flag package's usage: only the line and
	// the status are checked here.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"send", base, "x", "--file-type", "image/png", "--file", png}, "give it after the --file it is the type of"},
		{[]string{"send", base, "x", "--file", png, "--file-type", "png"}, "not a media type"},
	} {
		r := invoke(t, invocation{args: c.args, replace: replace})
		wantExit(t, r, 2)
		if !strings.Contains(r.stderr, c.want) {
			t.Errorf("a2a %v: stderr lacks %q:\n%s", c.args, c.want, r.stderr)
		}
	}
	r = invoke(t, invocation{args: []string{"send", base, "-"}, stdin: "\n"})
	wantExit(t, r, 2)
	if !strings.Contains(r.stderr, "nothing to send") {
		t.Errorf("empty standard input: %s", r.stderr)
	}
}

// TestMessageRendering: a message of several parts or lines reads as one
// block under its label, in a task's history and in a live stream.
func TestMessageRendering(t *testing.T) {
	base := startAgentWith(t, agentSetup{card: partsCard, agent: partsAgent{}})
	r := run(t, base, "send", "--stream", base, "First line\nsecond line")
	wantExit(t, r, 0)
	runGolden(t, "render-stream", r)
	r = run(t, base, "get", base, "id-1")
	wantExit(t, r, 0)
	runGolden(t, "render-history", r)
}

// keyRecorder records the credentials of the requests it passes on.
type keyRecorder struct {
	mu   sync.Mutex
	seen []string // "path header=value"
}

func (k *keyRecorder) wrap(header string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.seen = append(k.seen, fmt.Sprintf("%s %s=%q Authorization=%q", r.URL.Path, header, r.Header.Get(header), r.Header.Get("Authorization")))
		k.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (k *keyRecorder) take() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.seen
	k.seen = nil
	return s
}

// TestCredentials: --api-key goes in the header the card's API-key scheme
// names (X-API-Key when it names none), --token as a bearer token, each
// from the environment when the flag is not given, never with the card
// fetch; and no output ever shows them.
func TestCredentials(t *testing.T) {
	const secret = "s3cret-k3y-0123456789"
	keyed := func(name string) func(*a2a.AgentCard) {
		return func(c *a2a.AgentCard) {
			c.SecuritySchemes = map[string]a2a.SecurityScheme{"key": auth.APIKeyScheme(auth.WithKeyIn(auth.KeyInHeader, name))}
			c.SecurityRequirements = []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{"key": {}}}}
		}
	}
	// The A2A bindings want the key; the card is public.
	guard := func(rec *keyRecorder, header string, opts ...auth.Option) func(http.Handler) http.Handler {
		return func(mux http.Handler) http.Handler {
			checked := auth.APIKey(map[string]string{secret: "alice"}, mux, opts...)
			return rec.wrap(header, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == client.WellKnownCardPath {
					mux.ServeHTTP(w, r)
					return
				}
				checked.ServeHTTP(w, r)
			}))
		}
	}

	t.Run("declared header", func(t *testing.T) {
		rec := &keyRecorder{}
		base := startAgentWith(t, agentSetup{card: testrunner.Card, agent: &testrunner.Agent{}, edit: keyed("X-Agent-Key"),
			wrap: guard(rec, "X-Agent-Key", auth.WithKeyIn(auth.KeyInHeader, "X-Agent-Key"))})
		for _, in := range []invocation{
			{args: []string{"list", base, "--api-key", secret}},
			{args: []string{"list", base}, env: []string{"A2A_API_KEY=" + secret}},
			{args: []string{"list", base, "--api-key", secret, "--binding", "rest"}},
		} {
			r := invoke(t, in)
			wantExit(t, r, 0)
			seen := rec.take()
			want := []string{
				fmt.Sprintf(`%s X-Agent-Key="" Authorization=""`, client.WellKnownCardPath),
			}
			if len(seen) != 2 || seen[0] != want[0] || !strings.Contains(seen[1], fmt.Sprintf(`X-Agent-Key=%q`, secret)) {
				t.Errorf("a2a %v: requests %q, want the card without the key and the call with it", in.args, seen)
			}
		}
		// A wrong key: the agent's error, without the key.
		const wrong = "wr0ng-k3y-9876543210"
		r := invoke(t, invocation{args: []string{"list", base, "--api-key", wrong}, replace: map[string]string{base: "URL"}})
		wantExit(t, r, 3)
		runGolden(t, "api-key-wrong", r)
		for _, in := range []invocation{
			{args: []string{"list", base, "--api-key", wrong, "--json"}},
			{args: []string{"send", "--stream", base, "x"}, env: []string{"A2A_API_KEY=" + wrong, "A2A_TOKEN=" + wrong}},
			{args: []string{"list", "http://127.0.0.1:1", "--api-key", wrong, "--token", wrong}},
			{args: []string{"list", base + "/a2a/jsonrpc", "--api-key", wrong, "--token", wrong}},
			{args: []string{"list", base, "--api-key", wrong + "\n", "--token", wrong}},
			{args: []string{"list", base, "--token", wrong + " x"}},
		} {
			r := invoke(t, in)
			if r.code == 0 || strings.Contains(r.stdout+r.stderr, wrong) {
				t.Errorf("a2a %v: exit %d, the output shows the credential or the call succeeded:\n%s%s", in.args, r.code, r.stdout, r.stderr)
			}
		}
	})

	t.Run("no scheme declared", func(t *testing.T) {
		rec := &keyRecorder{}
		base := startAgentWith(t, agentSetup{card: testrunner.Card, agent: &testrunner.Agent{}, wrap: guard(rec, auth.APIKeyHeader)})
		r := invoke(t, invocation{args: []string{"list", base, "--api-key", secret}})
		wantExit(t, r, 0)
		if seen := rec.take(); len(seen) != 2 || !strings.Contains(seen[1], fmt.Sprintf(`X-API-Key=%q`, secret)) {
			t.Errorf("requests %q, want the key in X-API-Key", seen)
		}
	})

	t.Run("token from the environment", func(t *testing.T) {
		rec := &keyRecorder{}
		base := startAgentWith(t, agentSetup{card: testrunner.Card, agent: &testrunner.Agent{}, wrap: func(h http.Handler) http.Handler { return rec.wrap("X-None", h) }})
		r := invoke(t, invocation{args: []string{"list", base}, env: []string{"A2A_TOKEN=" + secret}})
		wantExit(t, r, 0)
		seen := rec.take()
		if len(seen) != 2 || strings.Contains(seen[0], secret) || !strings.Contains(seen[1], `Authorization="Bearer `+secret+`"`) {
			t.Errorf("requests %q, want the bearer token on the call only", seen)
		}
		// The flag wins over the environment.
		r = invoke(t, invocation{args: []string{"list", base, "--token", "other"}, env: []string{"A2A_TOKEN=" + secret}})
		wantExit(t, r, 0)
		if seen := rec.take(); len(seen) != 2 || !strings.Contains(seen[1], `Authorization="Bearer other"`) {
			t.Errorf("requests %q, want the flag's token", seen)
		}
	})

	t.Run("key in the query", func(t *testing.T) {
		base := startAgentWith(t, agentSetup{card: testrunner.Card, agent: &testrunner.Agent{}, edit: func(c *a2a.AgentCard) {
			c.SecuritySchemes = map[string]a2a.SecurityScheme{"key": auth.APIKeyScheme(auth.WithKeyIn(auth.KeyInQuery, "api_key"))}
		}})
		r := invoke(t, invocation{args: []string{"list", base, "--api-key", secret}, replace: map[string]string{base: "URL"}})
		wantExit(t, r, 2)
		runGolden(t, "api-key-in-query", r)
	})
}
