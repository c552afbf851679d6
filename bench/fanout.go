package main

// -fanout: S subscribers of one task that streams C chunks.
//
// For each store of -stores and each S of {1, -subscribers} (1 only with
// -fanbaseline), -rounds times: a child server (bench/child.go) on a fresh
// store. The parent starts a "fan:C" task (SendMessage, returnImmediately;
// the agent sets working, then waits at a gate) and waits until it is
// working, opens S SubscribeToTask streams, each over its own HTTP/1.1
// connection, and reads each one's first frame (the task snapshot). With
// all S attached it takes the child's CPU time and opens the gate (POST
// /bench/go); the agent streams C chunks of one artifact (16-byte text
// parts) and completes; every subscriber reads all its frames
// concurrently, checked as in -stream. Once every subscriber has the
// completed frame the child's CPU time is taken again. Reported: the
// child's CPU per chunk per subscriber, cpu / (C x S), the wall time from
// the gate to the last completed frame, and, against the S=1 row, the
// marginal CPU of each further subscriber, (cpu[S] - cpu[1]) / (C x (S-1)).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/sse"
)

type fanoutOptions struct {
	stores      []string
	subscribers int
	chunks      int
	baseline    bool
	rounds      int
	timeout     time.Duration
	asJSON      bool
	cpuprofile  string
	openers     int
}

type fanoutRow struct {
	Store       string `json:"store"`
	Subscribers int    `json:"subscribers"`
	Chunks      int    `json:"chunks"`
	Round       int    `json:"round"` // the median round (by child CPU)
	// WallSeconds is from opening the gate to the last completed frame.
	WallSeconds float64 `json:"wall_seconds"`
	// ChildCPUSeconds is the child's CPU time (user + system) over the
	// same span.
	ChildCPUSeconds float64 `json:"child_cpu_seconds"`
	// CPUPerChunkSub is ChildCPU / (chunks x subscribers), µs.
	CPUPerChunkSub float64 `json:"cpu_us_per_chunk_per_subscriber"`
	// Marginal is (cpu - cpu of the S=1 row) / (chunks x (S-1)), µs; 0
	// for the S=1 row or without it.
	Marginal float64 `json:"marginal_cpu_us_per_chunk_per_subscriber,omitempty"`
	// ChildCPUUse is ChildCPU / (wall x GOMAXPROCS of this machine).
	ChildCPUUse float64 `json:"child_cpu_use"`
	// ParentCPUSeconds is this process's CPU (the S readers) over the span.
	ParentCPUSeconds float64   `json:"parent_cpu_seconds"`
	FramesPerSec     float64   `json:"frames_per_second"` // chunk frames received, all subscribers
	AttachSeconds    float64   `json:"attach_seconds"`    // opening the S streams
	RoundCPUSeconds  []float64 `json:"round_child_cpu_seconds"`
	Profile          string    `json:"cpu_profile,omitempty"`
	Error            string    `json:"error,omitempty"`
}

type fanoutReport struct {
	Env    modeEnv     `json:"environment"`
	Rounds int         `json:"rounds"`
	Rows   []fanoutRow `json:"results"`
}

