package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/goa2a/a2a/a2a"
)

// loadConfig is the closed-loop load put on one target.
type loadConfig struct {
	concurrency int
	warmup      time.Duration
	duration    time.Duration
	text        string // the text of every message
	runID       string // makes message ids unique across runs
	grpcConns   int    // client connections shared by a gRPC target's clients
}

// result is what one target did in the measured window.
type result struct {
	Target      string  `json:"target"`
	Round       int     `json:"round"`
	Requests    int64   `json:"requests"` // completed without error in the window
	Errors      int64   `json:"errors"`   // failed requests, warmup included
	FirstError  string  `json:"first_error,omitempty"`
	Seconds     float64 `json:"seconds"`    // length of the measured window
	Throughput  float64 `json:"throughput"` // requests per second
	P50         float64 `json:"p50_ms"`     // latency percentiles, milliseconds
	P90         float64 `json:"p90_ms"`
	P99         float64 `json:"p99_ms"`
	Max         float64 `json:"max_ms"`
	CPUPerReq   float64 `json:"cpu_us_per_req"` // process CPU (server+client), µs
	CPUUtil     float64 `json:"cpu_util"`       // process CPU over wall time, per GOMAXPROCS
	LoadAvg     string  `json:"loadavg_after"`  // /proc/loadavg at the end of the window
	AllocsPer   float64 `json:"allocs_per_req"` // process heap allocations
	BytesPer    float64 `json:"bytes_per_req"`  // process heap bytes allocated
	RespBytes   int     `json:"response_bytes"` // size of one response body
	TotalSent   int64   `json:"total_sent"`     // every request, warmup and tail included
	TasksStored int     `json:"tasks_stored,omitempty"`
	HeapMiB     float64 `json:"heap_inuse_mib_after"`
	// Push is what the webhook receiver saw, for the push target only.
	Push *pushResult `json:"push,omitempty"`
}

// worker is one closed-loop client: it sends the next request as soon as
// the previous response is read, reusing its buffers.
type worker struct {
	id      int
	binding binding
	client  *http.Client
	tmpl    *http.Request // copied for every request; Header is shared, read-only
	grpc    *grpcCaller   // for bindGRPC, instead of client and tmpl
	cfg     *loadConfig
	text    []byte // cfg.text as a JSON string
	art     string // the artifact text the response must hold
	params  []byte // more members of the params object, each after a comma
	after   func(ctx context.Context, body []byte) error

	body    []byte
	reader  bodyReader
	resp    bytes.Buffer
	seq     int64
	idBuf   []byte // the current message id
	echoArt []byte // `"echo: <text>"` as it must appear in the response

	lat       []time.Duration
	errors    int64
	firstErr  error
	sent      int64
	respBytes int
}

// bodyReader is a reusable request body over the worker's buffer.
type bodyReader struct {
	b   []byte
	off int
}

func (r *bodyReader) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

func (r *bodyReader) Close() error { return nil }

// newWorker makes client id of target ts. An HTTP target's workers share
// client; a gRPC target's worker calls over cc.
func newWorker(ctx context.Context, id int, client *http.Client, cc *grpc.ClientConn, cfg *loadConfig, ts *testServer) (*worker, error) {
	text, _ := json.Marshal(cfg.text)
	echoArt, _ := json.Marshal("echo: " + cfg.text)
	w := &worker{
		id: id, binding: ts.binding, client: client, cfg: cfg, text: text, echoArt: echoArt,
		art: cmp.Or(ts.art, "echo: "+cfg.text), params: ts.params, after: ts.after,
		lat: make([]time.Duration, 0, 1<<14),
	}
	if ts.binding == bindGRPC {
		if len(ts.params) > 0 {
			return nil, errors.New(ts.name + ": extra SendMessage params are only sent over JSON-RPC")
		}
		w.grpc = newGRPCCaller(ctx, cc, cfg.text)
		return w, nil
	}
	tmpl, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.url, nil)
	if err != nil {
		return nil, err
	}
	if ts.binding == bindREST {
		tmpl.Header.Set("Content-Type", "application/a2a+json")
	} else {
		tmpl.Header.Set("Content-Type", "application/json")
	}
	tmpl.Header.Set("A2A-Version", a2a.ProtocolVersion)
	tmpl.GetBody = func() (io.ReadCloser, error) {
		w.reader.off = 0
		return &w.reader, nil
	}
	w.tmpl = tmpl
	return w, nil
}

// nextID advances w.seq and writes the next message id into w.idBuf:
// <run>-<worker>-<seq>, unique across workers and runs.
func (w *worker) nextID() {
	w.seq++
	id := w.idBuf[:0]
	id = append(id, w.cfg.runID...)
	id = append(id, '-')
	id = strconv.AppendInt(id, int64(w.id), 10)
	id = append(id, '-')
	id = strconv.AppendInt(id, w.seq, 10)
	w.idBuf = id
}

