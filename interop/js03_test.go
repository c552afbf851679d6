package interop

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/serve"
	"github.com/goa2a/a2a/server"
)

// sdk03Version is the v0.3 release of @a2a-js/sdk that js03/package.json
// pins: the last of the 0.3 line, the peer of v0.3 compatibility.
const sdk03Version = "0.3.14"

// installSDK03 makes sure js03/node_modules holds @a2a-js/sdk at
// sdk03Version, running `npm ci` (from the committed package-lock.json)
// when it does not.
func installSDK03(t *testing.T) {
	t.Helper()
	installPeer(t, "js03", sdk03Version, []string{"@a2a-js/sdk"})
}

// waitAgent is the echo agent, except that the text "wait" makes a task
// that works until it is canceled.
type waitAgent struct{ echo.Agent }

// Execute implements [server.Agent].
func (a waitAgent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	if req.Message.Text() != "wait" {
		return a.Agent.Execute(ctx, req, w)
	}
	if err := w.Working(ctx, ""); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestJS03Client runs @a2a-js/sdk 0.3.14's A2AClient, a v0.3 client,
// against serve.New(..., serve.WithV03()) over JSON-RPC on 127.0.0.1: the
// dual card, blocking and streaming sends, tasks/get, resubscribe to and
// cancel of a running task, the four push config methods, and the
// authenticated extended card (with an API key).
func TestJS03Client(t *testing.T) {
	installSDK03(t)
	const key = "interop-key-0123456789"
	card := echo.Card("", "") // the Server fills in the interfaces
	card.SupportedInterfaces = nil
	card.Capabilities.ExtendedAgentCard = a2a.Ptr(true)
	ext := *card
	ext.Name = card.Name + " (extended)"
	// The extended card has the served card's interfaces, known once New
	// has listened; it is asked for only after Run starts.
	var srv *serve.Server
	srv, err := serve.New(card, waitAgent{},
		serve.WithAddr("127.0.0.1:0"),
		serve.WithV03(),
		serve.WithAPIKeys(map[string]string{key: "alice"}),
		serve.WithPush(serve.Push{Allow: []string{"127.0.0.1"}}),
		serve.WithHandlerOptions(server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) {
			c := ext
			c.SupportedInterfaces = srv.Card().SupportedInterfaces
			return &c, nil
		})),
	)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); !srv.Ready(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server is not ready after 30s")
		}
	}

	rctx, rcancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer rcancel()
	cmd := exec.CommandContext(rctx, "node", "client.mjs", srv.URL(), key, "--name="+card.Name)
	cmd.Dir = "js03"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	t.Logf("node client.mjs:\n%s", out.String())
	m := summaryRE.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no summary line in the output (exit: %v)", runErr)
	}
	passed, _ := strconv.Atoi(m[1])
	failed, _ := strconv.Atoi(m[2])
	if failed > 0 || passed == 0 || runErr != nil {
		t.Fatalf("%d passed, %d failed (exit: %v)", passed, failed, runErr)
	}
}
