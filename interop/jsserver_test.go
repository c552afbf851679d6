package interop

// The other direction of interop: js/server.mjs is an A2A v1.0 server built
// from the official JavaScript SDK's own server components (@a2a-js/sdk
// 1.3.0 on express, and its gRPC service on @grpc/grpc-js). startJSServer
// runs it so Go code can act as its client.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// jsServerStartTimeout bounds how long server.mjs may take to print its
// "listening" line.
const jsServerStartTimeout = 30 * time.Second

// installJSServerDeps makes sure js/node_modules holds everything server.mjs
// imports: the SDK (installSDK) and express at the version package.json
// pins, running `npm ci` when express is missing or at another version (a
// node_modules installed before express was added has only the SDK).
func installJSServerDeps(t *testing.T) {
	t.Helper()
	installPeer(t, "js", sdkVersion, append(slices.Clone(jsPackages), "express"))
}

var listeningRE = regexp.MustCompile(`^listening (http://127\.0\.0\.1:[0-9]+)$`)

// grpcAddrRE matches the url of the GRPC interface in server.mjs's card.
var grpcAddrRE = regexp.MustCompile(`^127\.0\.0\.1:[0-9]+$`)

// startJSServer starts `node server.mjs 0` in js/ (the SDK's echo agent on a
// free port of 127.0.0.1), waits for its "listening" line and returns the
// base URL, e.g. http://127.0.0.1:41835. The agent card is at
// baseURL+"/.well-known/agent-card.json", JSON-RPC at baseURL+"/a2a/jsonrpc"
// and HTTP+JSON at baseURL+"/a2a/rest"; gRPC is on another port of
// 127.0.0.1, named by the card's GRPC interface. The process is stopped (SIGTERM,
// then SIGKILL) in t.Cleanup; its stderr is logged if the test failed.
func startJSServer(t *testing.T) (baseURL string) {
	t.Helper()
	installJSServerDeps(t)

	stdout := &firstLineWriter{line: make(chan string, 1)}
	stderr := &syncBuffer{}
	cmd := exec.Command("node", "server.mjs", "0")
	cmd.Dir = "js"
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("node server.mjs: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	var once sync.Once
	var waitErr error
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case waitErr = <-exited:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				waitErr = <-exited
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("node server.mjs (exit: %v) stderr:\n%s", waitErr, stderr.String())
		}
	})

	select {
	case line := <-stdout.line:
		m := listeningRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("node server.mjs: unexpected first line %q", line)
		}
		return m[1]
	case err := <-exited:
		waitErr = err
		once.Do(func() {}) // already exited
		t.Fatalf("node server.mjs exited before listening: %v\n%s", err, stderr.String())
	case <-time.After(jsServerStartTimeout):
		stop()
		t.Fatalf("node server.mjs did not print its listening line within %v", jsServerStartTimeout)
	}
	panic("unreachable")
}

// firstLineWriter sends the first line written to it on line and discards
// the rest (server.mjs prints nothing after it, but the pipe must never fill
// up).
type firstLineWriter struct {
	mu   sync.Mutex
	buf  []byte
	sent bool
	line chan string
}

func (w *firstLineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent {
		return len(p), nil
	}
	w.buf = append(w.buf, p...)
	if i := bytes.IndexByte(w.buf, '\n'); i >= 0 {
		w.line <- strings.TrimSuffix(string(w.buf[:i]), "\r")
		w.sent = true
		w.buf = nil
	}
	return len(p), nil
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestJSServerSmoke checks the fixture itself with plain net/http: the agent
// card, and one blocking JSON-RPC SendMessage that completes with the echo
// artifact.
func TestJSServerSmoke(t *testing.T) {
	base := startJSServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	// Agent card.
	var card struct {
		Name                string
		SupportedInterfaces []struct {
			URL             string
			ProtocolBinding string
			ProtocolVersion string
		}
		Capabilities struct {
			Streaming         bool
			PushNotifications bool
		}
	}
	status, body := httpDo(ctx, t, http.MethodGet, base+"/.well-known/agent-card.json", nil)
	if status != http.StatusOK {
		t.Fatalf("GET agent card: HTTP %d: %s", status, body)
	}
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatalf("agent card: %v: %s", err, body)
	}
	urls := map[string]string{}
	for _, iface := range card.SupportedInterfaces {
		if iface.ProtocolVersion != "1.0" {
			t.Errorf("interface %s %s: protocolVersion %q, want 1.0", iface.ProtocolBinding, iface.URL, iface.ProtocolVersion)
		}
		urls[iface.ProtocolBinding] = iface.URL
	}
	if got, want := urls["JSONRPC"], base+"/a2a/jsonrpc"; got != want {
		t.Errorf("JSONRPC interface url %q, want %q", got, want)
	}
	if got, want := urls["HTTP+JSON"], base+"/a2a/rest"; got != want {
		t.Errorf("HTTP+JSON interface url %q, want %q", got, want)
	}
	if got := urls["GRPC"]; !grpcAddrRE.MatchString(got) || got == strings.TrimPrefix(base, "http://") {
		t.Errorf("GRPC interface url %q, want 127.0.0.1:PORT on a port of its own", got)
	}
	if !card.Capabilities.Streaming || !card.Capabilities.PushNotifications {
		t.Errorf("capabilities %+v, want streaming and pushNotifications", card.Capabilities)
	}

	// JSON-RPC SendMessage (blocking by default).
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` +
		`{"messageId":"smoke-1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`)
	status, body = httpDo(ctx, t, http.MethodPost, base+"/a2a/jsonrpc", req)
	if status != http.StatusOK {
		t.Fatalf("SendMessage: HTTP %d: %s", status, body)
	}
	var resp struct {
		JSONRPC string
		ID      json.RawMessage
		Error   json.RawMessage
		Result  struct {
			Task *struct {
				ID        string
				ContextID string
				Status    struct{ State string }
				Artifacts []struct {
					ArtifactID string
					Parts      []struct{ Text string }
				}
			}
		}
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatalf("SendMessage response: %v: %s", err, body)
	}
	if resp.JSONRPC != "2.0" || string(resp.ID) != "1" || resp.Error != nil {
		t.Fatalf("SendMessage: unexpected envelope: %s", body)
	}
	task := resp.Result.Task
	if task == nil || task.ID == "" || task.ContextID == "" {
		t.Fatalf("SendMessage: result has no task with id and contextId: %s", body)
	}
	if task.Status.State != "TASK_STATE_COMPLETED" {
		t.Errorf("task state %q, want TASK_STATE_COMPLETED", task.Status.State)
	}
	// The SDK merges the appended chunk into the stored artifact as a
	// second part, so compare the concatenated text.
	var texts []string
	for _, a := range task.Artifacts {
		var s strings.Builder
		for _, p := range a.Parts {
			s.WriteString(p.Text)
		}
		texts = append(texts, fmt.Sprintf("%s=%q", a.ArtifactID, s.String()))
	}
	if len(texts) != 1 || texts[0] != `echo="echo: hi"` {
		t.Errorf("artifacts %v, want [echo=\"echo: hi\"]", texts)
	}
}

// httpDo sends one request with the A2A v1.0 headers and returns the status
// and body.
func httpDo(ctx context.Context, t *testing.T, method, url string, body []byte) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("A2A-Version", "1.0")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", method, url, err)
	}
	return resp.StatusCode, b
}
