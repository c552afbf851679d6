//go:build unix

package execagent_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/agents/execagent"
)

// chunk is one call of an EmitFunc.
type chunk struct {
	text string
	last bool
}

// collect runs c and records the chunks it emits.
func collect(t *testing.T, ctx context.Context, c execagent.Command, stdin string) (*execagent.Result, []chunk, error) {
	t.Helper()
	var chunks []chunk
	var in io.Reader // nil: no input
	if stdin != "" {
		in = strings.NewReader(stdin)
	}
	r, err := c.Run(ctx, in, func(text string, last bool) error {
		chunks = append(chunks, chunk{text, last})
		return nil
	})
	return r, chunks, err
}

func sh(script string) execagent.Command {
	return execagent.Command{Args: []string{"/bin/sh", "-c", script}}
}

// checkChunks checks the EmitFunc contract: exactly one last chunk, at the
// end, and returns the whole text.
func checkChunks(t *testing.T, chunks []chunk) string {
	t.Helper()
	var b strings.Builder
	for i, c := range chunks {
		if c.last != (i == len(chunks)-1) {
			t.Errorf("chunk %d of %d: last=%v", i, len(chunks), c.last)
		}
		b.WriteString(c.text)
	}
	return b.String()
}

func TestRunOutput(t *testing.T) {
	t.Parallel()
	r, chunks, err := collect(t, t.Context(), sh("echo one; echo two"), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := checkChunks(t, chunks); got != "one\ntwo\n" {
		t.Errorf("output %q", got)
	}
	if !r.Success() || r.ExitCode != 0 || r.OutputLines != 2 || r.OutputBytes != 8 || r.Status() != "exit status 0" {
		t.Errorf("result %+v", r)
	}
}

func TestRunStdin(t *testing.T) {
	t.Parallel()
	_, chunks, err := collect(t, t.Context(), execagent.Command{Args: []string{"cat"}}, "hello\nworld\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := checkChunks(t, chunks); got != "hello\nworld\n" {
		t.Errorf("output %q", got)
	}
}

func TestRunNoOutput(t *testing.T) {
	t.Parallel()
	r, chunks, err := collect(t, t.Context(), execagent.Command{Args: []string{"true"}}, "")
	if err != nil || len(chunks) != 0 || !r.Success() {
		t.Errorf("chunks %+v, result %+v, err %v", chunks, r, err)
	}
}

// TestRunBatches: a burst of lines becomes a few chunks, not one per line.
func TestRunBatches(t *testing.T) {
	t.Parallel()
	r, chunks, err := collect(t, t.Context(), sh(`i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done`), "")
	if err != nil {
		t.Fatal(err)
	}
	out := checkChunks(t, chunks)
	if r.OutputLines != 2000 || strings.Count(out, "\n") != 2000 {
		t.Fatalf("%d lines, result %+v", strings.Count(out, "\n"), r)
	}
	if len(chunks) > 200 {
		t.Errorf("%d chunks for 2000 lines written in a burst", len(chunks))
	}
	for i, c := range chunks[:len(chunks)-1] {
		if !strings.HasSuffix(c.text, "\n") {
			t.Errorf("chunk %d does not end at a line boundary: %q", i, c.text)
		}
	}
}

// TestRunPaced: lines far apart in time go out as they come, and the end
// of output after a pause is an empty last chunk.
func TestRunPaced(t *testing.T) {
	t.Parallel()
	_, chunks, err := collect(t, t.Context(), sh("echo a; sleep 0.3; echo b; sleep 0.3"), "")
	if err != nil {
		t.Fatal(err)
	}
	want := []chunk{{"a\n", false}, {"b\n", false}, {"", true}}
	if fmt.Sprint(chunks) != fmt.Sprint(want) {
		t.Errorf("chunks %+v, want %+v", chunks, want)
	}
}

func TestRunLongLine(t *testing.T) {
	t.Parallel()
	// 100,000 bytes without a newline, then one.
	r, chunks, err := collect(t, t.Context(), sh(`head -c 100000 /dev/zero | tr '\0' x; echo`), "")
	if err != nil {
		t.Fatal(err)
	}
	out := checkChunks(t, chunks)
	if out != strings.Repeat("x", 100000)+"\n" || r.OutputBytes != 100001 {
		t.Fatalf("%d bytes of output, result %+v", len(out), r)
	}
	for i, c := range chunks {
		if len(c.text) > 32<<10 {
			t.Errorf("chunk %d has %d bytes", i, len(c.text))
		}
	}
}

func TestRunTruncates(t *testing.T) {
	t.Parallel()
	c := sh("echo 0123456789abcdef; echo more")
	c.MaxOutput = 10
	r, chunks, err := collect(t, t.Context(), c, "")
	if err != nil {
		t.Fatal(err)
	}
	out := checkChunks(t, chunks)
	want := "0123456789\n[output truncated: 10 of 22 bytes shown]\n"
	if out != want || !r.Truncated || r.OutputBytes != 22 || !r.Success() {
		t.Errorf("output %q, want %q; result %+v", out, want, r)
	}
}

// TestRunObserve: Observe sees all the output, also what is not forwarded.
func TestRunObserve(t *testing.T) {
	t.Parallel()
	var seen []byte
	c := sh("echo 0123456789abcdef; echo more")
	c.MaxOutput = 10
	c.Observe = func(b []byte) { seen = append(seen, b...) }
	if _, _, err := collect(t, t.Context(), c, ""); err != nil {
		t.Fatal(err)
	}
	if string(seen) != "0123456789abcdef\nmore\n" {
		t.Errorf("observed %q", seen)
	}
}

func TestRunFailure(t *testing.T) {
	t.Parallel()
	r, chunks, err := collect(t, t.Context(), sh(`echo out; i=1; while [ $i -le 30 ]; do echo "err $i" >&2; i=$((i+1)); done; exit 3`), "")
	if err != nil {
		t.Fatal(err)
	}
	if out := checkChunks(t, chunks); out != "out\n" {
		t.Errorf("output %q", out)
	}
	var want []string
	for i := 11; i <= 30; i++ {
		want = append(want, fmt.Sprintf("err %d", i))
	}
	if r.Success() || r.ExitCode != 3 || r.Status() != "exit status 3" || r.Stderr != strings.Join(want, "\n") {
		t.Errorf("result %+v", r)
	}
}

func TestRunStderrTailBounded(t *testing.T) {
	t.Parallel()
	// Ten lines of 1,000 bytes: the tail keeps whole lines within 4 KiB.
	r, _, err := collect(t, t.Context(), sh(`i=0; while [ $i -lt 10 ]; do head -c 1000 /dev/zero | tr '\0' e >&2; echo >&2; i=$((i+1)); done; exit 1`), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Stderr) > execagent.StderrTailBytes || strings.Count(r.Stderr, "\n") != 3 || !strings.HasPrefix(r.Stderr, "eee") {
		t.Errorf("stderr tail of %d bytes, %d lines", len(r.Stderr), strings.Count(r.Stderr, "\n")+1)
	}
}

func TestRunMergeStderr(t *testing.T) {
	t.Parallel()
	c := sh("echo a; echo b >&2; echo c")
	c.MergeStderr = true
	r, chunks, err := collect(t, t.Context(), c, "")
	if err != nil {
		t.Fatal(err)
	}
	if out := checkChunks(t, chunks); out != "a\nb\nc\n" || r.Stderr != "a\nb\nc" {
		t.Errorf("output %q, tail %q", out, r.Stderr)
	}
}

func TestRunDirAndEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := sh(`pwd; echo "$GREETING"`)
	c.Dir, c.Env = dir, []string{"GREETING=first", "GREETING=hello"}
	_, chunks, err := collect(t, t.Context(), c, "")
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	if out := checkChunks(t, chunks); out != real+"\nhello\n" && out != dir+"\nhello\n" {
		t.Errorf("output %q", out)
	}
}

