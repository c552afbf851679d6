package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/capture"
	"github.com/goa2a/a2a/kit/deployer"
)

// replayed are the kit's scenarios replayed, in the kit's order: each
// request is sent as recorded (ids of earlier answers translated to ours)
// to the three agents running with the kit's clock and seeded ids, through
// the recorder. 04, 07, 10 and 14 depend on where a running task is when
// the next request comes; steps (below) holds the test-runner at the log
// line the kit's recording shows. 15 registers a webhook: a receiver of
// the test's stands for the kit's client, and the notifications it gets
// are compared with the kit's "webhook N" sections. 17 is not an exchange
// (the signing steps of the deployer card; see TestCaptureSignedCard).
var replayed = []string{
	"01-agent-cards",
	"02-message-reply",
	"03-blocking-task",
	"04-polling",
	"05-streaming",
	"06-input-required",
	"07-auth-required",
	"08-rejected",
	"09-failed",
	"10-cancel",
	"11-errors",
	"12-list-tasks",
	"13-history",
	"14-resubscribe",
	"15-push",
	"16-rest-binding",
	"18-extended-card",
}

// replayDifferences are the known differences (docs/kit-differences.md)
// the replay must find, no more and no fewer: those of the planner
// scenario that the kit's requests meet, and those of webhook calls,
// which the planner scenario has none of. The test-runner's clock, which
// the replay advances through every scenario as the kit's run does,
// stamps as the kit's: no clock-offset.
var replayDifferences = []string{
	"card-signature",
	"push-event-id",
	"push-token-header",
	"security-requirement-empty-list",
}

// kitHook is the webhook scenario 15 registers. The replay registers its
// receiver's URL in its place and writes kitHook back into the recording
// before comparing, as it keeps the kit's hosts for the agents.
const kitHook = "http://localhost:41250/a2a-events"

// hookReceiver is the client's webhook endpoint in scenario 15: it keeps
// every notification and tells when one ends the task.
type hookReceiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []received
	done chan struct{} // closed by a notification of a terminal state
}

type received struct {
	r    *http.Request
	body []byte
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{done: make(chan struct{})}
	h.srv = httptest.NewServer(h) // on 127.0.0.1
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hookReceiver) url() string { return h.srv.URL + "/a2a-events" }

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var ev a2a.StreamResponse
	terminal := false
	if json.Unmarshal(body, &ev) == nil {
		if su, ok := ev.Event.(*a2a.TaskStatusUpdateEvent); ok {
			terminal = su.Status.State.Terminal()
		}
	}
	h.mu.Lock()
	h.got = append(h.got, received{r: r.Clone(context.Background()), body: body})
	if terminal {
		select {
		case <-h.done:
		default:
			close(h.done)
		}
	}
	h.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// wait returns the notifications received once one ended the task.
func (h *hookReceiver) wait(t *testing.T) []received {
	t.Helper()
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		h.mu.Lock()
		defer h.mu.Unlock()
		t.Fatalf("no notification of the task's end after 10 s (%d received)", len(h.got))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got)
}

// gate holds the test-runner at one log line.
type gate struct{ capture.Gate }

func (g *gate) arm(line int)                                     { g.Arm(line) }
func (g *gate) pace(ctx context.Context, id string, n int) error { return g.Pace(ctx, id, n) }
func (g *gate) open()                                            { g.Open() }

// waitReached waits for the test-runner to reach the armed line.
func (g *gate) waitReached(t *testing.T) {
	t.Helper()
	if !g.Reached(10 * time.Second) {
		t.Fatal("the test-runner did not reach the gate")
	}
}

// replayer sends the kit's requests of one scenario through a recorder.
type replayer struct {
	t     *testing.T
	name  string
	learn *capture.IDs
	hc    *http.Client
	rec   *capture.Recorder
	want  []capture.Exchange
	// urls rewrites the kit's URLs in request bodies into ours.
	urls *strings.Replacer
}

// send sends exchange i as recorded, ids translated.
func (p *replayer) send(i int) *http.Response {
	p.t.Helper()
	ex := p.want[i]
	r, err := http.NewRequest(ex.Method, "http://"+ex.Host+p.learn.Translate(ex.Path), strings.NewReader(p.urls.Replace(p.learn.Translate(ex.Body))))
	if err != nil {
		p.t.Fatal(err)
	}
	for k, vs := range ex.Header {
		if k != "Host" {
			r.Header[http.CanonicalHeaderKey(k)] = vs
		}
	}
	resp, err := p.hc.Do(r)
	if err != nil {
		p.t.Fatalf("%s: %s: %v", p.name, ex.Title, err)
	}
	return resp
}

