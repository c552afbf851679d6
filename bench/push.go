package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// The push targets measure webhook delivery (push.Deliverer).
//
// goa2a-chunks serves chunkAgent (working, -chunks artifact chunks,
// completed) on the memory store, without push: the baseline. goa2a-push
// is the same agent and store with a push.Deliverer, and every
// SendMessage carries a push config whose webhook is a receiver on
// 127.0.0.1 in this process that answers 200. Both take the harness's
// usual closed-loop blocking SendMessage load. With -pushwait (the
// default) a goa2a-push client, once it has its response, also waits for
// the receiver to get the task's last notification before sending its
// next message: the loop is closed through the webhook, so at most -c
// tasks are being delivered at once and the latencies are those of a
// system keeping up, not of a queue growing for the whole window. With
// -pushwait=false clients send back to back and notifications may fall
// behind; the backlog is drained after the window.
//
// Latency is from append to receipt: the store wrapper below stamps each
// status and artifact update as the Handler hands it to the store (just
// before the store takes it, so that no delivery can come before its
// stamp), and the receiver looks the stamp up by the A2A-Push-Event-Id
// header ("taskId:seq") as the request reaches its handler. After the load
// the target waits until every stamped event was received, and fails the
// run unless received == expected, with no repeat, no unknown event and
// every task's events in order.

// pushToken is the token of every push config; the receiver checks it.
const pushToken = "bench-push-token"

// chunkAgent reports working, emits n chunks of one artifact, each
// "echo: <text>", and completes: n+2 notifications per task.
type chunkAgent struct{ n int }

// Execute implements [server.Agent].
func (a chunkAgent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	if err := w.Working(ctx, ""); err != nil {
		return err
	}
	text := "echo: " + req.Message.Text()
	for i := range a.n {
		art := a2a.Artifact{ArtifactID: "echo", Name: "echo", Parts: []a2a.Part{a2a.TextPart(text)}}
		if err := w.ArtifactChunk(ctx, art, i > 0, i == a.n-1); err != nil {
			return err
		}
	}
	return w.Complete(ctx, "")
}

// pushChunks is the -chunks flag: artifact chunks per task of both targets.
var pushChunks = 8

// pushWait is the -pushwait flag.
var pushWait = true

// eventKey names one event of one task's log.
type eventKey struct {
	task string
	seq  int64
}

// stampStore is the memory store, recording when each status and
// artifact update was appended.
type stampStore struct {
	*memory.Store

	mu      sync.Mutex
	pending map[eventKey]time.Time // appended, not yet received
	stamped int64                  // every event ever stamped

	// ClaimPush calls, the jobs they returned and the time spent in them
	// (the memory store holds its write lock for all of it), in the
	// measured window.
	claimMu            sync.Mutex
	claimFrom, claimTo time.Time
	claims, claimed    int64
	claimTime          time.Duration
}

// ClaimPush implements [store.PushQueue], counting the calls.
func (s *stampStore) ClaimPush(ctx context.Context, now time.Time, lease time.Duration, limit int, skip ...store.Scope) ([]store.PushJob, error) {
	t0 := time.Now()
	jobs, err := s.Store.ClaimPush(ctx, now, lease, limit, skip...)
	t1 := time.Now()
	s.claimMu.Lock()
	if !t1.Before(s.claimFrom) && t1.Before(s.claimTo) {
		s.claims++
		s.claimed += int64(len(jobs))
		s.claimTime += t1.Sub(t0)
	}
	s.claimMu.Unlock()
	return jobs, err
}

// Append implements [store.Store]: it stamps the notifications among
// events, then appends them.
func (s *stampStore) Append(ctx context.Context, scope store.Scope, taskID string, after int64, events []store.Event, task *a2a.Task) error {
	now := time.Now()
	s.mu.Lock()
	n := 0
	for _, ev := range events {
		switch ev.Payload.(type) {
		case *a2a.TaskStatusUpdateEvent, *a2a.TaskArtifactUpdateEvent:
			s.pending[eventKey{taskID, ev.Seq}] = now
			n++
		}
	}
	s.stamped += int64(n)
	s.mu.Unlock()
	err := s.Store.Append(ctx, scope, taskID, after, events, task)
	if err != nil && n > 0 {
		// Not appended, so never delivered: unstamp.
		s.mu.Lock()
		for _, ev := range events {
			if _, ok := s.pending[eventKey{taskID, ev.Seq}]; ok {
				delete(s.pending, eventKey{taskID, ev.Seq})
				s.stamped--
			}
		}
		s.mu.Unlock()
	}
	return err
}