func TestRunTimeout(t *testing.T) {
	t.Parallel()
	c := execagent.Command{Args: []string{"sleep", "30"}, Timeout: 100 * time.Millisecond}
	r, _, err := collect(t, t.Context(), c, "")
	if err != nil {
		t.Fatal(err)
	}
	// Killed, not left to end its 30 s: the signal says so, no clock.
	if !r.TimedOut || r.Success() || r.Signal != "killed" || !strings.HasPrefix(r.Status(), "timed out after") {
		t.Errorf("result %+v", r)
	}
}

func TestRunNotFound(t *testing.T) {
	t.Parallel()
	r, _, err := collect(t, t.Context(), execagent.Command{Args: []string{"/nonexistent/program"}}, "")
	if err == nil || r != nil {
		t.Errorf("result %+v, err %v", r, err)
	}
	if _, err := (&execagent.Command{}).Run(t.Context(), nil, nil); !errors.Is(err, execagent.ErrNoProgram) {
		t.Errorf("no args: %v", err)
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    execagent.Command
		ok   bool
	}{
		{"in PATH", execagent.Command{Args: []string{"sh"}}, true},
		{"absolute", execagent.Command{Args: []string{script}}, true},
		{"relative to dir", execagent.Command{Args: []string{"./run.sh"}, Dir: dir}, true},
		{"empty", execagent.Command{}, false},
		{"not in PATH", execagent.Command{Args: []string{"no-such-program-a2a"}}, false},
		{"missing file", execagent.Command{Args: []string{"./nope.sh"}, Dir: dir}, false},
		{"dir missing", execagent.Command{Args: []string{"sh"}, Dir: filepath.Join(dir, "nope")}, false},
		{"dir is a file", execagent.Command{Args: []string{"sh"}, Dir: script}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.c.Check(); (err == nil) != tc.ok {
				t.Errorf("Check: %v", err)
			}
		})
	}
}

// TestRunCancelKillsGroup: canceling kills the program and its children,
// and Run returns promptly having reaped the program.
func TestRunCancelKillsGroup(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var (
		mu   sync.Mutex
		pids []int
	)
	c := sh(`sleep 30 & echo $$ $!; wait`)
	done := make(chan *execagent.Result, 1)
	go func() {
		r, _ := c.Run(ctx, nil, func(text string, last bool) error {
			mu.Lock()
			defer mu.Unlock()
			for f := range strings.FieldsSeq(text) {
				if n, err := strconv.Atoi(f); err == nil {
					pids = append(pids, n)
				}
			}
			if len(pids) == 2 {
				cancel()
			}
			return nil
		})
		done <- r
	}()
	var r *execagent.Result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if !r.Canceled || r.Success() || r.Status() != "canceled" {
		t.Errorf("result %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(pids) != 2 {
		t.Fatalf("pids %v", pids)
	}
	waitGone(t, pids[0], true)  // the shell: reaped by Run
	waitGone(t, pids[1], false) // its child: killed with the group
}

// TestRunEmitErrorKills: when the output cannot be delivered, the program
// is killed and Run reports the error.
func TestRunEmitErrorKills(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	r, err := sh("echo a; sleep 30").Run(t.Context(), nil, func(string, bool) error { return boom })
	// Killed, not left to end its 30 s: the signal says so, no clock.
	if !errors.Is(err, boom) || r == nil || r.Success() || r.Signal != "killed" {
		t.Errorf("result %+v, err %v", r, err)
	}
}
