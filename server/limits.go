package server

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// Limits bounds what callers may ask of a Handler, so that one caller
// cannot take the server from the others. In every count field, zero
// means that limit's default (see [DefaultLimits]) and a negative value
// means no limit. A call over a limit is refused with an error that names
// it; the server goes on serving everyone else.
//
// The per-caller limits count by principal ([WithPrincipal]). A call with
// no principal is counted by its client key ([WithClientKey]) instead,
// such as the remote address; a call with neither is not limited per
// caller, only by the totals, since the server cannot tell such callers
// apart. Tenants do not separate callers: a caller chooses its tenant.
type Limits struct {
	// MaxParts is the most parts a message may have (default 256). More
	// is InvalidParams naming message.parts.
	MaxParts int
	// MaxDepth is how deeply a request's JSON may nest objects and arrays
	// (default a2a.DefaultMaxDepth, 64). The bindings check it with
	// [a2a.CheckDepth] before decoding; deeper is InvalidRequest.
	MaxDepth int
	// MaxStreams is the most streams (SendStreamingMessage and
	// SubscribeToTask) open at once on this Handler (default 10000).
	MaxStreams int
	// MaxStreamsPerPrincipal is the most streams one caller may hold open
	// at once (default 100).
	MaxStreamsPerPrincipal int
	// MaxActiveTasksPerPrincipal is the most agent executions one caller
	// may have running at once (default 100). An execution runs from the
	// message until the agent returns, which it does once the task is
	// terminal or interrupted. Only a message that would start a new task
	// or reply is refused; a message continuing a task is always taken,
	// but its execution counts.
	MaxActiveTasksPerPrincipal int
	// MaxActiveTasks is the most agent executions running at once on this
	// Handler, for all callers together, anonymous ones included (default
	// 10000). As with MaxActiveTasksPerPrincipal, only a message that would
	// start a new task or reply is refused.
	MaxActiveTasks int
	// Rate is how many calls per second one caller may make on average,
	// refilling a token bucket of Burst calls. Every A2A operation takes a
	// token; an empty bucket refuses the call with a retry delay. Zero (the
	// default) or less turns rate limiting off.
	Rate float64
	// Burst is the size of the bucket: how many calls may come at once
	// after a quiet spell. Zero means twice Rate, and at least 1.
	Burst int
}

// Default limits; see [Limits].
const (
	DefaultMaxParts                   = 256
	DefaultMaxStreams                 = 10000
	DefaultMaxStreamsPerPrincipal     = 100
	DefaultMaxActiveTasksPerPrincipal = 100
	DefaultMaxActiveTasks             = 10000
)

// DefaultLimits returns the limits of a Handler made without [WithLimits]:
// generous structure, stream and task limits, and no rate limit.
func DefaultLimits() Limits {
	return Limits{
		MaxParts:                   DefaultMaxParts,
		MaxDepth:                   a2a.DefaultMaxDepth,
		MaxStreams:                 DefaultMaxStreams,
		MaxStreamsPerPrincipal:     DefaultMaxStreamsPerPrincipal,
		MaxActiveTasksPerPrincipal: DefaultMaxActiveTasksPerPrincipal,
		MaxActiveTasks:             DefaultMaxActiveTasks,
	}
}

// WithLimits sets the limits of the Handler. Fields left zero take their
// defaults.
func WithLimits(l Limits) Option {
	return func(h *Handler) error {
		if math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0) {
			return errors.New("server: WithLimits: Rate must be a finite number")
		}
		if l.Burst < 0 {
			return errors.New("server: WithLimits: Burst must not be negative, got " + strconv.Itoa(l.Burst))
		}
		h.limits = newLimiter(l)
		return nil
	}
}

// Limits returns the limits in force, with defaults filled in: every count
// is positive, or negative for no limit; Rate is zero when off.
func (h *Handler) Limits() Limits { return h.limits.cfg }

type clientKeyKey struct{}

// WithClientKey returns ctx carrying a key that identifies an
// unauthenticated caller, such as its IP address, so that the per-caller
// [Limits] apply to callers without a principal. It is ignored for a call
// that has a principal.
func WithClientKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, clientKeyKey{}, key)
}

