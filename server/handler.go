package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/a2a/v03"
	"github.com/goa2a/a2a/internal/uuid"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// Handler implements the eleven A2A operations over a [store.Store] and an
// [Agent], independent of any wire format. The bindings (server/jsonrpc,
// server/rest) adapt it to HTTP; every protocol rule lives here, once.
//
// A Handler is safe for concurrent use. Call [Handler.Close] to stop it.
type Handler struct {
	v03      bool // WithV03
	card     *a2a.AgentCard
	agent    Agent
	store    store.Store
	log      *slog.Logger
	now      func() time.Time
	newID    func() string
	extended func(ctx context.Context) (*a2a.AgentCard, error)

	extendedMaxAge time.Duration // Cache-Control max-age of the extended card over GET

	inputModes []string // accepted input media types; empty accepts all
	required   []string // extension URIs the card marks required
	tokens     tokenKey // signs page tokens

	onState func(taskID string, state a2a.TaskState)
	pusher  Pusher

	limits *limiter // see limits.go

	retention     time.Duration // 0: keep finished tasks
	messageTTL    time.Duration // how long client message ids are remembered (idempotent.go)
	maintainEvery time.Duration // < 0: no background maintenance
	maintenance   sync.WaitGroup

	mu      sync.Mutex
	live    map[string]*liveTask
	closed  bool
	done    chan struct{} // closed by Close
	baseCtx context.Context
	cancel  context.CancelFunc
	agents  sync.WaitGroup
	flushes sync.WaitGroup // goroutines storing queued task writes
	// followers are the goroutines catching live tasks up with the
	// store's change feed (follow.go); stopFeed stops the feed.
	followers  sync.WaitGroup
	stopFeed   func()
	followPoll time.Duration // < 0: no poll
	// retryBase and retryMax are the first and the longest wait before
	// storing again while the store is unavailable.
	retryBase, retryMax time.Duration

	pushLocks pushConfigLocks // push.go

	execHooks    []ExecutionHook // WithExecutionHook, first outermost
	interceptors []Interceptor   // WithInterceptors, outermost first
	chain        *interceptors   // built from them by NewHandler; nil for none
}

// Option configures a [Handler].
type Option func(*Handler) error

// WithStore sets where tasks are kept. The default is a new in-memory store.
// Given twice, it must be the same store: a Handler keeps tasks in one.
func WithStore(s store.Store) Option {
	return func(h *Handler) error {
		if s == nil {
			return errors.New("server: WithStore: nil store")
		}
		if h.store != nil && !same(h.store, s) {
			return fmt.Errorf("server: WithStore given twice, with two different stores (%T and %T): give the store once", h.store, s)
		}
		h.store = s
		return nil
	}
}

// same reports whether a and b are the same value, false where they cannot
// be compared (a struct holding a map, say) rather than panicking.
func same[T any](a, b T) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return any(a) == any(b)
}

// WithLogger sets the logger for agent failures and internal errors. The
// default discards logs.
func WithLogger(l *slog.Logger) Option {
	return func(h *Handler) error {
		if l == nil {
			return errors.New("server: WithLogger: nil logger")
		}
		h.log = l
		return nil
	}
}

// WithV03 serves A2A v0.3 clients too, beside v1.0 ones (A2A §3.6.2): a
// binding that speaks v0.3 (the JSON-RPC binding, server/jsonrpc)
// translates a call that sends A2A-Version 0.3, or none, with package
// a2a/v03 and marks it in [ServiceParams.V03]; the Handler serves such
// calls, and only those, as v0.3 ones. Without it, and by default, such a
// call is refused with VersionNotSupported naming 1.0. Tasks are the same
// for both: a task one version's client created is followed by the
// other's.
func WithV03() Option {
	return func(h *Handler) error {
		h.v03 = true
		return nil
	}
}

// WithClock sets the clock used to stamp statuses. The default is
// time.Now. Times are truncated to the millisecond, the wire's precision.
func WithClock(now func() time.Time) Option {
	return func(h *Handler) error {
		if now == nil {
			return errors.New("server: WithClock: nil clock")
		}
		h.now = now
		return nil
	}
}

// WithIDGenerator sets how task, context, message and config ids are made.
// The default makes random UUIDs.
func WithIDGenerator(newID func() string) Option {
	return func(h *Handler) error {
		if newID == nil {
			return errors.New("server: WithIDGenerator: nil generator")
		}
		h.newID = newID
		return nil
	}
}

// WithExtendedCard sets the card returned by GetExtendedAgentCard. The
// public card must declare capabilities.extendedAgentCard; without this
// option such a card answers ExtendedAgentCardNotConfiguredError. get is
// called only for authenticated callers, with the caller's context: it may
// vary the card by principal, and should set the card's version (A2A
// §13.3). See [Handler.GetExtendedAgentCard].
func WithExtendedCard(get func(ctx context.Context) (*a2a.AgentCard, error)) Option {
	return func(h *Handler) error {
		h.extended = get
		return nil
	}
}

