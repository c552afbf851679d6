package main

// What the -stream, -streams and -fanout modes share: the bench agent, the
// stores, JSON-RPC calls, SSE streams over raw connections, and the checks
// of a stream's frames.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/sse"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
	"github.com/goa2a/a2a/store/postgres"
	"github.com/goa2a/a2a/store/sqlite"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// chunkBytes is the size of the text part of every artifact chunk.
const chunkBytes = 16

// chunkArtifactID is the id of the one artifact the bench agent streams.
const chunkArtifactID = "stream"

// appendChunkText appends the text of chunk i (from 0): "chunk-0000000042",
// 16 bytes, so that a client can tell the chunks apart and check their order.
func appendChunkText(b []byte, i int) []byte {
	b = append(b, "chunk-"...)
	s := strconv.Itoa(i)
	for range 10 - len(s) {
		b = append(b, '0')
	}
	return append(b, s...)
}

func chunkText(i int) string { return string(appendChunkText(nil, i)) }

// benchAgent is the agent of the streaming modes. The text of the message
// says what it does:
//
//	chunks:N  working, N chunks of one artifact, completed (-stream)
//	hold      working, then waits until its context ends (-streams)
//	fan:N     working, waits for gate (or its context), then as chunks:N (-fanout)
//
// Each chunk is one text part of chunkBytes bytes; the first chunk opens the
// artifact, the others append to it, and the last one has lastChunk.
type benchAgent struct {
	gate <-chan struct{} // fan: closed by the go signal; nil never opens
}

// Execute implements [server.Agent].
func (a benchAgent) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	text := req.Message.Text()
	cmd, arg, _ := strings.Cut(text, ":")
	var n int
	if cmd == "chunks" || cmd == "fan" {
		var err error
		if n, err = strconv.Atoi(arg); err != nil || n < 1 {
			return w.Reject(ctx, "bench agent: want chunks:N or fan:N with N >= 1, got "+strconv.Quote(text))
		}
	} else if text != "hold" {
		return w.Reject(ctx, "bench agent: unknown command "+strconv.Quote(text))
	}
	if err := w.Working(ctx, ""); err != nil {
		return err
	}
	switch cmd {
	case "hold":
		<-ctx.Done()
		return ctx.Err()
	case "fan":
		select {
		case <-a.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	buf := make([]byte, 0, chunkBytes)
	for i := range n {
		buf = appendChunkText(buf[:0], i)
		art := a2a.Artifact{ArtifactID: chunkArtifactID, Parts: []a2a.Part{a2a.TextPart(string(buf))}}
		if err := w.ArtifactChunk(ctx, art, i > 0, i == n-1); err != nil {
			return err
		}
	}
	return w.Complete(ctx, "")
}

// openStore opens a fresh store of the given kind: memory, sqlite (a new
// file in a new temporary directory, sqlite.Options{}) or postgres (a new
// schema of postgresDSN). release closes it and removes the file or the
// schema; call it after the Handler on the store is closed.
func openStore(ctx context.Context, kind string) (st store.Store, release func() error, err error) {
	switch kind {
	case "memory":
		return memory.New(), func() error { return nil }, nil
	case "sqlite":
		dir, err := os.MkdirTemp("", "a2a-bench-")
		if err != nil {
			return nil, nil, err
		}
		s, err := sqlite.Open(ctx, filepath.Join(dir, "tasks.db"), sqlite.Options{})
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
		return s, func() error { return errors.Join(s.Close(), os.RemoveAll(dir)) }, nil
	case "postgres":
		schema := fmt.Sprintf("bench_%d_%d", os.Getpid(), time.Now().UnixNano())
		s, err := postgres.Open(ctx, postgresDSN, postgres.Options{Schema: schema})
		if err != nil {
			return nil, nil, fmt.Errorf("PostgreSQL at %q (-postgres): %w", postgresDSN, err)
		}
		return s, func() error {
			err := s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			pool, cerr := pgxpool.New(ctx, postgresDSN)
			if cerr != nil {
				return errors.Join(err, cerr)
			}
			defer pool.Close()
			_, derr := pool.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			return errors.Join(err, derr)
		}, nil
	}
	return nil, nil, fmt.Errorf("unknown store %q (want memory, sqlite or postgres)", kind)
}

// streamLimits lifts the Handler's count of open streams (10,000 by
// default) so that -streams can open more; nothing else differs from the
// defaults. The binding is mounted without a client key, so the
// per-caller limits do not apply.
var streamLimits = server.Limits{MaxStreams: -1}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// rpcSeq numbers the JSON-RPC calls of this process.
var rpcSeq atomic.Int64

// rpcCall makes one JSON-RPC call and decodes its result into result.
func rpcCall(ctx context.Context, client *http.Client, url, method string, params any, result any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, rpcSeq.Add(1), method, p)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", a2a.ProtocolVersion)
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("%s: reading the response: %w", method, err)
	}
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("%s: HTTP %d: %w: %.300s", method, res.StatusCode, err, b)
	}
	if env.Error != nil || env.Result == nil {
		return fmt.Errorf("%s: error response: %.300s", method, b)
	}
	if err := json.Unmarshal(env.Result, result); err != nil {
		return fmt.Errorf("%s: decoding the result: %w: %.300s", method, err, env.Result)
	}
	return nil
}

