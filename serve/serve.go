// Package serve runs an A2A agent as a complete server: the agent card and
// its signing keys, the JSON-RPC and HTTP+JSON bindings, the gRPC binding
// on a listener of its own, /healthz and /readyz, push delivery with its
// published key, the store's maintenance, and a graceful shutdown.
//
//	srv, err := serve.New(card, agent,
//		serve.WithAddr("127.0.0.1:8080"),
//		serve.WithStore(st),
//		serve.WithPush(serve.Push{}),
//		serve.WithGRPC("127.0.0.1:8081"),
//	)
//	if err != nil { ... }
//	err = srv.Run(ctx) // until ctx ends, then shuts down gracefully
//
// What the server can derive it fills in the card: the interfaces it
// serves, at its public URL; the push notification capability, with the
// extension that reports delivery state; the security schemes of
// [WithAPIKeys], [WithJWT] and [WithMutualTLS]. What cannot work is
// refused by [New]: a card that promises push notifications with no
// delivery configured, a store or a pusher among the Handler's options
// that is not the Server's, mutual TLS without client CAs. Metrics
// (package a2aprom) and traces (package a2aotel) come as bundles of
// options ([WithOptions]).
//
// Package serve builds on the packages beneath it ([server], the bindings,
// [push], [auth]) and adds no protocol rule of its own: a program that
// needs another layout mounts those itself. It imports gRPC; a program
// that imports only a2a, server, client and store compiles none of it.
package serve

import (
	"cmp"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2agrpc"
	"github.com/goa2a/a2a/server/a2ahttp"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// Defaults of a Server.
const (
	DefaultAddr          = "127.0.0.1:8080"
	DefaultGrace         = 10 * time.Second
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = time.Minute
	DefaultIdleTimeout   = 2 * time.Minute
	DefaultMaxBodyBytes  = 10 << 20
	// DefaultHSTS is the Strict-Transport-Security header sent over TLS
	// (RFC 6797): one year, this host only, since the server cannot know
	// whether every subdomain serves HTTPS.
	DefaultHSTS = "max-age=31536000"
)

// Paths the server answers without authentication besides the agent card
// ([server.WellKnownCardPath]) and the push key ([push.JWKSPath]).
const (
	HealthPath = "/healthz"
	ReadyPath  = "/readyz"
	// CardJWKSPath publishes the card's signing key ([WithCardSigning]).
	CardJWKSPath = auth.CardJWKSPath
)

// grpcMaxStreamsPerConn bounds the calls one gRPC connection may have at
// once, as net/http does for HTTP/2.
const grpcMaxStreamsPerConn = 250

// Push configures webhook delivery (push notifications): every status and
// artifact update of a task with push configs is POSTed to their webhooks,
// signed with ES256 (the public key is served at [push.JWKSPath]), retried
// with backoff, and resumed after a restart from the store.
type Push struct {
	// Allow lists the hosts, addresses and prefixes webhooks may reach
	// although they are loopback, private or link-local, which the guard
	// refuses by default (server-side request forgery); see
	// [push.WithAllow].
	Allow []string
	// Key signs the notifications; nil makes one at start. Replicas
	// behind one URL need the same key.
	Key *ecdsa.PrivateKey
	// GuardOptions tune the guard further (timeouts, a resolver).
	GuardOptions []push.GuardOption
	// DelivererOptions tune delivery (workers, backoff, a result hook).
	// The guard, the signing and the logger are the Server's: set them
	// here, not with push.WithGuard, push.WithSigning or push.WithLogger.
	DelivererOptions []push.DelivererOption
}

// Option configures a [Server].
type Option func(*config) error

type config struct {
	addr, grpcAddr, opsAddr string
	ln, grpcLn, opsLn       net.Listener
	publicURL               string
	bindings                []string // HTTP bindings; nil: both
	v03                     bool     // WithV03

	store    store.Store
	push     *Push
	authn    authConfig // auth.go
	tls      *tls.Config
	hsts     *string // WithHSTS; nil: DefaultHSTS
	cardKey  crypto.Signer
	cardKID  string
	log      *slog.Logger
	grace    time.Duration
	maxBody  int64
	header   time.Duration
	body     time.Duration
	idle     time.Duration
	limits   *server.Limits
	handler  []server.Option
	httpMW   []func(http.Handler) http.Handler
	grpcOpts []grpc.ServerOption
	ops      map[string]http.Handler
	onStop   []func(running int)
	onStart  []func()
	pushOpts []push.DelivererOption
}

// WithOptions applies opts in order: for a bundle of options another
// package returns (a2aotel's ServeOptions, say).
func WithOptions(opts ...Option) Option {
	return func(c *config) error {
		for _, o := range opts {
			if err := o(c); err != nil {
				return err
			}
		}
		return nil
	}
}

// WithAddr sets the address of the HTTP listener (default [DefaultAddr]).
func WithAddr(addr string) Option {
	return func(c *config) error { c.addr = addr; return nil }
}

// WithListener serves HTTP on ln, which the Server closes, in place of
// listening on an address.
func WithListener(ln net.Listener) Option {
	return func(c *config) error { c.ln = ln; return nil }
}

// WithGRPC also serves the gRPC binding, on addr (HOST:PORT). The card
// lists it after the JSON bindings, at the public URL's host.
func WithGRPC(addr string) Option {
	return func(c *config) error { c.grpcAddr = addr; return nil }
}

// WithGRPCListener serves the gRPC binding on ln.
func WithGRPCListener(ln net.Listener) Option {
	return func(c *config) error { c.grpcLn = ln; return nil }
}

// WithOps serves /healthz, /readyz and the [WithOpsHandler] handlers on a
// listener of their own at addr, kept open until the end of a shutdown so
// that probes see 503 throughout. Without it they are served on the HTTP
// listener.
func WithOps(addr string) Option {
	return func(c *config) error { c.opsAddr = addr; return nil }
}

// WithOpsListener is [WithOps] on a listener already open.
func WithOpsListener(ln net.Listener) Option {
	return func(c *config) error { c.opsLn = ln; return nil }
}

// WithOpsHandler serves h at pattern (such as "GET /metrics") beside the
// health probes, without authentication.
func WithOpsHandler(pattern string, h http.Handler) Option {
	return func(c *config) error {
		if c.ops == nil {
			c.ops = make(map[string]http.Handler)
		}
		c.ops[pattern] = h
		return nil
	}
}

// WithPublicURL sets the base URL clients reach the server at, as the card
// writes it (default: the HTTP listener's address).
func WithPublicURL(u string) Option {
	return func(c *config) error {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("serve: public URL %q: want an absolute http:// or https:// URL", u)
		}
		c.publicURL = strings.TrimRight(u, "/")
		return nil
	}
}