// WithStateHook calls fn each time a task this Handler writes enters a
// state: when it is created and on every status update, after the store
// has it, in the task's order. It also sees updates that other writers of
// a shared store appended, as this Handler catches up with them. fn runs
// while the task is locked: it must be quick and must not call the
// Handler. Metrics are its purpose.
func WithStateHook(fn func(taskID string, state a2a.TaskState)) Option {
	return func(h *Handler) error {
		h.onState = fn
		return nil
	}
}

// A Pusher delivers webhooks (push notifications); *push.Deliverer is
// one. The Handler tells it when a task that has push configs grows, and
// when a config is deleted.
type Pusher interface {
	// Appended reports that the log of a task with push configs now ends
	// at seq. It is called with the task locked and must not block.
	Appended(scope store.Scope, taskID string, seq int64)
	// Deleted reports that a push config was deleted from the store, and
	// returns when no call to its webhook is in flight: once
	// DeleteTaskPushNotificationConfig returns, the webhook receives
	// nothing more from this process.
	Deleted(ctx context.Context, scope store.Scope, taskID, id string)
}

// WithPusher has p deliver the webhooks of the push configs this Handler
// stores. Without it configs are kept but nobody calls them. Run p (for
// push.Deliverer, its Run method) for as long as the Handler serves.
func WithPusher(p Pusher) Option {
	return func(h *Handler) error {
		if p == nil {
			return errors.New("server: WithPusher: nil pusher")
		}
		if h.pusher != nil && !same(h.pusher, p) {
			return fmt.Errorf("server: WithPusher given twice, with two different pushers (%T and %T): give the pusher once", h.pusher, p)
		}
		h.pusher = p
		return nil
	}
}

// NewHandler returns a Handler serving agent as described by card. The card
// is validated: it must have a name, a version and at least one interface.
//
// With a store that is a store.Maintainer (all of this module's are), the
// Handler runs a background maintenance pass (crash recovery, retention;
// see WithMaintenanceInterval) until Close: always Close a Handler.
func NewHandler(card *a2a.AgentCard, agent Agent, opts ...Option) (*Handler, error) {
	if card == nil {
		return nil, errors.New("server: nil agent card")
	}
	if agent == nil {
		return nil, errors.New("server: nil agent")
	}
	if err := validateCard(card); err != nil {
		return nil, err
	}
	h := &Handler{
		card:  card,
		agent: agent,
		log:   slog.New(slog.DiscardHandler),
		now:   time.Now,
		newID: uuid.New,
		live:  make(map[string]*liveTask),
		done:  make(chan struct{}),

		maintainEvery: DefaultMaintenanceInterval,
		followPoll:    DefaultFollowPoll,
		retryBase:     50 * time.Millisecond,
		retryMax:      5 * time.Second,

		extendedMaxAge: DefaultExtendedCardMaxAge,
	}
	for _, opt := range opts {
		if err := opt(h); err != nil {
			return nil, err
		}
	}
	if h.store == nil {
		h.store = memory.New()
	}
	if h.limits == nil {
		h.limits = newLimiter(Limits{})
	}
	h.buildInterceptors()
	if card.Capabilities.SupportsPush() && h.pusher == nil {
		h.log.Warn("the agent card declares pushNotifications but nothing delivers them: push configs are stored and never called",
			"fix", "pass server.WithPusher (a push.Deliverer), or set capabilities.pushNotifications to false")
	}
	h.inputModes = acceptedInputModes(card)
	for _, ext := range card.Capabilities.Extensions {
		if ext.Required {
			h.required = append(h.required, ext.URI)
		}
	}
	_, maintainable := h.store.(store.Maintainer)
	if h.retention > 0 && !maintainable {
		return nil, fmt.Errorf("server: WithRetention: the store (%T) cannot expire tasks", h.store)
	}
	h.baseCtx, h.cancel = context.WithCancel(context.Background())
	if maintainable && h.maintainEvery > 0 {
		h.maintenance.Add(1)
		go h.maintainLoop()
	}
	if f, ok := h.store.(store.Feed); ok {
		h.stopFeed = f.Follow(h.changed)
	}
	if h.followPoll > 0 {
		h.maintenance.Add(1)
		go h.pollLoop()
	}
	return h, nil
}

