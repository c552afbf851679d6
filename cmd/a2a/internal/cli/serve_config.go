package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
)

// serveConfig is everything a2a serve can be told. Each field is a flag;
// a config file (--config) sets the same things under the flags' names,
// and a flag on the command line wins over the file.
type serveConfig struct {
	agent       string
	exec        argvFlag
	dir         string
	env         listFlag
	execTimeout time.Duration
	maxOutput   int64

	addr       string
	opsAddr    string
	grpcAddr   string
	publicURL  string
	bindings   bindingsFlag
	v03        bool
	store      string
	storeSpec  storeSpec
	dataDir    string
	durability string
	retention  time.Duration
	// Replicas (docs/serve.md, "Running several replicas").
	replica     string
	lease       time.Duration
	maintenance time.Duration
	maxBody     int64
	apiKey      apiKeysFlag       // as given; checked by validate
	apiKeys     map[string]string // key -> principal, made by validate

	storeSchema string // --store-schema, checked by validate; storeSpec holds it

	tlsSettings // --tls-*, --client-*, timeouts (serve_tls.go)
	jwtSettings // --jwks, --audience, --issuer, --scope (serve_jwt.go)

	signSettings // --sign-key, --sign-kid (serve_sign.go)

	pushSettings // --push, --push-allow-hosts, --push-sign-key (serve_push.go)

	otelSettings // --otlp-endpoint (serve_otel.go)

	limitSettings // --max-streams, --rate, ... (serve_limits.go)

	grace     time.Duration
	logFormat string
	logLevel  string     // as given; checked by validate
	level     slog.Level // of --log-level and -v, made by validate
	verbose   bool

	config string
	set    map[string]bool // settings given by a flag or the file
}

// Bindings a2a serve can serve.
const (
	bindingJSONRPC = "jsonrpc"
	bindingREST    = "rest"
)