// build writes the next SendMessage request into w.body: the params object
// in a JSON-RPC envelope, or on its own for HTTP+JSON.
func (w *worker) build() {
	w.nextID()
	b := w.body[:0]
	if w.binding == bindJSONRPC {
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = strconv.AppendInt(b, w.seq, 10)
		b = append(b, `,"method":"SendMessage","params":`...)
	}
	b = append(b, `{"message":{"messageId":"`...)
	b = append(b, w.idBuf...)
	b = append(b, `","role":"ROLE_USER","parts":[{"text":`...)
	b = append(b, w.text...)
	b = append(b, `}]}`...)
	b = append(b, w.params...)
	b = append(b, '}')
	if w.binding == bindJSONRPC {
		b = append(b, '}')
	}
	w.body = b
}

// do sends one request and checks its response. full asks for a complete
// decode of the response; otherwise cheap byte checks are made.
func (w *worker) do(full bool) error {
	if w.grpc != nil {
		return w.doGRPC(full)
	}
	w.build()
	w.reader = bodyReader{b: w.body}
	req := new(http.Request)
	*req = *w.tmpl // carries the run's context
	req.Body = &w.reader
	req.ContentLength = int64(len(w.body))
	w.sent++
	res, err := w.client.Do(req)
	if err != nil {
		return err
	}
	w.resp.Reset()
	_, err = w.resp.ReadFrom(res.Body)
	res.Body.Close()
	if err != nil {
		return fmt.Errorf("reading response: %w", err)
	}
	body := w.resp.Bytes()
	w.respBytes = len(body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.200s", res.StatusCode, body)
	}
	if full {
		return w.checkFull(body)
	}
	return w.checkQuick(body)
}

var (
	resultTask = []byte(`"result":{"task":{`)
	restTask   = []byte(`{"task":{`)
	completed  = []byte(`"state":"TASK_STATE_COMPLETED"`)
	errorKey   = []byte(`"error":`)
)

// checkQuick verifies with byte searches that body answers this request
// with a completed task holding the echo artifact and the user message.
func (w *worker) checkQuick(body []byte) error {
	isTask := bytes.Contains(body, resultTask)
	if w.binding == bindREST {
		isTask = bytes.HasPrefix(body, restTask)
	}
	switch {
	case bytes.Contains(body, errorKey):
		return fmt.Errorf("error response: %.300s", body)
	case !isTask:
		return fmt.Errorf("result is not a task: %.300s", body)
	case !bytes.Contains(body, completed):
		return fmt.Errorf("task is not completed: %.300s", body)
	case !bytes.Contains(body, w.echoArt):
		return fmt.Errorf("no echo artifact: %.300s", body)
	case !bytes.Contains(body, w.idBuf):
		return fmt.Errorf("the user message %s is not in history: %.300s", w.idBuf, body)
	}
	return nil
}