// callerKey is who a call counts against for the per-caller limits, and
// false when it cannot be told.
func callerKey(ctx context.Context) (string, bool) {
	if p := principalFrom(ctx); p != "" {
		return "p:" + p, true
	}
	if k, _ := ctx.Value(clientKeyKey{}).(string); k != "" {
		return "c:" + k, true
	}
	return "", false
}

// limiter holds the counts behind the limits.
type limiter struct {
	cfg Limits // resolved: counts positive or negative, never zero

	mu        sync.Mutex
	streams   int
	streamsBy map[string]int
	tasks     int
	tasksBy   map[string]int
	buckets   map[string]*bucket
	sweepAt   int // sweep idle buckets when there are this many

	released func() // test hook: called after a slot is given back
}

// bucket is a token bucket as of at.
type bucket struct {
	tokens float64
	at     time.Time
}

// minSweep is the bucket count below which idle buckets are left alone.
const minSweep = 1024

func newLimiter(l Limits) *limiter {
	def := DefaultLimits()
	orDefault := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	orDefault(&l.MaxParts, def.MaxParts)
	orDefault(&l.MaxDepth, def.MaxDepth)
	orDefault(&l.MaxStreams, def.MaxStreams)
	orDefault(&l.MaxStreamsPerPrincipal, def.MaxStreamsPerPrincipal)
	orDefault(&l.MaxActiveTasksPerPrincipal, def.MaxActiveTasksPerPrincipal)
	orDefault(&l.MaxActiveTasks, def.MaxActiveTasks)
	if l.Rate <= 0 {
		l.Rate, l.Burst = 0, 0
	} else if l.Burst == 0 {
		l.Burst = max(1, int(math.Ceil(2*l.Rate)))
	}
	return &limiter{
		cfg:       l,
		streamsBy: make(map[string]int),
		tasksBy:   make(map[string]int),
		buckets:   make(map[string]*bucket),
		sweepAt:   minSweep,
	}
}

// over reports whether n in use reaches limit (negative: no limit).
func over(n, limit int) bool { return limit >= 0 && n >= limit }

func exhausted(message, limit string, value int) *a2a.Error {
	return a2a.NewError(a2a.CodeResourceExhausted, message+" (limit "+strconv.Itoa(value)+")").
		With("limit", limit).With("value", strconv.Itoa(value))
}

// checkParts refuses a message with more parts than allowed.
func (l *limiter) checkParts(n int) *a2a.FieldViolation {
	if max := l.cfg.MaxParts; max >= 0 && n > max {
		return &a2a.FieldViolation{Field: "message.parts",
			Description: "a message may have at most " + strconv.Itoa(max) + " parts (limit maxParts), got " + strconv.Itoa(n)}
	}
	return nil
}

// allow takes a token from the caller's bucket, or refuses the call with
// the time until one is due. It reads the clock only when rate limiting is
// on, so a test clock that advances on each reading is not disturbed.
func (l *limiter) allow(ctx context.Context, clock func() time.Time) error {
	if l.cfg.Rate <= 0 {
		return nil
	}
	key, ok := callerKey(ctx)
	if !ok {
		return nil
	}
	rate, burst := l.cfg.Rate, float64(l.cfg.Burst)
	now := clock()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.sweepAt {
			l.sweepLocked(now)
		}
		b = &bucket{tokens: burst, at: now}
		l.buckets[key] = b
	} else if d := now.Sub(b.at); d > 0 {
		b.tokens = min(burst, b.tokens+d.Seconds()*rate)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return nil
	}
	wait := time.Duration(math.Ceil((1 - b.tokens) / rate * float64(time.Second)))
	e := a2a.NewError(a2a.CodeResourceExhausted,
		"too many requests from this caller (limit "+strconv.FormatFloat(rate, 'g', -1, 64)+
			" per second, burst "+strconv.Itoa(l.cfg.Burst)+")").
		With("limit", "rate").With("value", strconv.FormatFloat(rate, 'g', -1, 64))
	e.RetryAfter = wait
	return e
}

