package main

// -replicas: how soon an event appended on one replica reaches a
// subscriber on another, and how many events per second of one task a
// subscriber there follows, beside the same figures on one replica.
//
// Two replicas, A and B, in this process: two server.Handler values, each
// on a store of its own over the same tasks, each behind the JSON-RPC
// binding on its own 127.0.0.1 listener. On PostgreSQL the two stores are
// two postgres.Store values opened on one fresh schema, each with its own
// pool and its own LISTEN connection, exactly as two processes would have;
// on memory and SQLite (context, not a deployment) they are one Store
// value shared by the two Handlers, whose change feed is in process.
//
// Each run is one task on a fresh pair of replicas: SendMessage
// (returnImmediately) to A starts replicaAgent there, which sets working,
// flushes, and waits at a gate. One SubscribeToTask client attaches to B
// (path A->B) or to A itself (path A->A, the baseline) over a raw HTTP/1.1
// connection and reads the task snapshot; then the gate opens and the
// agent writes N artifact chunks (16-byte text parts of one artifact, as
// in -stream), each stamped in the artifact's metadata with the time the
// agent called ArtifactChunk, then completes. Paced runs write one chunk,
// then sleep -reppace (so one every -reppace or a little more); flat-out
// runs (-repflat chunks) write as fast as the Handler takes them. The
// subscriber takes the time as soon as each frame is read and computes
// arrival minus stamp: one clock, this process's monotonic one.
//
// The latency thus includes everything between the agent and the client:
// the Handler's queue of the task's writes (one Append in flight per task;
// what queues meanwhile goes into the next), the store's commit (on
// PostgreSQL the group commit: a writer takes every Append waiting, runs
// them in one transaction, NOTIFYs once and commits; there is no timed
// wait), and then on A->A the publish to A's subscribers once the Append
// returns; on A->B the NOTIFY's delivery to B's LISTEN connection, B's
// followLog goroutine reading the log after its seq (store Events, one
// query) and publishing what it read; then the SSE frame's write and read
// on loopback. The "feed" columns split it: the time from the stamp until
// the subscriber replica's store feed (store.Feed, followed by the bench
// beside the Handler) reports a seq at or past the chunk's.
//
// Checked in every run: the snapshot first, the task working; every frame
// of the task with strictly increasing seq; exactly N chunks, 0..N-1 in
// order, each with its stamp; the completed status last, then the end of
// the stream; and GetTask on both replicas holds the whole artifact in
// order. Any failure fails the run (exit status 1).
//
// events/s is N over the time from opening the gate to the completed
// frame at the subscriber: the events per second of one task followed.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
)

type replicasOptions struct {
	stores []string
	events int           // chunks of a paced run; 0 skips the paced runs
	pace   time.Duration // sleep after each chunk of a paced run
	flat   int           // chunks of a flat-out run; 0 skips them
	rounds int
	// paths to run: "A->A", "A->B".
	paths      []string
	timeout    time.Duration
	asJSON     bool
	cpuprofile string
	progress   io.Writer // progress lines; nil for none
}

const (
	pathSame  = "A->A"
	pathOther = "A->B"
)

// stampKey is the artifact metadata member that carries the agent's
// stamp: nanoseconds since the run's epoch, as a decimal string (a string,
// so that no JSON number conversion on the way can round it).
const stampKey = "benchSentNs"

var stampPrefix = []byte(`"` + stampKey + `":"`)

// replicasRow is one store, path and pace, over every round.
type replicasRow struct {
	Store string `json:"store"`
	Path  string `json:"path"` // A->A or A->B
	// PaceNanos is the sleep after each chunk; 0 flat out.
	PaceNanos int64 `json:"pace_ns"`
	Events    int   `json:"events"` // chunks per run
	Rounds    int   `json:"rounds"` // runs that finished
	// Latency from the agent's ArtifactChunk to the frame's arrival at the
	// subscriber, over every chunk of every round, ms.
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
	// From the agent's stamp until the store feed of the subscriber's
	// replica reported the chunk's seq (or a later one), ms.
	FeedP50 float64 `json:"feed_p50_ms"`
	FeedP99 float64 `json:"feed_p99_ms"`
	// EventsPerSec: chunks over the time from the gate to the completed
	// frame, the median round.
	EventsPerSec float64 `json:"events_per_second"`
	// CPUPerEvent: this process's CPU (both replicas, the client, the
	// bench's checks) per chunk in the median round, µs.
	CPUPerEvent       float64   `json:"cpu_us_per_event"`
	RoundP99          []float64 `json:"round_p99_ms"`
	RoundEventsPerSec []float64 `json:"round_events_per_second"`
	Error             string    `json:"error,omitempty"`

	lat, feed []time.Duration
	runs      []replicasRun
}