func newServeFlags(cfg *serveConfig, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("a2a serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.bindings = bindingsFlag{bindingJSONRPC, bindingREST}
	fs.StringVar(&cfg.agent, "agent", "echo", "the agent to serve: "+agentNames()+"; with --exec, command (when --agent is not given) or test-runner")
	fs.Var(&cfg.exec, "exec", "serve a command: each message runs `CMD` with the message text on stdin and streams its stdout back;\n"+
		"CMD is split into words like a shell does (quotes, backslashes) but no shell runs it: write sh -c '...' for pipes")
	fs.StringVar(&cfg.dir, "dir", "", "working directory of the --exec command (default: the current one)")
	fs.Var(&cfg.env, "env", "`KEY=VALUE` added to the environment of the --exec command (repeatable)")
	fs.DurationVar(&cfg.execTimeout, "exec-timeout", 0, "time limit of each run of the --exec command; 0 for none")
	fs.Int64Var(&cfg.maxOutput, "max-output", 1<<20, "bytes of output of the --exec command streamed per task; the rest is cut with a note")
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.StringVar(&cfg.grpcAddr, "grpc-addr", "", "also serve the gRPC binding on this address (HOST:PORT), listed in the card after the JSON bindings;\n"+
		"same authentication and TLS as the HTTP bindings")
	fs.StringVar(&cfg.opsAddr, "ops-addr", "", "separate address for /healthz, /readyz and /metrics, kept open until exit so probes see 503 while\n"+
		"shutting down (default: served on --addr)")
	fs.StringVar(&cfg.publicURL, "public-url", "", "base URL clients use to reach this server, as written in the agent card (default: http://<addr>)")
	fs.Var(&cfg.bindings, "bindings", "comma-separated `LIST` of bindings to serve: jsonrpc, rest")
	fs.BoolVar(&cfg.v03, "v03", false, "also serve A2A v0.3 clients on the JSON-RPC binding (calls without A2A-Version, or 0.3, to v0.3 methods),\n"+
		"translated to v1.0; the agent card becomes a dual card that v0.3 and v1.0 clients both read, unsigned")
	fs.StringVar(&cfg.store, "store", storeSQLite, "where tasks are kept: sqlite (AGENT.db in --data-dir), sqlite:PATH, postgres:DSN (or a postgres:// URL),\n"+
		"or memory (gone at exit)")
	fs.StringVar(&cfg.storeSchema, "store-schema", "", "with PostgreSQL: the `SCHEMA` of the tasks, created if missing, taken as written; replicas of an agent\n"+
		"share the schema they are given (default: the DSN's search_path if it sets one, else a2a_AGENT after the agent card's name)")
	fs.StringVar(&cfg.dataDir, "data-dir", defaultDataDir(), "directory of a2a's own files, such as the default SQLite store (AGENT.db, after the agent card's name)")
	fs.StringVar(&cfg.durability, "durability", "process", "with SQLite: process (a stored update survives a crash of the process) or power (it also\n"+
		"survives a power cut or an OS crash, at the cost of an fsync per group commit)")
	fs.DurationVar(&cfg.retention, "retention", 0, "delete finished tasks this long after their last update, such as 720h; 0 keeps them")
	fs.StringVar(&cfg.replica, "replica", "", "the `NAME` of this server among the replicas sharing its store, as the status message of a task it\n"+
		"leaves unfinished says when another replica takes the task over (default: HOST:PID)")
	fs.DurationVar(&cfg.lease, "lease", 30*time.Second, "with a durable store: how long a replica that stops answering (a lost host) keeps its running tasks\n"+
		"before another takes them over; every replica sharing a store needs the same value")
	fs.DurationVar(&cfg.maintenance, "maintenance-interval", 15*time.Second, "how often the server looks for tasks whose replica stopped, and for finished tasks past --retention")
	fs.Int64Var(&cfg.maxBody, "max-body", 10<<20, "largest request body accepted, in bytes")
	fs.Var(&cfg.apiKey, "api-key", "admit requests to the A2A bindings that carry `PRINCIPAL=KEY`'s key in the X-API-Key header, as PRINCIPAL\n"+
		"(repeatable; a principal may have several keys, a key only one principal). The agent card and /healthz,\n"+
		"/readyz, /metrics stay open. Without --api-key, anyone who can reach the server can use it")
	cfg.tlsSettings.register(fs)
	cfg.jwtSettings.register(fs)
	cfg.signSettings.register(fs)
	cfg.pushSettings.register(fs)
	cfg.limitSettings.register(fs)
	cfg.otelSettings.register(fs)
	fs.DurationVar(&cfg.grace, "grace", 10*time.Second, "on SIGTERM or SIGINT, how long running tasks may take to finish before they are canceled and the server exits")
	fs.StringVar(&cfg.logFormat, "log-format", "text", "log format on stderr: text or json")
	fs.StringVar(&cfg.logLevel, "log-level", "info", "least severe level logged on stderr: debug, info, warn or error; the line of each request\n"+
		"is at debug")
	fs.BoolVar(&cfg.verbose, "v", false, "debug logs, the same as --log-level debug: a line per request, and responses that could not be written")
	fs.StringVar(&cfg.config, "config", "", "read settings from a JSON `FILE`: an object whose keys are these flags' names, such as\n"+
		`{"exec": ["sh", "-c", "wc -l"], "grace": "30s", "bindings": ["jsonrpc"]}; flags given on the command line win`)
	return fs
}

// serveAbout says what a2a serve does, for its help.
const serveAbout = "serve an agent (--agent NAME, or --exec CMD) over JSON-RPC and HTTP+JSON, and gRPC with --grpc-addr"

// parseServe parses the command line and the config file it names. On
// failure it has reported the problem and returns the exit code; asked for
// help, it has printed it on stdout and returns ExitOK. Either way the
// config is nil.
func parseServe(args []string, stdout, stderr io.Writer) (*serveConfig, int) {
	cfg := &serveConfig{set: make(map[string]bool)}
	fs := newServeFlags(cfg, io.Discard) // mistakes and help are ours (help.go)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stdout, "Usage: a2a serve [flags]\n\n  %s;\n  docs/serve.md tells more.\n\nFlags:\n", serveAbout)
			printFlags(stdout, fs, nil)
			return nil, ExitOK
		}
		return nil, usageFail(stderr, "serve", flagProblem(fs, err))
	}
	if fs.NArg() > 0 {
		return nil, usageFail(stderr, "serve", fmt.Sprintf("unexpected argument %q (a2a serve takes flags only)", fs.Arg(0)))
	}
	fs.Visit(func(f *flag.Flag) { cfg.set[f.Name] = true })
	if cfg.config != "" {
		if err := loadServeConfig(fs, cfg); err != nil {
			fmt.Fprintf(stderr, "a2a serve: config %s: %v\n", cfg.config, err)
			return nil, ExitError
		}
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintf(stderr, "a2a serve: %v\n", err)
		return nil, ExitUsage
	}
	return cfg, ExitOK
}

// sameSetting pairs the flags that set one thing: a command line that
// gives either of them decides it, and the file's other one is ignored.
var sameSetting = map[string]string{"v": "log-level", "log-level": "v"}