// messageParams returns SendMessage params with one user text message.
func messageParams(text string, returnImmediately bool) map[string]any {
	p := map[string]any{
		"message": map[string]any{
			"messageId": fmt.Sprintf("bench-%d-%d", os.Getpid(), rpcSeq.Add(1)),
			"role":      "ROLE_USER",
			"parts":     []any{map[string]any{"text": text}},
		},
	}
	if returnImmediately {
		p["configuration"] = map[string]any{"returnImmediately": true}
	}
	return p
}

// startTask sends text with returnImmediately and returns the task's id.
func startTask(ctx context.Context, client *http.Client, url, text string) (string, error) {
	var res a2a.SendMessageResponse
	if err := rpcCall(ctx, client, url, "SendMessage", messageParams(text, true), &res); err != nil {
		return "", err
	}
	t, ok := res.Result.(*a2a.Task)
	if !ok {
		return "", fmt.Errorf("SendMessage %q: result is %T, not a task", text, res.Result)
	}
	return t.ID, nil
}

// getTask is GetTask.
func getTask(ctx context.Context, client *http.Client, url, id string) (*a2a.Task, error) {
	var t a2a.Task
	if err := rpcCall(ctx, client, url, "GetTask", map[string]any{"id": id}, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// waitWorking polls GetTask until every task is working.
func waitWorking(ctx context.Context, client *http.Client, url string, ids []string) error {
	for _, id := range ids {
		for {
			t, err := getTask(ctx, client, url, id)
			if err != nil {
				return err
			}
			if t.Status.State == a2a.TaskStateWorking {
				break
			}
			if t.Status.State != a2a.TaskStateSubmitted {
				return fmt.Errorf("task %s is %v, want working", id, t.Status.State)
			}
			select {
			case <-time.After(5 * time.Millisecond):
			case <-ctx.Done():
				return fmt.Errorf("task %s never started working: %w", id, ctx.Err())
			}
		}
	}
	return nil
}

// frameKind is the member of a frame's StreamResponse.
type frameKind int

const (
	frameOther frameKind = iota
	frameTask
	frameMessage
	frameStatus
	frameArtifact
	frameError
)

func (k frameKind) String() string {
	return [...]string{"other", "task", "message", "statusUpdate", "artifactUpdate", "error"}[k]
}

var resultPrefix = []byte(`"result":{"`)

// classify tells the kind of a JSON-RPC stream frame with byte searches:
// the binding writes the envelope's id before its result, so the first
// `"result":{"` is the envelope's.
func classify(ev sse.Event) frameKind {
	if ev.Type == "error" {
		return frameError
	}
	i := bytes.Index(ev.Data, resultPrefix)
	if i < 0 {
		if bytes.Contains(ev.Data, []byte(`"error":`)) {
			return frameError
		}
		return frameOther
	}
	rest := ev.Data[i+len(resultPrefix):]
	for _, k := range []frameKind{frameTask, frameMessage, frameStatus, frameArtifact} {
		if len(rest) > len(k.String()) && string(rest[:len(k.String())]) == k.String() && rest[len(k.String())] == '"' {
			return k
		}
	}
	return frameOther
}

// decodeFrame decodes the StreamResponse of a JSON-RPC stream frame.
func decodeFrame(data []byte) (a2a.Event, error) {
	var env struct {
		Result *a2a.StreamResponse `json:"result"`
		Error  json.RawMessage     `json:"error"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("decoding a frame: %w: %.300s", err, data)
	}
	if env.Error != nil || env.Result == nil {
		return nil, fmt.Errorf("error frame: %.300s", data)
	}
	return env.Result.Event, nil
}

// streamCheck follows the frames of one stream of a task of the bench
// agent and checks them: the first frame is the task; every frame has the
// SSE id "taskId:seq" of that task with seq strictly increasing; then the
// artifact chunks 0, 1, ... in order (each frame holding its chunk's text,
// the first without append, the last with lastChunk), status updates
// between; the stream's last frame is the completed status, after exactly
// want chunks.
type streamCheck struct {
	want      int    // chunks expected
	taskID    string // from the first frame, or set before it
	seq       int64
	frames    int
	artifacts int
	completed bool
	snapshot  a2a.TaskState // state of the first frame's task
	buf       []byte
}

// add checks one frame.
func (c *streamCheck) add(ev sse.Event) error {
	c.frames++
	if c.completed {
		return fmt.Errorf("frame %d after the completed status: %.200s", c.frames, ev.Data)
	}
	i := strings.LastIndexByte(ev.ID, ':')
	seq, err := strconv.ParseInt(ev.ID[i+1:], 10, 64)
	if i < 1 || err != nil {
		return fmt.Errorf("frame %d: SSE id %q is not taskId:seq", c.frames, ev.ID)
	}
	if c.frames == 1 && c.taskID == "" {
		c.taskID = ev.ID[:i]
	}
	if ev.ID[:i] != c.taskID {
		return fmt.Errorf("frame %d: SSE id %q is not of task %s", c.frames, ev.ID, c.taskID)
	}
	if seq <= c.seq {
		return fmt.Errorf("frame %d: seq %d after %d", c.frames, seq, c.seq)
	}
	c.seq = seq
	kind := classify(ev)
	if c.frames == 1 {
		if kind != frameTask {
			return fmt.Errorf("first frame is %v, want the task: %.200s", kind, ev.Data)
		}
		e, err := decodeFrame(ev.Data)
		if err != nil {
			return err
		}
		t, ok := e.(*a2a.Task)
		if !ok || t.ID != c.taskID {
			return fmt.Errorf("first frame: %T, not task %s", e, c.taskID)
		}
		c.snapshot = t.Status.State
		return nil
	}
	switch kind {
	case frameArtifact:
		if c.artifacts >= c.want {
			return fmt.Errorf("frame %d: more than %d chunks", c.frames, c.want)
		}
		c.buf = append(c.buf[:0], `"text":"`...)
		c.buf = appendChunkText(c.buf, c.artifacts)
		c.buf = append(c.buf, '"')
		if !bytes.Contains(ev.Data, c.buf) {
			return fmt.Errorf("frame %d: not chunk %d (%s): %.200s", c.frames, c.artifacts, c.buf, ev.Data)
		}
		appendFlag := bytes.Contains(ev.Data, []byte(`"append":true`))
		last := bytes.Contains(ev.Data, []byte(`"lastChunk":true`))
		if appendFlag != (c.artifacts > 0) || last != (c.artifacts == c.want-1) {
			return fmt.Errorf("frame %d: chunk %d of %d with append %v, lastChunk %v: %.200s", c.frames, c.artifacts, c.want, appendFlag, last, ev.Data)
		}
		c.artifacts++
	case frameStatus:
		e, err := decodeFrame(ev.Data)
		if err != nil {
			return err
		}
		su, ok := e.(*a2a.TaskStatusUpdateEvent)
		if !ok {
			return fmt.Errorf("frame %d: %T, want a status update", c.frames, e)
		}
		switch su.Status.State {
		case a2a.TaskStateCompleted:
			if c.artifacts != c.want {
				return fmt.Errorf("completed after %d chunks, want %d", c.artifacts, c.want)
			}
			c.completed = true
		case a2a.TaskStateSubmitted, a2a.TaskStateWorking:
		default:
			return fmt.Errorf("frame %d: task %v", c.frames, su.Status.State)
		}
	default:
		return fmt.Errorf("frame %d is %v: %.300s", c.frames, kind, ev.Data)
	}
	return nil
}

// finish checks the stream ended after the completed status.
func (c *streamCheck) finish(err error) error {
	if !errors.Is(err, io.EOF) {
		return fmt.Errorf("after %d frames (%d chunks): %w", c.frames, c.artifacts, err)
	}
	if !c.completed {
		return fmt.Errorf("the stream ended after %d frames (%d of %d chunks) without the completed status", c.frames, c.artifacts, c.want)
	}
	return nil
}

// checkTask checks a completed task of the bench agent: one artifact of
// want parts, the chunks in order.
func checkTask(t *a2a.Task, want int) error {
	if t.Status.State != a2a.TaskStateCompleted {
		return fmt.Errorf("GetTask: task %s is %v, want completed", t.ID, t.Status.State)
	}
	if len(t.Artifacts) != 1 || t.Artifacts[0].ArtifactID != chunkArtifactID {
		return fmt.Errorf("GetTask: task %s has %d artifacts, want one %q", t.ID, len(t.Artifacts), chunkArtifactID)
	}
	a := &t.Artifacts[0]
	if len(a.Parts) != want {
		return fmt.Errorf("GetTask: the artifact has %d parts, want %d", len(a.Parts), want)
	}
	text := a.Text()
	if len(text) != want*chunkBytes {
		return fmt.Errorf("GetTask: the artifact has %d bytes of text, want %d", len(text), want*chunkBytes)
	}
	for i := range want {
		if got := text[i*chunkBytes : (i+1)*chunkBytes]; got != chunkText(i) {
			return fmt.Errorf("GetTask: part %d is %q, want %q", i, got, chunkText(i))
		}
	}
	return nil
}

// rawStream is one stream over its own connection, written and read by
// hand: far less client memory than an http.Transport per connection.
type rawStream struct {
	conn net.Conn
	sr   *sse.Reader
}

// openRawStream dials addr ("host:port"), POSTs one JSON-RPC call of a
// streaming method to path and reads the response headers. The response
// must be 200 text/event-stream.
func openRawStream(ctx context.Context, addr, path, method string, params any) (*rawStream, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	body := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, rpcSeq.Add(1), method, p)
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	req := fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nA2A-Version: %s\r\nContent-Length: %d\r\n\r\n%s",
		path, addr, a2a.ProtocolVersion, len(body), body)
	if _, err := conn.Write(req); err != nil {
		conn.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(conn, 4096)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("%s: reading the response: %w", method, err)
	}
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), sse.ContentType) {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 1000))
		conn.Close()
		return nil, fmt.Errorf("%s: HTTP %d %s: %.300s", method, res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	return &rawStream{conn: conn, sr: sse.NewReader(res.Body, 0)}, nil
}