// WithBindings chooses the HTTP bindings, among a2a.BindingJSONRPC and
// a2a.BindingHTTPJSON (default both). gRPC is [WithGRPC]'s.
func WithBindings(bindings ...string) Option {
	return func(c *config) error {
		if err := a2ahttp.CheckBindings(bindings); err != nil {
			return fmt.Errorf("serve: WithBindings: %w (gRPC is WithGRPC's)", err)
		}
		c.bindings = append([]string{}, bindings...)
		return nil
	}
}

// WithV03 serves A2A v0.3 clients too, on the JSON-RPC binding
// ([server.WithV03]): a call of a v0.3 method with A2A-Version 0.3, or
// none, is translated by package a2a/v03, and the card at
// [server.WellKnownCardPath] is the dual card that v0.3 and v1.0 clients
// both read, with the JSON-RPC endpoint as its v0.3 url. HTTP+JSON and
// gRPC answer v1.0 only. With [WithCardSigning], the v1.0 card
// ([Server.Card]) is signed but the served dual card is not: a signature
// does not cover the v0.3 members. WithV03 needs the JSON-RPC binding
// ([WithBindings]).
func WithV03() Option {
	return func(c *config) error {
		c.v03 = true
		return nil
	}
}

// WithStore keeps tasks in st (default: in memory, gone at exit). The
// Server does not close st: its opener does, after [Server.Run] returns.
func WithStore(st store.Store) Option {
	return func(c *config) error { c.store = st; return nil }
}

// WithPush delivers push notifications (see [Push]); without it the card
// must not declare them.
func WithPush(p Push) Option {
	return func(c *config) error { c.push = &p; return nil }
}