func runFanoutMode(o fanoutOptions) error {
	rep := fanoutReport{Env: newModeEnv(), Rounds: o.rounds}
	lim, err := raiseFileLimit()
	if err != nil {
		return fmt.Errorf("raising RLIMIT_NOFILE: %w", err)
	}
	rep.Env.FileLimit = lim
	out := os.Stdout
	if !o.asJSON {
		printModeHeader(out, "goa2a fan-out benchmark (go run ./bench -fanout)", &rep.Env,
			fmt.Sprintf("S SubscribeToTask streams (JSON-RPC, SSE, one HTTP/1.1 connection each) of one task streaming %d", o.chunks),
			fmt.Sprintf("artifact chunks (%d-byte text parts), all attached before the agent starts; the server alone in a", chunkBytes),
			"child process on 127.0.0.1, its CPU from the go signal until every subscriber has the completed frame;",
			fmt.Sprintf("subscribers read in this process, every frame checked; %d round(s), median by child CPU", o.rounds))
	}
	counts := []int{o.subscribers}
	if o.baseline && o.subscribers != 1 {
		counts = []int{1, o.subscribers}
	}
	failed := false
	for _, kind := range o.stores {
		var base *fanoutRow // the S=1 row of this store
		for _, s := range counts {
			var rows []fanoutRow
			row := fanoutRow{Store: kind, Subscribers: s, Chunks: o.chunks}
			for r := 1; r <= o.rounds; r++ {
				if !o.asJSON {
					fmt.Fprintf(os.Stderr, "bench: -fanout: %s, %d subscriber(s) x %d chunks, round %d...\n", kind, s, o.chunks, r)
				}
				prof := ""
				if o.cpuprofile != "" {
					prof = profilePath(o.cpuprofile, fmt.Sprintf("%s-%d-r%d", kind, s, r), len(o.stores) > 1 || len(counts) > 1 || o.rounds > 1)
				}
				rr, err := fanoutRun(kind, s, o, prof)
				rr.Round = r
				if err != nil {
					failed = true
					row.Error = fmt.Sprintf("round %d: %v", r, err)
					fmt.Fprintf(os.Stderr, "!!! bench: -fanout %s, %d subscribers: %s\n", kind, s, row.Error)
					break
				}
				rows = append(rows, rr)
			}
			if row.Error == "" {
				slices.SortFunc(rows, func(a, b fanoutRow) int { return cmp.Compare(a.ChildCPUSeconds, b.ChildCPUSeconds) })
				m := rows[(len(rows)-1)/2]
				for _, r := range rows {
					m.RoundCPUSeconds = append(m.RoundCPUSeconds, r.ChildCPUSeconds)
				}
				row = m
				if s > 1 && base != nil {
					row.Marginal = 1e6 * (row.ChildCPUSeconds - base.ChildCPUSeconds) / float64(o.chunks*(s-1))
				}
			}
			if s == 1 && row.Error == "" {
				base = &row
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	rep.Env.LoadAfter = loadAverage()
	if o.asJSON {
		if err := printJSON(out, rep); err != nil {
			return err
		}
	} else {
		printFanout(out, &rep)
	}
	if failed {
		return errors.New("-fanout: some runs failed (see above)")
	}
	return nil
}

func printFanout(w io.Writer, rep *fanoutReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "store\tsubscribers\tchunks\twall s\tchild cpu s\tcpu µs/chunk/sub\tmarginal µs/chunk/sub\tchild cpu use\tframes/s\treaders cpu s\tattach s\t")
	for _, r := range rep.Rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%d\t%d\tfailed\t-\t-\t-\t-\t-\t-\t-\t\n", r.Store, r.Subscribers, r.Chunks)
			continue
		}
		marg := "-"
		if r.Marginal != 0 {
			marg = fmt.Sprintf("%.2f", r.Marginal)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%.3f\t%.2f\t%s\t%.0f%%\t%.0f\t%.3f\t%.2f\t\n", r.Store, r.Subscribers, r.Chunks,
			r.WallSeconds, r.ChildCPUSeconds, r.CPUPerChunkSub, marg, 100*r.ChildCPUUse, r.FramesPerSec, r.ParentCPUSeconds, r.AttachSeconds)
	}
	tw.Flush()
	fmt.Fprintln(w, "(wall: from the go signal to the last subscriber's completed frame; child cpu: user + system of the")
	fmt.Fprintln(w, " server process over that span; cpu µs/chunk/sub: child cpu / (chunks x subscribers); marginal: over the")
	fmt.Fprintln(w, " 1-subscriber row, per further subscriber; child cpu use: child cpu / (wall x GOMAXPROCS); readers cpu:")
	fmt.Fprintln(w, " this process, which reads and checks every frame on the same CPUs; frames/s: chunk frames, all subscribers)")
	if rep.Rounds > 1 {
		for _, r := range rep.Rows {
			if r.Error == "" {
				fmt.Fprintf(w, "%s, %d subscribers: child cpu s per round %v (median round %d)\n", r.Store, r.Subscribers, r.RoundCPUSeconds, r.Round)
			}
		}
	}
	for _, r := range rep.Rows {
		if r.Profile != "" {
			fmt.Fprintf(w, "%s, %d subscribers: CPU profile of the child: %s\n", r.Store, r.Subscribers, r.Profile)
		}
	}
	fmt.Fprintf(w, "\nloadavg:    %s after the run\n", rep.Env.LoadAfter)
	for _, r := range rep.Rows {
		if r.Error != "" {
			fmt.Fprintf(w, "!!! ERROR: %s, %d subscribers: %s\n", r.Store, r.Subscribers, r.Error)
		}
	}
}