// checkFull decodes body into the model and checks every property.
func (w *worker) checkFull(body []byte) error {
	if w.binding == bindREST {
		var res a2a.SendMessageResponse
		if err := json.Unmarshal(body, &res); err != nil {
			return fmt.Errorf("decoding response: %w: %.300s", err, body)
		}
		return w.checkResponse(&res)
	}
	var res struct {
		JSONRPC string                   `json:"jsonrpc"`
		ID      int64                    `json:"id"`
		Result  *a2a.SendMessageResponse `json:"result"`
		Error   json.RawMessage          `json:"error"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		return fmt.Errorf("decoding response: %w: %.300s", err, body)
	}
	if res.Error != nil || res.Result == nil {
		return fmt.Errorf("JSON-RPC error: %.300s", body)
	}
	if res.JSONRPC != "2.0" || res.ID != w.seq {
		return fmt.Errorf("envelope: jsonrpc %q id %d, want 2.0 and %d", res.JSONRPC, res.ID, w.seq)
	}
	return w.checkResponse(res.Result)
}

// checkResponse checks that res, decoded in full, is a completed task
// holding the expected artifact and, first in its history, this request's
// message.
func (w *worker) checkResponse(res *a2a.SendMessageResponse) error {
	t, ok := res.Result.(*a2a.Task)
	switch {
	case !ok:
		return fmt.Errorf("result is %T, not a task", res.Result)
	case t.Status.State != a2a.TaskStateCompleted:
		return fmt.Errorf("task state %v, want completed", t.Status.State)
	case len(t.Artifacts) != 1 || t.Artifacts[0].Text() != w.art:
		return fmt.Errorf("artifacts %+v, want one with %q", t.Artifacts, w.art)
	case len(t.History) == 0 || t.History[0].MessageID != string(w.idBuf):
		return fmt.Errorf("history does not start with the user message %s", w.idBuf)
	}
	return nil
}

// run sends requests back to back until end. Latencies of requests that
// complete inside [start, end] are recorded; every response of the warmup
// and every 1024th one after is fully decoded and checked.
func (w *worker) run(ctx context.Context, start, end time.Time) {
	for {
		t0 := time.Now()
		if !t0.Before(end) {
			return
		}
		full := t0.Before(start) || w.seq%1024 == 0
		err := w.do(full)
		t1 := time.Now()
		if err == nil && w.after != nil {
			// Not part of the request's latency; it holds the client
			// back like a slow response would.
			err = w.after(ctx, w.resp.Bytes())
		}
		if err != nil {
			w.errors++
			if w.firstErr == nil {
				w.firstErr = err
			}
			if ctx.Err() != nil {
				return
			}
			continue
		}
		if !t1.Before(start) && !t1.After(end) {
			w.lat = append(w.lat, t1.Sub(t0))
		}
	}
}

// drive puts closed-loop load on target ts: warmup, then the measured
// window. Only one target is driven at a time.
func drive(ts *testServer, cfg *loadConfig) (result, error) {
	// HTTP: one client shared by the workers, with a connection per
	// worker kept alive. gRPC: cfg.grpcConns connections shared by the
	// workers (bench/grpc.go). Fresh ones per target: no connection
	// outlives its server.
	var (
		client *http.Client
		conns  []*grpc.ClientConn
		err    error
	)
	if ts.binding == bindGRPC {
		if conns, err = dialGRPC(ts.url, min(cfg.grpcConns, cfg.concurrency)); err != nil {
			return result{}, err
		}
		defer closeGRPC(conns)
	} else {
		tr := &http.Transport{
			MaxIdleConnsPerHost: cfg.concurrency,
			DisableCompression:  true,
			IdleConnTimeout:     time.Minute,
		}
		defer tr.CloseIdleConnections()
		client = &http.Client{Transport: tr}
	}
	runtime.GC()
	begin := time.Now()
	start := begin.Add(cfg.warmup)
	end := start.Add(cfg.duration)
	// One context for all requests: a hung server ends the run instead of
	// hanging it, without a timer per request.
	ctx, cancel := context.WithDeadline(context.Background(), end.Add(30*time.Second))
	defer cancel()

	workers := make([]*worker, cfg.concurrency)
	var wg sync.WaitGroup
	for i := range workers {
		var cc *grpc.ClientConn
		if len(conns) > 0 {
			cc = conns[i%len(conns)]
		}
		if workers[i], err = newWorker(ctx, i, client, cc, cfg, ts); err != nil {
			return result{}, err
		}
	}
	if ts.window != nil {
		ts.window(start, end)
	}
	for _, w := range workers {
		wg.Go(func() { w.run(ctx, start, end) })
	}

	var m0, m1 runtime.MemStats
	time.Sleep(time.Until(start))
	cpu0 := cpuTime()
	runtime.ReadMemStats(&m0)
	time.Sleep(time.Until(end))
	cpu1 := cpuTime()
	runtime.ReadMemStats(&m1)
	loadAvg := loadAverage()
	watchdog := time.AfterFunc(35*time.Second, func() {
		panic(ts.name + ": workers did not stop 35s after the end of the run")
	})
	wg.Wait()
	watchdog.Stop()
	res := result{Target: ts.name, Seconds: cfg.duration.Seconds(), LoadAvg: loadAvg}
	if ts.finish != nil {
		// Before the counts below: it may wait for the server to finish
		// work the load left behind.
		if err := ts.finish(&res, cpu1-cpu0); err != nil {
			return res, err
		}
	}
	var lat []time.Duration
	for _, w := range workers {
		lat = append(lat, w.lat...)
		res.Errors += w.errors
		res.TotalSent += w.sent
		if w.firstErr != nil && res.FirstError == "" {
			res.FirstError = w.firstErr.Error()
		}
		if w.respBytes > res.RespBytes {
			res.RespBytes = w.respBytes
		}
	}
	res.Requests = int64(len(lat))
	res.Throughput = float64(res.Requests) / cfg.duration.Seconds()
	if len(lat) > 0 {
		slices.Sort(lat)
		res.P50 = ms(percentile(lat, 0.50))
		res.P90 = ms(percentile(lat, 0.90))
		res.P99 = ms(percentile(lat, 0.99))
		res.Max = ms(lat[len(lat)-1])
		n := float64(res.Requests)
		res.CPUPerReq = float64((cpu1 - cpu0).Microseconds()) / n
		res.CPUUtil = (cpu1 - cpu0).Seconds() / cfg.duration.Seconds() / float64(runtime.GOMAXPROCS(0))
		res.AllocsPer = float64(m1.Mallocs-m0.Mallocs) / n
		res.BytesPer = float64(m1.TotalAlloc-m0.TotalAlloc) / n
	}
	if ts.a2a != nil {
		if res.TasksStored, err = storedTasks(ts.a2a); err != nil {
			return res, fmt.Errorf("counting stored tasks: %w", err)
		}
	}
	runtime.GC()
	var m2 runtime.MemStats
	runtime.ReadMemStats(&m2)
	res.HeapMiB = float64(m2.HeapInuse) / (1 << 20)
	if res.Requests == 0 && res.Errors == 0 {
		return res, errors.New(ts.name + ": no request completed in the measured window")
	}
	return res, nil
}

// loadAverage is the 1, 5 and 15 minute load average of the machine, which
// tells whether something else competed for the CPUs.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// percentile returns the p-quantile of sorted (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
