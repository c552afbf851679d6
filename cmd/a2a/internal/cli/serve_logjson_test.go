//go:build unix

package cli_test

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeJSONLogDurations: with --log-format json, durations are
// written as Go prints them ("1.5s"), not as slog's integer nanoseconds:
// the grace of the shutdown line and the duration of each request line.
func TestServeJSONLogDurations(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--store", "memory", "--log-format", "json", "--log-level", "debug", "--grace", "1500ms")
	var stdout, stderr lines
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := stdout.waitMatch(t, regexp.MustCompile(`agent card  (http://\S+)/\.well-known/agent-card\.json`))
	if code := getStatus(base + "/.well-known/agent-card.json"); code != 200 {
		t.Fatalf("card: %d", code)
	}
	stderr.waitMatch(t, regexp.MustCompile(`("msg":"request")`))
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	if err := cmd.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		} else {
			t.Fatal(err)
		}
	}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	for line := range strings.Lines(r.stderr) {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		for _, key := range []string{"grace", "duration"} {
			if v, ok := entry[key]; ok {
				s, isString := v.(string)
				if _, err := time.ParseDuration(s); !isString || err != nil {
					t.Errorf("%q is %v (%T), want a duration as text: %s", key, v, v, line)
				}
			}
		}
	}
	addr := strings.TrimPrefix(base, "http://")
	r.stdout = strings.ReplaceAll(r.stdout, base, "URL")
	r.stderr = strings.ReplaceAll(strings.ReplaceAll(r.stderr, base, "URL"), addr, "ADDR")
	r.stderr = regexp.MustCompile(`"time":"[^"]*",`).ReplaceAllString(r.stderr, "")
	r.stderr = regexp.MustCompile(`"duration":"[^"]*"`).ReplaceAllString(r.stderr, `"duration":"DURATION"`)
	goldenRun(t, "serve-log-json", r)
}