// fanoutRun is one round: a fresh child, one task, s subscribers.
func fanoutRun(kind string, s int, o fanoutOptions, cpuprofile string) (row fanoutRow, err error) {
	row = fanoutRow{Store: kind, Subscribers: s, Chunks: o.chunks, Profile: cpuprofile}
	var args []string
	if cpuprofile != "" {
		args = []string{"-cpuprofile", cpuprofile}
	}
	c, err := startChild(kind, args...)
	if err != nil {
		return row, err
	}
	defer func() {
		if c != nil {
			c.kill()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	id, err := startTask(ctx, c.client, c.rpc, fmt.Sprintf("fan:%d", o.chunks))
	if err != nil {
		return row, err
	}
	if err := waitWorking(ctx, c.client, c.rpc, []string{id}); err != nil {
		return row, err
	}

	type sub struct {
		stream *rawStream
		check  streamCheck
		done   time.Time // when the completed frame was read
		err    error
	}
	subs := make([]*sub, s)
	var (
		next    atomic.Int64
		open    sync.WaitGroup
		readers sync.WaitGroup
		errMu   sync.Mutex
		openErr error
	)
	defer func() {
		for _, sb := range subs {
			if sb != nil {
				sb.stream.conn.Close()
			}
		}
		readers.Wait()
	}()
	t0 := time.Now()
	for range min(o.openers, s) {
		open.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= s {
					return
				}
				st, err := subscribe(ctx, c.addr, id)
				if err == nil {
					sb := &sub{stream: st, check: streamCheck{want: o.chunks, taskID: id}}
					var ev sse.Event
					if ev, err = st.sr.Next(); err == nil {
						err = sb.check.add(ev)
					}
					if err == nil && sb.check.snapshot != a2a.TaskStateWorking {
						err = fmt.Errorf("first frame: task %v, want working", sb.check.snapshot)
					}
					if err == nil {
						subs[i] = sb
						readers.Go(func() {
							for {
								ev, err := sb.stream.sr.Next()
								if err != nil {
									sb.err = sb.check.finish(err)
									return
								}
								if err := sb.check.add(ev); err != nil {
									sb.err = err
									sb.stream.conn.Close()
									return
								}
								if sb.check.completed {
									sb.done = time.Now()
								}
							}
						})
					} else {
						st.conn.Close()
					}
				}
				if err != nil {
					errMu.Lock()
					if openErr == nil {
						openErr = fmt.Errorf("subscriber %d of %d: %w", i+1, s, err)
					}
					errMu.Unlock()
					cancel()
					return
				}
			}
		})
	}
	open.Wait()
	row.AttachSeconds = time.Since(t0).Seconds()
	if openErr != nil {
		return row, openErr
	}

	pcpu0 := cpuTime()
	g0 := time.Now()
	cpu0, err := c.cpu(ctx, "POST", "/bench/go")
	if err != nil {
		return row, err
	}
	readers.Wait()
	var last time.Time
	for i, sb := range subs {
		if sb.err != nil {
			return row, fmt.Errorf("subscriber %d of %d: %w", i+1, s, sb.err)
		}
		if sb.done.After(last) {
			last = sb.done
		}
	}
	cpu1, err := c.cpu(ctx, "GET", "/bench/cpu")
	if err != nil {
		return row, err
	}
	pcpu1 := cpuTime()
	wall := last.Sub(g0)
	cpu := cpu1 - cpu0
	row.WallSeconds = wall.Seconds()
	row.ChildCPUSeconds = cpu.Seconds()
	row.CPUPerChunkSub = float64(cpu.Nanoseconds()) / 1e3 / float64(o.chunks*s)
	row.ChildCPUUse = cpu.Seconds() / wall.Seconds() / float64(runtime.GOMAXPROCS(0))
	row.ParentCPUSeconds = (pcpu1 - pcpu0).Seconds()
	row.FramesPerSec = float64(o.chunks*s) / wall.Seconds()

	gctx, gcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer gcancel()
	t, err := getTask(gctx, c.client, c.rpc, id)
	if err != nil {
		return row, err
	}
	if err := checkTask(t, o.chunks); err != nil {
		return row, err
	}
	_, err = c.stop(30 * time.Second)
	c = nil
	return row, err
}
