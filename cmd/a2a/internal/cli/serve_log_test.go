package cli

import (
	"net/http"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
)

// TestServeRequestLogs: requests are logged at debug level only, so that
// by default the log of a busy server is its start, warnings and errors.
// --log-level (or -v, or the config file's "log-level") turns them on;
// warn and error also leave out the info lines.
func TestServeRequestLogs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   []string
		config string // the config file's text, if any
		// Whether the log has request lines, info lines (msg=serving) and
		// warnings (the open server's).
		requests, info, warn bool
	}{
		{name: "default", info: true, warn: true},
		{name: "default json", args: []string{"--log-format", "json"}, info: true, warn: true},
		{name: "info", args: []string{"--log-level", "info"}, info: true, warn: true},
		{name: "debug", args: []string{"--log-level", "debug"}, requests: true, info: true, warn: true},
		{name: "debug json", args: []string{"--log-level", "debug", "--log-format", "json"}, requests: true, info: true, warn: true},
		{name: "-v", args: []string{"-v"}, requests: true, info: true, warn: true},
		{name: "warn", args: []string{"--log-level", "warn"}, warn: true},
		{name: "error", args: []string{"--log-level", "error"}},
		{name: "config debug", config: `{"log-level": "debug"}`, requests: true, info: true, warn: true},
		{name: "config warn", config: `{"log-level": "warn"}`, warn: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--agent", "echo", "--store", "memory"}, tc.args...)
			if tc.config != "" {
				args = append(args, "--config", writeConfig(t, tc.config))
			}
			ts := startServe(t, args...)
			if _, err := ts.client(t, a2a.BindingJSONRPC).SendMessage(t.Context(), textRequest("hi")); err != nil {
				t.Fatal(err)
			}
			if _, err := ts.client(t, a2a.BindingHTTPJSON).GetTask(t.Context(), &a2a.GetTaskRequest{ID: "missing"}); err == nil {
				t.Fatal("GetTask of a missing task succeeded")
			}
			if code, body := httpGet(t, ts.base+"/.well-known/agent-card.json"); code != http.StatusOK {
				t.Fatalf("card: %d %s", code, body)
			}
			// After the stop, every request has ended and been logged.
			if code := ts.stop(t); code != ExitOK {
				t.Fatalf("exit %d\n%s", code, ts.stderr.String())
			}
			logs := ts.stderr.String()
			has := func(text, json string) bool {
				return strings.Contains(logs, text) || strings.Contains(logs, json)
			}
			if got := has(`msg=request binding=jsonrpc method=SendMessage status=200 `, `"msg":"request","binding":"jsonrpc","method":"SendMessage","status":200,`) &&
				has(`msg=request binding=rest method=GetTask status=404 `, `"msg":"request","binding":"rest","method":"GetTask","status":404,`) &&
				has(`msg=request binding=card method=GetAgentCard status=200 `, `"msg":"request","binding":"card","method":"GetAgentCard","status":200,`); got != tc.requests {
				t.Errorf("request lines for each request: %v, want %v; log:\n%s", got, tc.requests, logs)
			}
			if !tc.requests && has("msg=request", `"msg":"request"`) {
				t.Errorf("a request line at %v; log:\n%s", ts.run.cfg.level, logs)
			}
			if got := has(`level=INFO msg=serving `, `"level":"INFO","msg":"serving",`); got != tc.info {
				t.Errorf("info line: %v, want %v; log:\n%s", got, tc.info, logs)
			}
			if got := has(`level=WARN msg="serving without authentication"`, `"level":"WARN","msg":"serving without authentication"`); got != tc.warn {
				t.Errorf("warning: %v, want %v; log:\n%s", got, tc.warn, logs)
			}
			if !tc.info && !tc.warn && logs != "" {
				t.Errorf("at error level, a log without errors:\n%s", logs)
			}
			// The banner is not a log: it is there at every level.
			if out := ts.stdout.String(); !strings.Contains(out, "serving agent \"echo\"") || !strings.Contains(out, "stopped") {
				t.Errorf("banner:\n%s", out)
			}
		})
	}
}

// TestServeLogLevelRefused: a bad --log-level, on the command line or in
// the file, is a usage error of one line that names the flag and the
// accepted values; nothing is served.
func TestServeLogLevelRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--log-level", "verbose"}, `a2a serve: --log-level "verbose": want debug, info, warn or error` + "\n"},
		{[]string{"--log-level=trace"}, `a2a serve: --log-level "trace": want debug, info, warn or error` + "\n"},
		{[]string{"--config", writeConfig(t, `{"log-level": "verbose"}`)}, `a2a serve: --log-level "verbose": want debug, info, warn or error` + "\n"},
		{[]string{"-v", "--log-level", "error"}, "a2a serve: -v means --log-level debug, which disagrees with --log-level error: give one of them\n"},
	} {
		var stdout, stderr syncBuffer
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--store", "memory"}, tc.args...)
		if code := Main(t.Context(), args, &stdout, &stderr); code != ExitUsage || stderr.String() != tc.want || stdout.String() != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and stderr %q", tc.args, code, stdout.String(), stderr.String(), ExitUsage, tc.want)
		}
	}
}