// replicasRun is the outcome of one run.
type replicasRun struct {
	lat     []time.Duration // per chunk, in order
	feed    []time.Duration // per chunk: stamp to the feed's change
	elapsed time.Duration   // gate to completed frame
	cpu     time.Duration
}

type replicasReport struct {
	Env        modeEnv       `json:"environment"`
	Rounds     int           `json:"rounds"`
	PaceNanos  int64         `json:"pace_ns"`
	ChunkBytes int           `json:"chunk_bytes"`
	Rows       []replicasRow `json:"results"`
	Errors     []string      `json:"errors,omitempty"`
}

func runReplicasMode(o replicasOptions) error {
	rep := &replicasReport{Env: newModeEnv(), Rounds: o.rounds, PaceNanos: o.pace.Nanoseconds(), ChunkBytes: chunkBytes}
	out := os.Stdout
	if !o.asJSON {
		o.progress = os.Stderr
		printModeHeader(out, "goa2a replica benchmark (go run ./bench -replicas)", &rep.Env,
			"replicas A and B: two server.Handlers, each on its own store of one set of tasks (PostgreSQL: two Stores on",
			"one fresh schema, each with its own pool and LISTEN connection; memory, SQLite: one Store value shared),",
			"each behind JSON-RPC on its own 127.0.0.1 listener; the agent runs on A; one SubscribeToTask client on A",
			fmt.Sprintf("(A->A) or on B (A->B); %d paced chunks (a %v sleep after each) or %d flat out, %d-byte text parts;", o.events, o.pace, o.flat, chunkBytes),
			fmt.Sprintf("latency: agent's ArtifactChunk to the frame read by the client; fresh replicas per run; %d round(s)", o.rounds))
	}
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	measureReplicas(rep, o)
	rep.Env.LoadAfter = loadAverage()
	if o.asJSON {
		if err := printJSON(out, rep); err != nil {
			return err
		}
	} else {
		printReplicas(out, rep)
	}
	if len(rep.Errors) > 0 {
		return errors.New("-replicas: some runs failed (see above)")
	}
	return nil
}