// WithTLS serves HTTPS and gRPC over TLS with cfg, and sends
// Strict-Transport-Security ([DefaultHSTS], or [WithHSTS]'s) on every
// HTTPS response.
func WithTLS(cfg *tls.Config) Option {
	return func(c *config) error {
		if cfg == nil || (len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil) {
			return errors.New("serve: WithTLS: the TLS config has no certificate")
		}
		c.tls = cfg
		return nil
	}
}

// WithHSTS sets the Strict-Transport-Security value sent over TLS; "" sends
// none (for a development certificate on localhost, which a browser would
// otherwise refuse plain HTTP for on every port for a year).
func WithHSTS(value string) Option {
	return func(c *config) error {
		c.hsts = &value
		return nil
	}
}

// WithCardSigning signs the agent card (A2A §8.4, JWS with RFC 8785) with
// key, named kid, once the Server has filled it in, and publishes the
// public key at [CardJWKSPath] of the public URL.
func WithCardSigning(key crypto.Signer, kid string) Option {
	return func(c *config) error {
		if key == nil || kid == "" {
			return errors.New("serve: WithCardSigning needs a key and its key id")
		}
		c.cardKey, c.cardKID = key, kid
		return nil
	}
}

// WithLogger logs the server, the Handler, the bindings and push delivery
// through l (default: discarded).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error { c.log = l; return nil }
}

// WithGrace sets how long running tasks may take to finish at shutdown
// before they are canceled (default [DefaultGrace]).
func WithGrace(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("serve: WithGrace: %v is not a positive duration", d)
		}
		c.grace = d
		return nil
	}
}

// WithMaxBodyBytes limits request bodies and gRPC messages (default
// [DefaultMaxBodyBytes]).
func WithMaxBodyBytes(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("serve: WithMaxBodyBytes: %d is not a positive size", n)
		}
		c.maxBody = n
		return nil
	}
}

// Timeouts of the connections. Zero fields keep their defaults.
type Timeouts struct {
	// Header is the time a client has for a request's headers, and for a
	// connection's set-up (TLS handshake, gRPC preface).
	Header time.Duration
	// Body is the time a client has for a request's body once its headers
	// are in. Streams are not cut by it: it ends with the body.
	Body time.Duration
	// Idle is how long an idle connection is kept open.
	Idle time.Duration
}

// WithTimeouts sets the connections' timeouts (defaults
// [DefaultHeaderTimeout], [DefaultBodyTimeout], [DefaultIdleTimeout]).
func WithTimeouts(t Timeouts) Option {
	return func(c *config) error {
		if t.Header < 0 || t.Body < 0 || t.Idle < 0 {
			return errors.New("serve: WithTimeouts: negative timeout")
		}
		c.header, c.body, c.idle = cmp.Or(t.Header, c.header), cmp.Or(t.Body, c.body), cmp.Or(t.Idle, c.idle)
		return nil
	}
}

// WithLimits sets the Handler's limits ([server.WithLimits]).
func WithLimits(l server.Limits) Option {
	return func(c *config) error { c.limits = &l; return nil }
}

// WithHandlerOptions passes options to [server.NewHandler]: interceptors,
// a state hook, retention, the extended card. The store and the pusher
// are the Server's ([WithStore], [WithPush]).
func WithHandlerOptions(opts ...server.Option) Option {
	return func(c *config) error { c.handler = append(c.handler, opts...); return nil }
}

// WithHTTPMiddleware wraps everything the HTTP listener serves with mw
// (access logs, metrics), outside authentication: mw sees refused requests
// too. The first given is the outermost.
func WithHTTPMiddleware(mw func(next http.Handler) http.Handler) Option {
	return func(c *config) error { c.httpMW = append(c.httpMW, mw); return nil }
}

// WithGRPCOptions adds options to the gRPC server (a stats handler, say).
func WithGRPCOptions(opts ...grpc.ServerOption) Option {
	return func(c *config) error { c.grpcOpts = append(c.grpcOpts, opts...); return nil }
}

// WithOnShutdown calls fn when a shutdown starts, with the number of tasks
// the agent is running then. Each WithOnShutdown adds a function.
func WithOnShutdown(fn func(running int)) Option {
	return func(c *config) error { c.onStop = append(c.onStop, fn); return nil }
}

