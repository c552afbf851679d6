package main

// The server of -streams and -fanout runs in a child process, so that its
// memory and CPU are measured apart from the clients: the bench binary
// runs itself (os.Executable) as
//
//	bench -child serve -store memory|sqlite|postgres [-cpuprofile file]
//
// The child serves benchAgent through server.Handler on the chosen store
// behind the JSON-RPC binding on 127.0.0.1, prints "listening host:port"
// on stdout, and exits when its stdin ends (the parent closed it, or died)
// or on SIGTERM, closing the Handler (which ends the streams and cancels
// the agents) and removing its store. Beside the binding it serves:
//
//	GET  /bench/mem   memory after runtime.GC and debug.FreeOSMemory (memSample)
//	GET  /bench/cpu   the process's CPU time so far (cpuSample); stops -cpuprofile
//	POST /bench/go    opens the gate fan:N tasks wait at; answers the CPU time
//	                  just before (and starts -cpuprofile)
//	GET  /bench/heap  a heap profile after runtime.GC
//	GET  /bench/goroutines  the goroutine profile as text (debug=1)

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/jsonrpc"
)

// memSample is the child's memory at one moment, after a collection and
// returning free memory to the OS.
type memSample struct {
	RSS         int64  `json:"rss_bytes"`          // VmRSS of /proc/self/status
	HeapInuse   uint64 `json:"heap_inuse_bytes"`   // /memory/classes/heap/objects + unused: spans in use
	HeapObjects uint64 `json:"heap_objects_bytes"` // /memory/classes/heap/objects: live objects (and dead not yet swept)
	Stacks      uint64 `json:"stacks_bytes"`       // /memory/classes/heap/stacks: goroutine stacks
	Total       uint64 `json:"go_total_bytes"`     // /memory/classes/total: everything the runtime mapped
	Released    uint64 `json:"released_bytes"`     // /memory/classes/heap/released: mapped, returned to the OS
	Goroutines  uint64 `json:"goroutines"`
}

// cpuSample is the child's CPU time, user and system.
type cpuSample struct {
	CPUNanos int64 `json:"cpu_ns"`
}

var memMetrics = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/sched/goroutines:goroutines",
}

// sampleMemory collects, returns free memory to the OS and reads the
// process's memory.
func sampleMemory() memSample {
	runtime.GC()
	debug.FreeOSMemory()
	ss := make([]metrics.Sample, len(memMetrics))
	for i, name := range memMetrics {
		ss[i].Name = name
	}
	metrics.Read(ss)
	v := func(i int) uint64 {
		if ss[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return ss[i].Value.Uint64()
	}
	return memSample{
		RSS:         procStatus("self", "VmRSS"),
		HeapObjects: v(0),
		HeapInuse:   v(0) + v(1),
		Stacks:      v(2),
		Total:       v(3),
		Released:    v(4),
		Goroutines:  v(5),
	}
}

// isChild reports whether the process was started as a child server.
func isChild() bool { return len(os.Args) > 1 && (os.Args[1] == "-child" || os.Args[1] == "--child") }

// runChild is the child process.
func runChild(args []string) error {
	fs := flag.NewFlagSet("bench -child", flag.ContinueOnError)
	role := fs.String("child", "", "what the child does: serve")
	kind := fs.String("store", "memory", "store: memory, sqlite or postgres")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile from POST /bench/go to GET /bench/cpu to `file`")
	fs.StringVar(&postgresDSN, "postgres", postgresDSN, "PostgreSQL `DSN`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *role != "serve" {
		return fmt.Errorf("-child %q: want serve", *role)
	}
	if _, err := raiseFileLimit(); err != nil {
		return fmt.Errorf("raising RLIMIT_NOFILE: %w", err)
	}
	ctx := context.Background()
	st, release, err := openStore(ctx, *kind)
	if err != nil {
		return err
	}
	ln, base, err := listen()
	if err != nil {
		return errors.Join(err, release())
	}
	gate := make(chan struct{})
	h, err := server.NewHandler(echo.Card(base+jsonrpcPath, base+restPath), benchAgent{gate: gate},
		server.WithStore(st), server.WithLimits(streamLimits))
	if err != nil {
		ln.Close()
		return errors.Join(err, release())
	}

	var (
		openGate  sync.Once
		profMu    sync.Mutex
		profFile  *os.File
		profError error
	)
	mux := http.NewServeMux()
	mux.Handle("POST "+jsonrpcPath, jsonrpc.NewHandler(h))
	mux.HandleFunc("GET /bench/mem", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, sampleMemory())
	})
	mux.HandleFunc("GET /bench/cpu", func(w http.ResponseWriter, r *http.Request) {
		s := cpuSample{CPUNanos: int64(cpuTime())}
		profMu.Lock()
		defer profMu.Unlock()
		if profFile != nil {
			pprof.StopCPUProfile()
			profError = errors.Join(profError, profFile.Close())
			profFile = nil
		}
		if profError != nil {
			http.Error(w, "cpu profile: "+profError.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, s)
	})
	mux.HandleFunc("POST /bench/go", func(w http.ResponseWriter, r *http.Request) {
		profMu.Lock()
		if *cpuprofile != "" && profFile == nil && profError == nil {
			f, err := os.Create(*cpuprofile)
			if err == nil {
				if err = pprof.StartCPUProfile(f); err != nil {
					f.Close()
				} else {
					profFile = f
				}
			}
			profError = err
		}
		profMu.Unlock()
		s := cpuSample{CPUNanos: int64(cpuTime())}
		openGate.Do(func() { close(gate) })
		writeJSON(w, s)
	})
	mux.HandleFunc("GET /bench/heap", func(w http.ResponseWriter, r *http.Request) {
		runtime.GC()
		w.Header().Set("Content-Type", "application/octet-stream")
		if err := pprof.Lookup("heap").WriteTo(w, 0); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	mux.HandleFunc("GET /bench/goroutines", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := pprof.Lookup("goroutine").WriteTo(w, 1); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Printf("listening %s\n", ln.Addr())

	// Run until stdin ends or a signal.
	stop, cancel := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer cancel()
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-stop.Done():
	case <-eof:
	case err := <-served:
		return errors.Join(fmt.Errorf("serving: %w", err), release())
	}
	cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
	defer ccancel()
	err = h.Close(cctx)
	err = errors.Join(err, srv.Close())
	profMu.Lock()
	if profFile != nil {
		pprof.StopCPUProfile()
		err = errors.Join(err, profFile.Close())
	}
	profMu.Unlock()
	return errors.Join(err, release())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// childProc is a child server seen from the parent.
type childProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	addr   string // host:port
	base   string // http://host:port
	rpc    string // the JSON-RPC endpoint
	pid    int
	client *http.Client // control calls and unary A2A calls
	done   chan struct{}
	err    error // of Wait, once done is closed
}

// startChild starts a child server on a fresh store of kind.
func startChild(kind string, args ...string) (*childProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, append([]string{"-child", "serve", "-store", kind, "-postgres", postgresDSN}, args...)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	pw.Close()
	c := &childProc{
		cmd: cmd, stdin: stdin, pid: cmd.Process.Pid, done: make(chan struct{}),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8, DisableCompression: true}},
	}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	line := make(chan string, 1)
	go func() {
		br := bufio.NewReader(pr)
		l, _ := br.ReadString('\n')
		line <- l
		io.Copy(os.Stderr, br)
		pr.Close()
	}()
	select {
	case l := <-line:
		addr, ok := strings.CutPrefix(strings.TrimSpace(l), "listening ")
		if !ok {
			c.kill()
			return nil, fmt.Errorf("child server (%s): it printed %q, not its address: %v", kind, l, c.err)
		}
		c.addr, c.base, c.rpc = addr, "http://"+addr, "http://"+addr+jsonrpcPath
	case <-time.After(60 * time.Second):
		c.kill()
		return nil, fmt.Errorf("child server (%s): no address within 60s", kind)
	}
	return c, nil
}

