package cli

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "serve.json")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestServeConfigFile(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, `{
		"exec": ["sh", "-c", "wc -l"],
		"dir": "/tmp",
		"env": ["LANG=C", "A=b=c"],
		"exec-timeout": "90s",
		"max-output": 4096,
		"addr": "127.0.0.1:9000",
		"ops-addr": "127.0.0.1:9001",
		"public-url": "https://agents.example.com",
		"bindings": ["rest"],
		"store": "memory",
		"max-body": 1024,
		"grace": "30s",
		"log-format": "json",
		"log-level": "debug",
		"v": true
	}`)
	var stderr syncBuffer
	cfg, code := parseServeArgs([]string{"--config", path}, &stderr)
	if cfg == nil {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	want := serveConfig{
		agent: "echo", exec: argvFlag{"sh", "-c", "wc -l"}, dir: "/tmp", env: listFlag{"LANG=C", "A=b=c"},
		execTimeout: 90 * time.Second, maxOutput: 4096, addr: "127.0.0.1:9000", opsAddr: "127.0.0.1:9001",
		publicURL: "https://agents.example.com", bindings: bindingsFlag{"rest"}, store: "memory", maxBody: 1024,
		grace: 30 * time.Second, logFormat: "json", logLevel: "debug", level: slog.LevelDebug, verbose: true, config: path,
	}
	if !sameConfig(cfg, &want) {
		t.Errorf("config\n got %+v\nwant %+v", *cfg, want)
	}
	if !cfg.execAgent() {
		t.Error("exec without agent should serve the command agent")
	}
}