// measureReplicas runs every row o asks for, -rounds times, the rows of a
// round one after another (so each path of a store and pace runs beside
// the other under the machine's load of the moment), and fills rep.
func measureReplicas(rep *replicasReport, o replicasOptions) {
	type pace struct {
		n int
		d time.Duration
	}
	var paces []pace
	if o.events > 0 {
		paces = append(paces, pace{o.events, o.pace})
	}
	if o.flat > 0 {
		paces = append(paces, pace{o.flat, 0})
	}
	for _, kind := range o.stores {
		for _, p := range paces {
			for _, path := range o.paths {
				rep.Rows = append(rep.Rows, replicasRow{Store: kind, Path: path, PaceNanos: p.d.Nanoseconds(), Events: p.n})
			}
		}
	}
	for r := 1; r <= o.rounds; r++ {
		for i := range rep.Rows {
			row := &rep.Rows[i]
			if row.Error != "" {
				continue
			}
			if o.progress != nil {
				fmt.Fprintf(o.progress, "bench: -replicas: %s %s, %d chunks %s, round %d...\n", row.Store, row.Path, row.Events, paceName(row.PaceNanos), r)
			}
			run, err := replicasRunOnce(row.Store, row.Path == pathOther, row.Events, time.Duration(row.PaceNanos), o.timeout)
			if err != nil {
				row.Error = fmt.Sprintf("round %d: %v", r, err)
				msg := fmt.Sprintf("%s %s, %d chunks %s, %s", row.Store, row.Path, row.Events, paceName(row.PaceNanos), row.Error)
				rep.Errors = append(rep.Errors, msg)
				if o.progress != nil {
					fmt.Fprintln(o.progress, "!!! bench:", msg)
				}
				continue
			}
			row.runs = append(row.runs, run)
			row.lat = append(row.lat, run.lat...)
			row.feed = append(row.feed, run.feed...)
		}
	}
	for i := range rep.Rows {
		row := &rep.Rows[i]
		row.Rounds = len(row.runs)
		if row.Error != "" || len(row.runs) == 0 {
			continue
		}
		slices.Sort(row.lat)
		row.P50, row.P90 = ms(percentile(row.lat, 0.50)), ms(percentile(row.lat, 0.90))
		row.P99, row.Max = ms(percentile(row.lat, 0.99)), ms(row.lat[len(row.lat)-1])
		if len(row.feed) > 0 {
			slices.Sort(row.feed)
			row.FeedP50, row.FeedP99 = ms(percentile(row.feed, 0.50)), ms(percentile(row.feed, 0.99))
		}
		for _, run := range row.runs {
			lat := slices.Sorted(slices.Values(run.lat))
			row.RoundP99 = append(row.RoundP99, ms(percentile(lat, 0.99)))
			row.RoundEventsPerSec = append(row.RoundEventsPerSec, float64(row.Events)/run.elapsed.Seconds())
		}
		runs := slices.Clone(row.runs)
		slices.SortFunc(runs, func(a, b replicasRun) int { return cmp.Compare(b.elapsed, a.elapsed) })
		m := runs[(len(runs)-1)/2] // the lower median of events/s
		row.EventsPerSec = float64(row.Events) / m.elapsed.Seconds()
		row.CPUPerEvent = float64(m.cpu.Nanoseconds()) / 1e3 / float64(row.Events)
	}
}

func paceName(ns int64) string {
	if ns == 0 {
		return "flat out"
	}
	return "paced " + time.Duration(ns).String()
}

func printReplicas(w io.Writer, rep *replicasReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "store\tpath\tpace\tchunks\trounds\tp50 ms\tp90 ms\tp99 ms\tmax ms\tfeed p50\tfeed p99\tevents/s\tcpu µs/event\tround p99 ms\t")
	for _, r := range rep.Rows {
		pace := "flat"
		if r.PaceNanos > 0 {
			pace = time.Duration(r.PaceNanos).String()
		}
		if r.Error != "" || r.Rounds == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\tfailed\t-\t-\t-\t-\t-\t-\t-\t-\t\n", r.Store, r.Path, pace, r.Events, r.Rounds)
			continue
		}
		var rounds []string
		for _, p := range r.RoundP99 {
			rounds = append(rounds, strconv.FormatFloat(p, 'f', 2, 64))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t%.1f\t%s\t\n", r.Store, r.Path, pace, r.Events, r.Rounds,
			r.P50, r.P90, r.P99, r.Max, r.FeedP50, r.FeedP99, r.EventsPerSec, r.CPUPerEvent, strings.Join(rounds, " "))
	}
	tw.Flush()
	fmt.Fprintln(w, "(latency: from the agent's ArtifactChunk call to the client's read of the frame, every chunk of every round;")
	fmt.Fprintln(w, " feed: from the same stamp until the subscriber's replica's store feed reported the chunk's seq;")
	fmt.Fprintln(w, " events/s: chunks over the time from the gate to the completed frame, median round; cpu: the whole")
	fmt.Fprintln(w, " process, both replicas and the client; memory, sqlite: the two Handlers share one Store value)")
	fmt.Fprintln(w)
	for _, r := range rep.Rows {
		if r.Path != pathOther || r.Rounds == 0 || r.Error != "" {
			continue
		}
		for _, s := range rep.Rows {
			if s.Path == pathSame && s.Store == r.Store && s.PaceNanos == r.PaceNanos && s.Rounds > 0 && s.Error == "" {
				fmt.Fprintf(w, "%s, %s: A->B over A->A: p50 %+.2f ms, p99 %+.2f ms, events/s %.1f%%\n", r.Store, paceName(r.PaceNanos),
					r.P50-s.P50, r.P99-s.P99, 100*r.EventsPerSec/s.EventsPerSec)
			}
		}
	}
	fmt.Fprintf(w, "\nloadavg:    %s after the run\n", rep.Env.LoadAfter)
	for _, e := range rep.Errors {
		fmt.Fprintf(w, "!!! ERROR: %s\n", e)
	}
}