// WithOnServing calls fn once the server serves, before [Server.Run]
// waits. Each WithOnServing adds a function.
func WithOnServing(fn func()) Option {
	return func(c *config) error { c.onStart = append(c.onStart, fn); return nil }
}

// WithPushOptions adds options to push delivery, after those of
// [WithPush] (hooks, which compose, from packages such as a2aotel); without
// WithPush they do nothing.
func WithPushOptions(opts ...push.DelivererOption) Option {
	return func(c *config) error { c.pushOpts = append(c.pushOpts, opts...); return nil }
}

// Server is an A2A agent served over HTTP (and gRPC). Make it with [New],
// then [Server.Run] it; a Server that is never run must be closed.
type Server struct {
	cfg   config
	log   *slog.Logger
	h     *server.Handler
	card  *a2a.AgentCard
	base  string
	agent *trackedAgent
	calls *inflight
	ready atomic.Bool
	probe *readiness

	ln, grpcLn, opsLn net.Listener
	httpSrv, opsSrv   *http.Server
	grpcSrv           *grpc.Server

	deliverer *push.Deliverer
	signer    *push.Signer
	cardJWKS  []byte // the card's public key as a JWK set, nil unsigned

	once sync.Once // of Run and Close
}

// New listens, fills in the card and builds the Handler, the bindings and
// push delivery; nothing is served until [Server.Run]. The card is copied,
// not modified.
func New(card *a2a.AgentCard, agent server.Agent, opts ...Option) (_ *Server, err error) {
	if card == nil {
		return nil, errors.New("serve: nil agent card")
	}
	if agent == nil {
		return nil, errors.New("serve: nil agent")
	}
	s := &Server{cfg: config{
		addr: DefaultAddr, grace: DefaultGrace, maxBody: DefaultMaxBodyBytes,
		header: DefaultHeaderTimeout, body: DefaultBodyTimeout, idle: DefaultIdleTimeout,
	}}
	for _, o := range opts {
		if err := o(&s.cfg); err != nil {
			s.closeListeners()
			return nil, err
		}
	}
	c := &s.cfg
	if c.bindings != nil && len(c.bindings) == 0 && c.grpcAddr == "" && c.grpcLn == nil {
		s.closeListeners()
		return nil, errors.New("serve: no binding to serve: WithBindings gave none, and there is no WithGRPC")
	}
	if c.v03 && c.bindings != nil && !slices.Contains(c.bindings, a2a.BindingJSONRPC) {
		s.closeListeners()
		return nil, errors.New("serve: WithV03 needs the JSON-RPC binding, the one that speaks v0.3, and WithBindings leaves it out")
	}
	s.ln, s.grpcLn, s.opsLn = c.ln, c.grpcLn, c.opsLn
	defer func() {
		if err != nil {
			s.closeListeners()
		}
	}()
	s.log = c.log
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if c.store == nil {
		c.store = memory.New()
	}
	card, err = s.deriveCard(card)
	if err != nil {
		return nil, err
	}
	if err := s.listen(); err != nil {
		return nil, err
	}
	s.base = c.publicURL
	if s.base == "" {
		s.base = s.scheme() + "://" + s.ln.Addr().String()
	}
	card.SupportedInterfaces = s.interfaces()
	if c.cardKey != nil {
		signer, err := auth.NewCardSigner(c.cardKID, c.cardKey, s.base+CardJWKSPath)
		if err != nil {
			return nil, fmt.Errorf("serve: card signing: %w", err)
		}
		if card, err = auth.SignCard(card, signer); err != nil {
			return nil, fmt.Errorf("serve: card signing: %w", err)
		}
		jwks, err := signer.JWKS()
		if err != nil {
			return nil, fmt.Errorf("serve: card signing: %w", err)
		}
		s.cardJWKS = jwks
	}
	s.card = card
	if c.push != nil {
		if err := s.newDeliverer(); err != nil {
			return nil, err
		}
	}
	s.agent = &trackedAgent{agent: agent}
	s.calls = &inflight{}
	hopts := []server.Option{server.WithLogger(s.log)}
	if c.v03 {
		hopts = append(hopts, server.WithV03())
	}
	hopts = append(hopts, c.handler...)
	// Last, so that neither is overridden by a Handler option.
	hopts = append(hopts, server.WithStore(c.store), server.WithInterceptors(s.calls))
	if c.limits != nil {
		hopts = append(hopts, server.WithLimits(*c.limits))
	}
	if s.deliverer != nil {
		hopts = append(hopts, server.WithPusher(s.deliverer))
	}
	if s.h, err = server.NewHandler(card, s.agent, hopts...); err != nil {
		// Among others: a store or pusher among the Handler options that
		// is not the Server's.
		return nil, fmt.Errorf("serve: %w (the store is serve.WithStore's and the pusher serve.WithPush's)", err)
	}
	s.probe = newReadiness(c.store, s.log)
	if err := s.buildServers(); err != nil {
		s.h.Close(context.Background())
		return nil, err
	}
	return s, nil
}