// sweepLocked forgets the buckets that have refilled: a full bucket is the
// same as a new one. What remains are callers seen within the last
// Burst/Rate seconds, so the map stays bounded by recent traffic; the next
// sweep waits until it has doubled, which keeps the cost per call constant.
func (l *limiter) sweepLocked(now time.Time) {
	burst := float64(l.cfg.Burst)
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.cfg.Rate >= burst {
			delete(l.buckets, k)
		}
	}
	l.sweepAt = max(minSweep, 2*len(l.buckets))
}

// openStream begins a streaming operation: the agent must stream
// (checkStreaming) and the caller get a stream slot (admitStream). When it
// cannot, it yields the error as the stream's only item and returns false;
// otherwise call release once, when the stream ends.
func (h *Handler) openStream(ctx context.Context, yield func(StreamEvent, error) bool) (release func(), ok bool) {
	if err := h.checkStreaming(ctx); err != nil {
		yield(StreamEvent{}, err)
		return nil, false
	}
	release, err := h.admitStream(ctx)
	if err != nil {
		yield(StreamEvent{}, err)
		return nil, false
	}
	return release, true
}

// admitStream takes a stream slot for the caller, or refuses the stream.
// The returned function gives the slot back; call it once, when the stream
// ends.
func (h *Handler) admitStream(ctx context.Context) (release func(), err error) {
	l := h.limits
	key, keyed := callerKey(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if keyed && over(l.streamsBy[key], l.cfg.MaxStreamsPerPrincipal) {
		return nil, exhausted("too many open streams for this caller", "maxStreamsPerPrincipal", l.cfg.MaxStreamsPerPrincipal)
	}
	if over(l.streams, l.cfg.MaxStreams) {
		return nil, exhausted("too many open streams on this server", "maxStreams", l.cfg.MaxStreams)
	}
	l.streams++
	if keyed {
		l.streamsBy[key]++
	}
	return func() {
		l.mu.Lock()
		l.streams--
		if keyed {
			l.decLocked(l.streamsBy, key)
		}
		l.mu.Unlock()
		if l.released != nil {
			l.released()
		}
	}, nil
}

// admitTask counts exec, an agent execution about to run for the caller,
// until exec's context ends (when the agent returns, or the task is
// cancelled, or the Handler closes). With refuse, an execution over a
// limit (the caller's, then the server's) is refused instead, and exec is
// cancelled.
func (h *Handler) admitTask(ctx context.Context, exec *execution, refuse bool) error {
	l := h.limits
	key, keyed := callerKey(ctx)
	keyed = keyed && l.cfg.MaxActiveTasksPerPrincipal >= 0
	total := l.cfg.MaxActiveTasks >= 0
	if !keyed && !total {
		return nil
	}
	l.mu.Lock()
	if refuse {
		var err error
		switch {
		case keyed && over(l.tasksBy[key], l.cfg.MaxActiveTasksPerPrincipal):
			err = exhausted("too many tasks running for this caller", "maxActiveTasksPerPrincipal", l.cfg.MaxActiveTasksPerPrincipal)
		case total && over(l.tasks, l.cfg.MaxActiveTasks):
			err = exhausted("too many tasks running on this server", "maxActiveTasks", l.cfg.MaxActiveTasks)
		}
		if err != nil {
			l.mu.Unlock()
			exec.cancel()
			return err
		}
	}
	if total {
		l.tasks++
	}
	if keyed {
		l.tasksBy[key]++
	}
	l.mu.Unlock()
	context.AfterFunc(exec.ctx, func() {
		l.mu.Lock()
		if total {
			l.tasks--
		}
		if keyed {
			l.decLocked(l.tasksBy, key)
		}
		l.mu.Unlock()
		if l.released != nil {
			l.released()
		}
	})
	return nil
}

// decLocked decrements a count, dropping it at zero so that the maps only
// hold callers with something open.
func (l *limiter) decLocked(m map[string]int, key string) {
	if m[key] <= 1 {
		delete(m, key)
		return
	}
	m[key]--
}