// replicaAgent is the agent of -replicas. Its message is "paced:N:NS": set
// working, flush, wait for the gate, then write N chunks of one artifact
// (as benchAgent's chunks:N, see appendChunkText), each stamped with the
// time since epoch in its metadata (stampKey), sleeping NS nanoseconds
// after each one (none when 0), and complete.
type replicaAgent struct {
	epoch time.Time
	gate  chan struct{} // closed by the run
}

// Execute implements [server.Agent].
func (a *replicaAgent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	text := req.Message.Text()
	var n int
	var pace time.Duration
	f := strings.Split(text, ":")
	ok := len(f) == 3 && f[0] == "paced"
	if ok {
		var err1, err2 error
		n, err1 = strconv.Atoi(f[1])
		var ns int64
		ns, err2 = strconv.ParseInt(f[2], 10, 64)
		pace = time.Duration(ns)
		ok = err1 == nil && err2 == nil && n >= 1 && pace >= 0
	}
	if !ok {
		return w.Reject(ctx, "bench replica agent: want paced:N:NS, got "+strconv.Quote(text))
	}
	if err := w.Working(ctx, ""); err != nil {
		return err
	}
	if err := w.Flush(ctx); err != nil {
		return err
	}
	select {
	case <-a.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	buf := make([]byte, 0, chunkBytes)
	for i := range n {
		buf = appendChunkText(buf[:0], i)
		stamp := strconv.FormatInt(int64(time.Since(a.epoch)), 10)
		art := a2a.Artifact{ArtifactID: chunkArtifactID, Parts: []a2a.Part{a2a.TextPart(string(buf))},
			Metadata: map[string]any{stampKey: stamp}}
		if err := w.ArtifactChunk(ctx, art, i > 0, i == n-1); err != nil {
			return err
		}
		if pace > 0 {
			time.Sleep(pace)
		}
	}
	return w.Complete(ctx, "")
}

// parseStamp finds the stamp of an artifact frame.
func parseStamp(data []byte) (time.Duration, bool) {
	i := bytes.Index(data, stampPrefix)
	if i < 0 {
		return 0, false
	}
	rest := data[i+len(stampPrefix):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return 0, false
	}
	ns, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	return time.Duration(ns), err == nil
}

// openReplicaStores opens the stores of replicas A and B over one fresh
// set of tasks: two postgres.Stores on one new schema, or one memory or
// SQLite Store for both. release closes them and removes the schema or
// file; call it after both Handlers are closed.
func openReplicaStores(ctx context.Context, kind string) (a, b store.Store, release func() error, err error) {
	a, releaseA, err := openStore(ctx, kind)
	if err != nil {
		return nil, nil, nil, err
	}
	pa, ok := a.(*postgres.Store)
	if !ok {
		return a, a, releaseA, nil
	}
	pb, err := postgres.Open(ctx, postgresDSN, postgres.Options{Schema: pa.Schema(), Replica: "bench-B"})
	if err != nil {
		return nil, nil, nil, errors.Join(err, releaseA())
	}
	return pa, pb, func() error { return errors.Join(pb.Close(), releaseA()) }, nil
}

// feedLog records when a store's change feed reported each seq of one
// task. Its add runs on the feed's goroutine: it only appends.
type feedLog struct {
	epoch  time.Time
	taskID string
	mu     sync.Mutex
	seqs   []int64         // increasing
	at     []time.Duration // since epoch, when seqs[i] was heard
}

func (f *feedLog) add(c store.Change) {
	at := time.Since(f.epoch)
	if c.TaskID != f.taskID {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.seqs); n == 0 || c.Seq > f.seqs[n-1] {
		f.seqs = append(f.seqs, c.Seq)
		f.at = append(f.at, at)
	}
}

// heard returns when the feed first reported seq or a later one.
func (f *feedLog) heard(seq int64) (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, _ := slices.BinarySearch(f.seqs, seq)
	if i == len(f.seqs) {
		return 0, false
	}
	return f.at[i], true
}

// replicasRunOnce is one run: fresh replicas on a fresh store of kind, one
// task of n chunks on A, followed on B if other, else on A.
func replicasRunOnce(kind string, other bool, n int, pace time.Duration, timeout time.Duration) (run replicasRun, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	stA, stB, release, err := openReplicaStores(ctx, kind)
	if err != nil {
		return run, err
	}
	ag := &replicaAgent{epoch: time.Now(), gate: make(chan struct{})}
	gateOpen := false
	defer func() {
		if !gateOpen {
			close(ag.gate)
		}
	}()
	var servers []*testServer
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer ccancel()
		var cerr error
		for _, ts := range servers {
			cerr = errors.Join(cerr, ts.close(cctx))
		}
		if cerr = errors.Join(cerr, release()); cerr != nil && err == nil {
			err = fmt.Errorf("closing the replicas: %w", cerr)
		}
	}()
	for _, r := range []struct {
		name string
		st   store.Store
	}{{"A", stA}, {"B", stB}} {
		ts, err := startStack("replica-"+r.name+"-"+kind, ag, server.WithStore(r.st), server.WithLimits(streamLimits))
		if err != nil {
			return run, fmt.Errorf("replica %s: %w", r.name, err)
		}
		servers = append(servers, ts)
	}
	a, sub := servers[0], servers[0]
	subStore := stA
	if other {
		sub, subStore = servers[1], stB
	}
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	id, err := startTask(ctx, client, a.url, fmt.Sprintf("paced:%d:%d", n, pace.Nanoseconds()))
	if err != nil {
		return run, err
	}
	feed := &feedLog{epoch: ag.epoch, taskID: id}
	if f, ok := subStore.(store.Feed); ok {
		defer f.Follow(feed.add)()
	}
	if err := waitWorking(ctx, client, sub.url, []string{id}); err != nil {
		return run, err
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(sub.url, "http://"), jsonrpcPath)
	s, err := subscribe(ctx, addr, id)
	if err != nil {
		return run, err
	}
	defer s.conn.Close()
	check := streamCheck{want: n, taskID: id}
	ev, err := s.sr.Next()
	if err == nil {
		err = check.add(ev)
	}
	if err == nil && check.snapshot != a2a.TaskStateWorking {
		err = fmt.Errorf("first frame: task %v, want working", check.snapshot)
	}
	if err != nil {
		return run, fmt.Errorf("subscribing: %w", err)
	}

	run.lat = make([]time.Duration, 0, n)
	seqs := make([]int64, 0, n)
	stamps := make([]time.Duration, 0, n)
	cpu0, g0 := cpuTime(), time.Now()
	close(ag.gate)
	gateOpen = true
	var t1 time.Time
	for {
		ev, err := s.sr.Next()
		if err != nil {
			if err := check.finish(err); err != nil {
				return run, err
			}
			break
		}
		at := time.Since(ag.epoch)
		chunks := check.artifacts
		if err := check.add(ev); err != nil {
			return run, err
		}
		if check.artifacts > chunks {
			stamp, ok := parseStamp(ev.Data)
			if !ok {
				return run, fmt.Errorf("chunk %d: no %s stamp: %.300s", chunks, stampKey, ev.Data)
			}
			run.lat = append(run.lat, at-stamp)
			seqs = append(seqs, check.seq)
			stamps = append(stamps, stamp)
		}
		if check.completed {
			t1 = time.Now()
		}
	}
	run.elapsed, run.cpu = t1.Sub(g0), cpuTime()-cpu0
	if len(run.lat) != n {
		return run, fmt.Errorf("%d stamped chunks, want %d", len(run.lat), n)
	}
	for i, seq := range seqs {
		if at, ok := feed.heard(seq); ok {
			run.feed = append(run.feed, at-stamps[i])
		}
	}
	for _, ts := range servers {
		t, err := getTask(ctx, client, ts.url, id)
		if err != nil {
			return run, err
		}
		if err := checkTask(t, n); err != nil {
			return run, fmt.Errorf("%s: %w", ts.name, err)
		}
	}
	return run, nil
}
