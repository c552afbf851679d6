//go:build unix

package cli_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	mrand "math/rand/v2"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/internal/sse"
	"github.com/jackc/pgx/v5"
)

// TestReplicasPostgres runs three a2a serve processes on one fresh
// PostgreSQL schema, as three replicas behind a load balancer, and checks
// that they follow each other: streams and blocking sends on any of them,
// a stream resumed with Last-Event-ID on another, cancels sent to one that
// does not run the agent, and a replica killed with SIGKILL whose tasks
// the others take over.
func TestReplicasPostgres(t *testing.T) {
	t.Parallel()
	b := make([]byte, 6)
	rand.Read(b)
	schema := "a2a_replicas_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, postgresDSN())
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	// The agent writes as many lines as the message says, one each 20 ms,
	// each line an artifact chunk.
	script := `read n; i=0; while [ "$i" -lt "$n" ]; do echo "line $i"; i=$((i+1)); sleep 0.02; done`
	args := []string{"--exec", "sh -c '" + script + "'", "--store", "postgres:" + postgresDSN(), "--store-schema", schema,
		"--lease", "3s", "--maintenance-interval", "1s"}
	var rs []*replica
	for i := range 3 {
		rs = append(rs, startReplica(t, "r"+strconv.Itoa(i), args...))
	}
	// The banner names the replica and the lease.
	for i, r := range rs {
		r.stdout.waitMatch(t, regexp.MustCompile(`(replica     "r`+strconv.Itoa(i)+`") of the servers on this schema: .*after --lease 3s`))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()

	t.Run("streams on every replica", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				order := mrand.Perm(3)
				runner, others := rs[order[0]], []*replica{rs[order[1]], rs[order[2]]}
				const n = 30
				got := make(chan streamed, 3)
				var taskID string
				first := true
				all := streamed{}
				for f, err := range runner.stream(ctx, "SendStreamingMessage", sendParams(strconv.Itoa(n)), "") {
					if err != nil {
						t.Errorf("stream on %s: %v", runner.name, err)
						return
					}
					if first {
						first = false
						taskID = f.taskID
						for _, o := range others {
							go func() {
								got <- collectStream(o.stream(ctx, "SubscribeToTask", map[string]any{"id": taskID}, ""), o.name)
							}()
						}
					}
					all.add(f)
				}
				got <- all
				for range 3 {
					s := <-got
					if s.err != nil {
						t.Errorf("task %s: %v", taskID, s.err)
						continue
					}
					if s.state != a2a.TaskStateCompleted || s.text != agentLines(0, n) {
						t.Errorf("task %s: the stream on %s ended %v with %q, want completed with %q", taskID, s.from, s.state, s.text, agentLines(0, n))
					}
				}
				agree(t, ctx, rs, taskID, a2a.TaskStateCompleted, agentLines(0, n))
			})
		}
		wg.Wait()
	})

	t.Run("resume on a third replica", func(t *testing.T) {
		const n = 60
		var (
			taskID string
			text   streamed
		)
		for f, err := range rs[0].stream(ctx, "SendStreamingMessage", sendParams(strconv.Itoa(n)), "") {
			if err != nil {
				t.Fatal(err)
			}
			taskID = f.taskID
			text.add(f)
			if text.chunks == 5 {
				break // the connection drops
			}
		}
		for _, r := range rs[1:] {
			last := taskID + ":" + strconv.FormatInt(text.seq, 10)
			for f, err := range r.stream(ctx, "SubscribeToTask", map[string]any{"id": taskID}, last) {
				if err != nil {
					t.Fatalf("resuming on %s after %s: %v", r.name, last, err)
				}
				if f.seq != text.seq+1 {
					t.Fatalf("resuming on %s after %s: frame %d", r.name, last, f.seq)
				}
				if _, ok := f.ev.(*a2a.Task); ok {
					t.Fatalf("resuming on %s: a snapshot, want only the frames after %s", r.name, last)
				}
				text.add(f)
				if r == rs[1] && text.chunks == 15 {
					break // and drops again
				}
			}
		}
		if text.state != a2a.TaskStateCompleted || text.text != agentLines(0, n) {
			t.Errorf("over three replicas the stream ended %v with %q, want completed with %q", text.state, text.text, agentLines(0, n))
		}
		agree(t, ctx, rs, taskID, a2a.TaskStateCompleted, agentLines(0, n))
	})

	t.Run("cancel on a replica that does not run the agent", func(t *testing.T) {
		taskID, seen := startLong(t, ctx, rs[0], rs[1:])
		c := rs[2].client(t, ctx)
		if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: taskID}); err != nil {
			t.Fatalf("CancelTask on r2: %v", err)
		}
		for range 2 {
			if s := <-seen; s.err != nil || s.state != a2a.TaskStateCanceled {
				t.Errorf("the stream on %s ended %v, %v; want canceled", s.from, s.state, s.err)
			}
		}
		agree(t, ctx, rs, taskID, a2a.TaskStateCanceled, "")
		// The agent's program on r0 stopped: no execution is left.
		waitUntil(t, "r0's agent to stop", func() bool { return rs[0].executions(t) == 0 })
	})

	t.Run("blocking sends on every replica", func(t *testing.T) {
		var wg sync.WaitGroup
		for range 9 {
			wg.Go(func() {
				r := rs[mrand.IntN(3)]
				res, err := r.client(t, ctx).SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("4")})
				if err != nil {
					t.Errorf("SendMessage on %s: %v", r.name, err)
					return
				}
				task, ok := res.Result.(*a2a.Task)
				if !ok || task.Status.State != a2a.TaskStateCompleted || artifactText(task) != agentLines(0, 4) {
					t.Errorf("SendMessage on %s returned %+v", r.name, res.Result)
					return
				}
				agree(t, ctx, rs, task.ID, a2a.TaskStateCompleted, agentLines(0, 4))
			})
		}
		wg.Wait()
	})

	t.Run("a replica killed mid-task", func(t *testing.T) {
		type long struct {
			id   string
			seen chan streamed
		}
		var tasks []long
		for range 3 {
			id, seen := startLong(t, ctx, rs[0], rs[1:])
			tasks = append(tasks, long{id, seen})
		}
		rs[0].kill()
		for _, lt := range tasks {
			for range 2 {
				s := <-lt.seen
				if s.err != nil || s.state != a2a.TaskStateFailed {
					t.Errorf("task %s: the stream on %s ended %v, %v; want failed", lt.id, s.from, s.state, s.err)
					continue
				}
				if !strings.Contains(s.status, `"r0"`) {
					t.Errorf("task %s failed with %q, which does not name replica r0", lt.id, s.status)
				}
				// Every chunk a client saw is stored.
				task, err := rs[1].client(t, ctx).GetTask(ctx, &a2a.GetTaskRequest{ID: lt.id})
				if err != nil {
					t.Fatal(err)
				}
				if stored := artifactText(task); !strings.HasPrefix(stored, s.text) {
					t.Errorf("task %s: %s saw %q, the store has %q", lt.id, s.from, s.text, stored)
				}
			}
			agree(t, ctx, rs[1:], lt.id, a2a.TaskStateFailed, "")
		}
	})
}