// do sends exchange i, reads the whole answer and learns its ids.
func (p *replayer) do(i int) {
	p.t.Helper()
	resp := p.send(i)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p.learnFrom(i, string(body))
}

// learnFrom pairs the ids of our answer to exchange i with the kit's, so
// later requests can name them; a stream's frames pair one by one.
func (p *replayer) learnFrom(i int, body string) {
	ex := p.want[i]
	if strings.HasPrefix(ex.RHeader.Get("Content-Type"), "text/event-stream") {
		w, g := ex.Frames(), (&capture.Exchange{RBody: body}).Frames()
		for j := 0; j < len(w) && j < len(g); j++ {
			if wv, gv, err := decode(w[j], g[j]); err == nil {
				_ = p.learn.Compare("", wv, gv)
			}
		}
		return
	}
	if wv, gv, err := decode(ex.RBody, body); err == nil {
		_ = p.learn.Compare("", wv, gv)
	}
}

// frame reads one SSE frame, a byte at a time so the recorder sees no
// frame the client has not read.
func frame(t *testing.T, r io.Reader) string {
	t.Helper()
	var b []byte
	one := make([]byte, 1)
	for !strings.HasSuffix(string(b), "\n\n") {
		n, err := r.Read(one)
		b = append(b, one[:n]...)
		if err != nil {
			t.Fatalf("reading a frame: %v (read %q)", err, b)
		}
	}
	return string(b)
}

// frames reads n frames of exchange i's stream and learns their ids.
func (p *replayer) frames(i int, body io.Reader, n int) {
	p.t.Helper()
	var s strings.Builder
	for range n {
		s.WriteString(frame(p.t, body))
	}
	p.learnFrom(i, s.String())
}