// take returns and forgets the stamp of an event.
func (s *stampStore) take(k eventKey) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.pending[k]
	if ok {
		delete(s.pending, k)
	}
	return t, ok
}

// counts returns how many events were stamped and how many of them the
// receiver has not had.
func (s *stampStore) counts() (stamped int64, pending int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stamped, len(s.pending)
}

// receiver is the webhook: it acknowledges every notification with 200
// and records what it got.
type receiver struct {
	stamps *stampStore
	final  int64 // seq of a task's last notification (completed)

	checked atomic.Int64 // calls seen, for picking which to decode fully
	conns   atomic.Int64 // connections the Deliverer opened to the receiver

	mu         sync.Mutex
	start, end time.Time
	lat        []time.Duration // append to receipt, received in the window
	perSecond  []int64         // received in each second of the window
	received   int64           // matched to a stamp, warmup and tail included
	late       int64           // received over a second after its append
	maxAll     time.Duration   // the longest append to receipt, warmup and tail included
	unmatched  int64           // no stamp: a repeat or an event never appended
	outOfOrder int64
	bad        int64 // wrong token, header or body
	firstErr   string
	last       map[string]int64         // task → last seq received
	done       map[string]chan struct{} // closed when a task's last notification is in
}

func (rc *receiver) fail(format string, args ...any) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.bad++
	if rc.firstErr == "" {
		rc.firstErr = fmt.Sprintf(format, args...)
	}
}

var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// ServeHTTP receives one notification.
func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	buf := bodyPool.Get().(*bytes.Buffer)
	defer bodyPool.Put(buf)
	buf.Reset()
	_, err := buf.ReadFrom(r.Body)
	// Always 200: a refusal would stop the config, and the count below
	// reports the problem instead.
	w.WriteHeader(http.StatusOK)
	if err != nil {
		rc.fail("reading a notification: %v", err)
		return
	}
	id := r.Header.Get(push.DeliveryIDHeader)
	i := strings.LastIndexByte(id, ':')
	seq, serr := strconv.ParseInt(id[i+1:], 10, 64)
	if i < 1 || serr != nil {
		rc.fail("bad %s %q", push.DeliveryIDHeader, id)
		return
	}
	task := id[:i]
	if r.Header.Get(push.TokenHeader) != pushToken {
		rc.fail("%s: token %q, want %q", id, r.Header.Get(push.TokenHeader), pushToken)
		return
	}
	if err := rc.check(task, seq, buf.Bytes()); err != nil {
		rc.fail("%s: %v", id, err)
		return
	}
	appended, ok := rc.stamps.take(eventKey{task, seq})
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !ok {
		rc.unmatched++
		return
	}
	rc.received++
	if l := at.Sub(appended); l > rc.maxAll {
		rc.maxAll = l
	}
	if at.Sub(appended) > time.Second {
		rc.late++
	}
	if prev, seen := rc.last[task]; (seen && seq != prev+1) || (!seen && seq != 2) {
		rc.outOfOrder++
	}
	if seq == rc.final {
		delete(rc.last, task)
		close(rc.doneLocked(task))
	} else {
		rc.last[task] = seq
	}
	if !at.Before(rc.start) && at.Before(rc.end) {
		rc.lat = append(rc.lat, at.Sub(appended))
		rc.perSecond[int(at.Sub(rc.start)/time.Second)]++
	}
}

var (
	statusKey   = []byte(`"statusUpdate":`)
	artifactKey = []byte(`"artifactUpdate":`)
)

// check verifies that body is event seq of task: with byte searches, and
// with a full decode for one call in 256.
func (rc *receiver) check(task string, seq int64, body []byte) error {
	status := seq == 2 || seq == rc.final
	key := artifactKey
	if status {
		key = statusKey
	}
	if !bytes.Contains(body, key) || !bytes.Contains(body, []byte(task)) {
		return fmt.Errorf("body is not the %s of the task: %.200s", key, body)
	}
	if rc.checked.Add(1)%256 != 1 {
		return nil
	}
	var sr a2a.StreamResponse
	if err := sr.UnmarshalJSON(body); err != nil {
		return fmt.Errorf("decoding: %w", err)
	}
	switch ev := sr.Event.(type) {
	case *a2a.TaskStatusUpdateEvent:
		want := a2a.TaskStateWorking
		if seq == rc.final {
			want = a2a.TaskStateCompleted
		}
		if !status || ev.TaskID != task || ev.Status.State != want {
			return fmt.Errorf("status update %s %v, want task %s %v", ev.TaskID, ev.Status.State, task, want)
		}
	case *a2a.TaskArtifactUpdateEvent:
		if status || ev.TaskID != task || ev.Artifact.ArtifactID != "echo" || ev.LastChunk != (seq == rc.final-1) {
			return fmt.Errorf("artifact update %s %q lastChunk %v: not chunk %d of task %s", ev.TaskID, ev.Artifact.ArtifactID, ev.LastChunk, seq-2, task)
		}
	default:
		return fmt.Errorf("event %T", sr.Event)
	}
	return nil
}