// TestServeConfigFlagsWin: a flag on the command line overrides the file,
// in whatever order they come.
func TestServeConfigFlagsWin(t *testing.T) {
	t.Parallel()
	path := writeConfig(t, `{"exec": "sh -c 'echo file'", "grace": "30s", "bindings": "jsonrpc,rest", "env": ["FROM=file"]}`)
	var stderr syncBuffer
	cfg, code := parseServeArgs([]string{"--grace", "3s", "--config", path, "--exec", "echo flag", "--env", "FROM=flag"}, &stderr)
	if cfg == nil {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if cfg.grace != 3*time.Second || !slices.Equal(cfg.exec, []string{"echo", "flag"}) ||
		!slices.Equal(cfg.env, []string{"FROM=flag"}) || !slices.Equal(cfg.bindings, []string{"jsonrpc", "rest"}) {
		t.Errorf("config %+v", *cfg)
	}
}

func TestServeConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       string
	}{
		{"unknown key", `{"addr": "127.0.0.1:0", "max_body": 10}`, `unknown key "max_body" (known keys: addr, agent, api-key, audience, bindings,`},
		{"config key", `{"config": "other.json"}`, `unknown key "config"`},
		{"bad duration", `{"grace": 10}`, `key "grace": invalid value 10: parse error`},
		{"bad number", `{"max-body": "lots"}`, `key "max-body": invalid value "lots": parse error`},
		{"array for a single value", `{"addr": ["a", "b"]}`, `key "addr": invalid value ["a", "b"]: want a single value, not an array`},
		{"bool for a string", `{"agent": true}`, `key "agent": invalid value true: want a string or a number, not a boolean`},
		{"non-string in an array", `{"exec": ["sh", 1]}`, `: element 1 is not a string`},
		{"unknown binding", `{"bindings": ["grpc"]}`, `unknown binding "grpc"`},
		{"shell syntax", `{"exec": "cat | wc"}`, `key "exec": invalid value "cat | wc": unquoted '|'`},
		{"bad env", `{"exec": "true", "env": ["NOEQUALS"]}`, `want KEY=VALUE`},
		{"not an object", `["exec"]`, `not a JSON object`},
		{"trailing data", `{} {}`, `data after the object`},
		{"null", `null`, `not a JSON object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stderr syncBuffer
			cfg, code := parseServeArgs([]string{"--config", writeConfig(t, tc.text)}, &stderr)
			if cfg != nil || code != ExitError || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want it to contain %q", code, stderr.String(), tc.want)
			}
		})
	}
	var stderr syncBuffer
	if cfg, code := parseServeArgs([]string{"--config", filepath.Join(t.TempDir(), "missing.json")}, &stderr); cfg != nil || code != ExitError {
		t.Errorf("missing file: exit %d", code)
	}
}

func TestServeFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dir", "/tmp"}, "--dir applies to --exec"},
		{[]string{"--exec", "true", "--agent", "echo"}, "--exec runs with --agent command or test-runner"},
		{[]string{"--agent", "command"}, "--agent command needs --exec"},
		{[]string{"--bindings", ""}, "no binding given"},
		{[]string{"--bindings", "jsonrpc,grpc"}, `unknown binding "grpc"`},
		{[]string{"--grace", "0s"}, "--grace must be positive"},
		{[]string{"--log-format", "xml"}, "--log-format must be text or json"},
		{[]string{"--log-level", "verbose"}, `--log-level "verbose": want debug, info, warn or error`},
		{[]string{"--log-level", ""}, `--log-level "": want debug, info, warn or error`},
		{[]string{"-v", "--log-level", "warn"}, "-v means --log-level debug, which disagrees with --log-level warn"},
		{[]string{"--store", "mysql"}, `unknown store "mysql" (want memory, sqlite, sqlite:PATH or postgres:DSN)`},
		{[]string{"--store", "sqlite:"}, "sqlite: needs a file path"},
		{[]string{"--store", "postgres:"}, "postgres: needs a connection string"},
		{[]string{"--durability", "disk"}, "--durability must be process or power"},
		{[]string{"--store", "memory", "--durability", "power"}, "--durability applies to the SQLite store, not memory"},
		{[]string{"--retention", "-1h"}, "--retention must not be negative"},
		{[]string{"--data-dir", ""}, "--data-dir must not be empty"},
		{[]string{"--exec", "cat | wc"}, "unquoted '|'"},
		{[]string{"--exec", "true", "--max-output", "0"}, "--max-output must be positive"},
	} {
		var stderr syncBuffer
		cfg, code := parseServeArgs(tc.args, &stderr)
		if cfg != nil || code != ExitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want it to contain %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

func sameConfig(a, b *serveConfig) bool {
	return a.agent == b.agent && slices.Equal(a.exec, b.exec) && a.dir == b.dir && slices.Equal(a.env, b.env) &&
		a.execTimeout == b.execTimeout && a.maxOutput == b.maxOutput && a.addr == b.addr && a.opsAddr == b.opsAddr &&
		a.publicURL == b.publicURL && slices.Equal(a.bindings, b.bindings) && a.store == b.store && a.maxBody == b.maxBody &&
		a.grace == b.grace && a.logFormat == b.logFormat && a.logLevel == b.logLevel && a.level == b.level &&
		a.verbose == b.verbose && a.config == b.config
}

// TestServeLogLevel: --log-level and -v, on the command line and in the
// file; the command line decides the level, whichever of the two it gives.
func TestServeLogLevel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   []string
		config string // the file's text, if any
		want   slog.Level
	}{
		{"default", nil, "", slog.LevelInfo},
		{"debug", []string{"--log-level", "debug"}, "", slog.LevelDebug},
		{"warn", []string{"--log-level", "warn"}, "", slog.LevelWarn},
		{"error", []string{"--log-level=error"}, "", slog.LevelError},
		{"any case", []string{"--log-level", "WARN"}, "", slog.LevelWarn},
		{"-v", []string{"-v"}, "", slog.LevelDebug},
		{"-v and debug", []string{"-v", "--log-level", "debug"}, "", slog.LevelDebug},
		{"-v=false", []string{"-v=false", "--log-level", "warn"}, "", slog.LevelWarn},
		{"file", nil, `{"log-level": "warn"}`, slog.LevelWarn},
		{"file -v", nil, `{"v": true}`, slog.LevelDebug},
		{"flag wins", []string{"--log-level", "debug"}, `{"log-level": "error"}`, slog.LevelDebug},
		{"flag wins over the file's -v", []string{"--log-level", "warn"}, `{"v": true}`, slog.LevelWarn},
		{"-v wins over the file's level", []string{"-v"}, `{"log-level": "error"}`, slog.LevelDebug},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := tc.args
			if tc.config != "" {
				args = append([]string{"--config", writeConfig(t, tc.config)}, args...)
			}
			var stderr syncBuffer
			cfg, code := parseServeArgs(args, &stderr)
			if cfg == nil {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if cfg.level != tc.want {
				t.Errorf("level %v, want %v", cfg.level, tc.want)
			}
		})
	}
	// A bad value in the file is refused as on the command line.
	var stderr syncBuffer
	cfg, code := parseServeArgs([]string{"--config", writeConfig(t, `{"log-level": "verbose"}`)}, &stderr)
	if want := "a2a serve: --log-level \"verbose\": want debug, info, warn or error\n"; cfg != nil || code != ExitUsage || stderr.String() != want {
		t.Errorf("exit %d, stderr %q; want %q", code, stderr.String(), want)
	}
}
