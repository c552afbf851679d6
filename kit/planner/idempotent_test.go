package planner_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/goa2a/a2a/kit/planner"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// losingTransport delivers the first SendMessage and loses its answer, as
// a connection that breaks after the request went out does.
type losingTransport struct {
	mu   sync.Mutex
	lost bool
}

func (lt *losingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		_ = r.Body.Close()
		r.Body = io.NopCloser(strings.NewReader(string(body)))
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	lt.mu.Lock()
	lose := !lt.lost && rpcMethod(body) == "SendMessage"
	lt.lost = lt.lost || lose
	lt.mu.Unlock()
	if err != nil || !lose {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, resp.Body) // the agent answered ...
	_ = resp.Body.Close()
	return nil, fmt.Errorf("test transport: connection reset") // ... and the answer is lost
}

// countTasks returns how many tasks the agent at base holds.
func countTasks(t *testing.T, base string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+a2ahttp.JSONRPCPath,
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Result struct {
			TotalSize int `json:"totalSize"`
		} `json:"result"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out.Result.TotalSize
}

// A send whose answer is lost after the agent got it is made again with
// the same messageId, and the agent answers the repeat with the task the
// first attempt started: the plan goes on, and the agent holds as many
// tasks as after a plan that lost nothing.
func TestRetryAfterLostAnswer(t *testing.T) {
	t.Parallel()
	clean := startKit(t, testRunner())
	if res, log := runPlan(t, clean, planner.DefaultPlan()); !res.Completed {
		t.Fatalf("plan did not complete:\n%s", log)
	}
	want := countTasks(t, clean[0])

	urls := startKit(t, testRunner())
	res, log := runPlan(t, urls, planner.DefaultPlan(), planner.WithHTTPClient(&http.Client{Transport: &losingTransport{}}), planner.WithRetry(3, 0))
	if !res.Completed {
		t.Fatalf("plan did not complete:\n%s", log)
	}
	if !strings.Contains(log, "the planner sends the same message again") {
		t.Errorf("the log shows no retry:\n%s", log)
	}
	if got := countTasks(t, urls[0]); got != want {
		t.Errorf("the test runner holds %d tasks after a lost answer, want %d as after a plan that lost none", got, want)
	}
}
