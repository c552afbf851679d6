package main

// -streams N: the server's memory per open SubscribeToTask stream.
//
// For each store of -stores: a child server (bench/child.go) on a fresh
// store. The parent starts -streamtasks tasks of the "hold" agent
// (SendMessage with returnImmediately; the agent sets working and waits
// until its context ends) and waits until all are working, takes the
// child's memory, then opens N SubscribeToTask streams spread round-robin
// over the tasks, each over its own HTTP/1.1 connection written by hand,
// and reads each one's first frame (the task snapshot, working). With all
// open and idle it takes the child's memory again: bytes per stream are
// (after - before) / N of VmRSS, the Go heap in use, goroutine stacks and
// everything the Go runtime mapped. Each sample follows runtime.GC and
// debug.FreeOSMemory in the child. Then the child is told to stop (which
// ends the streams and cancels the tasks) and must exit within 30s.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/goa2a/a2a/a2a"
)

type streamsOptions struct {
	stores        []string
	streams       int
	tasks         int
	timeout       time.Duration
	asJSON        bool
	memprofile    string
	openers       int
	settle        time.Duration
	childExitWait time.Duration
}

type streamsRow struct {
	Store       string    `json:"store"`
	Streams     int       `json:"streams"`
	Tasks       int       `json:"tasks"`
	OpenSeconds float64   `json:"open_seconds"` // opening all streams and reading their first frames
	Before      memSample `json:"before"`
	After       memSample `json:"after"`
	// Per stream: (after - before) / streams.
	RSSPerStream        float64 `json:"rss_bytes_per_stream"`
	HeapPerStream       float64 `json:"heap_inuse_bytes_per_stream"`
	StacksPerStream     float64 `json:"stacks_bytes_per_stream"`
	TotalPerStream      float64 `json:"go_total_bytes_per_stream"`
	GoroutinesPerStream float64 `json:"goroutines_per_stream"`
	// ExitSeconds is how long the child took to exit once told.
	ExitSeconds float64 `json:"exit_seconds"`
	Profile     string  `json:"heap_profile,omitempty"`
	Error       string  `json:"error,omitempty"`
}

type streamsReport struct {
	Env  modeEnv      `json:"environment"`
	Rows []streamsRow `json:"results"`
}

func runStreamsMode(o streamsOptions) error {
	rep := streamsReport{Env: newModeEnv()}
	lim, err := raiseFileLimit()
	if err != nil {
		return fmt.Errorf("raising RLIMIT_NOFILE: %w", err)
	}
	rep.Env.FileLimit = lim
	if lim > 0 && uint64(o.streams)+100 > lim {
		return fmt.Errorf("-streams %d needs more open files than RLIMIT_NOFILE allows (%d)", o.streams, lim)
	}
	out := os.Stdout
	if !o.asJSON {
		printModeHeader(out, fmt.Sprintf("goa2a open-stream memory benchmark (go run ./bench -streams %d)", o.streams), &rep.Env,
			fmt.Sprintf("%d SubscribeToTask streams over JSON-RPC (SSE), each on its own HTTP/1.1 connection, spread over", o.streams),
			fmt.Sprintf("%d working tasks of an agent that holds them open; the server alone in a child process on 127.0.0.1;", o.tasks),
			"memory of the child with every stream open and idle minus before the first, after GC + FreeOSMemory")
	}
	failed := false
	for _, kind := range o.stores {
		if !o.asJSON {
			fmt.Fprintf(os.Stderr, "bench: -streams: %s: %d streams over %d tasks...\n", kind, o.streams, o.tasks)
		}
		row, err := streamsRun(kind, o, len(o.stores) > 1)
		if err != nil {
			failed = true
			row.Error = err.Error()
			fmt.Fprintf(os.Stderr, "!!! bench: -streams %s: %v\n", kind, err)
		}
		rep.Rows = append(rep.Rows, row)
	}
	rep.Env.LoadAfter = loadAverage()
	if o.asJSON {
		if err := printJSON(out, rep); err != nil {
			return err
		}
	} else {
		printStreams(out, &rep)
	}
	if failed {
		return errors.New("-streams: some runs failed (see above)")
	}
	return nil
}

func mib(b float64) float64 { return b / (1 << 20) }

func printStreams(w io.Writer, rep *streamsReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "store\tstreams\ttasks\topen s\tRSS B/stream\theap B/stream\tstacks B/stream\tGo total B/stream\tgoroutines/stream\t")
	for _, r := range rep.Rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%d\t%d\tfailed\t-\t-\t-\t-\t-\t\n", r.Store, r.Streams, r.Tasks)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%.0f\t%.0f\t%.0f\t%.0f\t%.2f\t\n", r.Store, r.Streams, r.Tasks, r.OpenSeconds,
			r.RSSPerStream, r.HeapPerStream, r.StacksPerStream, r.TotalPerStream, r.GoroutinesPerStream)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "store\tsample\tRSS MiB\theap MiB\tstacks MiB\tGo total MiB\treleased MiB\tgoroutines\t")
	for _, r := range rep.Rows {
		if r.Error != "" {
			continue
		}
		for _, s := range []struct {
			name string
			m    memSample
		}{{"before", r.Before}, {"after", r.After}} {
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t\n", r.Store, s.name, mib(float64(s.m.RSS)), mib(float64(s.m.HeapInuse)),
				mib(float64(s.m.Stacks)), mib(float64(s.m.Total)), mib(float64(s.m.Released)), s.m.Goroutines)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "(B/stream: (after - before) / streams; RSS: VmRSS of the child; heap: Go heap spans in use;")
	fmt.Fprintln(w, " stacks: goroutine stacks; Go total: all memory the Go runtime mapped (/memory/classes/total),")
	fmt.Fprintln(w, " released pages included; open s: opening every stream and reading its snapshot frame)")
	fmt.Fprintln(w)
	for _, r := range rep.Rows {
		if r.Error == "" {
			fmt.Fprintf(w, "%s: the child exited %.2fs after being told to stop, with %d streams open\n", r.Store, r.ExitSeconds, r.Streams)
		}
		if r.Profile != "" {
			fmt.Fprintf(w, "%s: heap profile of the child with every stream open: %s (go tool pprof -top -sample_index=inuse_space %s),\n", r.Store, r.Profile, r.Profile)
			fmt.Fprintf(w, "    its goroutines: %s.goroutines.txt\n", r.Profile)
		}
	}
	fmt.Fprintf(w, "loadavg:    %s after the run\n", rep.Env.LoadAfter)
	for _, r := range rep.Rows {
		if r.Error != "" {
			fmt.Fprintf(w, "!!! ERROR: %s: %s\n", r.Store, r.Error)
		}
	}
}