// replica is one a2a serve process of TestReplicasPostgres.
type replica struct {
	name   string
	cmd    *exec.Cmd
	stdout lines
	stderr lines
	base   string
	exited chan struct{}
	c      *client.Client
}

func startReplica(t *testing.T, name string, args ...string) *replica {
	t.Helper()
	r := &replica{name: name, exited: make(chan struct{})}
	r.cmd = exec.Command(binary, append([]string{"serve", "--addr", "127.0.0.1:0", "--replica", name, "--grace", "5s"}, args...)...)
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.cmd.Wait(); close(r.exited) }()
	t.Cleanup(func() {
		r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(30 * time.Second):
			r.kill()
		}
		if t.Failed() {
			t.Logf("replica %s's log:\n%s", name, r.stderr.String())
		}
	})
	card := r.stdout.waitMatch(t, regexp.MustCompile(`agent card  (http://\S+)`))
	r.base = strings.TrimSuffix(card, "/.well-known/agent-card.json")
	c, err := client.New(t.Context(), r.base)
	if err != nil {
		t.Fatalf("client of %s: %v", name, err)
	}
	r.c = c
	return r
}

func (r *replica) kill() {
	r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.exited
}

func (r *replica) client(*testing.T, context.Context) *client.Client { return r.c }

// executions reads the replica's gauge of running agent calls.
func (r *replica) executions(t *testing.T) float64 {
	resp, err := http.Get(r.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^a2a_agent_executions (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no a2a_agent_executions in the metrics of %s:\n%s", r.name, b)
	}
	v, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// waitUntil polls cond until it holds, for a minute at most.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// frame is one event of a raw JSON-RPC stream, with its SSE id.
type frame struct {
	taskID string
	seq    int64
	ev     a2a.Event
}

// stream calls a streaming JSON-RPC method on the replica and yields its
// frames, so that the test sees the SSE ids a client resumes with.
func (r *replica) stream(ctx context.Context, method string, params any, lastEventID string) iter.Seq2[frame, error] {
	return func(yield func(frame, error) bool) {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+"/a2a/jsonrpc", bytes.NewReader(body))
		if err != nil {
			yield(frame{}, err)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("A2A-Version", a2a.ProtocolVersion)
		if lastEventID != "" {
			req.Header.Set("Last-Event-ID", lastEventID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			yield(frame{}, err)
			return
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			b, _ := io.ReadAll(resp.Body)
			yield(frame{}, fmt.Errorf("%s on %s: %s %s: %s", method, r.name, resp.Status, ct, b))
			return
		}
		rd := sse.NewReader(resp.Body, 1<<20)
		for {
			ev, err := rd.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(frame{}, fmt.Errorf("%s on %s: %w", method, r.name, err))
				return
			}
			var msg struct {
				Result *a2a.StreamResponse
				Error  *struct {
					Code    int
					Message string
				}
			}
			if err := json.Unmarshal(ev.Data, &msg); err != nil {
				yield(frame{}, fmt.Errorf("%s on %s: frame %q: %w", method, r.name, ev.Data, err))
				return
			}
			if msg.Error != nil || msg.Result == nil {
				yield(frame{}, fmt.Errorf("%s on %s: error frame %s", method, r.name, ev.Data))
				return
			}
			i := strings.LastIndexByte(ev.ID, ':')
			seq, _ := strconv.ParseInt(ev.ID[i+1:], 10, 64)
			if i < 0 || seq < 1 {
				yield(frame{}, fmt.Errorf("%s on %s: frame id %q", method, r.name, ev.ID))
				return
			}
			if !yield(frame{taskID: ev.ID[:i], seq: seq, ev: msg.Result.Event}, nil) {
				return
			}
		}
	}
}

// streamed is what a stream carried: the task's state, status text and
// artifact text as its frames built them.
type streamed struct {
	from   string
	seq    int64 // of the last frame
	state  a2a.TaskState
	status string
	text   string
	chunks int
	err    error
}

// add applies f, and fails the stream when f is not the next in order.
func (s *streamed) add(f frame) {
	if s.err != nil {
		return
	}
	if s.seq != 0 && f.seq <= s.seq {
		s.err = fmt.Errorf("frame %d after %d: out of order or repeated", f.seq, s.seq)
		return
	}
	s.seq = f.seq
	switch e := f.ev.(type) {
	case *a2a.Task:
		s.state, s.text = e.Status.State, artifactText(e)
	case *a2a.TaskStatusUpdateEvent:
		s.state = e.Status.State
		if e.Status.Message != nil {
			s.status = e.Status.Message.Text()
		}
	case *a2a.TaskArtifactUpdateEvent:
		s.chunks++
		if e.Append {
			s.text += e.Artifact.Text()
		} else {
			s.text = e.Artifact.Text()
		}
	}
}

func collectStream(stream iter.Seq2[frame, error], from string) streamed {
	s := streamed{from: from}
	for f, err := range stream {
		if err != nil {
			s.err = err
			break
		}
		s.add(f)
	}
	return s
}

func sendParams(text string) map[string]any {
	return map[string]any{"message": client.TextMessage(text)}
}

// agentLines is the output of the agent's script for lines from to n-1.
func agentLines(from, n int) string {
	var b strings.Builder
	for i := from; i < n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func artifactText(t *a2a.Task) string {
	var b strings.Builder
	for _, a := range t.Artifacts {
		b.WriteString(a.Text())
	}
	return b.String()
}

// startLong starts a task that runs for minutes on runner, streamed there,
// and subscribes to it on each of others once it has written a few
// chunks; what each subscription carries comes on the returned channel.
func startLong(t *testing.T, ctx context.Context, runner *replica, others []*replica) (string, chan streamed) {
	t.Helper()
	seen := make(chan streamed, len(others))
	ids := make(chan string, 1)
	go func() {
		var s streamed
		for f, err := range runner.stream(ctx, "SendStreamingMessage", sendParams("100000"), "") {
			if err != nil {
				break // the runner may be killed
			}
			if s.seq == 0 {
				ids <- f.taskID
			}
			s.add(f)
		}
	}()
	var id string
	select {
	case id = <-ids:
	case <-ctx.Done():
		t.Fatal("no task")
	}
	for _, o := range others {
		go func() { seen <- collectStream(o.stream(ctx, "SubscribeToTask", map[string]any{"id": id}, ""), o.name) }()
	}
	// Let it write some chunks first.
	waitUntil(t, "chunks of the long task", func() bool {
		task, err := others[0].client(t, ctx).GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		return err == nil && strings.Count(artifactText(task), "\n") >= 5
	})
	return id, seen
}

// agree checks that GetTask on every replica gives the task in state, with
// the artifact text text unless it is empty.
func agree(t *testing.T, ctx context.Context, rs []*replica, id string, state a2a.TaskState, text string) {
	t.Helper()
	for _, r := range rs {
		task, err := r.client(t, ctx).GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Errorf("GetTask(%s) on %s: %v", id, r.name, err)
			continue
		}
		if task.Status.State != state || (text != "" && artifactText(task) != text) {
			t.Errorf("GetTask(%s) on %s: %v with %q, want %v with %q", id, r.name, task.Status.State, artifactText(task), state, text)
		}
	}
}
