package main

// -stream: one task streams N artifact chunks to one client.
//
// For each store and each N of -chunkcounts, -rounds times: a fresh store
// (memory; SQLite in a new temporary file with sqlite.Options{}; PostgreSQL
// in a new schema of -postgres), server.Handler with benchAgent on it
// behind the JSON-RPC binding on 127.0.0.1, in this process. One client
// sends SendStreamingMessage "chunks:N" (the agent: working, N chunks of
// one artifact, each one 16-byte text part, append on all but the first,
// lastChunk on the last, then completed) and reads every SSE frame; the
// time is from sending the request until the completed status frame is
// read. Checked: the task snapshot first, every frame's SSE id "taskId:seq"
// with seq strictly increasing, exactly N artifact frames holding chunks
// 0..N-1 in order, then completed and the end of the stream; then GetTask
// must hold the artifact with its N parts in order. A run over
// -streamtimeout is stopped and reported as such, and the store's larger
// counts are not run; that is a finding, not a failure (exit status 0). A
// failed check or any other error is (exit status 1).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/sse"
	"github.com/goa2a/a2a/server"
)

type streamOptions struct {
	stores  []string
	counts  []int
	rounds  int
	timeout time.Duration
	asJSON  bool
	// cpuprofile profiles the whole mode (server and client) into a file.
	cpuprofile string
}

// streamRow is one store and chunk count.
type streamRow struct {
	Store  string `json:"store"`
	Chunks int    `json:"chunks"`
	// RoundSeconds has the time of every round that finished in time.
	RoundSeconds []float64 `json:"round_seconds"`
	// Seconds is the median round (the lower median); 0 when stopped.
	Seconds      float64 `json:"seconds,omitempty"`
	ChunksPerSec float64 `json:"chunks_per_second,omitempty"`
	// CPUPerChunk is the process's CPU (server and client) per chunk in
	// the median round, µs.
	CPUPerChunk float64 `json:"cpu_us_per_chunk,omitempty"`
	// VsMemory is ChunksPerSec over the memory store's at the same count.
	VsMemory float64 `json:"vs_memory,omitempty"`
	// Stopped: a round went over the timeout; Skipped: not run, since a
	// smaller count of the store was stopped.
	Stopped bool `json:"stopped,omitempty"`
	Skipped bool `json:"skipped,omitempty"`
}

// growthExp is a store's growth exponent log(t[Nmax]/t[Nmin])/log(Nmax/Nmin).
type growthExp struct {
	Store    string  `json:"store"`
	Exponent float64 `json:"exponent"`
	// AtLeast: t[Nmax] is over the timeout, so the exponent is a lower
	// bound computed with the timeout.
	AtLeast bool `json:"at_least,omitempty"`
	// Unknown: t[Nmin] itself is unknown (stopped).
	Unknown bool `json:"unknown,omitempty"`
}

type streamReport struct {
	Env            modeEnv     `json:"environment"`
	Rounds         int         `json:"rounds"`
	TimeoutSeconds float64     `json:"timeout_seconds"`
	ChunkBytes     int         `json:"chunk_bytes"`
	Rows           []streamRow `json:"results"`
	Growth         []growthExp `json:"growth,omitempty"`
	Errors         []string    `json:"errors,omitempty"`
}