func streamsRun(kind string, o streamsOptions, several bool) (row streamsRow, err error) {
	row = streamsRow{Store: kind, Streams: o.streams, Tasks: o.tasks}
	c, err := startChild(kind)
	if err != nil {
		return row, err
	}
	var conns []net.Conn
	defer func() {
		if c != nil {
			c.kill()
		}
		for _, cn := range conns {
			cn.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()

	ids := make([]string, o.tasks)
	for i := range ids {
		if ids[i], err = startTask(ctx, c.client, c.rpc, "hold"); err != nil {
			return row, err
		}
	}
	if err := waitWorking(ctx, c.client, c.rpc, ids); err != nil {
		return row, err
	}
	time.Sleep(o.settle)
	if row.Before, err = c.mem(ctx); err != nil {
		return row, err
	}

	conns = make([]net.Conn, o.streams)
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errMu   sync.Mutex
		openErr error
	)
	t0 := time.Now()
	for range o.openers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= o.streams {
					return
				}
				conn, err := openFirstFrame(ctx, c.addr, ids[i%len(ids)])
				if err != nil {
					errMu.Lock()
					if openErr == nil {
						openErr = fmt.Errorf("stream %d of %d: %w", i+1, o.streams, err)
					}
					errMu.Unlock()
					cancel()
					return
				}
				conns[i] = conn
			}
		})
	}
	wg.Wait()
	row.OpenSeconds = time.Since(t0).Seconds()
	if openErr != nil {
		return row, openErr
	}
	time.Sleep(o.settle)
	if row.After, err = c.mem(ctx); err != nil {
		return row, err
	}
	n := float64(o.streams)
	row.RSSPerStream = float64(row.After.RSS-row.Before.RSS) / n
	row.HeapPerStream = (float64(row.After.HeapInuse) - float64(row.Before.HeapInuse)) / n
	row.StacksPerStream = (float64(row.After.Stacks) - float64(row.Before.Stacks)) / n
	row.TotalPerStream = (float64(row.After.Total) - float64(row.Before.Total)) / n
	row.GoroutinesPerStream = (float64(row.After.Goroutines) - float64(row.Before.Goroutines)) / n
	if o.memprofile != "" {
		p := profilePath(o.memprofile, kind, several)
		if err := c.heapProfile(ctx, p); err != nil {
			return row, fmt.Errorf("heap profile: %w", err)
		}
		if err := c.download(ctx, "/bench/goroutines", p+".goroutines.txt"); err != nil {
			return row, fmt.Errorf("goroutine profile: %w", err)
		}
		row.Profile = p
	}
	if err := checkOpen(conns); err != nil {
		return row, err
	}
	d, err := c.stop(o.childExitWait)
	c = nil
	row.ExitSeconds = d.Seconds()
	return row, err
}

// checkOpen checks that no stream has ended: a read of each connection
// must time out (or find a keep-alive comment), never end.
func checkOpen(conns []net.Conn) error {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range 64 {
		wg.Go(func() {
			var b [512]byte
			for {
				i := int(next.Add(1)) - 1
				if i >= len(conns) {
					return
				}
				cn := conns[i]
				cn.SetReadDeadline(time.Now().Add(2 * time.Millisecond))
				_, err := cn.Read(b[:])
				cn.SetReadDeadline(time.Time{})
				if err != nil && !isTimeout(err) {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("stream %d ended before the measurement was over: %w", i+1, err)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return first
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// openFirstFrame subscribes to task id and reads the first frame, which
// must be the working task. It returns the connection, open, with no
// deadline; its reader is dropped (the rest is never read).
func openFirstFrame(ctx context.Context, addr, id string) (net.Conn, error) {
	octx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	s, err := subscribe(octx, addr, id)
	if err != nil {
		return nil, err
	}
	ev, err := s.sr.Next()
	if err != nil {
		s.conn.Close()
		return nil, fmt.Errorf("reading the first frame: %w", err)
	}
	check := streamCheck{taskID: id}
	if err := check.add(ev); err != nil {
		s.conn.Close()
		return nil, err
	}
	if check.snapshot != a2a.TaskStateWorking {
		s.conn.Close()
		return nil, fmt.Errorf("first frame: task %v, want working", check.snapshot)
	}
	s.conn.SetDeadline(time.Time{})
	return s.conn, nil
}