// doneLocked returns the channel closed when task's last notification is
// in, making it if need be: the receiver may have it before the client.
func (rc *receiver) doneLocked(task string) chan struct{} {
	ch := rc.done[task]
	if ch == nil {
		ch = make(chan struct{})
		rc.done[task] = ch
	}
	return ch
}

var taskIDPrefix = []byte(`"result":{"task":{"id":"`)

// waitTask waits until the receiver has the last notification of the task
// that body (a checked SendMessage response) returned.
func (rc *receiver) waitTask(ctx context.Context, body []byte) error {
	_, rest, ok := bytes.Cut(body, taskIDPrefix)
	end := bytes.IndexByte(rest, '"')
	if !ok || end < 1 {
		return fmt.Errorf("no task id in the response: %.200s", body)
	}
	task := string(rest[:end])
	rc.mu.Lock()
	ch := rc.doneLocked(task)
	rc.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return fmt.Errorf("task %s: its last notification never came: %w", task, ctx.Err())
	}
	rc.mu.Lock()
	delete(rc.done, task)
	rc.mu.Unlock()
	return nil
}

// pushResult is what the push target's receiver and Deliverer report.
type pushResult struct {
	Chunks int  `json:"chunks"` // artifact chunks per task
	Wait   bool `json:"wait"`   // clients waited for each task's last notification
	// Every notification, warmup and tail included.
	Expected   int64  `json:"expected"` // stamped at append
	Received   int64  `json:"received"` // acknowledged, matched to a stamp
	Unmatched  int64  `json:"unmatched"`
	OutOfOrder int64  `json:"out_of_order"`
	Bad        int64  `json:"bad"`
	FirstError string `json:"first_error,omitempty"`
	// In the measured window.
	Events       int64   `json:"events"` // received
	EventsPerSec float64 `json:"events_per_second"`
	P50          float64 `json:"p50_ms"` // append to receipt
	P90          float64 `json:"p90_ms"`
	P99          float64 `json:"p99_ms"`
	Max          float64 `json:"max_ms"`
	CallP50      float64 `json:"call_p50_ms"` // webhook call, as push.Result.Latency
	CallP99      float64 `json:"call_p99_ms"`
	CPUPerEvent  float64 `json:"cpu_us_per_event"` // process CPU / events received
	PerSecond    []int64 `json:"per_second"`       // received in each second
	// DrainMs is how long after the window the last notification came.
	DrainMs float64 `json:"drain_ms"`
	// Late counts notifications received over a second after their
	// append, and MaxAllMs is the longest wait, warmup and tail included.
	Late     int64   `json:"late"`
	MaxAllMs float64 `json:"max_all_ms"`
	// Conns counts the connections the receiver accepted, whole run.
	Conns int64 `json:"connections"`
	// The Deliverer's counters at the end.
	Delivered, Failed, Failing int64
	// ClaimPush calls in the window, the jobs they returned, and the
	// milliseconds spent in them.
	Claims, Claimed int64
	ClaimMs         float64
}

// clean reports that every notification arrived once, in order, intact.
func (p *pushResult) clean() bool {
	return p.Received == p.Expected && p.Unmatched == 0 && p.OutOfOrder == 0 && p.Bad == 0 &&
		p.Failed == 0 && p.Failing == 0 && p.Delivered == p.Received
}

// startGoa2aChunks serves chunkAgent without push: the baseline of
// goa2a-push.
func startGoa2aChunks() (*testServer, error) {
	ts, err := startStack("goa2a-chunks", chunkAgent{n: pushChunks}, server.WithStore(memory.New()))
	if err != nil {
		return nil, err
	}
	ts.art = strings.Repeat("echo: "+benchText, pushChunks)
	return ts, nil
}

