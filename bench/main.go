// Command bench measures blocking SendMessage over JSON-RPC against the
// number in DESIGN.md: our stack (server.Handler with the echo agent and the
// default memory store, behind server/jsonrpc) must reach at least half the
// throughput of a bare net/http handler that only decodes the request and
// encodes a canned completed task.
//
// Both servers and the load generator run in this one process, on
// 127.0.0.1 only. Each target gets the same closed-loop load in turn (never
// both at once): -c goroutines, each sending the next request as soon as
// the previous response is read, for -warmup and then -d. Every response is
// checked; any error is reported and makes the exit status 1. With -rounds
// N the targets are driven N times, alternating, each round with fresh
// servers, and the summary takes each target's median round.
//
//	go run ./bench                    # both targets, 64 clients, 10s each
//	go run ./bench -c 16 -d 30s -json
//	go run ./bench -rounds 3          # alternate, report the medians
//	go run ./bench -targets goa2a -cpuprofile cpu.out
//	go run ./bench -targets bare,goa2a-forget,goa2a
//
// The goa2a-forget target is goa2a with a diagnostic store that forgets
// each task once it is terminal: the difference to goa2a is what keeping
// every task in the default memory store costs (mostly garbage collection).
//
// The goa2a-rest and goa2a-grpc targets serve goa2a's Handler (the same
// echo agent and memory store) behind the HTTP+JSON and gRPC bindings, so
// that the three bindings can be read side by side; their throughput is
// also given over goa2a's (JSON-RPC). gRPC clients share -grpcconns HTTP/2
// connections (bench/grpc.go):
//
//	go run ./bench -rounds 3 -targets goa2a,goa2a-rest,goa2a-grpc
//
// The goa2a-push target measures webhook delivery (push.Deliverer) to a
// receiver in this process, against goa2a-chunks, the same agent without
// push; -push drives the two (see bench/push.go):
//
//	go run ./bench -push -rounds 3    # = -targets goa2a-chunks,goa2a-push
//	go run ./bench -push -chunks 2 -pushwait=false
//
// Four more modes measure streaming instead of -targets; each prints its
// own table (or -json), and exits 1 if a run failed or a check did not hold.
// They serve benchAgent (bench/streamutil.go; -replicas a stamping agent
// of its own) behind the JSON-RPC binding on 127.0.0.1, with a fresh store
// per run.
//
// -stream (bench/stream.go): one task streams N artifact chunks (16-byte
// text parts of one artifact) to one SendStreamingMessage client, server
// and client in this process; the time to the completed frame, chunks/s,
// each store against the memory store, and the growth exponent of the time
// from the smallest to the largest N. A run over -streamtimeout is stopped
// and reported as such:
//
//	go run ./bench -stream                                 # memory,sqlite,postgres x 1000,4000,16000
//	go run ./bench -stream -stores memory -chunkcounts 1000,10000 -rounds 3
//
// -streams N (bench/streams.go): the server's memory per open
// SubscribeToTask stream. The server runs alone in a child process (the
// bench binary run again with -child, bench/child.go); N streams, each on
// its own connection, are opened over -streamtasks tasks that stay working,
// and the child's RSS, Go heap, stacks and total Go memory are compared
// before and after, per stream. -childmemprofile writes the child's heap
// profile with every stream open:
//
//	go run ./bench -streams 10000 -stores memory,sqlite
//	go run ./bench -streams 10000 -stores memory -childmemprofile /tmp/streams.heap
//
// -fanout (bench/fanout.go): -subscribers SubscribeToTask streams of one
// task that streams -fanchunks chunks once all are attached; the server's
// CPU per chunk per subscriber, in a child process as above, with a
// 1-subscriber baseline row (-fanbaseline). -childcpuprofile profiles it:
//
//	go run ./bench -fanout -stores memory,sqlite
//	go run ./bench -fanout -subscribers 2000 -fanchunks 500 -rounds 3
//
// -replicas (bench/replicas.go): replicas A and B, two Handlers on two
// stores of one set of tasks (PostgreSQL: two Stores on one fresh schema,
// each with its own LISTEN connection, as two processes), each behind
// JSON-RPC on its own listener; an agent on A writes a task's chunks,
// -replevents paced by -reppace and -repflat flat out, each stamped with
// the time it was written, and one SubscribeToTask client on B (A->B) or
// on A (A->A, the baseline) takes the time each arrives: latency p50, p99
// and max, and events/s of one task followed, every chunk checked to
// arrive once and in order:
//
//	go run ./bench -replicas -rounds 3                     # memory,sqlite,postgres
//	go run ./bench -replicas -stores postgres -reppace 2ms -replevents 5000
//
// The output starts with the Go version, GOMAXPROCS, CPU model and date so
// it can be pasted as is into docs/performance.md.
package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// minRatio is the target of DESIGN.md: goa2a at half of bare or better.
const minRatio = 0.5

