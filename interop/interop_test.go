// Package interop runs the official JavaScript SDK against our server: the
// script js/client.mjs drives @a2a-js/sdk 1.3.0 over both HTTP bindings.
package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

const sdkVersion = "1.3.0"

// installSDK makes sure js/node_modules holds @a2a-js/sdk at the pinned
// version, running `npm ci` when it does not.
func installSDK(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required for the interop test (Node.js 20+): %v", tool, err)
		}
	}
	b, err := os.ReadFile(filepath.Join("js", "node_modules", "@a2a-js", "sdk", "package.json"))
	if err == nil {
		var pkg struct{ Version string }
		if json.Unmarshal(b, &pkg) == nil && pkg.Version == sdkVersion {
			return
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = "js"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in interop/js: %v\n%s", err, out)
	}
}

var summaryRE = regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed$`)

// TestJSClient runs the SDK's client against our server on 127.0.0.1 over
// JSON-RPC and over HTTP+JSON: card, blocking and streaming sends, GetTask
// with historyLength, ListTasks with a filter, cancel and subscribe on a
// finished task, and the four push config operations.
func TestJSClient(t *testing.T) {
	installSDK(t)
	srv := httptest.NewUnstartedServer(nil) // 127.0.0.1
	base := "http://" + srv.Listener.Addr().String()
	card := echo.Card(base+a2ahttp.JSONRPCPath, base+a2ahttp.RESTPath)
	h, err := server.NewHandler(card, echo.Agent{})
	if err != nil {
		t.Fatal(err)
	}
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = mux
	srv.Start()
	defer srv.Close()
	defer h.Close(context.Background())

	for _, binding := range []string{"jsonrpc", "rest"} {
		t.Run(binding, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", "client.mjs", base, binding, "--name="+card.Name)
			cmd.Dir = "js"
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			runErr := cmd.Run()
			t.Logf("node client.mjs %s:\n%s", binding, out.String())
			m := summaryRE.FindStringSubmatch(out.String())
			if m == nil {
				t.Fatalf("no summary line in the output (exit: %v)", runErr)
			}
			passed, _ := strconv.Atoi(m[1])
			failed, _ := strconv.Atoi(m[2])
			if failed > 0 || passed == 0 || runErr != nil {
				t.Fatalf("%d passed, %d failed (exit: %v)", passed, failed, runErr)
			}
		})
	}
}