// deriveCard copies card and fills in what the configuration decides: push
// notifications and the security schemes. It refuses a card that promises
// push notifications no one delivers.
func (s *Server) deriveCard(in *a2a.AgentCard) (*a2a.AgentCard, error) {
	card := cloneCard(in)
	c := &s.cfg
	switch {
	case c.push != nil:
		card.Capabilities.PushNotifications = a2a.Ptr(true)
		if !slices.ContainsFunc(card.Capabilities.Extensions, func(e a2a.AgentExtension) bool { return e.URI == server.PushDeliveryExtension }) {
			card.Capabilities.Extensions = append(card.Capabilities.Extensions, a2a.AgentExtension{
				URI:         server.PushDeliveryExtension,
				Description: "declare it on GetTaskPushNotificationConfig to get the webhook's delivery state in the " + server.PushDeliveryHeader + " response header",
			})
		}
	case card.Capabilities.SupportsPush():
		return nil, errors.New("serve: the agent card declares capabilities.pushNotifications, but no push delivery is configured: " +
			"add serve.WithPush(serve.Push{}), or set capabilities.pushNotifications to false")
	}
	if err := s.declareAuth(card); err != nil {
		return nil, err
	}
	return card, nil
}

// cloneCard copies what deriveCard and New change.
func cloneCard(in *a2a.AgentCard) *a2a.AgentCard {
	card := *in
	card.Capabilities.Extensions = slices.Clone(in.Capabilities.Extensions)
	card.SecurityRequirements = slices.Clone(in.SecurityRequirements)
	if in.SecuritySchemes != nil {
		card.SecuritySchemes = make(map[string]a2a.SecurityScheme, len(in.SecuritySchemes))
		for k, v := range in.SecuritySchemes {
			card.SecuritySchemes[k] = v
		}
	}
	card.Signatures = nil // the card changes: a signature of the caller's no longer holds
	return &card
}

// listen opens the listeners not given as such, and wraps them in TLS.
func (s *Server) listen() error {
	c := &s.cfg
	var err error
	if s.ln == nil {
		if s.ln, err = net.Listen("tcp", c.addr); err != nil {
			return fmt.Errorf("serve: cannot listen on %s: %w", c.addr, err)
		}
	}
	if s.grpcLn == nil && c.grpcAddr != "" {
		if s.grpcLn, err = net.Listen("tcp", c.grpcAddr); err != nil {
			return fmt.Errorf("serve: cannot listen on %s (gRPC): %w", c.grpcAddr, err)
		}
	}
	if s.opsLn == nil && c.opsAddr != "" {
		if s.opsLn, err = net.Listen("tcp", c.opsAddr); err != nil {
			return fmt.Errorf("serve: cannot listen on %s (health probes): %w", c.opsAddr, err)
		}
	}
	if c.tls != nil {
		s.ln = tls.NewListener(s.ln, c.tls)
	}
	return nil
}

// scheme is the scheme of the server's own URLs.
func (s *Server) scheme() string {
	if s.cfg.tls != nil {
		return "https"
	}
	return "http"
}

// interfaces are the card's supportedInterfaces: the served HTTP bindings
// at the public URL, JSON-RPC first, then gRPC at the public host and the
// gRPC listener's port. Clients use TLS for gRPC when they fetched the
// card over https.
func (s *Server) interfaces() []a2a.AgentInterface {
	var out []a2a.AgentInterface
	for _, in := range a2ahttp.Interfaces(s.base) {
		if s.servesHTTP(in.ProtocolBinding) {
			out = append(out, in)
		}
	}
	if s.grpcLn != nil {
		addr := s.grpcLn.Addr().String()
		if u, err := url.Parse(s.base); err == nil && u.Hostname() != "" {
			if _, port, err := net.SplitHostPort(addr); err == nil {
				addr = net.JoinHostPort(u.Hostname(), port)
			}
		}
		out = append(out, a2a.AgentInterface{URL: addr, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion})
	}
	return out
}

