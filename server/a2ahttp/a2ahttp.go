// Package a2ahttp mounts a [server.Handler] on one http.Handler at the
// conventional paths: the agent card at /.well-known/agent-card.json, the
// JSON-RPC binding at /a2a/jsonrpc and the HTTP+JSON binding under
// /a2a/rest. Use it when one server hosts one agent; mount the bindings
// yourself for any other layout.
package a2ahttp

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/jsonrpc"
	"github.com/goa2a/a2a/server/rest"
)

// Paths of the bindings, relative to the server's base URL.
const (
	JSONRPCPath = "/a2a/jsonrpc"
	RESTPath    = "/a2a/rest"
)

// Interfaces returns the card's supportedInterfaces for a server at
// baseURL (such as "http://127.0.0.1:8080"), JSON-RPC first.
func Interfaces(baseURL string) []a2a.AgentInterface {
	base := strings.TrimRight(baseURL, "/")
	return []a2a.AgentInterface{
		{URL: base + JSONRPCPath, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion},
		{URL: base + RESTPath, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.ProtocolVersion},
	}
}

// Options tune the mux. The zero value uses the bindings' defaults.
type Options struct {
	// MaxBodyBytes limits request bodies (default 10 MiB).
	MaxBodyBytes int64
	// KeepAlive is the idle time before a stream keep-alive comment
	// (default 15s; negative disables).
	KeepAlive time.Duration
	// CardMaxAge is the Cache-Control max-age of the card (default 5m).
	CardMaxAge time.Duration
	// Bindings are the bindings to mount, among a2a.BindingJSONRPC and
	// a2a.BindingHTTPJSON; nil mounts both.
	Bindings []string
	// Logger receives what the bindings log (responses that could not be
	// written); nil discards it.
	Logger *slog.Logger
}

// CheckBindings reports a binding of bindings that is not one of the HTTP
// bindings NewMux mounts.
func CheckBindings(bindings []string) error {
	for _, b := range bindings {
		if b != a2a.BindingJSONRPC && b != a2a.BindingHTTPJSON {
			return fmt.Errorf("a2ahttp: binding %q is not an HTTP binding (want %s or %s)", b, a2a.BindingJSONRPC, a2a.BindingHTTPJSON)
		}
	}
	return nil
}

// NewMux returns an http.Handler serving h's card and the HTTP bindings.
func NewMux(h *server.Handler, o Options) (*http.ServeMux, error) {
	if err := CheckBindings(o.Bindings); err != nil {
		return nil, err
	}
	serves := func(b string) bool { return o.Bindings == nil || slices.Contains(o.Bindings, b) }
	if o.CardMaxAge == 0 {
		o.CardMaxAge = 5 * time.Minute
	}
	card, err := CardHandler(h.Card(), o.CardMaxAge)
	if err != nil {
		return nil, fmt.Errorf("a2ahttp: %w", err)
	}
	jopts := []jsonrpc.Option{jsonrpc.WithLogger(o.Logger)}
	ropts := []rest.Option{rest.WithLogger(o.Logger)}
	if o.MaxBodyBytes > 0 {
		jopts = append(jopts, jsonrpc.WithMaxBodyBytes(o.MaxBodyBytes))
		ropts = append(ropts, rest.WithMaxBodyBytes(o.MaxBodyBytes))
	}
	if o.KeepAlive != 0 { // negative: off, as the bindings take it
		jopts = append(jopts, jsonrpc.WithKeepAlive(o.KeepAlive))
		ropts = append(ropts, rest.WithKeepAlive(o.KeepAlive))
	}
	mux := http.NewServeMux()
	mux.Handle(server.WellKnownCardPath, card)
	if serves(a2a.BindingJSONRPC) {
		j := jsonrpc.NewHandler(h, jopts...)
		mux.Handle(JSONRPCPath, j)
		// With a trailing slash too: clients that join a base URL and a
		// path (httpx's base_url, the conformance kit) post there.
		mux.Handle(JSONRPCPath+"/{$}", j)
	}
	if serves(a2a.BindingHTTPJSON) {
		mux.Handle(RESTPath+"/", http.StripPrefix(RESTPath, rest.NewHandler(h, ropts...)))
	}
	return mux, nil
}