// loadServeConfig applies the config file's settings that no flag set.
func loadServeConfig(fs *flag.FlagSet, cfg *serveConfig) error {
	fromFlags := maps.Clone(cfg.set)
	data, err := os.ReadFile(cfg.config)
	if err != nil {
		return err
	}
	blankComments(data)
	var settings map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&settings); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("not a JSON object: data after the object")
	}
	if settings == nil {
		return errors.New("not a JSON object")
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		f := fs.Lookup(key)
		if f == nil || key == "config" {
			return fmt.Errorf("unknown key %q (known keys: %s)", key, configKeys(fs))
		}
		if fromFlags[key] || fromFlags[sameSetting[key]] {
			continue // the command line wins
		}
		if err := setFromJSON(f, settings[key]); err != nil {
			if _, ok := f.Value.(secretFlag); ok {
				return fmt.Errorf("key %q: invalid value: %w", key, err)
			}
			return fmt.Errorf("key %q: invalid value %s: %w", key, settings[key], err)
		}
		cfg.set[key] = true
	}
	return nil
}

// blankComments turns each line of data whose first non-blank characters
// are "//" into spaces, so that a config file may explain itself
// (docs/serve.example.jsonc). No such line can be JSON: no token begins
// with '/', and a string cannot span lines. Offsets stay as they were.
func blankComments(data []byte) {
	for line := range bytes.Lines(data) {
		if t := bytes.TrimLeft(line, " \t"); bytes.HasPrefix(t, []byte("//")) {
			for i := range t {
				if t[i] != '\n' && t[i] != '\r' {
					t[i] = ' '
				}
			}
		}
	}
}

func configKeys(fs *flag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != "config" {
			names = append(names, f.Name)
		}
	})
	return strings.Join(names, ", ")
}

// listSetter is a flag that also takes a JSON array in the config file.
type listSetter interface{ setList([]string) error }

// setFromJSON sets flag f from a JSON value: a string, number or boolean as
// the flag's text, an array of strings for list flags.
func setFromJSON(f *flag.Flag, raw json.RawMessage) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case string:
		return f.Value.Set(x)
	case bool:
		if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !bf.IsBoolFlag() {
			return errors.New("want a string or a number, not a boolean")
		}
		return f.Value.Set(strconv.FormatBool(x))
	case float64:
		return f.Value.Set(strings.TrimSpace(string(raw)))
	case []any:
		ls, ok := f.Value.(listSetter)
		if !ok {
			return errors.New("want a single value, not an array")
		}
		list := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("element %d is not a string", i)
			}
			list[i] = s
		}
		return ls.setList(list)
	}
	return errors.New("want a string, number, boolean or array")
}