func (s *Server) servesHTTP(binding string) bool {
	return s.cfg.bindings == nil || slices.Contains(s.cfg.bindings, binding)
}

// newDeliverer makes the push deliverer on the Server's store, with a
// guard and a signer whose issuer is the public URL.
func (s *Server) newDeliverer() error {
	p := s.cfg.push
	key := p.Key
	if key == nil {
		var err error
		if key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			return fmt.Errorf("serve: making a push signing key: %w", err)
		}
	}
	kid, err := auth.KeyID("push-", &key.PublicKey)
	if err != nil {
		return fmt.Errorf("serve: push signing key: %w", err)
	}
	if s.signer, err = push.NewSigner(kid, key, push.WithIssuer(s.base)); err != nil {
		return fmt.Errorf("serve: push signing key: %w", err)
	}
	guard, err := push.NewGuard(append([]push.GuardOption{push.WithAllow(p.Allow...)}, p.GuardOptions...)...)
	if err != nil {
		return fmt.Errorf("serve: push guard: %w", err)
	}
	dopts := append([]push.DelivererOption{push.WithLogger(s.log)}, p.DelivererOptions...)
	dopts = append(dopts, s.cfg.pushOpts...)
	dopts = append(dopts, push.WithGuard(guard), push.WithSigning(s.signer))
	if s.deliverer, err = push.NewDeliverer(s.cfg.store, dopts...); err != nil {
		return fmt.Errorf("serve: push delivery: %w", err)
	}
	return nil
}

// Handler returns the A2A Handler the bindings serve.
func (s *Server) Handler() *server.Handler { return s.h }

// Card returns the served agent card, as filled in (and signed). It must
// not be modified.
func (s *Server) Card() *a2a.AgentCard { return s.card }

// URL returns the public base URL.
func (s *Server) URL() string { return s.base }

// HTTPHandler returns what the HTTP listener serves: the card, the
// bindings behind authentication, and the probes unless [WithOps] moved
// them. It is for tests and for a caller that serves it on a listener of
// its own; [Server.Run] serves it already.
func (s *Server) HTTPHandler() http.Handler { return s.httpSrv.Handler }

// Addr returns the HTTP listener's address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// GRPCAddr returns the gRPC listener's address, nil without gRPC.
func (s *Server) GRPCAddr() net.Addr {
	if s.grpcLn == nil {
		return nil
	}
	return s.grpcLn.Addr()
}

// OpsAddr returns the health listener's address, nil when the probes are
// served on the HTTP listener.
func (s *Server) OpsAddr() net.Addr {
	if s.opsLn == nil {
		return nil
	}
	return s.opsLn.Addr()
}

// Ready reports whether the server is serving and not shutting down (the
// store's health aside, which /readyz also checks).
func (s *Server) Ready() bool { return s.ready.Load() }

// Running returns the number of tasks the agent is executing.
func (s *Server) Running() int { return s.agent.running() }

// PushSigner returns the signer of push notifications, nil without push.
func (s *Server) PushSigner() *push.Signer { return s.signer }

// Close releases a Server that was never run: its listeners and Handler.
// After [Server.Run] it does nothing.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.closeListeners()
		s.h.Close(context.Background())
	})
	return nil
}

func (s *Server) closeListeners() {
	for _, ln := range []net.Listener{s.ln, s.grpcLn, s.opsLn, s.cfg.ln, s.cfg.grpcLn, s.cfg.opsLn} {
		if ln != nil {
			ln.Close()
		}
	}
}