// subscribe opens a SubscribeToTask stream of task id on the JSON-RPC
// endpoint of the server at addr.
func subscribe(ctx context.Context, addr, id string) (*rawStream, error) {
	return openRawStream(ctx, addr, jsonrpcPath, "SubscribeToTask", map[string]any{"id": id})
}

// procStatus reads a field of /proc/<pid>/status in bytes ("VmRSS"); 0
// where there is no /proc.
func procStatus(pid, field string) int64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != field {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		if len(f) > 1 && f[1] == "kB" {
			n <<= 10
		}
		return n
	}
	return 0
}

// modeEnv is the environment the streaming modes print first.
type modeEnv struct {
	Date       string `json:"date"`
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	NumCPU     int    `json:"num_cpu"`
	CPU        string `json:"cpu"`
	LoadBefore string `json:"loadavg_before"`
	LoadAfter  string `json:"loadavg_after"`
	FileLimit  uint64 `json:"rlimit_nofile,omitempty"`
	GOGC       string `json:"gogc,omitempty"`
	GOMEMLIMIT string `json:"gomemlimit,omitempty"`
}

func newModeEnv() modeEnv {
	return modeEnv{
		Date:       time.Now().UTC().Format(time.RFC3339),
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		NumCPU:     runtime.NumCPU(),
		CPU:        cpuModel(),
		LoadBefore: loadAverage(),
		GOGC:       os.Getenv("GOGC"),
		GOMEMLIMIT: os.Getenv("GOMEMLIMIT"),
	}
}

