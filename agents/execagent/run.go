// Package execagent runs a program for each A2A message: the message text is
// the program's standard input, its standard output streams back to the
// client as chunks of one artifact, and its exit status decides how the
// task ends. It serves `a2a serve --exec`, and its [Command.Run] and
// [Command.Stream] are the process plumbing of the kit's test runner in
// real-command mode.
//
// No shell is involved: [Command.Args] is the argv of the program. Pass
// ["sh", "-c", "..."] yourself when you want pipes, redirections or
// variables.
//
// On Unix the program runs in a process group of its own. When the task is
// canceled, times out or the server shuts down, the whole group is killed
// (SIGKILL), so children of a shell die with it, and the program is always
// waited for: no zombie is left behind. Processes still in the group when
// the program exits normally are killed as well.
package execagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"
)

// Defaults of a [Command].
const (
	// DefaultMaxOutput is how much standard output a run forwards when
	// Command.MaxOutput is 0.
	DefaultMaxOutput = 1 << 20
	// DefaultBatchWindow is how long a chunk waits for more lines when
	// Command.BatchWindow is 0.
	DefaultBatchWindow = 10 * time.Millisecond
	// DefaultWaitDelay is how long a run waits for the output pipes to
	// close after the program exits or is killed, when Command.WaitDelay
	// is 0. Pipes stay open when a child escaped the process group.
	DefaultWaitDelay = 2 * time.Second
)

// Limits of a run that are not configurable.
const (
	// maxChunk caps the text of one chunk: a flood of output becomes many
	// chunks rather than one huge event.
	maxChunk = 32 << 10
	// StderrTailLines and StderrTailBytes bound the tail of standard error
	// a [Result] keeps.
	StderrTailLines = 20
	StderrTailBytes = 4 << 10
)

// Command is a program to run and the limits it runs under. The zero value
// is not runnable: Args must name a program.
type Command struct {
	// Args is the program and its arguments. A program name without a
	// slash is looked up in PATH; a relative path is relative to Dir.
	Args []string
	// Dir is the working directory; "" is the server's.
	Dir string
	// Env holds "KEY=value" entries added to the server's environment,
	// which the program inherits; a later entry wins over an earlier one.
	Env []string
	// Timeout bounds each run; 0 means no limit. A run that times out is
	// killed like a canceled one.
	Timeout time.Duration
	// MaxOutput caps the bytes of output forwarded per run; the rest is
	// read and discarded, so the program is not blocked, and the last
	// chunk says how much was cut. 0 means DefaultMaxOutput; negative
	// means no limit.
	MaxOutput int64
	// MergeStderr sends standard error into the output as well, in the
	// order the program writes it. The Result's Stderr is then the tail of
	// the combined output.
	MergeStderr bool
	// BatchWindow is how long the first line of a chunk waits for more
	// lines before the chunk is sent; it keeps a chatty program from
	// causing one event per line. 0 means DefaultBatchWindow.
	BatchWindow time.Duration
	// WaitDelay bounds the wait for the output pipes once the program has
	// exited or been killed (see [exec.Cmd.WaitDelay]). 0 means
	// DefaultWaitDelay.
	WaitDelay time.Duration
	// Observe, when set, sees every piece of output as it is read, also
	// what MaxOutput keeps from being forwarded, so that a parser of the
	// output sees all of it. Pieces are not aligned to lines; b must not
	// be kept. It is called from the goroutine that called Run.
	Observe func(b []byte)
}

// Result is how a run ended.
type Result struct {
	// ExitCode is the program's exit status, or -1 when a signal ended it.
	ExitCode int
	// Signal names the signal that ended the program ("killed"), if any.
	Signal string
	// TimedOut reports that Timeout ended the run.
	TimedOut bool
	// Canceled reports that the caller's context ended the run.
	Canceled bool
	// Stderr is the tail of standard error: at most StderrTailLines lines
	// and StderrTailBytes bytes, valid UTF-8, without a final newline.
	Stderr string
	// OutputBytes and OutputLines count all the output the program wrote,
	// forwarded or not.
	OutputBytes int64
	OutputLines int64
	// Truncated reports that output beyond MaxOutput was discarded.
	Truncated bool
	// Duration is the time from start to exit.
	Duration time.Duration
}

// Success reports whether the program exited with status 0 by itself.
func (r *Result) Success() bool {
	return r.ExitCode == 0 && r.Signal == "" && !r.TimedOut && !r.Canceled
}

// Status says how the program ended, for people: "exit status 3",
// "killed by signal killed", "timed out after 5s", "canceled".
func (r *Result) Status() string {
	switch {
	case r.Canceled:
		return "canceled"
	case r.TimedOut:
		return "timed out after " + r.Duration.Round(time.Millisecond).String()
	case r.Signal != "":
		return "killed by signal " + r.Signal
	}
	return fmt.Sprintf("exit status %d", r.ExitCode)
}

// ErrNoProgram is returned for a Command without a program.
var ErrNoProgram = errors.New("execagent: no program to run")