// buildServers makes the HTTP servers and the gRPC server.
func (s *Server) buildServers() error {
	c := &s.cfg
	mux, err := a2ahttp.NewMux(s.h, a2ahttp.Options{MaxBodyBytes: c.maxBody, Bindings: c.bindings, Logger: s.log})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if s.cardJWKS != nil {
		mux.Handle(CardJWKSPath, auth.JWKSHandler(s.cardJWKS))
	}
	if s.signer != nil {
		mux.Handle(push.JWKSPath, s.signer.JWKSHandler())
	}
	guarded := withClientKey(s.authChain(dispatch(mux)))
	root := http.NewServeMux()
	root.Handle("/", guarded)
	for _, p := range s.publicPaths() {
		root.Handle(p, mux)
	}
	ops := s.opsMux()
	if s.opsLn == nil {
		root.Handle(HealthPath, ops)
		root.Handle(ReadyPath, ops)
		for pattern := range c.ops {
			root.Handle(pattern, ops)
		}
	} else {
		s.opsSrv = s.httpServer(ops)
	}
	var h http.Handler = root
	for i := len(c.httpMW) - 1; i >= 0; i-- {
		h = c.httpMW[i](h)
	}
	s.httpSrv = s.httpServer(s.guardTransport(h))
	if s.grpcLn != nil {
		s.grpcSrv = s.newGRPCServer(guarded)
	}
	return nil
}

// publicPaths are the paths served without authentication: the card and
// the keys that verify it and the push notifications.
func (s *Server) publicPaths() []string {
	paths := []string{server.WellKnownCardPath}
	if s.cardJWKS != nil {
		paths = append(paths, CardJWKSPath)
	}
	if s.signer != nil {
		paths = append(paths, push.JWKSPath)
	}
	return paths
}

// grpcNextKey marks a request that the gRPC binding presents to the HTTP
// authentication chain: once admitted, it goes to the gRPC call, not to
// the HTTP mux.
type grpcNextKey struct{}

// dispatch is the end of the authentication chain: the A2A mux for HTTP
// requests, the gRPC call for the ones the gRPC binding presents.
func dispatch(mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if next, ok := r.Context().Value(grpcNextKey{}).(http.Handler); ok {
			next.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// newGRPCServer builds the gRPC server behind guarded, the HTTP chain of
// client key and authentication, with the HTTP server's connection limits:
// calls at once per connection (as net/http's HTTP/2), the time to set a
// connection up, and idle connections closed.
func (s *Server) newGRPCServer(guarded http.Handler) *grpc.Server {
	c := &s.cfg
	authn := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			guarded.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), grpcNextKey{}, next)))
		})
	}
	sopts := []grpc.ServerOption{grpc.MaxConcurrentStreams(grpcMaxStreamsPerConn), grpc.ConnectionTimeout(c.header),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: c.idle})}
	if c.tls != nil {
		sopts = append(sopts, grpc.Creds(credentials.NewTLS(c.tls)))
	}
	sopts = append(sopts, c.grpcOpts...)
	return a2agrpc.NewServer(s.h, a2agrpc.WithLogger(s.log), a2agrpc.WithHTTPAuth(authn),
		a2agrpc.WithMaxRecvMsgSize(int(c.maxBody)), a2agrpc.WithServerOptions(sopts...))
}

func (s *Server) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.cfg.header,
		IdleTimeout:       s.cfg.idle,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// guardTransport wraps the HTTP listener's handler: it sends
// Strict-Transport-Security on every response over TLS (A2A §13.4), and
// gives each request body the body timeout to arrive.
//
// The body deadline is the slow-body half of slowloris protection: the
// server's ReadHeaderTimeout ends at the headers, and a ReadTimeout would
// also cut the long-lived streams of SendStreamingMessage and
// SubscribeToTask. So a read deadline is set when the handler starts. It
// ends with the body: net/http lifts it once the body has been read to
// its end (HTTP/1.1, to watch for the client hanging up), and under
// HTTP/2 it applies to the stream's body only.
func (s *Server) guardTransport(next http.Handler) http.Handler {
	hsts := ""
	if s.cfg.tls != nil {
		hsts = DefaultHSTS
		if s.cfg.hsts != nil {
			hsts = *s.cfg.hsts
		}
	}
	timeout := s.cfg.body
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hsts != "" {
			w.Header().Set("Strict-Transport-Security", hsts)
		}
		if r.Body != nil && r.Body != http.NoBody {
			// An error means a writer without deadlines; nothing to do.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		}
		next.ServeHTTP(w, r)
	})
}