// benchText is the -text flag, for the targets that must know the
// artifact before the load.
var benchText = "hello, agent"

// startGoa2aPush serves chunkAgent with a push.Deliverer and a receiver.
func startGoa2aPush() (*testServer, error) {
	st := &stampStore{Store: memory.New(), pending: make(map[eventKey]time.Time)}
	rc := &receiver{
		stamps: st,
		final:  int64(pushChunks) + 3, // snapshot, working, chunks, completed
		last:   make(map[string]int64),
		done:   make(map[string]chan struct{}),
	}
	rln, rbase, err := listen()
	if err != nil {
		return nil, err
	}
	rsrv := &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, cs http.ConnState) {
			if cs == http.StateNew {
				rc.conns.Add(1)
			}
		}}
	go func() {
		if err := rsrv.Serve(rln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(fmt.Sprintf("push receiver: %v", err))
		}
	}()

	var (
		callMu  sync.Mutex
		calls   []time.Duration
		winFrom time.Time
		winTo   time.Time
	)
	g, err := push.NewGuard(push.WithAllow("127.0.0.1"))
	if err != nil {
		return nil, err
	}
	d, err := push.NewDeliverer(st, push.WithGuard(g), push.WithResultHook(func(r push.Result) {
		now := time.Now()
		callMu.Lock()
		if !now.Before(winFrom) && now.Before(winTo) {
			calls = append(calls, r.Latency)
		}
		callMu.Unlock()
	}))
	if err != nil {
		return nil, err
	}
	ts, err := startStack("goa2a-push", chunkAgent{n: pushChunks}, server.WithStore(st), server.WithPusher(d))
	if err != nil {
		rsrv.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		d.Run(ctx)
	}()

	ts.art = strings.Repeat("echo: "+benchText, pushChunks)
	cfg := fmt.Sprintf(`,"configuration":{"taskPushNotificationConfig":{"url":%q,"token":%q}}`, rbase+"/hook", pushToken)
	ts.params = []byte(cfg)
	if pushWait {
		ts.after = rc.waitTask
	}
	ts.window = func(start, end time.Time) {
		rc.mu.Lock()
		rc.start, rc.end = start, end
		rc.perSecond = make([]int64, int((end.Sub(start)+time.Second-1)/time.Second))
		rc.lat = make([]time.Duration, 0, 1<<16)
		rc.mu.Unlock()
		callMu.Lock()
		winFrom, winTo = start, end
		callMu.Unlock()
		st.claimMu.Lock()
		st.claimFrom, st.claimTo = start, end
		st.claimMu.Unlock()
	}
	ts.finish = func(res *result, cpu time.Duration) error {
		// Every stamped notification must come, and the Deliverer must
		// have counted it (it does so after the receiver answered): poll
		// until both, or give up after 30 s and report what is missing.
		deadline := time.Now().Add(30 * time.Second)
		for {
			stamped, pending := st.counts()
			if (pending == 0 && d.Stats().Delivered >= stamped) || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		rc.mu.Lock()
		defer rc.mu.Unlock()
		expected, _ := st.counts()
		stats := d.Stats()
		p := &pushResult{
			Chunks: pushChunks, Wait: pushWait,
			Expected: expected, Received: rc.received, Unmatched: rc.unmatched,
			OutOfOrder: rc.outOfOrder, Bad: rc.bad, FirstError: rc.firstErr,
			Events:    int64(len(rc.lat)),
			PerSecond: rc.perSecond,
			DrainMs:   ms(time.Since(rc.end)),
			Late:      rc.late, MaxAllMs: ms(rc.maxAll), Conns: rc.conns.Load(),
			Delivered: stats.Delivered, Failed: stats.Failed, Failing: stats.Failing,
		}
		p.EventsPerSec = float64(p.Events) / rc.end.Sub(rc.start).Seconds()
		if lat := rc.lat; len(lat) > 0 {
			slices.Sort(lat)
			p.P50, p.P90 = ms(percentile(lat, 0.50)), ms(percentile(lat, 0.90))
			p.P99, p.Max = ms(percentile(lat, 0.99)), ms(lat[len(lat)-1])
			p.CPUPerEvent = float64(cpu.Microseconds()) / float64(len(lat))
		}
		st.claimMu.Lock()
		p.Claims, p.Claimed, p.ClaimMs = st.claims, st.claimed, ms(st.claimTime)
		st.claimMu.Unlock()
		callMu.Lock()
		if len(calls) > 0 {
			slices.Sort(calls)
			p.CallP50, p.CallP99 = ms(percentile(calls, 0.50)), ms(percentile(calls, 0.99))
		}
		callMu.Unlock()
		res.Push = p
		return nil
	}
	closeStack := ts.close
	ts.close = func(ctx context.Context) error {
		err := closeStack(ctx)
		cancel()
		<-ran
		return errors.Join(err, rsrv.Shutdown(ctx))
	}
	return ts, nil
}