// Check reports whether c can run: it names a program that exists (looked
// up in PATH, or relative to Dir) and Dir is a directory. It is cheap and
// meant for start-up, so that a typo fails the server, not every task.
func (c Command) Check() error {
	if len(c.Args) == 0 || c.Args[0] == "" {
		return ErrNoProgram
	}
	if c.Dir != "" {
		fi, err := os.Stat(c.Dir)
		if err != nil {
			return fmt.Errorf("execagent: working directory: %w", err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("execagent: working directory %s is not a directory", c.Dir)
		}
	}
	prog := c.Args[0]
	if filepath.Base(prog) == prog {
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Errorf("execagent: %w", err)
		}
		return nil
	}
	path := prog
	if c.Dir != "" && !filepath.IsAbs(path) {
		path = filepath.Join(c.Dir, path)
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("execagent: %w", err)
	}
	return nil
}

// EmitFunc receives the output of a run in chunks. Each chunk but the last
// ends at a line boundary, except where a single line is longer than a
// chunk may be. last is true exactly once, on the final call; its text may
// be empty when the output ended just after the previous chunk. A run that
// writes nothing makes no call at all.
type EmitFunc func(text string, last bool) error

// Run starts the program, feeds it stdin (nil means no input), passes its
// output to emit as it arrives, and waits for it to exit. emit is called
// from Run's goroutine, never concurrently.
//
// The program is killed when ctx ends, when Timeout passes, or when emit
// returns an error; Run returns once it has been waited for. The error is
// non-nil only when the program could not be started or emit failed; how
// the program itself ended is in the Result, which is non-nil whenever the
// program started.
func (c Command) Run(ctx context.Context, stdin io.Reader, emit EmitFunc) (*Result, error) {
	if len(c.Args) == 0 || c.Args[0] == "" {
		return nil, ErrNoProgram
	}
	timeoutCtx, cancelTimeout := ctx, context.CancelFunc(func() {})
	if c.Timeout > 0 {
		timeoutCtx, cancelTimeout = context.WithTimeout(ctx, c.Timeout)
	}
	defer cancelTimeout()
	runCtx, kill := context.WithCancel(timeoutCtx)
	defer kill()

	cmd := exec.CommandContext(runCtx, c.Args[0], c.Args[1:]...)
	cmd.Dir = c.Dir
	if len(c.Env) > 0 {
		cmd.Env = append(os.Environ(), c.Env...)
	}
	cmd.Stdin = stdin
	cmd.WaitDelay = c.WaitDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = DefaultWaitDelay
	}
	out := &pipe{ch: make(chan []byte, 16), quit: make(chan struct{})}
	tail := &tailBuffer{max: StderrTailBytes}
	cmd.Stdout = out
	if c.MergeStderr {
		// The same comparable writer for both: exec then calls Write from
		// one goroutine at a time, so the tail needs no lock.
		out.tail = tail
		cmd.Stderr = out
	} else {
		cmd.Stderr = tail
	}
	setProcessGroup(cmd)

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("execagent: starting %s: %w", c.Args[0], err)
	}
	waited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		// Wait returns after the copying goroutines, the only writers to
		// out, are done.
		close(out.ch)
		waited <- err
	}()

	res := &Result{}
	f := forwarder{emit: emit, observe: c.Observe, max: c.maxOutput(), window: c.BatchWindow, res: res}
	if f.window <= 0 {
		f.window = DefaultBatchWindow
	}
	emitErr := f.run(out, kill)
	werr := <-waited
	res.Duration = time.Since(start)
	killGroup(cmd) // strays the program left in its group
	res.Stderr = tail.String()
	exited := false // by itself, with status 0
	if st := cmd.ProcessState; st != nil {
		res.ExitCode = st.ExitCode()
		res.Signal = signalOf(st)
		exited = st.Success()
	} else if werr != nil {
		res.ExitCode = -1
	}
	switch {
	case exited:
	case ctx.Err() != nil:
		res.Canceled = true
	case timeoutCtx.Err() != nil:
		res.TimedOut = true
	}
	if emitErr != nil {
		return res, emitErr
	}
	return res, nil
}

func (c Command) maxOutput() int64 {
	switch {
	case c.MaxOutput == 0:
		return DefaultMaxOutput
	case c.MaxOutput < 0:
		return -1
	}
	return c.MaxOutput
}

// pipe hands the program's output from exec's copying goroutine to Run's.
// Once quit is closed nobody reads any more, and writes are discarded so
// that the program is not blocked while it is being killed.
type pipe struct {
	ch   chan []byte
	quit chan struct{}
	tail *tailBuffer // with MergeStderr: the tail of the combined output
}

func (p *pipe) Write(b []byte) (int, error) {
	if p.tail != nil {
		p.tail.Write(b)
	}
	select {
	case p.ch <- bytes.Clone(b):
	case <-p.quit:
	}
	return len(b), nil
}