// kill ends the child at once if it still runs.
func (c *childProc) kill() {
	select {
	case <-c.done:
		return
	default:
	}
	c.cmd.Process.Kill()
	<-c.done
}

// stop closes the child's stdin and waits for it to exit, which it must
// do cleanly within timeout.
func (c *childProc) stop(timeout time.Duration) (time.Duration, error) {
	defer c.client.CloseIdleConnections()
	t0 := time.Now()
	c.stdin.Close()
	select {
	case <-c.done:
	case <-time.After(timeout):
		c.kill()
		return time.Since(t0), fmt.Errorf("child server %d did not exit within %v of its stdin closing; killed", c.pid, timeout)
	}
	if c.err != nil {
		return time.Since(t0), fmt.Errorf("child server %d: %w", c.pid, c.err)
	}
	return time.Since(t0), nil
}

// get fetches a control endpoint into v.
func (c *childProc) control(ctx context.Context, method, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		return err
	}
	res, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d: %.300s", method, path, res.StatusCode, b)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(b, v)
}

func (c *childProc) mem(ctx context.Context) (memSample, error) {
	var s memSample
	err := c.control(ctx, http.MethodGet, "/bench/mem", &s)
	return s, err
}

func (c *childProc) cpu(ctx context.Context, method, path string) (time.Duration, error) {
	var s cpuSample
	err := c.control(ctx, method, path, &s)
	return time.Duration(s.CPUNanos), err
}

// heapProfile writes the child's heap profile to path.
func (c *childProc) heapProfile(ctx context.Context, path string) error {
	return c.download(ctx, "/bench/heap", path)
}

// download writes what GET endpoint answers to path.
func (c *childProc) download(ctx context.Context, endpoint, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+endpoint, nil)
	if err != nil {
		return err
	}
	res, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", endpoint, res.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, res.Body)
	return errors.Join(err, f.Close())
}

// profilePath is path for the only store, or path with the store's name
// before its extension when there are several.
func profilePath(path, kind string, several bool) string {
	if !several {
		return path
	}
	if i := strings.LastIndexByte(path, '.'); i > strings.LastIndexByte(path, '/') {
		return path[:i] + "." + kind + path[i:]
	}
	return path + "." + kind
}
