package cli

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/client/grpcclient"
)

// Exit codes of the client commands, documented in the usage text and
// stable across releases.
const (
	ExitProtocol   = 3 // the agent answered with an A2A error
	ExitConnection = 4 // no answer: connection refused, timeout, cut off
	ExitTaskFailed = 5 // the task ended failed, rejected or canceled

	ExitInterrupted = 130 // Ctrl-C (SIGINT) while following a task, as shells report it
)

// env is what a command runs with.
type env struct {
	ctx    context.Context
	stdin  io.Reader // a2a send URL - reads the message from it
	stdout io.Writer
	stderr io.Writer
	term   bool // stdout is a terminal: live progress and colours allowed
}

// clientFlags are the flags every command that calls an agent takes.
type clientFlags struct {
	json    bool
	headers multiFlag
	token   string
	apiKey  string
	binding string
	timeout time.Duration
	tls     clientTLSFlags // --cacert, --cert, --key (clienttls.go)
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ", ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func (f *clientFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.json, "json", false, "print the exact protocol JSON (one object per line for streams)")
	fs.Var(&f.headers, "header", `extra request header "Name: value" (repeatable)`)
	fs.StringVar(&f.token, "token", "", "bearer `TOKEN` sent as Authorization: Bearer TOKEN (default $A2A_TOKEN)")
	fs.StringVar(&f.apiKey, "api-key", "", "API `KEY`, sent as the card's API-key scheme declares, else in X-API-Key (default $A2A_API_KEY)")
	fs.StringVar(&f.binding, "binding", "", "binding to use: jsonrpc, rest or grpc (default: the card's first)")
	f.tls.register(fs)
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "time limit of each request; 0 for none (streams are never limited)")
}

// clientFlagNames is the set of the flags every client command takes,
// which help lists apart from each command's own.
func clientFlagNames() map[string]bool {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	new(clientFlags).register(fs)
	names := make(map[string]bool)
	fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	return names
}

// parseArgs parses flags that may come before, between or after the
// positional arguments, and returns those.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

type usageError string

func (e usageError) Error() string { return string(e) }

// connect resolves the agent at rawURL and returns a client for it, with
// extra options after those of the flags.
func (f *clientFlags) connect(e *env, rawURL string, extra ...client.Option) (*client.Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError(fmt.Sprintf("%q is not an agent URL (want http://host:port or https://...)", rawURL))
	}
	if err := f.credentials(); err != nil {
		return nil, err
	}
	var opts []client.Option
	hc, err := f.tls.httpClient(e.stderr)
	if err != nil {
		return nil, err
	}
	// The probe notes how the card fetch was answered, to say what is at a
	// URL that serves no card (connerr.go). It hides the *http.Transport
	// from the gRPC transport, which takes its TLS settings from it: they
	// are given to the gRPC transport itself below.
	var tlsConf *tls.Config
	if hc == nil {
		hc = &http.Client{}
	} else if tr, ok := hc.Transport.(*http.Transport); ok {
		tlsConf = tr.TLSClientConfig
	}
	probe := &cardProbe{next: hc.Transport}
	if probe.next == nil {
		probe.next = http.DefaultTransport
	}
	probed := *hc
	probed.Transport = probe
	opts = append(opts, client.WithHTTPClient(&probed))
	if f.timeout > 0 {
		opts = append(opts, client.WithTimeout(f.timeout))
	}
	for _, h := range f.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usageError(fmt.Sprintf("--header %q: want \"Name: value\"", h))
		}
		opts = append(opts, client.WithHeader(strings.TrimSpace(k), strings.TrimSpace(v)))
	}
	if f.token != "" {
		opts = append(opts, client.WithBearerToken(f.token))
	}
	var key *apiKeyAuth
	if f.apiKey != "" {
		key = &apiKeyAuth{key: f.apiKey}
		opts = append(opts, client.WithInterceptors(key))
	}
	switch strings.ToLower(f.binding) {
	case "":
	case "jsonrpc", "json-rpc":
		opts = append(opts, client.WithBindings(a2a.BindingJSONRPC))
	case "rest", "http+json", "httpjson":
		opts = append(opts, client.WithBindings(a2a.BindingHTTPJSON))
	case "grpc":
		// Only on request: a card whose first interface is an unusual gRPC
		// URL must not keep the CLI from its JSON bindings. TLS for
		// https:// URLs and, for host:port, when the card came over https
		// or --cacert/--cert is given (client/grpcclient).
		var gopts []grpcclient.Option
		if tlsConf != nil {
			gopts = append(gopts, grpcclient.WithTLS(tlsConf))
		}
		opts = append(opts, grpcclient.Transport(gopts...), client.WithBindings(a2a.BindingGRPC))
	default:
		return nil, usageError(fmt.Sprintf("--binding %q: want jsonrpc, rest or grpc", f.binding))
	}
	// The card URL may be given in full; the client wants the base.
	base := strings.TrimSuffix(strings.TrimRight(rawURL, "/"), "/.well-known/agent-card.json")
	c, err := client.New(e.ctx, base, append(opts, extra...)...)
	if err != nil {
		if p := diagnose(err, rawURL, probe); p != nil {
			return nil, p
		}
		return nil, err
	}
	if key != nil {
		if err := key.use(c.Card()); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// fail prints err the way a person wants to read it and returns the exit
// code: the A2A error kind and message for protocol errors, never a stack.
func (e *env) fail(cmd string, err error) int {
	var ue usageError
	var ae *a2a.Error
	var cp *connProblem
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "a2a %s: %s\n", cmd, ue)
		return ExitUsage
	case errors.As(err, &cp):
		fmt.Fprintf(e.stderr, "a2a %s: %s\n", cmd, cp.msg)
		if cp.hint != "" {
			fmt.Fprintf(e.stderr, "hint: %s\n", cp.hint)
		}
		return ExitConnection
	case errors.As(err, &ae):
		fmt.Fprintf(e.stderr, "a2a %s: %s: %s%s\n", cmd, ae.Code, ae.Text(), errorDetails(ae))
		return ExitProtocol
	case errors.Is(err, client.ErrInvalidOption):
		fmt.Fprintf(e.stderr, "a2a %s: %v\n", cmd, err)
		return ExitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(e.stderr, "a2a %s: interrupted\n", cmd)
		return ExitConnection
	}
	fmt.Fprintf(e.stderr, "a2a %s: no answer from the agent: %v%s\n", cmd, err, certificateHint(err))
	return ExitConnection
}

// certificateHint says what to do about a server certificate the system
// does not trust, the usual state of a development server
// (a2a serve --tls-self-signed); "" for other errors.
func certificateHint(err error) string {
	var unknown x509.UnknownAuthorityError
	if errors.As(err, &unknown) {
		return "\n  (to trust this agent's certificate, such as the one of a2a serve --tls-self-signed, pass --cacert FILE)"
	}
	return ""
}

func errorDetails(e *a2a.Error) string {
	var parts []string
	for _, v := range e.Violations {
		parts = append(parts, v.Field+": "+v.Description)
	}
	keys := make([]string, 0, len(e.Metadata))
	for k := range e.Metadata {
		keys = append(keys, k)
	}
	sortStrings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+e.Metadata[k])
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// printJSON writes v as one line of JSON.
func (e *env) printJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = e.stdout.Write(b)
	return err
}

// taskExit is the exit code for a task in state s.
func taskExit(s a2a.TaskState) int {
	switch s {
	case a2a.TaskStateFailed, a2a.TaskStateRejected, a2a.TaskStateCanceled:
		return ExitTaskFailed
	}
	return ExitOK
}
