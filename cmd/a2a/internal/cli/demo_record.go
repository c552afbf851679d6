package cli

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/goa2a/a2a/internal/capture"
	"github.com/goa2a/a2a/kit/deployer"
	"github.com/goa2a/a2a/server"
)

// Seeds of the deterministic id generators: one per agent, in the kit's
// order, and one for the planner's message ids.
const plannerSeed = 100

var agentSeeds = map[string]uint64{"test-runner": 1, "code-reviewer": 2, "deployer": 3}

// seededIDs returns a generator of version 4 UUIDs drawn from a PCG
// seeded with seed: the same sequence on every run.
func seededIDs(seed uint64) func() string {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func() string {
		mu.Lock()
		var b [16]byte
		for i := 0; i < 16; i += 8 {
			v := r.Uint64()
			for j := range 8 {
				b[i+j] = byte(v >> (8 * j))
			}
		}
		mu.Unlock()
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		h := hex.EncodeToString(b[:])
		return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
}

// deterministicServerOptions gives each agent the kit's clock and its own
// seeded id generator.
func deterministicServerOptions() func(agent string) []server.Option {
	return func(agent string) []server.Option {
		return []server.Option{server.WithClock(capture.KitClock()), server.WithIDGenerator(seededIDs(agentSeeds[agent]))}
	}
}

// transport dials each agent's listener for the base URL its card
// advertises (http://localhost:41241 in deterministic mode), so requests
// keep the kit's Host while the agents listen on free ports of 127.0.0.1.
func (k *runningKit) transport() http.RoundTripper {
	dial := map[string]string{}
	for _, s := range k.servers {
		dial[strings.TrimPrefix(s.url, "http://")] = s.addr
	}
	d := &net.Dialer{Timeout: 10 * time.Second}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if a, ok := dial[addr]; ok {
			addr = a
		}
		return d.DialContext(ctx, network, addr)
	}
	return t
}

// kitTitle names exchanges as the kit's planner recording does:
// "read the agent card", "SendMessage to test-runner", "SendMessage:
// answer code-reviewer", "SubscribeToTask on deployer", "operator
// approves".
func kitTitle(k *runningKit) func(r *http.Request, body []byte) string {
	names := map[string]string{}
	for _, s := range k.servers {
		names[strings.TrimPrefix(s.url, "http://")] = s.name
	}
	return func(r *http.Request, body []byte) string {
		agent := names[r.URL.Host]
		switch {
		case strings.HasSuffix(r.URL.Path, "/.well-known/agent-card.json"):
			return "read the agent card"
		case strings.HasPrefix(r.URL.Path, deployer.ApprovePath):
			return "operator approves"
		}
		var env struct {
			Method string `json:"method"`
			Params struct {
				Message struct {
					TaskID string `json:"taskId"`
				} `json:"message"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &env) != nil || env.Method == "" {
			return r.Method + " " + r.URL.Path
		}
		switch {
		case strings.HasPrefix(env.Method, "SendMessage") || strings.HasPrefix(env.Method, "SendStreamingMessage"):
			if env.Params.Message.TaskID != "" {
				return env.Method + ": answer " + agent
			}
			return env.Method + " to " + agent
		default:
			return env.Method + " on " + agent
		}
	}
}

// writeRecording writes the planner's run into dir as the kit names it.
func writeRecording(dir string, rec *capture.Recorder, log []byte) error {
	if err := rec.WriteFiles(dir, "19-planner"); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "19-planner.log"), log, 0o644)
}