func (cfg *serveConfig) validate() error {
	var errs []error
	hasExec := len(cfg.exec) > 0
	for _, name := range []string{"dir", "env", "exec-timeout", "max-output"} {
		if cfg.set[name] && !hasExec {
			errs = append(errs, fmt.Errorf("--%s applies to --exec, which is not set", name))
		}
	}
	switch {
	case hasExec && cfg.set["agent"] && cfg.agent != agentCommand && cfg.agent != agentTestRunner:
		errs = append(errs, fmt.Errorf("--exec runs with --agent %s or %s, not %q", agentCommand, agentTestRunner, cfg.agent))
	case !hasExec && cfg.agent == agentCommand:
		errs = append(errs, fmt.Errorf("--agent %s needs --exec CMD", agentCommand))
	case !hasExec:
		if _, ok := agents[cfg.agent]; !ok {
			errs = append(errs, fmt.Errorf("unknown agent %q (choose one of: %s)", cfg.agent, agentNames()))
		}
	}
	if cfg.execTimeout < 0 {
		errs = append(errs, fmt.Errorf("--exec-timeout must not be negative, got %v", cfg.execTimeout))
	}
	if cfg.maxOutput < 1 {
		errs = append(errs, fmt.Errorf("--max-output must be positive, got %d", cfg.maxOutput))
	}
	if cfg.maxBody < 1 {
		errs = append(errs, fmt.Errorf("--max-body must be positive, got %d", cfg.maxBody))
	}
	if cfg.grace <= 0 {
		errs = append(errs, fmt.Errorf("--grace must be positive, got %v", cfg.grace))
	}
	errs = append(errs, cfg.otelSettings.validate()...)
	if cfg.logFormat != "text" && cfg.logFormat != "json" {
		errs = append(errs, fmt.Errorf("--log-format must be text or json, got %q", cfg.logFormat))
	}
	level, err := parseLogLevel(cfg.logLevel)
	switch {
	case err != nil:
		errs = append(errs, err)
	case cfg.verbose && cfg.set["log-level"] && level != slog.LevelDebug:
		errs = append(errs, fmt.Errorf("-v means --log-level debug, which disagrees with --log-level %s: give one of them", cfg.logLevel))
	case cfg.verbose:
		level = slog.LevelDebug
	}
	cfg.level = level
	sp, err := parseStoreSpec(cfg.store)
	if err != nil {
		errs = append(errs, fmt.Errorf("--store: %w", err))
	}
	if cfg.set["store-schema"] {
		if serr := checkSchema(cfg.storeSchema); serr != nil {
			errs = append(errs, serr)
		} else if err == nil && sp.kind != storePostgres {
			errs = append(errs, fmt.Errorf("--store-schema applies to the PostgreSQL store, not %s", sp.kind))
		}
		sp.schema, sp.schemaBy = cfg.storeSchema, schemaByFlag
	}
	cfg.storeSpec = sp
	if cfg.durability != "process" && cfg.durability != "power" {
		errs = append(errs, fmt.Errorf("--durability must be process or power, got %q", cfg.durability))
	} else if cfg.set["durability"] && err == nil && sp.kind != storeSQLite {
		errs = append(errs, fmt.Errorf("--durability applies to the SQLite store, not %s", sp.kind))
	}
	if cfg.lease <= 0 {
		errs = append(errs, fmt.Errorf("--lease must be positive, such as 30s, got %v", cfg.lease))
	}
	if cfg.maintenance <= 0 {
		errs = append(errs, fmt.Errorf("--maintenance-interval must be positive, such as 15s, got %v", cfg.maintenance))
	}
	if cfg.retention < 0 {
		errs = append(errs, fmt.Errorf("--retention must not be negative, got %v", cfg.retention))
	}
	if cfg.dataDir == "" {
		errs = append(errs, errors.New("--data-dir must not be empty"))
	}
	if err := cfg.checkWildcardAddr(); err != nil { // serve_addr.go
		errs = append(errs, err)
	}
	errs = append(errs, cfg.tlsSettings.validate(cfg.set, cfg.publicURL)...)
	errs = append(errs, cfg.jwtSettings.validate(cfg.set)...)
	errs = append(errs, cfg.signSettings.validate(cfg.set)...)
	errs = append(errs, cfg.pushSettings.validate(cfg.set)...)
	errs = append(errs, cfg.limitSettings.validate()...)
	keys, err := cfg.apiKey.keys()
	if err != nil {
		errs = append(errs, err)
	}
	cfg.apiKeys = keys
	return errors.Join(errs...)
}

// parseLogLevel reads a --log-level value, in any case.
func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return slog.LevelInfo, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
}

// execAgent reports whether the served agent runs the --exec command
// itself (not the test runner in real mode).
func (cfg *serveConfig) execAgent() bool {
	return len(cfg.exec) > 0 && (!cfg.set["agent"] || cfg.agent == agentCommand)
}

// argvFlag is a command line, split into words (see splitWords); in the
// config file it may also be an array of words.
type argvFlag []string

func (a *argvFlag) String() string { return quoteWords(*a) }

func (a *argvFlag) Set(s string) error {
	words, err := splitWords(s)
	if err != nil {
		return err
	}
	*a = words
	return nil
}

func (a *argvFlag) setList(words []string) error {
	if len(words) == 0 || words[0] == "" {
		return errors.New("empty command")
	}
	*a = slices.Clone(words)
	return nil
}

// listFlag collects repeated values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, " ") }