// printPush prints the push table, when push targets ran.
func printPush(w io.Writer, rep *report) {
	var rows []result
	for _, r := range rep.Results {
		if r.Push != nil {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	p0 := rows[0].Push
	fmt.Fprintln(w)
	fmt.Fprintf(w, "push delivery (goa2a-push): %d notifications per task (working, %d artifact chunks, completed),\n", p0.Chunks+2, p0.Chunks)
	if p0.Wait {
		fmt.Fprintln(w, "    each client waits for its task's last notification before its next message")
	} else {
		fmt.Fprintln(w, "    clients do not wait for notifications (-pushwait=false): delivery may fall behind")
	}
	fmt.Fprintln(w, "    one receiver on 127.0.0.1 answering 200; latency from append to receipt")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\tevents\tevents/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\tcall p50\tcall p99\tcpu µs/event\texpected\treceived\trepeats\tdisorder\tbad\tdrain ms\t")
	for _, r := range rows {
		p := r.Push
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t%d\t%d\t%d\t%d\t%d\t%.0f\t\n",
			r.Round, p.Events, p.EventsPerSec, p.P50, p.P90, p.P99, p.Max, p.CallP50, p.CallP99, p.CPUPerEvent,
			p.Expected, p.Received, p.Unmatched, p.OutOfOrder, p.Bad, p.DrainMs)
	}
	tw.Flush()
	fmt.Fprintln(w, "(events: received in the measured window; call: the webhook call as the Deliverer timed it, ms;")
	fmt.Fprintln(w, " cpu µs/event: the whole process's CPU in the window over the events received in it;")
	fmt.Fprintln(w, " expected/received: every notification appended / received, warmup and tail included;")
	fmt.Fprintln(w, " repeats: received with no pending stamp; drain: from the window's end to the last one)")
	for _, r := range rows {
		p := r.Push
		fmt.Fprintf(w, "round %d events/s by second:", r.Round)
		for _, n := range p.PerSecond {
			fmt.Fprintf(w, " %d", n)
		}
		fmt.Fprintf(w, "\n    deliverer: %d delivered, %d failed attempts, %d configs failing\n", p.Delivered, p.Failed, p.Failing)
		fmt.Fprintf(w, "    whole run: longest append to receipt %.1f ms; %d received over 1 s after their append;\n", p.MaxAllMs, p.Late)
		if p.Received > 0 {
			fmt.Fprintf(w, "    %d connections to the receiver (%.2f per notification)\n", p.Conns, float64(p.Conns)/float64(p.Received))
		}
		if p.Events > 0 && p.Claims > 0 {
			fmt.Fprintf(w, "    window: %d ClaimPush calls (%.2f per event), %d jobs claimed (%.2f per event), %.0f ms in ClaimPush (%.0f µs per call)\n",
				p.Claims, float64(p.Claims)/float64(p.Events), p.Claimed, float64(p.Claimed)/float64(p.Events), p.ClaimMs, 1000*p.ClaimMs/float64(p.Claims))
		}
		if !p.clean() {
			fmt.Fprintf(w, "!!! PUSH NOT CLEAN: round %d: expected %d, received %d, repeats %d, disorder %d, bad %d; first error: %s\n",
				r.Round, p.Expected, p.Received, p.Unmatched, p.OutOfOrder, p.Bad, p.FirstError)
		}
	}
	base := map[int]result{}
	for _, r := range rep.Results {
		if r.Target == "goa2a-chunks" {
			base[r.Round] = r
		}
	}
	for _, r := range rows {
		if b, ok := base[r.Round]; ok && b.Requests > 0 && r.Requests > 0 {
			fmt.Fprintf(w, "round %d goa2a-push vs goa2a-chunks: %.1f%% of the tasks/s, +%.1f µs CPU per task (+%.1f per notification)\n",
				r.Round, 100*r.Throughput/b.Throughput, r.CPUPerReq-b.CPUPerReq, (r.CPUPerReq-b.CPUPerReq)/float64(r.Push.Chunks+2))
		}
	}
}