type environment struct {
	Date       string `json:"date"`
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	NumCPU     int    `json:"num_cpu"`
	CPU        string `json:"cpu"`
	// Load parameters.
	Concurrency int     `json:"concurrency"`
	Warmup      float64 `json:"warmup_seconds"`
	Duration    float64 `json:"duration_seconds"`
	Text        string  `json:"text"`
	LoadAvg     string  `json:"loadavg_before"`
	// GRPCConns is the number of client connections the clients of a
	// gRPC target share; 0 when no gRPC target runs.
	GRPCConns int `json:"grpc_conns,omitempty"`
	// GRPCWorkers is -grpcworkers when a gRPC target runs; 0 is gRPC's
	// default, a goroutine per call.
	GRPCWorkers uint `json:"grpc_workers,omitempty"`
	// GC settings from the environment, "" when unset.
	GOGC       string `json:"gogc,omitempty"`
	GOMEMLIMIT string `json:"gomemlimit,omitempty"`
}

type report struct {
	Env    environment `json:"environment"`
	Rounds int         `json:"rounds"`
	// Results has one entry per target and round, in the order run.
	Results []result `json:"results"`
	// Summary has one entry per target: the round with the median
	// throughput.
	Summary []result `json:"summary"`
	// Ratio is goa2a's median throughput over bare's; 0 unless both ran.
	Ratio    float64 `json:"ratio,omitempty"`
	MinRatio float64 `json:"min_ratio"`
	Pass     *bool   `json:"pass,omitempty"`
	// Ratios has the median throughput over bare's of every other target.
	Ratios map[string]float64 `json:"ratios,omitempty"`
	// VsMemory has the median throughput of each durable target over
	// goa2a's (the memory store) of the same run.
	VsMemory map[string]float64 `json:"vs_memory,omitempty"`
	// VsJSONRPC has the median throughput of goa2a-rest and goa2a-grpc
	// over goa2a's (the JSON-RPC binding) of the same run.
	VsJSONRPC map[string]float64 `json:"vs_jsonrpc,omitempty"`
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func main() {
	if isChild() {
		if err := runChild(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench child:", err)
			os.Exit(1)
		}
		return
	}
	var (
		concurrency = flag.Int("c", 64, "concurrent closed-loop clients")
		duration    = flag.Duration("d", 10*time.Second, "measured duration per target")
		warmup      = flag.Duration("warmup", 2*time.Second, "warmup per target, not measured")
		rounds      = flag.Int("rounds", 1, "run every target this many times, alternating, with fresh servers each round; the summary takes the median")
		asJSON      = flag.Bool("json", false, "print a JSON report instead of a table")
		targets     = flag.String("targets", "bare,goa2a", "comma-separated targets to drive, in order: bare, goa2a, goa2a-rest, goa2a-grpc, goa2a-forget, goa2a-sqlite, goa2a-postgres, goa2a-chunks, goa2a-push")
		pushMode    = flag.Bool("push", false, "measure webhook delivery: drive goa2a-chunks and goa2a-push (overrides -targets)")
		text        = flag.String("text", "hello, agent", "text of every message")
		cpuprofile  = flag.String("cpuprofile", "", "write a CPU profile of the whole process (servers and load generator; with -stream and -replicas, servers and client) to `file`")
		memprofile  = flag.String("memprofile", "", "write an allocation profile of the whole process to `file` at the end")
	)
	flag.IntVar(&pushChunks, "chunks", pushChunks, "artifact chunks per task of goa2a-chunks and goa2a-push")
	flag.BoolVar(&pushWait, "pushwait", pushWait, "goa2a-push: each client waits for its task's last notification before its next message")
	flag.IntVar(&grpcConns, "grpcconns", grpcConns, "client connections (grpc.ClientConn) shared by the clients of goa2a-grpc")
	flag.UintVar(&grpcWorkers, "grpcworkers", grpcWorkers, "diagnostic: goa2a-grpc runs calls on this many long-lived server goroutines (grpc.NumStreamWorkers) instead of one new goroutine per call; 0 is gRPC's default")
	flag.StringVar(&postgresDSN, "postgres", postgresDSN, "PostgreSQL `DSN` of the goa2a-postgres target (a fresh schema is made and dropped)")
	var (
		streamMode      = flag.Bool("stream", false, "mode: one task streams N artifact chunks to one client, per store and -chunkcounts (bench/stream.go)")
		streamsMode     = flag.Int("streams", 0, "mode: server memory per open SubscribeToTask stream, with this many streams open (bench/streams.go)")
		fanoutMode      = flag.Bool("fanout", false, "mode: server CPU per chunk per subscriber of one task (bench/fanout.go)")
		replicasMode    = flag.Bool("replicas", false, "mode: latency and events/s of one task's events appended on one replica and followed on another, beside one replica (bench/replicas.go)")
		repEvents       = flag.Int("replevents", 2000, "-replicas: chunks of a paced run (0: no paced runs)")
		repPace         = flag.Duration("reppace", time.Millisecond, "-replicas: the agent's sleep after each chunk of a paced run")
		repFlat         = flag.Int("repflat", 10000, "-replicas: chunks of a flat-out run (0: no flat-out runs)")
		stores          = flag.String("stores", "", "-stream, -streams, -fanout, -replicas: comma-separated stores: memory, sqlite, postgres (default memory,sqlite,postgres for -stream and -replicas, memory,sqlite otherwise)")
		chunkCounts     = flag.String("chunkcounts", "1000,4000,16000", "-stream: comma-separated chunk counts")
		streamTimeout   = flag.Duration("streamtimeout", 300*time.Second, "-stream: stop a run that takes longer; -streams, -fanout, -replicas: the limit of one store's (or row's, or run's) run")
		streamTasks     = flag.Int("streamtasks", 100, "-streams: tasks the streams are spread over")
		streamOpeners   = flag.Int("streamopeners", 32, "-streams, -fanout: connections being opened at once")
		streamSettle    = flag.Duration("streamsettle", time.Second, "-streams: wait before each memory sample")
		subscribers     = flag.Int("subscribers", 500, "-fanout: subscribers of the task")
		fanChunks       = flag.Int("fanchunks", 2000, "-fanout: artifact chunks the task streams")
		fanBaseline     = flag.Bool("fanbaseline", true, "-fanout: also run with 1 subscriber, the baseline row")
		childMemProfile = flag.String("childmemprofile", "", "-streams: write the child's heap profile with every stream open to `file`, and its goroutines to file.goroutines.txt (the store's name is added with several stores)")
		childCPUProfile = flag.String("childcpuprofile", "", "-fanout: write the child's CPU profile from the go signal to the last frame to `file` (store, subscribers and round are added with several runs)")
	)
	flag.Parse()
	if modes := btoi(*streamMode) + btoi(*streamsMode != 0) + btoi(*fanoutMode) + btoi(*replicasMode); modes > 0 {
		if modes > 1 {
			fmt.Fprintln(os.Stderr, "bench: -stream, -streams, -fanout and -replicas are separate modes: give one")
			os.Exit(2)
		}
		if *repEvents < 0 || *repFlat < 0 || *repEvents+*repFlat == 0 || *repPace < 0 {
			fmt.Fprintln(os.Stderr, "bench: -replevents and -repflat must not be negative, nor both 0; -reppace must not be negative")
			os.Exit(2)
		}
		if *rounds < 1 || *streamTimeout <= 0 || *streamsMode < 0 || *streamTasks < 1 || *streamOpeners < 1 || *subscribers < 1 || *fanChunks < 1 {
			fmt.Fprintln(os.Stderr, "bench: -rounds, -streams, -streamtasks, -streamopeners, -subscribers and -fanchunks must be at least 1, -streamtimeout positive")
			os.Exit(2)
		}
		defStores := "memory,sqlite"
		if *streamMode || *replicasMode {
			defStores = "memory,sqlite,postgres"
		}
		storeList := splitList(cmp.Or(*stores, defStores))
		for _, s := range storeList {
			if s != "memory" && s != "sqlite" && s != "postgres" {
				fmt.Fprintf(os.Stderr, "bench: -stores: unknown store %q (want memory, sqlite or postgres)\n", s)
				os.Exit(2)
			}
		}
		var err error
		switch {
		case *streamMode:
			var counts []int
			for _, c := range splitList(*chunkCounts) {
				n, cerr := strconv.Atoi(c)
				if cerr != nil || n < 1 {
					fmt.Fprintf(os.Stderr, "bench: -chunkcounts: %q is not a count\n", c)
					os.Exit(2)
				}
				counts = append(counts, n)
			}
			err = runStreamMode(streamOptions{stores: storeList, counts: counts, rounds: *rounds, timeout: *streamTimeout, asJSON: *asJSON, cpuprofile: *cpuprofile})
		case *replicasMode:
			err = runReplicasMode(replicasOptions{stores: storeList, events: *repEvents, pace: *repPace, flat: *repFlat, rounds: *rounds,
				paths: []string{pathSame, pathOther}, timeout: *streamTimeout, asJSON: *asJSON, cpuprofile: *cpuprofile})
		case *streamsMode != 0:
			err = runStreamsMode(streamsOptions{stores: storeList, streams: *streamsMode, tasks: *streamTasks, timeout: *streamTimeout,
				asJSON: *asJSON, memprofile: *childMemProfile, openers: *streamOpeners, settle: *streamSettle, childExitWait: 30 * time.Second})
		default:
			err = runFanoutMode(fanoutOptions{stores: storeList, subscribers: *subscribers, chunks: *fanChunks, baseline: *fanBaseline,
				rounds: *rounds, timeout: *streamTimeout, asJSON: *asJSON, cpuprofile: *childCPUProfile, openers: *streamOpeners})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *concurrency < 1 || *duration <= 0 || *warmup < 0 || *rounds < 1 || pushChunks < 1 || grpcConns < 1 {
		fmt.Fprintln(os.Stderr, "bench: -c, -rounds, -chunks and -grpcconns must be at least 1, -d positive and -warmup not negative")
		os.Exit(2)
	}
	opts := options{
		concurrency: *concurrency, duration: *duration, warmup: *warmup, rounds: *rounds,
		asJSON: *asJSON, text: *text, cpuprofile: *cpuprofile, memprofile: *memprofile,
	}
	benchText = *text
	if *pushMode {
		*targets = "goa2a-chunks,goa2a-push"
	}
	for name := range strings.SplitSeq(*targets, ",") {
		opts.targets = append(opts.targets, strings.TrimSpace(name))
	}
	if err := run(opts); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type options struct {
	concurrency            int
	duration, warmup       time.Duration
	rounds                 int
	asJSON                 bool
	targets                []string
	text                   string
	cpuprofile, memprofile string
}

var starts = map[string]func() (*testServer, error){
	"bare":           startBare,
	"goa2a":          startGoa2a,
	"goa2a-rest":     startGoa2aREST,
	"goa2a-grpc":     startGoa2aGRPC,
	"goa2a-forget":   startGoa2aForget,
	"goa2a-sqlite":   startGoa2aSQLite,
	"goa2a-postgres": startGoa2aPostgres,
	"goa2a-chunks":   startGoa2aChunks,
	"goa2a-push":     startGoa2aPush,
}

func run(o options) error {
	for _, name := range o.targets {
		if _, ok := starts[name]; !ok {
			return fmt.Errorf("unknown target %q (want bare, goa2a, goa2a-rest, goa2a-grpc, goa2a-forget, goa2a-sqlite, goa2a-postgres, goa2a-chunks or goa2a-push)", name)
		}
	}
	rep := report{
		Env: environment{
			Date:        time.Now().UTC().Format(time.RFC3339),
			GoVersion:   runtime.Version(),
			GOOS:        runtime.GOOS,
			GOARCH:      runtime.GOARCH,
			GOMAXPROCS:  runtime.GOMAXPROCS(0),
			NumCPU:      runtime.NumCPU(),
			CPU:         cpuModel(),
			Concurrency: o.concurrency,
			Warmup:      o.warmup.Seconds(),
			Duration:    o.duration.Seconds(),
			Text:        o.text,
			LoadAvg:     loadAverage(),
			GOGC:        os.Getenv("GOGC"),
			GOMEMLIMIT:  os.Getenv("GOMEMLIMIT"),
		},
		Rounds:   o.rounds,
		MinRatio: minRatio,
	}
	if slices.Contains(o.targets, "goa2a-grpc") {
		rep.Env.GRPCConns = min(grpcConns, o.concurrency)
		rep.Env.GRPCWorkers = grpcWorkers
	}
	out := os.Stdout
	if !o.asJSON {
		printHeader(out, &rep)
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

	cfg := &loadConfig{
		concurrency: o.concurrency,
		warmup:      o.warmup,
		duration:    o.duration,
		text:        o.text,
		runID:       fmt.Sprintf("bench%x", time.Now().UnixNano()&0xffffffffff),
		grpcConns:   grpcConns,
	}
	failed := false
	for round := 1; round <= o.rounds; round++ {
		results, err := runRound(cfg, o.targets, round, o.asJSON)
		if err != nil {
			return err
		}
		for _, res := range results {
			if res.Errors > 0 || (res.Push != nil && !res.Push.clean()) {
				failed = true
			}
		}
		rep.Results = append(rep.Results, results...)
	}
	summarize(&rep, failed)

	if o.memprofile != "" {
		if err := writeHeapProfile(o.memprofile); err != nil {
			return err
		}
	}
	if o.asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printResults(out, &rep)
	}
	if failed {
		return fmt.Errorf("some requests failed or notifications went wrong; the numbers above do not count")
	}
	return nil
}

// runRound starts a fresh server for every target, then drives each in
// turn and shuts it down right after, so that no target runs beside the
// heap another one kept (the goa2a memory store keeps every task).
func runRound(cfg *loadConfig, targets []string, round int, quiet bool) ([]result, error) {
	servers := make([]*testServer, len(targets))
	closeServer := func(i int) {
		if servers[i] == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = servers[i].close(ctx)
		servers[i] = nil
	}
	defer func() {
		for i := range servers {
			closeServer(i)
		}
	}()
	for i, name := range targets {
		s, err := starts[name]()
		if err != nil {
			return nil, fmt.Errorf("starting %s: %w", name, err)
		}
		servers[i] = s
	}
	var results []result
	for i, s := range servers {
		if !quiet {
			fmt.Fprintf(os.Stderr, "bench: round %d: driving %s (%v warmup + %v)...\n", round, s.name, cfg.warmup, cfg.duration)
		}
		res, err := drive(s, cfg)
		if err != nil {
			return nil, err
		}
		res.Round = round
		if res.Errors > 0 {
			fmt.Fprintf(os.Stderr, "\n!!! bench: %s: %d of %d requests FAILED; first error: %s\n\n", s.name, res.Errors, res.TotalSent, res.FirstError)
		}
		results = append(results, res)
		closeServer(i)
	}
	return results, nil
}

// summarize picks each target's median round and the ratios to bare.
func summarize(rep *report, failed bool) {
	byTarget := map[string][]result{}
	var order []string
	for _, r := range rep.Results {
		if _, ok := byTarget[r.Target]; !ok {
			order = append(order, r.Target)
		}
		byTarget[r.Target] = append(byTarget[r.Target], r)
	}
	median := map[string]result{}
	for _, name := range order {
		rs := slices.Clone(byTarget[name])
		slices.SortFunc(rs, func(a, b result) int { return cmp.Compare(a.Throughput, b.Throughput) })
		m := rs[(len(rs)-1)/2] // the lower median: never flatters
		median[name] = m
		rep.Summary = append(rep.Summary, m)
	}
	if mem, ok := median["goa2a"]; ok && mem.Throughput > 0 {
		for _, name := range []string{"goa2a-sqlite", "goa2a-postgres"} {
			if r, ok := median[name]; ok {
				if rep.VsMemory == nil {
					rep.VsMemory = make(map[string]float64)
				}
				rep.VsMemory[name] = r.Throughput / mem.Throughput
			}
		}
		for _, name := range []string{"goa2a-rest", "goa2a-grpc"} {
			if r, ok := median[name]; ok {
				if rep.VsJSONRPC == nil {
					rep.VsJSONRPC = make(map[string]float64)
				}
				rep.VsJSONRPC[name] = r.Throughput / mem.Throughput
			}
		}
	}
	bare, ok := median["bare"]
	if !ok || bare.Throughput == 0 {
		return
	}
	for _, name := range order {
		if name != "bare" {
			if rep.Ratios == nil {
				rep.Ratios = make(map[string]float64)
			}
			rep.Ratios[name] = median[name].Throughput / bare.Throughput
		}
	}
	if ours, ok := median["goa2a"]; ok {
		rep.Ratio = ours.Throughput / bare.Throughput
		pass := rep.Ratio >= minRatio && !failed
		rep.Pass = &pass
	}
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}

// cpuModel reads the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown (" + runtime.GOOS + ")"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func printHeader(w io.Writer, rep *report) {
	e := &rep.Env
	fmt.Fprintf(w, "goa2a SendMessage benchmark (go run ./bench)\n")
	fmt.Fprintf(w, "date:       %s\n", e.Date)
	fmt.Fprintf(w, "go:         %s %s/%s\n", e.GoVersion, e.GOOS, e.GOARCH)
	fmt.Fprintf(w, "cpu:        %s, %d logical CPUs, GOMAXPROCS=%d\n", e.CPU, e.NumCPU, e.GOMAXPROCS)
	if e.GOGC != "" || e.GOMEMLIMIT != "" {
		fmt.Fprintf(w, "gc:         GOGC=%q GOMEMLIMIT=%q\n", e.GOGC, e.GOMEMLIMIT)
	}
	fmt.Fprintf(w, "load:       %d closed-loop clients, %gs warmup + %gs per target, one target at a time, %d round(s),\n", e.Concurrency, e.Warmup, e.Duration, rep.Rounds)
	fmt.Fprintf(w, "            blocking SendMessage over HTTP/1.1 keep-alive on 127.0.0.1, text %q\n", e.Text)
	if e.GRPCConns > 0 {
		fmt.Fprintf(w, "            (gRPC: over HTTP/2, %d client connection(s) shared by the %d clients)\n", e.GRPCConns, e.Concurrency)
		if e.GRPCWorkers > 0 {
			fmt.Fprintf(w, "            (gRPC diagnostic: calls run on %d server stream workers)\n", e.GRPCWorkers)
		}
	}
	fmt.Fprintf(w, "            (servers and load generator share this process and its CPUs)\n")
	fmt.Fprintf(w, "loadavg:    %s before the run\n\n", e.LoadAvg)
}

func printResults(w io.Writer, rep *report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\ttarget\trequests\terrors\treq/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\tcpu µs/req\tallocs/req\tB/req\tresp B\tcpu use\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t%.1f\t%.0f\t%d\t%.0f%%\t\n",
			r.Round, r.Target, r.Requests, r.Errors, r.Throughput, r.P50, r.P90, r.P99, r.Max,
			r.CPUPerReq, r.AllocsPer, r.BytesPer, r.RespBytes, 100*r.CPUUtil)
	}
	tw.Flush()
	fmt.Fprintln(w, "(requests: completed in the measured window; errors: failed requests, warmup included;")
	fmt.Fprintln(w, " cpu, allocs and bytes per request are for the whole process: server plus load generator;")
	fmt.Fprintln(w, " cpu use: process CPU time over the window's wall time x GOMAXPROCS; well under 100%")
	fmt.Fprintln(w, " means something else on the machine took CPU, and that round's numbers are suspect)")
	printPush(w, rep)
	fmt.Fprintln(w)
	for _, r := range rep.Results {
		if r.Target != "bare" {
			fmt.Fprintf(w, "round %d %s store: %d tasks kept of %d created (every request sent, warmup and tail included);\n", r.Round, r.Target, r.TasksStored, r.TotalSent)
			fmt.Fprintf(w, "    heap in use after the run and a GC: %.1f MiB", r.HeapMiB)
			if r.TasksStored > 0 {
				fmt.Fprintf(w, " (%.0f B per stored task)", r.HeapMiB*(1<<20)/float64(r.TasksStored))
			}
			fmt.Fprintln(w)
		}
	}
	if rep.Rounds > 1 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "median round per target:")
		for _, r := range rep.Summary {
			fmt.Fprintf(w, "    %-14s %8.0f req/s  p50 %.3f ms  p99 %.3f ms  cpu %.1f µs/req  (round %d)\n", r.Target, r.Throughput, r.P50, r.P99, r.CPUPerReq, r.Round)
		}
	}
	fmt.Fprintln(w)
	for _, r := range rep.Summary {
		if ratio, ok := rep.Ratios[r.Target]; ok && r.Target != "goa2a" {
			fmt.Fprintf(w, "%s/bare throughput: %.1f%% (diagnostic)\n", r.Target, 100*ratio)
		}
	}
	for _, r := range rep.Summary {
		if v, ok := rep.VsMemory[r.Target]; ok {
			fmt.Fprintf(w, "%s/goa2a (memory store) throughput: %.1f%%\n", r.Target, 100*v)
		}
	}
	for _, r := range rep.Summary {
		if v, ok := rep.VsJSONRPC[r.Target]; ok {
			fmt.Fprintf(w, "%s/goa2a (JSON-RPC) throughput: %.1f%%\n", r.Target, 100*v)
		}
	}
	for _, r := range rep.Results {
		if r.Errors > 0 {
			fmt.Fprintf(w, "!!! ERRORS: round %d %s: %d of %d requests failed; first error: %s\n", r.Round, r.Target, r.Errors, r.TotalSent, r.FirstError)
		}
	}
	if rep.Pass != nil {
		verdict := "PASS"
		if !*rep.Pass {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "goa2a/bare throughput: %.1f%% (target >= %.0f%%): %s\n", 100*rep.Ratio, 100*rep.MinRatio, verdict)
	}
}