func validateCard(c *a2a.AgentCard) error {
	switch {
	case c.Name == "":
		return errors.New("server: agent card: name is required")
	case c.Version == "":
		return errors.New("server: agent card: version is required")
	case len(c.SupportedInterfaces) == 0:
		return errors.New("server: agent card: at least one supported interface is required")
	}
	for i, in := range c.SupportedInterfaces {
		if in.URL == "" || in.ProtocolBinding == "" || in.ProtocolVersion == "" {
			return fmt.Errorf("server: agent card: supportedInterfaces[%d] needs url, protocolBinding and protocolVersion", i)
		}
	}
	return nil
}

// Card returns the public agent card. It must not be modified.
func (h *Handler) Card() *a2a.AgentCard { return h.card }

// Store returns the store the Handler keeps tasks in.
func (h *Handler) Store() store.Store { return h.store }

// Close cancels every running agent, ends open streams, and waits for the
// agents to return or ctx to end. Tasks whose agents had not finished are
// failed with a message saying the server shut down.
func (h *Handler) Close(ctx context.Context) error {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.done)
		h.cancel()
	}
	h.mu.Unlock()
	waited := make(chan struct{})
	go func() {
		h.maintenance.Wait()
		h.agents.Wait()
		h.flushes.Wait()
		if h.stopFeed != nil {
			h.stopFeed()
		}
		h.followers.Wait()
		close(waited)
	}()
	select {
	case <-waited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server: close: agents still running: %w", ctx.Err())
	}
}

// stamp is the current time at wire precision.
func (h *Handler) stamp() a2a.Timestamp { return a2a.TimestampOf(h.now()) }

// begin checks the caller's request rate ([Limits]), then the service
// parameters of a call: the A2A-Version (A2A §3.6.2; a missing header means
// 0.3, REQUIREMENTS B1) and the extensions the card requires (A2A §4.6.3).
func (h *Handler) begin(ctx context.Context) error {
	if err := h.limits.allow(ctx, h.now); err != nil {
		return err
	}
	p, ok := ServiceParamsFrom(ctx)
	if !ok {
		return nil
	}
	v, err := h.ProtocolVersion(p.Version)
	if err != nil {
		return err
	}
	if (v == v03.Version) != p.V03 {
		// A v0.3 version on a call in v1.0's shapes (or the reverse): the
		// binding did not translate it, so it is not served as v0.3.
		return versionError(p.Version, a2a.ProtocolVersion)
	}
	if v := extensionViolations(nil, a2a.HeaderExtensions, p.Extensions); len(v) > 0 {
		return a2a.InvalidParams(v...)
	}
	for _, uri := range h.required {
		found := false
		for _, e := range p.Extensions {
			if e == uri {
				found = true
				break
			}
		}
		if !found {
			return a2a.NewError(a2a.CodeExtensionSupportRequired, "").With("extension", uri)
		}
	}
	return nil
}

// ProtocolVersion returns the protocol version, in Major.Minor form, in
// which the Handler serves a call that sent A2A-Version requested ("" when
// it sent none, which means 0.3, A2A §3.6.2): [a2a.ProtocolVersion], or
// [v03.Version] with [WithV03]. Any other version is a VersionNotSupported
// error naming the supported ones. Only Major.Minor counts (A2A §3.6).
//
// A binding that speaks v0.3 calls it to choose the shapes of a request
// before decoding it; the Handler calls it again for every call.
func (h *Handler) ProtocolVersion(requested string) (string, error) {
	switch {
	case versionIs(requested, a2a.ProtocolVersion):
		return a2a.ProtocolVersion, nil
	case h.v03 && (requested == "" || versionIs(requested, v03.Version)):
		return v03.Version, nil
	}
	supported := a2a.ProtocolVersion
	if h.v03 {
		supported += ", " + v03.Version
	}
	return "", versionError(requested, supported)
}

func versionError(requested, supported string) *a2a.Error {
	if requested == "" {
		requested = "0.3 (no header)"
	}
	return a2a.NewError(a2a.CodeVersionNotSupported, "").
		With("requested", requested).With("supported", supported)
}

// versionIs reports whether v is version want (Major.Minor), with or
// without a patch version, which must not count in negotiation.
func versionIs(v, want string) bool {
	if v == want {
		return true
	}
	n := len(want)
	return len(v) > n+1 && v[:n] == want && v[n] == '.'
}

// scope is the store scope of a call.
func (h *Handler) scope(ctx context.Context, tenant string) store.Scope {
	return store.Scope{Tenant: tenant, Owner: principalFrom(ctx)}
}

type principalKey struct{}

// WithPrincipal returns ctx carrying the authenticated principal of a call.
// Tasks are owned by the principal that created them; other principals'
// tasks do not exist for a caller (A2A §13.1).
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

func principalFrom(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// storeErr maps a store error for the task id to an A2A error.
func storeErr(err error, taskID string) error {
	if errors.Is(err, store.ErrNotFound) {
		return a2a.NewError(a2a.CodeTaskNotFound, "").With("taskId", taskID)
	}
	return a2a.AsError(err)
}