// printModeHeader prints the title, the environment and the load lines.
func printModeHeader(w io.Writer, title string, e *modeEnv, load ...string) {
	fmt.Fprintln(w, title)
	fmt.Fprintf(w, "date:       %s\n", e.Date)
	fmt.Fprintf(w, "go:         %s %s/%s\n", e.GoVersion, e.GOOS, e.GOARCH)
	fmt.Fprintf(w, "cpu:        %s, %d logical CPUs, GOMAXPROCS=%d\n", e.CPU, e.NumCPU, e.GOMAXPROCS)
	if e.GOGC != "" || e.GOMEMLIMIT != "" {
		fmt.Fprintf(w, "gc:         GOGC=%q GOMEMLIMIT=%q\n", e.GOGC, e.GOMEMLIMIT)
	}
	for i, l := range load {
		if i == 0 {
			fmt.Fprintf(w, "load:       %s\n", l)
		} else {
			fmt.Fprintf(w, "            %s\n", l)
		}
	}
	if e.FileLimit > 0 {
		fmt.Fprintf(w, "nofile:     %d (RLIMIT_NOFILE, raised to the hard limit in every process)\n", e.FileLimit)
	}
	fmt.Fprintf(w, "loadavg:    %s before the run\n\n", e.LoadBefore)
}

// printJSON prints v indented.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