func runStreamMode(o streamOptions) error {
	rep := streamReport{Env: newModeEnv(), Rounds: o.rounds, TimeoutSeconds: o.timeout.Seconds(), ChunkBytes: chunkBytes}
	out := os.Stdout
	if !o.asJSON {
		printModeHeader(out, "goa2a artifact streaming benchmark (go run ./bench -stream)", &rep.Env,
			fmt.Sprintf("one task streams N artifact chunks (each one %d-byte text part of one artifact, append) to one client:", chunkBytes),
			"SendStreamingMessage over JSON-RPC (SSE on HTTP/1.1) on 127.0.0.1, every frame read and checked;",
			"time from sending the request until the completed status frame is read;",
			fmt.Sprintf("server and client in this process, a fresh store per run; %d round(s), median; stopped after %v", o.rounds, o.timeout))
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
	failed := false
	for _, kind := range o.stores {
		stopped := false
		for _, n := range o.counts {
			row := streamRow{Store: kind, Chunks: n}
			if stopped {
				row.Skipped = true
				rep.Rows = append(rep.Rows, row)
				continue
			}
			type round struct{ t, cpu time.Duration }
			var rounds []round
			for r := 1; r <= o.rounds; r++ {
				if !o.asJSON {
					fmt.Fprintf(os.Stderr, "bench: -stream: %s, %d chunks, round %d...\n", kind, n, r)
				}
				t, cpu, over, err := streamRun(kind, n, o.timeout)
				if err != nil {
					failed = true
					msg := fmt.Sprintf("%s, %d chunks, round %d: %v", kind, n, r, err)
					rep.Errors = append(rep.Errors, msg)
					fmt.Fprintln(os.Stderr, "!!! bench:", msg)
					break
				}
				if over {
					row.Stopped, stopped = true, true
					break
				}
				rounds = append(rounds, round{t, cpu})
				row.RoundSeconds = append(row.RoundSeconds, t.Seconds())
			}
			if !row.Stopped && len(rounds) > 0 {
				sorted := slices.Clone(rounds)
				slices.SortFunc(sorted, func(a, b round) int { return cmp.Compare(a.t, b.t) })
				m := sorted[(len(sorted)-1)/2]
				row.Seconds = m.t.Seconds()
				row.ChunksPerSec = float64(n) / row.Seconds
				row.CPUPerChunk = float64(m.cpu.Microseconds()) / float64(n)
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	for i := range rep.Rows {
		r := &rep.Rows[i]
		for _, m := range rep.Rows {
			if m.Store == "memory" && m.Chunks == r.Chunks && m.ChunksPerSec > 0 && r.ChunksPerSec > 0 {
				r.VsMemory = r.ChunksPerSec / m.ChunksPerSec
			}
		}
	}
	if len(o.counts) > 1 {
		nmin, nmax := slices.Min(o.counts), slices.Max(o.counts)
		for _, kind := range o.stores {
			g := growthExp{Store: kind}
			var tmin, tmax float64
			for _, r := range rep.Rows {
				if r.Store != kind {
					continue
				}
				t := r.Seconds
				if r.Stopped || r.Skipped {
					t = -1
				}
				switch r.Chunks {
				case nmin:
					tmin = t
				case nmax:
					tmax = t
				}
			}
			switch {
			case tmin <= 0:
				g.Unknown = true
			case tmax < 0:
				g.AtLeast = true
				g.Exponent = math.Log(o.timeout.Seconds()/tmin) / math.Log(float64(nmax)/float64(nmin))
			default:
				g.Exponent = math.Log(tmax/tmin) / math.Log(float64(nmax)/float64(nmin))
			}
			rep.Growth = append(rep.Growth, g)
		}
	}
	rep.Env.LoadAfter = loadAverage()
	if o.asJSON {
		if err := printJSON(out, rep); err != nil {
			return err
		}
	} else {
		printStream(out, &rep, o)
	}
	if failed {
		return errors.New("-stream: some runs failed (see above)")
	}
	return nil
}

func printStream(w io.Writer, rep *streamReport, o streamOptions) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "store\tchunks\tseconds\tchunks/s\tµs/chunk\tcpu µs/chunk\tvs memory\trounds (s)\t")
	for _, r := range rep.Rows {
		var rounds []string
		for _, s := range r.RoundSeconds {
			rounds = append(rounds, strconv.FormatFloat(s, 'f', 3, 64))
		}
		switch {
		case r.Skipped:
			fmt.Fprintf(tw, "%s\t%d\tnot run\t-\t-\t-\t-\t-\t\n", r.Store, r.Chunks)
		case r.Stopped:
			fmt.Fprintf(tw, "%s\t%d\tover %gs (stopped)\t< %.0f\t> %.0f\t-\t-\t%s\t\n", r.Store, r.Chunks, rep.TimeoutSeconds,
				float64(r.Chunks)/rep.TimeoutSeconds, 1e6*rep.TimeoutSeconds/float64(r.Chunks), strings.Join(append(rounds, "stopped"), " "))
		case r.Seconds == 0:
			fmt.Fprintf(tw, "%s\t%d\tfailed\t-\t-\t-\t-\t%s\t\n", r.Store, r.Chunks, strings.Join(rounds, " "))
		default:
			vs := "-"
			if r.VsMemory > 0 {
				vs = fmt.Sprintf("%.1f%%", 100*r.VsMemory)
			}
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.0f\t%.1f\t%.1f\t%s\t%s\t\n", r.Store, r.Chunks, r.Seconds, r.ChunksPerSec,
				1e6*r.Seconds/float64(r.Chunks), r.CPUPerChunk, vs, strings.Join(rounds, " "))
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "(seconds: median round, from the request to the completed frame; µs/chunk: seconds per chunk;")
	fmt.Fprintln(w, " cpu: the whole process, server plus client; vs memory: chunks/s over the memory store's at the same count)")
	for _, r := range rep.Rows {
		if r.Stopped {
			fmt.Fprintf(w, "(stopped: a round of %s with %d chunks took over %gs; its larger counts were not run)\n", r.Store, r.Chunks, rep.TimeoutSeconds)
		}
	}
	if len(rep.Growth) > 0 {
		nmin, nmax := slices.Min(o.counts), slices.Max(o.counts)
		fmt.Fprintf(w, "\ngrowth exponent log(t[%d]/t[%d])/log(%d/%d) (1 linear, 2 quadratic):\n", nmax, nmin, nmax, nmin)
		for _, g := range rep.Growth {
			switch {
			case g.Unknown:
				fmt.Fprintf(w, "    %-9s unknown (%d chunks did not finish)\n", g.Store, nmin)
			case g.AtLeast:
				fmt.Fprintf(w, "    %-9s >= %.2f (%d chunks over %gs)\n", g.Store, g.Exponent, nmax, rep.TimeoutSeconds)
			default:
				fmt.Fprintf(w, "    %-9s %.2f\n", g.Store, g.Exponent)
			}
		}
	}
	fmt.Fprintf(w, "\nloadavg:    %s after the run\n", rep.Env.LoadAfter)
	for _, e := range rep.Errors {
		fmt.Fprintf(w, "!!! ERROR: %s\n", e)
	}
}

// streamRun runs one task of n chunks on a fresh store of kind. over
// reports the run went over timeout and was stopped; elapsed and cpu are
// then zero.
func streamRun(kind string, n int, timeout time.Duration) (elapsed, cpu time.Duration, over bool, err error) {
	ctx := context.Background()
	st, release, err := openStore(ctx, kind)
	if err != nil {
		return 0, 0, false, err
	}
	ts, err := startStack("stream-"+kind, benchAgent{}, server.WithStore(st), server.WithLimits(streamLimits))
	if err != nil {
		return 0, 0, false, errors.Join(err, release())
	}
	tr := &http.Transport{DisableCompression: true}
	client := &http.Client{Transport: tr}
	defer func() {
		tr.CloseIdleConnections()
		cctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if cerr := errors.Join(ts.close(cctx), release()); cerr != nil && err == nil {
			err = fmt.Errorf("closing the server: %w", cerr)
		}
	}()

	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	check := streamCheck{want: n}
	t0, cpu0 := time.Now(), cpuTime()
	var t1 time.Time
	var cpu1 time.Duration
	serr := func() error {
		req, err := http.NewRequestWithContext(rctx, http.MethodPost, ts.url, strings.NewReader(
			fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"stream-%d-%d","role":"ROLE_USER","parts":[{"text":"chunks:%d"}]}}}`,
				os.Getpid(), rpcSeq.Add(1), n)))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", sse.ContentType)
		req.Header.Set("A2A-Version", a2a.ProtocolVersion)
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), sse.ContentType) {
			b, _ := io.ReadAll(io.LimitReader(res.Body, 1000))
			return fmt.Errorf("HTTP %d %s: %.300s", res.StatusCode, res.Header.Get("Content-Type"), b)
		}
		sr := sse.NewReader(res.Body, 0)
		for {
			ev, err := sr.Next()
			if err != nil {
				return check.finish(err)
			}
			if err := check.add(ev); err != nil {
				return err
			}
			if check.completed {
				t1, cpu1 = time.Now(), cpuTime()
			}
		}
	}()
	if serr != nil {
		if rctx.Err() != nil {
			return 0, 0, true, nil
		}
		return 0, 0, false, serr
	}
	gctx, gcancel := context.WithTimeout(ctx, 60*time.Second)
	defer gcancel()
	t, err := getTask(gctx, client, ts.url, check.taskID)
	if err != nil {
		return 0, 0, false, err
	}
	if err := checkTask(t, n); err != nil {
		return 0, 0, false, err
	}
	return t1.Sub(t0), cpu1 - cpu0, false, nil
}