// waitTerminal waits until the task the kit calls kitID is done on h.
func waitTerminal(t *testing.T, k *runningKit, learn *capture.IDs, kitID string) {
	t.Helper()
	id := learn.Ours(kitID)
	if id == "" {
		t.Fatalf("no task of ours for the kit's %s", kitID)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		task, err := k.servers[0].h.GetTask(context.Background(), &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		if task.Status.State.Terminal() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("task %s did not finish", id)
}

// steps replays the scenarios whose answers depend on where a task is;
// the others send their exchanges one after the other.
func steps(t *testing.T, k *runningKit, g *gate, hooks *hookReceiver) map[string]func(p *replayer) {
	return map[string]func(p *replayer){
		// Return immediately, look while the log is half written, look
		// again once the task completed.
		"04-polling": func(p *replayer) {
			g.arm(1)
			p.do(0)
			g.waitReached(t)
			p.do(1)
			g.open()
			waitTerminal(t, k, p.learn, "d0c28826-28b8-4b15-8b53-4e01ae7a5a3c")
			p.do(2)
		},
		// The deploy stops at auth-required with the stream open; the
		// operator approves; the same stream continues.
		"07-auth-required": func(p *replayer) {
			resp := p.send(0)
			defer resp.Body.Close()
			p.frames(0, resp.Body, 3)
			p.rec.Note("The stream stays open. An operator opens the approval link, outside A2A.")
			p.do(1)
			p.rec.Note("The same stream continues.")
			_, _ = io.ReadAll(resp.Body)
		},
		// Cancel the full suite after two log lines.
		"10-cancel": func(p *replayer) {
			g.arm(2)
			p.do(0)
			g.waitReached(t)
			for i := 1; i < len(p.want); i++ {
				p.do(i)
			}
		},
		// The client drops the stream after 4 frames, while the suite
		// holds after 4 log lines; the subscription's snapshot shows
		// those, then the rest follows.
		"14-resubscribe": func(p *replayer) {
			g.arm(4)
			resp := p.send(0)
			p.frames(0, resp.Body, 4)
			resp.Body.Close()
			p.rec.Note("the client closes the connection after 4 events")
			g.waitReached(t)
			sub := p.send(1)
			p.frames(1, sub.Body, 1)
			g.open()
			_, _ = io.ReadAll(sub.Body)
			sub.Body.Close()
			waitTerminal(t, k, p.learn, "25239d4c-798b-4754-be06-d1f94d0645b1")
			p.do(2)
		},
		// SendMessage with a webhook returns at once; List and Get the
		// config while the task runs. The kit's webhook received every
		// notification up to the task's completion, which a deleted
		// config would not get: Delete once the last has arrived. The
		// kit writes the webhooks after the exchanges.
		"15-push": func(p *replayer) {
			for i := range 3 {
				p.do(i)
			}
			got := hooks.wait(t)
			p.do(3)
			for i, h := range got {
				p.rec.Received(fmt.Sprintf("webhook %d · received by the client", i+1), h.r, h.body)
			}
		},
	}
}

// Recording the kit's own requests against our agents gives the kit's
// answers, as JSON values with ids paired, apart from known differences.
func TestRecordKitScenarios(t *testing.T) {
	t.Parallel()
	if _, err := capture.Dir(); err != nil {
		t.Skip(err)
	}
	g := &gate{}
	o := kitOptions{token: demoToken, serverOptions: deterministicServerOptions(), pace: g.pace, cardSigner: deployer.DemoSigner()}
	for i := range o.advertise {
		o.advertise[i] = "http://localhost:" + []string{"41241", "41242", "41243"}[i]
	}
	k, err := startKit(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.close(context.Background()) })
	hooks := newHookReceiver(t)
	urls := strings.NewReplacer(kitHook, hooks.url())
	special := steps(t, k, g, hooks)
	dir := t.TempDir()
	learn := capture.NewIDs() // pairs ids as answers come, to translate later requests
	learn.LooseTime = true
	all := map[string]bool{}
	defer func() { t.Logf("known differences met: %v", all) }()
	for _, name := range replayed {
		want, err := capture.Load(name + ".http")
		if err != nil {
			t.Fatal(err)
		}
		titles := make(chan string, len(want))
		for _, ex := range want {
			_, title, _ := strings.Cut(ex.Title, " · ")
			titles <- title
		}
		rec := &capture.Recorder{Next: k.transport(), Title: func(*http.Request, []byte) string { return <-titles }}
		p := &replayer{t: t, name: name, learn: learn, hc: &http.Client{Transport: rec}, rec: rec, want: want, urls: urls}
		if f, ok := special[name]; ok {
			f(p)
		} else {
			for i := range want {
				p.do(i)
			}
		}
		if err := rec.WriteFiles(dir, name); err != nil {
			t.Fatal(err)
		}
		text, err := os.ReadFile(filepath.Join(dir, name+".http"))
		if err != nil {
			t.Fatal(err)
		}
		// Our webhook URL back to the kit's, as our agents' hosts are
		// the kit's.
		got, err := capture.Parse(strings.ReplaceAll(string(text), hooks.url(), kitHook))
		if err != nil {
			t.Fatal(err)
		}
		found := map[string]bool{}
		for _, d := range compareRecording(want, got, found) {
			t.Errorf("%s: %s", name, d)
		}
		for _, d := range compareReceived(want, got, found) {
			t.Errorf("%s: %s", name, d)
		}
		for k := range found {
			all[k] = true
			if !slicesContains(replayDifferences, k) {
				t.Errorf("%s: unlisted difference %q", name, k)
			}
		}
	}
	for _, k := range replayDifferences {
		if !all[k] {
			t.Errorf("the listed difference %q no longer occurs: update replayDifferences and docs/kit-differences.md", k)
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "kit-differences.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range replayDifferences {
		if !strings.Contains(string(doc), "`"+k+"`") {
			t.Errorf("docs/kit-differences.md does not explain `%s`", k)
		}
	}
}

// compareReceived compares the headers of the webhook calls of a
// recording (the sections with no response) with the kit's, beyond the
// Content-Type and Authorization that compareRecording compares, which
// also compares their bodies. Every header the kit shows must be ours
// too, with the same value; of those only we send, A2A-Notification-Token
// must carry the token of X-A2A-Notification-Token (push-token-header),
// and A2A-Push-Event-Id must be the notification's task id and a sequence
// number that grows from one call to the next (push-event-id). Any other
// header is a difference.
func compareReceived(want, got []capture.Exchange, found map[string]bool) []string {
	if len(want) != len(got) {
		return nil // compareRecording reports it
	}
	var diffs []string
	last := map[string]int64{} // task id -> its last event's sequence number
	for i := range want {
		w, g := want[i], got[i]
		if w.Status != 0 || g.Status != 0 {
			continue // not received, or compareRecording reports the status
		}
		at := fmt.Sprintf("#%d %s", i+1, w.Title)
		var keys []string
		for k := range w.Header {
			keys = append(keys, k)
		}
		for k := range g.Header {
			if _, ok := w.Header[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			wv, gv := strings.Join(w.Header.Values(k), ", "), strings.Join(g.Header.Values(k), ", ")
			switch {
			case wv == gv:
			case wv == "" && k == http.CanonicalHeaderKey("A2A-Notification-Token") && gv == g.Header.Get("X-A2A-Notification-Token"):
				found["push-token-header"] = true
			case wv == "" && k == http.CanonicalHeaderKey("A2A-Push-Event-Id") && eventIDFits(g.Body, gv, last):
				found["push-event-id"] = true
			default:
				diffs = append(diffs, fmt.Sprintf("%s: header %s: got %q, want %q", at, k, gv, wv))
			}
		}
	}
	return diffs
}

// eventIDFits reports whether id is "taskId:seq" for the task of the
// notification body, with seq above the task's last one (kept in last).
func eventIDFits(body, id string, last map[string]int64) bool {
	var ev struct {
		StatusUpdate, ArtifactUpdate *struct {
			TaskID string `json:"taskId"`
		}
	}
	if json.Unmarshal([]byte(body), &ev) != nil {
		return false
	}
	task := ""
	switch {
	case ev.StatusUpdate != nil:
		task = ev.StatusUpdate.TaskID
	case ev.ArtifactUpdate != nil:
		task = ev.ArtifactUpdate.TaskID
	}
	t, s, ok := strings.Cut(id, ":")
	seq, err := strconv.ParseInt(s, 10, 64)
	if !ok || err != nil || task == "" || t != task || seq <= last[task] {
		return false
	}
	last[task] = seq
	return true
}

// The webhook comparison itself: the kit's 15 against itself has no
// difference; our extra headers, right, are known differences; a wrong
// token, a token header that disagrees, an event id of another task or
// out of order, an unknown header are reported.
func TestCompareReceived(t *testing.T) {
	t.Parallel()
	if _, err := capture.Dir(); err != nil {
		t.Skip(err)
	}
	want, err := capture.Load("15-push.http")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ex := range want {
		if ex.Status == 0 {
			n++
		}
	}
	if n != 8 {
		t.Fatalf("the kit's 15 has %d webhook sections, want 8", n)
	}
	found := map[string]bool{}
	if d := compareReceived(want, want, found); len(d) != 0 || len(found) != 0 {
		t.Fatalf("the kit against itself: %q, found %v", d, found)
	}
	const task = "d7d3dceb-7333-4676-90ce-36542116a45c"
	ours := func(change func(i int, h http.Header)) []capture.Exchange {
		got := slices.Clone(want)
		for i := range got {
			if got[i].Status == 0 {
				got[i].Header = got[i].Header.Clone()
				got[i].Header.Set("A2A-Notification-Token", got[i].Header.Get("X-A2A-Notification-Token"))
				got[i].Header.Set("A2A-Push-Event-Id", task+":"+strconv.Itoa(10+i))
				change(i, got[i].Header)
			}
		}
		return got
	}
	found = map[string]bool{}
	if d := compareReceived(want, ours(func(int, http.Header) {}), found); len(d) != 0 || !found["push-token-header"] || !found["push-event-id"] || len(found) != 2 {
		t.Errorf("our headers: %q, found %v", d, found)
	}
	for name, change := range map[string]func(i int, h http.Header){
		"token":          func(_ int, h http.Header) { h.Set("X-A2A-Notification-Token", "other") },
		"v1 token":       func(_ int, h http.Header) { h.Set("A2A-Notification-Token", "other") },
		"authorization":  func(_ int, h http.Header) { h.Set("Authorization", "Bearer other") },
		"no token":       func(_ int, h http.Header) { h.Del("X-A2A-Notification-Token") },
		"event task":     func(_ int, h http.Header) { h.Set("A2A-Push-Event-Id", "other:1") },
		"event order":    func(i int, h http.Header) { h.Set("A2A-Push-Event-Id", task+":"+strconv.Itoa(100-i)) },
		"another header": func(_ int, h http.Header) { h.Set("A2A-Push-Signature", "x") },
	} {
		if d := compareReceived(want, ours(change), map[string]bool{}); len(d) == 0 {
			t.Errorf("%s: the change went unnoticed", name)
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