// forwarder cuts output into chunks at line boundaries, batches the lines
// that arrive within a window, and enforces the output limit.
type forwarder struct {
	emit    EmitFunc
	observe func([]byte)
	max     int64 // -1: no limit
	window  time.Duration
	res     *Result

	batch   []byte // complete lines waiting to be sent
	partial []byte // a line still being written
	sent    int64  // bytes accepted for forwarding
	emitted bool
	quit    bool // p.quit is closed
	err     error
}

// run forwards until the pipe is closed. After an emit error it kills the
// program, keeps draining, and returns the error.
func (f *forwarder) run(p *pipe, kill context.CancelFunc) error {
	var timer *time.Timer
	var timerC <-chan time.Time
	stopTimer := func() {
		if timer != nil {
			timer.Stop()
			timer, timerC = nil, nil
		}
	}
	defer stopTimer()
	for {
		select {
		case b, ok := <-p.ch:
			if !ok {
				stopTimer()
				f.finish()
				return f.err
			}
			f.add(b)
			if f.err != nil {
				continue
			}
			if len(f.batch) >= maxChunk {
				stopTimer()
				f.flush(false)
			} else if len(f.batch) > 0 && timer == nil {
				timer = time.NewTimer(f.window)
				timerC = timer.C
			}
		case <-timerC:
			timer, timerC = nil, nil
			f.flush(false)
		}
		if f.err != nil && !f.quit {
			// Nobody reads from here on: let the program's writes through
			// to nowhere while it is killed.
			close(p.quit)
			f.quit = true
			kill()
		}
	}
}

// add takes output bytes: counted always, kept up to the limit, and moved
// into the batch line by line.
func (f *forwarder) add(b []byte) {
	f.res.OutputBytes += int64(len(b))
	f.res.OutputLines += int64(bytes.Count(b, []byte{'\n'}))
	if f.observe != nil {
		f.observe(b)
	}
	if f.err != nil {
		return
	}
	if f.max >= 0 {
		room := f.max - f.sent
		if room <= 0 {
			f.res.Truncated = f.res.Truncated || len(b) > 0
			return
		}
		if int64(len(b)) > room {
			b = b[:cutUTF8(b, int(room))]
			f.res.Truncated = true
		}
	}
	f.sent += int64(len(b))
	f.partial = append(f.partial, b...)
	if i := bytes.LastIndexByte(f.partial, '\n'); i >= 0 {
		f.batch = append(f.batch, f.partial[:i+1]...)
		f.partial = append(f.partial[:0], f.partial[i+1:]...)
	}
	if len(f.partial) >= maxChunk {
		// A line longer than a chunk goes out in pieces.
		n := cutUTF8(f.partial, maxChunk)
		f.batch = append(f.batch, f.partial[:n]...)
		f.partial = append(f.partial[:0], f.partial[n:]...)
	}
}

// flush sends the batch, in pieces of at most maxChunk bytes; with last,
// the final piece is marked last (and sent even when empty).
func (f *forwarder) flush(last bool) {
	b := f.batch
	for f.err == nil {
		n := len(b)
		if n > maxChunk {
			n = cutUTF8(b, maxChunk)
			if i := bytes.LastIndexByte(b[:n], '\n'); i >= 0 {
				n = i + 1
			}
		}
		final := last && n == len(b)
		if n == 0 && !final {
			break
		}
		f.err = f.emit(string(b[:n]), final)
		f.emitted = true
		b = b[n:]
		if final {
			break
		}
	}
	f.batch = f.batch[:0]
}

// finish sends what is left as the last chunk, with a note when output was
// cut.
func (f *forwarder) finish() {
	f.batch = append(f.batch, f.partial...)
	f.partial = nil
	if f.res.Truncated {
		if len(f.batch) > 0 && f.batch[len(f.batch)-1] != '\n' {
			f.batch = append(f.batch, '\n')
		}
		f.batch = fmt.Appendf(f.batch, "[output truncated: %d of %d bytes shown]\n", f.sent, f.res.OutputBytes)
	}
	if len(f.batch) == 0 && !f.emitted {
		return // no output at all: no chunk
	}
	f.flush(true)
}

// cutUTF8 returns n, or less so that b[:n] does not end inside a UTF-8
// sequence.
func cutUTF8(b []byte, n int) int {
	if n >= len(b) {
		return len(b)
	}
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return n
}

// tailBuffer keeps the last bytes written to it.
type tailBuffer struct {
	buf []byte
	max int
	cut bool // bytes were dropped from the front
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		n := copy(t.buf, t.buf[len(t.buf)-t.max:])
		t.buf = t.buf[:n]
		t.cut = true
	}
	return len(p), nil
}

// String returns the last StderrTailLines whole lines within the last
// max bytes.
func (t *tailBuffer) String() string {
	b := t.buf
	cut := t.cut
	if len(b) > t.max {
		b, cut = b[len(b)-t.max:], true
	}
	if cut {
		// Drop the partial first line, unless it is all there is.
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i+1 < len(b) {
			b = b[i+1:]
		}
	}
	b = bytes.TrimRight(b, "\r\n")
	n := 0
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			n++
			if n == StderrTailLines {
				b = b[i+1:]
				break
			}
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
