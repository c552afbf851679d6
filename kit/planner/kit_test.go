package planner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/capture"
	"github.com/goa2a/a2a/kit/deployer"
	"github.com/goa2a/a2a/kit/planner"
	"github.com/goa2a/a2a/kit/reviewer"
	"github.com/goa2a/a2a/kit/testrunner"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// deployToken is the kit's deployer token (capture 19 #7).
const deployToken = "dpl_test_7c1e4b"

// kitAgent is one agent to serve in a test.
type kitAgent struct {
	card  func(jsonrpcURL, restURL string) *a2a.AgentCard
	agent server.Agent
	wrap  func(http.Handler) http.Handler // optional middleware
}

func testRunner() kitAgent { return kitAgent{card: testrunner.Card, agent: &testrunner.Agent{}} }

// serveAgent serves a on 127.0.0.1 and returns its base URL.
func serveAgent(t *testing.T, a kitAgent) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	in := a2ahttp.Interfaces(base)
	h, err := server.NewHandler(a.card(in[0].URL, in[1].URL), a.agent)
	if err != nil {
		t.Fatal(err)
	}
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var handler http.Handler = mux
	if a.wrap != nil {
		handler = a.wrap(mux)
	}
	srv.Config.Handler = handler
	srv.Start()
	t.Cleanup(func() { _ = h.Close(context.Background()); srv.Close() })
	return base
}

// serveDeployer serves the kit's deployer on 127.0.0.1, guarded by
// deployToken, and returns its base URL.
func serveDeployer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	handler, h, err := deployer.NewServer(base, deployToken)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = handler
	srv.Start()
	t.Cleanup(func() { _ = h.Close(context.Background()); srv.Close() })
	return base
}

// startKit serves the three agents, runner in place of the test-runner,
// and returns their base URLs in the kit's order.
func startKit(t *testing.T, runner kitAgent) []string {
	t.Helper()
	return []string{
		serveAgent(t, runner),
		serveAgent(t, kitAgent{card: reviewer.Card, agent: reviewer.Agent{}}),
		serveDeployer(t),
	}
}

// approver is an operator that approves at once with POST /approve/{id},
// as the kit's operator does.
func approver(hc *http.Client) planner.Operator {
	return func(ctx context.Context, req planner.ApprovalRequest) error {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, req.AgentURL+deployer.ApprovePath+req.TaskID, strings.NewReader("{}"))
		if err != nil {
			return err
		}
		r.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(r)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			return fmt.Errorf("approve: %s: %s", resp.Status, b)
		}
		return nil
	}
}

// runPlan runs plan against urls with the deploy token and an approving
// operator, and returns the result and the decision log.
func runPlan(t *testing.T, urls []string, plan planner.Plan, opts ...planner.Option) (*planner.Result, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var log bytes.Buffer
	opts = append([]planner.Option{
		planner.WithLog(&log),
		planner.WithToken("deployer", deployToken),
		planner.WithOperator(approver(http.DefaultClient)),
	}, opts...)
	p, err := planner.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(ctx, plan, urls...)
	if err != nil {
		t.Fatalf("Run: %v\nlog:\n%s", err, log.String())
	}
	return res, log.String()
}

// idRE matches a task id as the log prints it: the first eight hex digits,
// or the whole UUID.
var idRE = regexp.MustCompile(`\b[0-9a-f]{8}(?:-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})?\b`)

// normalise makes a log comparable with the recorded one: each base URL of
// urls becomes the kit's (http://localhost:41241 ...), and each id becomes
// <idN> (<idN>-full for a whole UUID), N by order of first appearance of
// its first eight characters.
func normalise(log string, urls []string) []string {
	for i, u := range urls {
		log = strings.ReplaceAll(log, u, fmt.Sprintf("http://localhost:%d", 41241+i))
	}
	ids := map[string]string{}
	log = idRE.ReplaceAllStringFunc(log, func(s string) string {
		k := s[:8]
		if ids[k] == "" {
			ids[k] = fmt.Sprintf("<id%d>", len(ids)+1)
		}
		if len(s) > 8 {
			return ids[k] + "-full"
		}
		return ids[k]
	})
	return strings.Split(strings.TrimRight(log, "\n"), "\n")
}

// recordedLog is capture/out/19-planner.log, normalised.
func recordedLog(t *testing.T) []string {
	t.Helper()
	dir, err := capture.Dir()
	if err != nil {
		t.Skip(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "19-planner.log"))
	if err != nil {
		t.Fatal(err)
	}
	return normalise(string(b), nil)
}

// compareLines reports every line of got that differs from want.
func compareLines(t *testing.T, got, want []string) {
	t.Helper()
	n := max(len(got), len(want))
	bad := false
	for i := range n {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			bad = true
			t.Errorf("log line %d:\n got: %q\nwant: %q", i+1, g, w)
		}
	}
	if bad {
		t.Logf("whole log:\n%s", strings.Join(got, "\n"))
	}
}

// recordingTransport keeps every request it carries.
type recordingTransport struct {
	mu   sync.Mutex
	reqs []recorded
	// fail, if set, fails a request before sending it when it returns
	// true.
	fail func(method, path string, body []byte) bool
}

type recorded struct {
	method, path, auth string
	body               []byte
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			return nil, err
		}
		_ = r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	rt.mu.Lock()
	fail := rt.fail != nil && rt.fail(r.Method, r.URL.Path, body)
	rt.reqs = append(rt.reqs, recorded{method: r.Method, path: r.URL.Path, auth: r.Header.Get("Authorization"), body: body})
	rt.mu.Unlock()
	if fail {
		return nil, fmt.Errorf("test transport: connection reset")
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (rt *recordingTransport) requests() []recorded {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return append([]recorded(nil), rt.reqs...)
}

// rpcMethod is the JSON-RPC method of a request body, or "".
func rpcMethod(body []byte) string {
	var env struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(body, &env)
	return env.Method
}
