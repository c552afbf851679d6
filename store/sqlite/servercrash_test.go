package sqlite_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

// serverCrashChildEnv, when set, makes TestServerKill9 the server process
// that gets killed: its value is the database path.
const serverCrashChildEnv = "A2A_SQLITE_SERVER_CRASH_CHILD"

// serverAddrLine starts the line on which the child tells its base URL.
const serverAddrLine = "server-crash-child listening on "

// crashChunk is the text of the i-th chunk the child's agent streams.
func crashChunk(i int) string { return "chunk-" + strconv.Itoa(i) }

// crashCard is the card of the child's server at base: JSON-RPC only.
func crashCard(base string) *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "crash",
		Description: "Streams chunks of one artifact until it is killed.",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: base + a2ahttp.JSONRPCPath, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
		},
		Version:            "1.0.0",
		Capabilities:       a2a.AgentCapabilities{Streaming: a2a.Ptr(true)},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{{ID: "crash", Name: "Crash", Description: "Streams.", Tags: []string{"test"}}},
	}
}

// TestServerKill9 kills, with SIGKILL, a server on SQLite whose agent is
// streaming an artifact chunk by chunk to a client over JSON-RPC, and
// checks that every chunk the client saw, up to the last frame it read
// (some after the kill, from the socket's buffers), is in the store, in
// order, none missing; that the stored task is the fold of its log; and
// that recovery finds the task orphaned and fails it, chunks intact.
func TestServerKill9(t *testing.T) {
	if path := os.Getenv(serverCrashChildEnv); path != "" {
		serverCrashChild(t, path)
		return
	}
	path := newPath(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerKill9$")
	cmd.Env = append(os.Environ(), serverCrashChildEnv+"="+path)
	// As in TestKill9, the child's failures reach the parent only through
	// its stderr, read once Wait has returned.
	var childErr bytes.Buffer
	cmd.Stderr = io.MultiWriter(os.Stderr, &childErr)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// The child exits when its stdin closes: it does not outlive this
	// test, even if the test dies before it kills it.
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	wait := func() {
		if !waited {
			waited = true
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	t.Cleanup(func() {
		in.Close()
		wait()
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if base, ok := strings.CutPrefix(sc.Text(), serverAddrLine); ok {
				addr <- base
			}
		}
		close(addr)
	}()
	var base string
	select {
	case b, ok := <-addr:
		if !ok {
			wait()
			t.Fatalf("the child ended without serving; its stderr:\n%s", childErr.Bytes())
		}
		base = b
	case <-time.After(2 * time.Minute):
		t.Fatal("the child did not start serving within 2 minutes")
	}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	c, err := client.New(ctx, base, client.WithBindings(a2a.BindingJSONRPC))
	if err != nil {
		t.Fatal(err)
	}
	killAfter := 200 + rand.N(600) // chunks seen before the kill
	var (
		id       string
		seen     int // chunks the client saw: 0 ... seen-1, checked in order
		atKill   int
		killed   bool
		streamed error // how the stream ended after the kill
	)
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("stream")}) {
		if err != nil {
			if !killed {
				t.Fatalf("the stream failed before the kill, after %d chunks: %v", seen, err)
			}
			streamed = err
			break
		}
		switch e := ev.(type) {
		case *a2a.Task:
			id = e.ID
		case *a2a.TaskStatusUpdateEvent:
			if e.Status.State != a2a.TaskStateWorking {
				t.Fatalf("the stream has %v, want only working", e.Status.State)
			}
		case *a2a.TaskArtifactUpdateEvent:
			if id == "" || e.TaskID != id {
				t.Fatalf("chunk of task %q, the stream's task is %q", e.TaskID, id)
			}
			if len(e.Artifact.Parts) != 1 {
				t.Fatalf("chunk %d has %d parts", seen, len(e.Artifact.Parts))
			}
			if got, want := e.Artifact.Text(), crashChunk(seen); got != want {
				t.Fatalf("the client saw %q after %d chunks, want %q", got, seen, want)
			}
			seen++
		default:
			t.Fatalf("unexpected frame %T", ev)
		}
		if !killed && seen == killAfter {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed, atKill = true, seen
		}
	}
	if !killed {
		t.Fatalf("the stream ended after %d chunks, before the kill", seen)
	}
	wait()
	t.Logf("killed after %d chunks; the client read %d in all; the stream ended with %v", atKill, seen, streamed)
	for _, bad := range []string{"WARNING: DATA RACE", "panic:", childFailed} {
		if bytes.Contains(childErr.Bytes(), []byte(bad)) {
			t.Errorf("the child's stderr has %q; see above", bad)
		}
	}

	s := openStore(t, path, sqlite.Options{})
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check after kill -9: %v", err)
	}
	open := store.Scope{} // no authentication: no tenant, no owner
	evs := checkCrashLog(t, ctx, s, open, id, seen)
	stored := len(evs)
	refs, err := s.Orphans(ctx, []a2a.TaskState{a2a.TaskStateWorking}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(refs, func(r store.TaskRef) bool { return r.ID == id && r.Seq == int64(stored) }) {
		t.Fatalf("task %s at seq %d is not an orphan of the killed process (orphans: %v)", id, stored, refs)
	}

	// Recovery, as a restarted server runs it, fails the orphan.
	h, err := server.NewHandler(crashCard("http://127.0.0.1"), server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		return w.Fail(ctx, "not for this test")
	}), server.WithStore(s), server.WithMaintenanceInterval(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	rep, err := h.Maintain(ctx)
	if err != nil {
		t.Fatalf("Maintain: %v", err)
	}
	if rep.Failed != 1 || rep.Resumed != 0 {
		t.Errorf("recovery %+v, want the one orphan failed", rep)
	}
	after := checkCrashLog(t, ctx, s, open, id, seen)
	if len(after) != stored+1 {
		t.Fatalf("%d events after recovery, want the %d stored and a failure", len(after), stored)
	}
	if !slices.EqualFunc(after[:stored], evs, func(a, b store.Event) bool { return a.Seq == b.Seq && bytes.Equal(a.Data, b.Data) }) {
		t.Errorf("recovery changed the events the killed process stored")
	}
	su, ok := after[stored].Payload.(*a2a.TaskStatusUpdateEvent)
	if !ok || su.Status.State != a2a.TaskStateFailed || su.Status.Message == nil || su.Status.Message.Text() == "" {
		t.Errorf("last event after recovery %+v, want failed with a reason", after[stored].Payload)
	}
	if refs, err := s.Orphans(ctx, []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking}, 100); err != nil || len(refs) != 0 {
		t.Errorf("orphans after recovery: %v, %v; want none", refs, err)
	}
}

