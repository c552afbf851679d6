//go:build unix

package cli_test

import (
	"context"
	"errors"
	"io"
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
	"github.com/goa2a/a2a/internal/proctest"
)

// lines collects what a process writes, for a test to wait on.
type lines struct {
	mu   sync.Mutex
	text strings.Builder
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.text.String()
}

// waitMatch waits for re to match the output and returns the first group.
func (l *lines) waitMatch(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if m := re.FindStringSubmatch(l.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no match for %s in:\n%s", re, l.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func getStatus(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeSIGTERM runs the a2a binary, opens a stream and a blocking
// send against a command that would run for 30s, and sends SIGTERM: /readyz
// turns 503, both calls end (the stream with an error frame, the send with
// an error) instead of hanging, the commands are killed, and the process
// exits 0 within the grace period.
func TestServeSIGTERM(t *testing.T) {
	t.Parallel()
	const grace = 3 * time.Second
	cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(), "--ops-addr", "127.0.0.1:0", "--grace", grace.String(),
		"--exec", `sh -c 'echo $$; exec sleep 30'`)
	var stdout, stderr lines
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed when waitErr is set
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
	})

	cardURL := stdout.waitMatch(t, regexp.MustCompile(`agent card  (http://\S+)`))
	ops := stdout.waitMatch(t, regexp.MustCompile(`health      (http://\S+)/healthz`))
	base := strings.TrimSuffix(cardURL, "/.well-known/agent-card.json")
	ctx := context.WithoutCancel(t.Context())
	c, err := client.New(ctx, base)
	if err != nil {
		t.Fatal(err)
	}

	type outcome struct {
		last any
		err  error
	}
	pidc := make(chan int, 1)
	streamc := make(chan outcome, 1)
	go func() {
		var o outcome
		for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("stream")}) {
			if err != nil {
				o.err = err
				break
			}
			o.last = ev
			if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
				if pid, err := strconv.Atoi(strings.TrimSpace(a.Artifact.Text())); err == nil {
					pidc <- pid
				}
			}
		}
		streamc <- o
	}()
	sendc := make(chan outcome, 1)
	go func() {
		resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("blocking")})
		if err != nil {
			sendc <- outcome{err: err}
			return
		}
		sendc <- outcome{last: resp.Result}
	}()
	var pid int
	select {
	case pid = <-pidc:
	case <-time.After(15 * time.Second):
		t.Fatalf("no pid from the stream\n%s", stderr.String())
	}
	execs := regexp.MustCompile(`(?m)^a2a_agent_executions 2$`)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(ops + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if execs.Match(b) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the blocking send never ran:\n%s", b)
		}
	}
	if code := getStatus(ops + "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz %d before SIGTERM", code)
	}

	signaled := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(grace); getStatus(ops+"/readyz") != http.StatusServiceUnavailable; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("/readyz never said 503")
		}
	}

	waitOutcome := func(what string, ch <-chan outcome) outcome {
		select {
		case o := <-ch:
			return o
		case <-time.After(grace + 5*time.Second):
			t.Fatalf("%s hangs after SIGTERM", what)
			return outcome{}
		}
	}
	if o := waitOutcome("the stream", streamc); !errors.Is(o.err, a2a.ErrUnavailable) && !errors.Is(o.err, a2a.ErrInternal) {
		t.Errorf("stream ended with %+v, %v; want a shutdown error frame", o.last, o.err)
	}
	if o := waitOutcome("the blocking send", sendc); o.err == nil {
		t.Errorf("blocking send returned %+v", o.last)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("a2a serve exited with %v\n%s", waitErr, stderr.String())
		}
	case <-time.After(grace + 5*time.Second):
		t.Fatal("a2a serve did not exit")
	}
	if d := time.Since(signaled); d > grace {
		t.Errorf("exit %v after SIGTERM, grace %v", d, grace)
	}
	if exists, _ := proctest.State(pid); exists {
		t.Errorf("command %d still running after exit", pid)
	}
	if out := stdout.String(); !strings.Contains(out, "stopping: letting 2 running task(s) finish (up to 3s)\nstopped\n") {
		t.Errorf("stdout:\n%s", out)
	}
	if !strings.Contains(stderr.String(), `msg="grace period over: canceling running tasks" running_tasks=2`) {
		t.Errorf("logs:\n%s", stderr.String())
	}
}
