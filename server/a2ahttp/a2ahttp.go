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
	"github.com/goa2a/a2a/a2a/v03"
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
// When h serves v0.3 too ([server.WithV03]), the card is the dual card of
// [v03.FromV1AgentCard], which v0.3 and v1.0 clients both read; it is
// served unsigned, since a signature of h's card does not cover the v0.3
// members. Unless the card lists v0.3 interfaces itself, each JSON-RPC
// interface gets a twin with protocol version 0.3, the only binding that
// speaks v0.3 here: that one is the v0.3 card's url, for v0.3 clients, and
// v1.0 clients see that the endpoint speaks both.
func NewMux(h *server.Handler, o Options) (*http.ServeMux, error) {
	if err := CheckBindings(o.Bindings); err != nil {
		return nil, err
	}
	serves := func(b string) bool { return o.Bindings == nil || slices.Contains(o.Bindings, b) }
	if o.CardMaxAge == 0 {
		o.CardMaxAge = 5 * time.Minute
	}
	card, err := cardFor(h, o.CardMaxAge)
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

// cardFor serves h's card, as a dual card when h serves v0.3.
func cardFor(h *server.Handler, maxAge time.Duration) (http.Handler, error) {
	if _, err := h.ProtocolVersion(v03.Version); err != nil {
		return CardHandler(h.Card(), maxAge)
	}
	card := *h.Card()
	card.SupportedInterfaces = withV03Twins(card.SupportedInterfaces)
	dual, err := v03.FromV1AgentCard(&card)
	if err != nil {
		return nil, fmt.Errorf("the agent card has no v0.3 form: %w", err)
	}
	// A signature is over the JSON it was made of, which the v0.3
	// members change (A2A §8.4): one that no longer verifies is left out.
	dual.Signatures = nil
	return cardHandler(dual, maxAge)
}

// withV03Twins returns ifs with a v0.3 twin of each JSON-RPC interface
// (without a tenant, which v0.3 cannot send), unless ifs has a v0.3
// interface already.
func withV03Twins(ifs []a2a.AgentInterface) []a2a.AgentInterface {
	var twins []a2a.AgentInterface
	for _, i := range ifs {
		if v := i.ProtocolVersion; v == v03.Version || strings.HasPrefix(v, v03.Version+".") {
			return ifs
		}
		if i.ProtocolBinding == a2a.BindingJSONRPC && i.Tenant == "" {
			i.ProtocolVersion = v03.Version
			twins = append(twins, i)
		}
	}
	return append(slices.Clip(ifs), twins...)
}