// checkCrashLog reads task id of the killed server and checks it: seqs
// 1, 2, ... with no gap, the creation first, the chunks in the order the
// agent wrote them and at least the first seen of them, and Get's task
// the fold of the log. It returns the events.
func checkCrashLog(t *testing.T, ctx context.Context, s *sqlite.Store, scope store.Scope, id string, seen int) []store.Event {
	t.Helper()
	task, seq, err := s.Get(ctx, scope, id)
	if err != nil {
		t.Fatalf("Get(%s) after kill -9: %v", id, err)
	}
	evs, err := s.Events(ctx, scope, id, 0)
	if err != nil {
		t.Fatalf("Events(%s) after kill -9: %v", id, err)
	}
	if int64(len(evs)) != seq {
		t.Fatalf("%d events, Get says seq %d", len(evs), seq)
	}
	var fold *a2a.Task
	chunks := 0
	for i, ev := range evs {
		if ev.Seq != int64(i)+1 {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
		switch e := ev.Payload.(type) {
		case *a2a.Task:
			if i != 0 {
				t.Fatalf("event %d is a task snapshot", ev.Seq)
			}
			fold = e
			continue
		case *a2a.TaskArtifactUpdateEvent:
			if len(e.Artifact.Parts) != 1 {
				t.Fatalf("event %d: a chunk of %d parts", ev.Seq, len(e.Artifact.Parts))
			}
			if got, want := e.Artifact.Text(), crashChunk(chunks); got != want {
				t.Fatalf("event %d is chunk %q, want %q: missing or out of order", ev.Seq, got, want)
			}
			chunks++
		}
		if fold == nil {
			t.Fatalf("the log starts with %T, want the task", ev.Payload)
		}
		fold = fold.Apply(ev.Payload)
	}
	if chunks < seen {
		t.Fatalf("the store has %d chunks; the client saw %d: a chunk a client saw was lost", chunks, seen)
	}
	checkTask(t, "Get after kill -9 against the fold of Events", task, fold)
	if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != chunks {
		t.Fatalf("the task has artifacts %d, want one of %d parts", len(task.Artifacts), chunks)
	}
	return evs
}

// serverCrashChild serves an agent that streams chunks of one artifact,
// without end, on SQLite at path, over JSON-RPC on 127.0.0.1, until it is
// killed or its stdin closes.
func serverCrashChild(t *testing.T, path string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, childFailed, err)
		t.Error(err)
	}
	go func() {
		io.Copy(io.Discard, os.Stdin)
		os.Exit(3) // the parent is gone
	}()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		fail(err)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
		return
	}
	base := "http://" + ln.Addr().String()
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.Working(ctx, ""); err != nil {
			return err
		}
		for i := 0; ; i++ {
			art := a2a.Artifact{ArtifactID: "out", Parts: []a2a.Part{a2a.TextPart(crashChunk(i))}}
			if err := w.ArtifactChunk(ctx, art, i > 0, false); err != nil {
				fail(fmt.Errorf("chunk %d: %w", i, err))
				return err
			}
		}
	})
	h, err := server.NewHandler(crashCard(base), agent, server.WithStore(s), server.WithMaintenanceInterval(-1))
	if err != nil {
		fail(err)
		return
	}
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		fail(err)
		return
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Println(serverAddrLine + base)
	fail(srv.Serve(ln)) // until killed
}