func (l *listFlag) Set(s string) error {
	if !strings.Contains(s, "=") || strings.HasPrefix(s, "=") {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	*l = append(*l, s)
	return nil
}

func (l *listFlag) setList(list []string) error {
	for _, s := range list {
		if err := l.Set(s); err != nil {
			return err
		}
	}
	return nil
}

// secretFlag is a flag whose values must never be printed, not even in an
// error about them.
type secretFlag interface{ secret() }

// apiKeysFlag collects --api-key PRINCIPAL=KEY values. Set accepts
// anything, since the flag package prints the value of a flag it rejects:
// keys, which keeps errors free of keys.
type apiKeysFlag []string

func (*apiKeysFlag) secret() {}

// String names the principals only.
func (a *apiKeysFlag) String() string {
	var principals []string
	for _, v := range *a {
		p, _, _ := strings.Cut(v, "=")
		principals = append(principals, p+"=…")
	}
	return strings.Join(principals, " ")
}

func (a *apiKeysFlag) Set(s string) error {
	*a = append(*a, s)
	return nil
}

func (a *apiKeysFlag) setList(list []string) error {
	*a = append(*a, list...)
	return nil
}

// keys checks the values and maps each key to its principal (nil when none
// is given). A value splits at its first '=', so a key may hold '=' (as
// base64 does) but a principal cannot. A principal may have several keys,
// so that a key can be replaced without downtime; a key may be given only
// once, since one key for two principals could not tell them apart and a
// repeated one is a copy-and-paste mistake. Errors name the value by its
// position and principal, never its key.
func (a apiKeysFlag) keys() (map[string]string, error) {
	if len(a) == 0 {
		return nil, nil
	}
	var errs []error
	keys := make(map[string]string, len(a))
	for i, v := range a {
		which := fmt.Sprintf("--api-key #%d", i+1)
		principal, key, ok := strings.Cut(v, "=")
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: want PRINCIPAL=KEY, found no '='", which))
			continue
		case principal == "":
			errs = append(errs, fmt.Errorf("%s: empty principal before the '=' (want PRINCIPAL=KEY)", which))
			continue
		case strings.ContainsFunc(principal, unicode.IsControl) || strings.TrimSpace(principal) != principal:
			errs = append(errs, fmt.Errorf("%s: principal %q holds control characters or spaces at either end", which, principal))
			continue
		case strings.HasPrefix(principal, jwtPrincipalPrefix) || strings.HasPrefix(principal, mtlsPrincipalPrefix):
			errs = append(errs, fmt.Errorf("%s: principal %q begins with %q or %q, which name the callers of --jwks and --client-ca",
				which, principal, jwtPrincipalPrefix, mtlsPrincipalPrefix))
			continue
		}
		which = fmt.Sprintf("%s (principal %q)", which, principal)
		switch {
		case key == "":
			errs = append(errs, fmt.Errorf("%s: empty key after the '='", which))
		case !auth.ValidAPIKey(key):
			errs = append(errs, fmt.Errorf("%s: the key holds control characters or spaces at either end, which a header cannot carry", which))
		case keys[key] == principal:
			errs = append(errs, fmt.Errorf("%s: the same key is given twice for this principal", which))
		case keys[key] != "":
			errs = append(errs, fmt.Errorf("%s: principal %q has the same key; each principal needs keys of its own", which, keys[key]))
		default:
			keys[key] = principal
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return keys, nil
}

// Prefixes of the principals of JWTs and client certificates. Each scheme
// names its callers in a namespace of its own, so that the JWT subject
// alice, the certificate of alice and the API key principal alice are
// three principals that never share tasks. API key principals keep their
// bare names (tasks stored before --jwks existed stay theirs) and may not
// begin with these prefixes.
const (
	jwtPrincipalPrefix  = "jwt:"
	mtlsPrincipalPrefix = "mtls:"
)

// principals counts the distinct principals of keys.
func principals(keys map[string]string) int {
	seen := make(map[string]bool, len(keys))
	for _, p := range keys {
		seen[p] = true
	}
	return len(seen)
}

// bindingsFlag is a non-empty set of bindings, comma-separated on the
// command line.
type bindingsFlag []string

func (b *bindingsFlag) String() string { return strings.Join(*b, ",") }

func (b *bindingsFlag) Set(s string) error { return b.setList(strings.Split(s, ",")) }

func (b *bindingsFlag) setList(list []string) error {
	var out []string
	for _, name := range list {
		name = strings.ToLower(strings.TrimSpace(name))
		switch name {
		case bindingJSONRPC, bindingREST:
		case "":
			continue
		default:
			return fmt.Errorf("unknown binding %q (choose from: jsonrpc, rest)", name)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return errors.New("no binding given")
	}
	*b = out
	return nil
}

func (b bindingsFlag) has(name string) bool { return slices.Contains(b, name) }

// a2a names the bindings as the protocol does (a2a.BindingJSONRPC, ...).
func (b bindingsFlag) a2a() []string {
	out := make([]string, 0, len(b))
	for _, name := range b {
		switch name {
		case bindingJSONRPC:
			out = append(out, a2a.BindingJSONRPC)
		case bindingREST:
			out = append(out, a2a.BindingHTTPJSON)
		}
	}
	return out
}
