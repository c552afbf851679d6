// Package interop runs the official JavaScript SDK against our server: the
// script js/client.mjs drives @a2a-js/sdk 1.3.0 over both HTTP bindings
// and over gRPC, and js03/client.mjs drives @a2a-js/sdk 0.3.14, a v0.3
// client, over JSON-RPC (serve.WithV03).
package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2agrpc"
	"github.com/goa2a/a2a/server/a2ahttp"
	"github.com/goa2a/a2a/store/memory"
)

const sdkVersion = "1.3.0"

// jsPackages are the packages in js/node_modules whose presence at the
// version js/package.json pins decides whether `npm ci` must run: the SDK,
// and the peer dependencies of its gRPC entry points (a node_modules
// installed before gRPC was added has only the SDK and express).
var jsPackages = []string{"@a2a-js/sdk", "@grpc/grpc-js", "@bufbuild/protobuf"}

// installSDK makes sure js/node_modules holds @a2a-js/sdk at the pinned
// version and the gRPC packages at the versions js/package.json pins,
// running `npm ci` when one is missing or at another version.
func installSDK(t *testing.T) {
	t.Helper()
	installPeer(t, "js", sdkVersion, jsPackages)
}

// installPeer makes sure dir/node_modules holds the packages names at the
// versions dir/package.json pins, that pin being sdk for @a2a-js/sdk,
// running `npm ci` (from the committed package-lock.json) when one is
// missing or at another version.
func installPeer(t *testing.T, dir, sdk string, names []string) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is required for the interop test (Node.js 20+): %v", tool, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct{ Dependencies map[string]string }
	if err := json.Unmarshal(b, &manifest); err != nil {
		t.Fatalf("%s/package.json: %v", dir, err)
	}
	if got := manifest.Dependencies["@a2a-js/sdk"]; got != sdk {
		t.Fatalf("%s/package.json pins @a2a-js/sdk %q, want %q", dir, got, sdk)
	}
	if installed(t, dir, manifest.Dependencies, names) {
		return
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in interop/%s: %v\n%s", dir, err, out)
	}
	if !installed(t, dir, manifest.Dependencies, names) {
		t.Fatalf("npm ci in interop/%s did not install %v at the versions package.json pins", dir, names)
	}
}

// installed reports whether every package of names is in dir/node_modules
// at the exact version that pins (package.json's dependencies) gives.
func installed(t *testing.T, dir string, pins map[string]string, names []string) bool {
	t.Helper()
	for _, name := range names {
		want := pins[name]
		if want == "" {
			t.Fatalf("%s/package.json does not list %s", dir, name)
		}
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(name), "package.json"))
		if err != nil {
			return false
		}
		var pkg struct{ Version string }
		if json.Unmarshal(b, &pkg) != nil || pkg.Version != want {
			return false
		}
	}
	return true
}

var summaryRE = regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed$`)

// pushPrefix marks the messages [pushAgent] answers with a task that waits
// for input.
const pushPrefix = "push:"

// pushAgent is the echo agent, except that a message whose text starts
// with pushPrefix makes a task that reports working and then asks for
// input; the answer completes it with an artifact echoing the answer. The
// pause lets the JS client register a second webhook with
// CreateTaskPushNotificationConfig while the task still has updates to
// come.
type pushAgent struct{ echo.Agent }

// Execute implements [server.Agent].
func (a pushAgent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	switch {
	case req.Task != nil: // the answer to the question below
		art := a2a.Artifact{ArtifactID: "echo", Name: "echo", Parts: []a2a.Part{a2a.TextPart("echo: " + req.Message.Text())}}
		if err := w.Artifact(ctx, art); err != nil {
			return err
		}
		return w.Complete(ctx, "")
	case strings.HasPrefix(req.Message.Text(), pushPrefix):
		if err := w.Working(ctx, ""); err != nil {
			return err
		}
		return w.RequireInput(ctx, "send the rest")
	default:
		return a.Agent.Execute(ctx, req, w)
	}
}

// TestJSClient runs the SDK's client against our server on 127.0.0.1 over
// JSON-RPC, over HTTP+JSON and over gRPC (the same Handler served by
// a2agrpc on its own port, listed in the card as "127.0.0.1:PORT"): card,
// blocking and streaming sends, GetTask with historyLength, ListTasks with
// a filter, cancel and subscribe on a finished task, the four push config operations, and webhook delivery:
// the script runs a receiver on 127.0.0.1 and checks the notifications our
// Deliverer sends it for configs registered with SendMessage and with
// CreateTaskPushNotificationConfig.
func TestJSClient(t *testing.T) {
	installSDK(t)
	srv := httptest.NewUnstartedServer(nil) // 127.0.0.1
	base := "http://" + srv.Listener.Addr().String()
	grpcLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer grpcLn.Close() // if a Fatal comes before Serve takes it over
	card := echo.Card(base+a2ahttp.JSONRPCPath, base+a2ahttp.RESTPath)
	card.SupportedInterfaces = append(card.SupportedInterfaces, a2a.AgentInterface{
		URL: grpcLn.Addr().String(), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion,
	})

	st := memory.New()
	guard, err := push.NewGuard(push.WithAllow("127.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	// The poll interval is longer than the script's waits: deliveries must
	// be started by the Handler's notifications (server.WithPusher), not
	// found by polling. Retries would wait for the poll too, but none is
	// expected: a failed call fails the test (see the end).
	d, err := push.NewDeliverer(st, push.WithGuard(guard), push.WithPollInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	h, err := server.NewHandler(card, pushAgent{}, server.WithStore(st), server.WithPusher(d))
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
	gsrv := a2agrpc.NewServer(h)
	served := make(chan error, 1)
	go func() { served <- gsrv.Serve(grpcLn) }()
	defer func() {
		gsrv.Stop()
		if err := <-served; err != nil {
			t.Errorf("gRPC Serve: %v", err)
		}
	}()
	defer h.Close(context.Background())

	runCtx, stopDeliverer := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(runCtx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		stopDeliverer()
		if err := <-ran; !errors.Is(err, context.Canceled) {
			t.Errorf("Deliverer.Run returned %v, want context.Canceled", err)
		}
	}
	defer stop()

	for _, binding := range []string{"jsonrpc", "rest", "grpc"} {
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

	// Every webhook call was acknowledged: the script's receiver answers
	// 200, and the config it registers on a finished task (whose URL
	// nobody listens on) must not be called at all.
	stop()
	if s := d.Stats(); s.Delivered == 0 || s.Failed != 0 || s.Failing != 0 {
		t.Errorf("deliverer stats %+v, want deliveries and no failures", s)
	}
}
