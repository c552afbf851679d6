package cli

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

// testServe is a2a serve running in this process, stopped by canceling
// the context that stands in for SIGTERM.
type testServe struct {
	run            *serveRun
	base, ops      string
	stdout, stderr syncBuffer
	cancel         context.CancelFunc
	done           chan int
	dataDir        string // of the default SQLite store

	once sync.Once
	code int
}

// startServe runs a2a serve with args (listening on a free port) and waits
// until it is ready. It is stopped at the end of the test if not before.
func startServe(t *testing.T, args ...string) *testServe {
	t.Helper()
	ts := &testServe{done: make(chan int, 1), dataDir: t.TempDir()}
	cfg, code := parseServeArgs(append([]string{"--addr", "127.0.0.1:0", "--data-dir", ts.dataDir}, args...), &ts.stderr)
	if cfg == nil {
		t.Fatalf("exit %d: %s", code, ts.stderr.String())
	}
	s, err := newServeRun(cfg, &ts.stdout, &ts.stderr)
	if err != nil {
		t.Fatal(err)
	}
	ts.run, ts.base, ts.ops = s, s.srv.URL(), s.srv.URL()
	if a := s.srv.OpsAddr(); a != nil {
		ts.ops = "http://" + a.String()
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts.cancel = cancel
	go func() { ts.done <- s.run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for !s.srv.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("a2a serve did not get ready")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Cleanup(func() { ts.stop(t) })
	return ts
}

// stop begins the shutdown (once) and returns the exit code.
func (ts *testServe) stop(t *testing.T) int {
	t.Helper()
	ts.once.Do(func() {
		ts.cancel()
		select {
		case ts.code = <-ts.done:
		case <-time.After(30 * time.Second):
			t.Fatalf("a2a serve did not stop\n%s\n%s", ts.stdout.String(), ts.stderr.String())
		}
	})
	return ts.code
}

func (ts *testServe) client(t *testing.T, binding string) *client.Client {
	t.Helper()
	c, err := client.New(t.Context(), ts.base, client.WithBindings(binding))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func textRequest(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: client.TextMessage(text)}
}

// waitFor polls cond until it holds or 10 seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// httpGet returns the status and body of a GET.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// Lines of the Prometheus text format (version 0.0.4).
var (
	metricsHelpRE   = regexp.MustCompile(`^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) \S.*$`)
	metricsTypeRE   = regexp.MustCompile(`^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$`)
	metricsSampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*)?\})? (\S+)$`)
)

// parseMetrics checks every line of an exposition and returns the samples
// by series ("name{labels}"). A sample must follow the TYPE of its family;
// histogram buckets must be cumulative and end with +Inf equal to _count.
func parseMetrics(t *testing.T, text string) map[string]float64 {
	t.Helper()
	samples := make(map[string]float64)
	types := make(map[string]string)
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if m := metricsTypeRE.FindStringSubmatch(line); m != nil {
			if _, dup := types[m[1]]; dup {
				t.Errorf("family %s typed twice", m[1])
			}
			types[m[1]] = m[2]
			continue
		}
		if metricsHelpRE.MatchString(line) {
			continue
		}
		m := metricsSampleRE.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("bad metrics line %q", line)
			continue
		}
		family := m[1]
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(family, suffix); ok && (types[base] == "histogram" || types[base] == "summary") {
				family = base
			}
		}
		if types[family] == "" {
			t.Errorf("sample %q before its TYPE line", line)
		}
		v, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Errorf("bad value in %q", line)
		}
		series := m[1] + m[2]
		if _, dup := samples[series]; dup {
			t.Errorf("series %s twice", series)
		}
		samples[series] = v
	}
	// Histograms: buckets cumulative, the last one +Inf and equal to _count.
	type bucket struct{ bound, count float64 }
	groups := make(map[string][]bucket) // by the count series
	leRE := regexp.MustCompile(`,?le="([^"]*)"`)
	for series, v := range samples {
		name, labels, _ := strings.Cut(series, "{")
		base, ok := strings.CutSuffix(name, "_bucket")
		if !ok || types[base] != "histogram" {
			continue
		}
		m := leRE.FindStringSubmatch(labels)
		if m == nil {
			t.Errorf("bucket without le: %s", series)
			continue
		}
		bound, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Errorf("bad le in %s", series)
		}
		rest := strings.TrimPrefix(strings.Replace(labels, m[0], "", 1), ",")
		countSeries := base + "_count"
		if rest != "}" {
			countSeries += "{" + rest
		}
		groups[countSeries] = append(groups[countSeries], bucket{bound, v})
	}
	for countSeries, bs := range groups {
		slices.SortFunc(bs, func(a, b bucket) int { return cmp.Compare(a.bound, b.bound) })
		for i := 1; i < len(bs); i++ {
			if bs[i].count < bs[i-1].count {
				t.Errorf("%s: buckets not cumulative: %v", countSeries, bs)
			}
		}
		if last := bs[len(bs)-1]; !math.IsInf(last.bound, 1) || last.count != samples[countSeries] {
			t.Errorf("%s: last bucket %v, count %v", countSeries, last, samples[countSeries])
		}
	}
	return samples
}

// metricsOf fetches and parses /metrics.
func (ts *testServe) metrics(t *testing.T) map[string]float64 {
	t.Helper()
	code, body := httpGet(t, ts.ops+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, body)
	}
	return parseMetrics(t, body)
}

// checkStore checks that nothing in the store is half-written: every task
// is terminal or waiting for input, its log is numbered 1..seq, its state
// is that of its last status event, and every artifact's last chunk came.
func checkStore(t *testing.T, st store.Store) []*a2a.Task {
	t.Helper()
	ctx := context.Background()
	if ss, ok := st.(*sqlite.Store); ok {
		// Closed with the server: look at what it left on disk.
		var err error
		if st, err = sqlite.Open(ctx, ss.Path(), sqlite.Options{}); err != nil {
			t.Fatal(err)
		}
		defer st.(*sqlite.Store).Close()
	}
	scope := store.Scope{}
	res, err := st.List(ctx, scope, store.ListQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range res.Tasks {
		snap, seq, err := st.Get(ctx, scope, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := st.Events(ctx, scope, task.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("task %s (%v)", task.ID, snap.Status.State)
		if s := snap.Status.State; !s.Terminal() && !s.Interrupted() {
			t.Errorf("%s: left in a running state", what)
		}
		if int64(len(evs)) != seq {
			t.Errorf("%s: %d events, seq %d", what, len(evs), seq)
		}
		lastState := a2a.TaskStateUnspecified
		lastChunk := make(map[string]bool)
		for i, ev := range evs {
			if ev.Seq != int64(i+1) {
				t.Errorf("%s: event %d has seq %d", what, i, ev.Seq)
			}
			switch p := ev.Payload.(type) {
			case *a2a.Task:
				lastState = p.Status.State
			case *a2a.TaskStatusUpdateEvent:
				lastState = p.Status.State
			case *a2a.TaskArtifactUpdateEvent:
				lastChunk[p.Artifact.ArtifactID] = p.LastChunk
			}
		}
		if lastState != snap.Status.State {
			t.Errorf("%s: last status event says %v", what, lastState)
		}
		if snap.Status.State != a2a.TaskStateCanceled {
			// A canceled task's agent may be cut off mid-artifact.
			for id, done := range lastChunk {
				if !done {
					t.Errorf("%s: artifact %s has no last chunk", what, id)
				}
			}
		}
	}
	return res.Tasks
}
