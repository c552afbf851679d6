package push

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// Defaults of a [Deliverer]; see the options that change them.
const (
	// DefaultMaxAttempts is how many times one event is tried before its
	// config is marked failing.
	DefaultMaxAttempts = 10
	// DefaultBackoff is the wait after the first failed attempt; it
	// doubles after each further failure, up to DefaultMaxBackoff, with
	// jitter. With the defaults an event is tried for about a quarter of
	// an hour before its config is marked failing.
	DefaultBackoff    = time.Second
	DefaultMaxBackoff = 5 * time.Minute
	// MaxRetryAfter bounds how long a receiver's Retry-After may delay
	// the next attempt.
	MaxRetryAfter = time.Hour
	// DefaultWorkers is how many webhooks are called at once.
	DefaultWorkers = 64
	// DefaultHostCalls is how many calls go to one host (and port) at
	// once; further calls to it wait for one of them to end.
	DefaultHostCalls = 16
	// HostPauseAfter is how many calls in a row to one host may end
	// without a response (a timeout, a refused or reset connection)
	// before the host is paused: its webhooks are not called until the
	// pause ends, the backoff doubled for each further failure (see
	// [WithBackoff]), and then one call at a time probes it. An answer of
	// any status ends the pause.
	HostPauseAfter = 5
	// DefaultPollInterval is how often the store is asked for work that
	// no notification announced: retries that fell due, tasks written by
	// another process, work left by a process that stopped.
	DefaultPollInterval = time.Second
	// DefaultLease is how long a claim on a config keeps other workers
	// away from it; it is renewed after each delivered event and must
	// exceed a webhook call's timeout. Work left by a process that died
	// is taken up when its lease ends.
	DefaultLease = time.Minute

	// DeliveryIDHeader carries the id of the event in the task's log,
	// "taskId:seq", the same on every attempt: a receiver that does not
	// check signatures can still drop repeats by it.
	DeliveryIDHeader = "A2A-Push-Event-Id"
	// legacyTokenHeader is the token header of A2A v0.3 and of the A2A
	// 101 kit; the token is sent in it too, for receivers written for
	// them.
	legacyTokenHeader = "X-A2A-Notification-Token"
	// maxErrorBody is how much of a refusing receiver's body is quoted
	// in the config's last error.
	maxErrorBody = 200
)

// A Deliverer calls the webhooks of push configs: for each config it reads
// the task's event log from the config's cursor on (kept in the store, see
// [store.PushState]) and POSTs every status and artifact update, one at a
// time and in order, as the ProtoJSON StreamResponse with Content-Type
// application/a2a+json. It is the only reader of the log that sends it
// outside the server, and it runs apart from the agents and the streams:
// a slow or dead receiver delays only its own config.
//
// Workers are shared fairly. The configs of one principal (a
// [store.Scope]: tenant and owner) are given at most its share of the
// workers at once ([WithPrincipalShare], a quarter by default), so the
// webhooks of a principal wait for another's only when the others fill
// every worker: with the defaults, while no four other principals have
// 16 calls each in flight, a principal's notifications are called as soon
// as they are due, however many of its webhooks hang. At most
// [WithHostCalls] calls go to one host at once. A host whose last
// [HostPauseAfter] calls ended without a response is paused: its configs
// are not called, and hold no worker, until the pause ends (each such
// turn counts as a failed attempt, whose error says so).
//
// A failed call (network error, timeout, 408, 429, 5xx) is retried with
// exponential backoff and jitter, or after the receiver's Retry-After;
// after [WithMaxAttempts] failures of one event, or at once on a refusal
// that retrying cannot mend (another 4xx, a redirect not followed, an
// address the [Guard] refuses), the config is marked failing: it receives
// nothing more until the client registers it again, which resumes it from
// the event that failed. Deliveries survive restarts: the cursor, the
// attempts and the time of the next one are in the store. Delivery is at
// least once: an event whose success was not recorded (the process died
// in between) is sent again; [DeliveryIDHeader] and the signed event id
// let receivers drop the repeat.
//
// Run the worker with [Deliverer.Run]; a server.Handler tells it of new
// events through [Deliverer.Appended] and waits in
// [Deliverer.Deleted] for deliveries to a deleted config to end.
type Deliverer struct {
	st     store.Store
	q      store.PushQueue
	client *http.Client
	guard  *Guard
	signer *Signer
	log    *slog.Logger
	now    func() time.Time

	maxAttempts int
	backoff     time.Duration
	maxBackoff  time.Duration
	workers     int
	share       int // workers one scope's configs may hold at once
	hostCalls   int // calls at once to one host
	poll        time.Duration
	lease       time.Duration
	onResult    []func(Result)
	callHooks   []CallHook
	afterWork   time.Duration

	wake chan struct{}
	slot chan struct{} // a token per free worker

	mu      sync.Mutex
	flights map[configKey]*flight
	// While a batch of claims is taken and its flights registered,
	// claiming is set and Deleted notes the configs it deletes in gone:
	// a job claimed before its config was deleted is then dropped.
	claiming bool
	gone     map[configKey]bool
	busy     map[store.Scope]int   // workers held by each scope's configs
	hosts    map[string]*hostState // the hosts being called, or paused

	delivered, failed, failing atomic.Int64
}

// configKey names a push config across scopes.
type configKey struct {
	scope  store.Scope
	taskID string
	id     string
}

// flight is a config being worked on in this process.
type flight struct {
	deleted bool
	sending bool
	next    *store.PushJob // a claim made while the worker was finishing
	idle    *sync.Cond     // signalled when sending becomes false
}

// hostState is what the Deliverer knows of one webhook host. All but
// slots are guarded by the Deliverer's mu.
type hostState struct {
	slots   chan struct{} // a token per call in flight
	refs    int           // workers holding or waiting for a slot
	fails   int           // calls in a row that ended without a response
	lastErr string        // the last of them
	paused  time.Time     // no call before then once fails >= HostPauseAfter
	probing bool          // a call is testing a host whose pause ended
}

// maxHosts bounds how many hosts the Deliverer remembers; past it, those
// no worker uses are forgotten, their failures with them.
const maxHosts = 4096

// hostCall is a slot of a host, taken by [Deliverer.enter].
type hostCall struct {
	key   string
	h     *hostState
	probe bool
}

// PausedError is the error of an attempt not made because its webhook's
// host is paused (see [HostPauseAfter]).
type PausedError struct {
	Host string
	// Failures counts the calls in a row to Host that ended without a
	// response; Last is the error of the last of them.
	Failures int
	Last     string
	// Until is when the pause ends.
	Until time.Time
}

func (e *PausedError) Error() string {
	return fmt.Sprintf("not called: webhook host %s is paused until %s: its last %d calls got no response (last: %s)",
		e.Host, e.Until.UTC().Format(time.RFC3339), e.Failures, e.Last)
}

// Result is the outcome of one webhook call, as [WithResultHook] reports
// it.
type Result struct {
	TaskID, ConfigID string
	Seq              int64
	// Status is the HTTP status, 0 when there was no response.
	Status int
	// Err is nil when the receiver acknowledged the event (2xx).
	Err error
	// Attempt counts the attempts at this event, 1 for the first.
	Attempt int
	// Failing reports that the config was marked failing by this result.
	Failing bool
	// Latency is how long the call took.
	Latency time.Duration
}

// DelivererOption configures a [Deliverer].
type DelivererOption func(*Deliverer) error

// WithGuard sets the guard whose client makes every webhook call. The
// default is NewGuard() with no allow-list: webhooks on loopback or
// private addresses are refused.
func WithGuard(g *Guard) DelivererOption {
	return func(d *Deliverer) error {
		if g == nil {
			return errors.New("push: WithGuard: nil guard")
		}
		d.guard = g
		return nil
	}
}

// WithSigning signs every notification with s (see [Signer]).
func WithSigning(s *Signer) DelivererOption {
	return func(d *Deliverer) error {
		d.signer = s
		return nil
	}
}

// WithLogger sets where delivery failures are logged. The default
// discards logs.
func WithLogger(l *slog.Logger) DelivererOption {
	return func(d *Deliverer) error {
		if l == nil {
			return errors.New("push: WithLogger: nil logger")
		}
		d.log = l
		return nil
	}
}

// WithMaxAttempts sets how many attempts one event gets before its config
// is marked failing (default [DefaultMaxAttempts]).
func WithMaxAttempts(n int) DelivererOption {
	return func(d *Deliverer) error {
		if n < 1 {
			return fmt.Errorf("push: WithMaxAttempts: want at least 1 attempt, got %d", n)
		}
		d.maxAttempts = n
		return nil
	}
}

// WithBackoff sets the wait after the first failure and the most any wait
// may be (defaults [DefaultBackoff] and [DefaultMaxBackoff]).
func WithBackoff(first, most time.Duration) DelivererOption {
	return func(d *Deliverer) error {
		if first <= 0 || most < first {
			return fmt.Errorf("push: WithBackoff: want 0 < first <= most, got %v and %v", first, most)
		}
		d.backoff, d.maxBackoff = first, most
		return nil
	}
}

// WithWorkers sets how many webhook calls run at once (default
// [DefaultWorkers]).
func WithWorkers(n int) DelivererOption {
	return func(d *Deliverer) error {
		if n < 1 {
			return fmt.Errorf("push: WithWorkers: want at least 1 worker, got %d", n)
		}
		d.workers = n
		return nil
	}
}

// WithPrincipalShare sets how many workers the configs of one principal
// (tenant and owner) may hold at once, between 1 and the number of
// workers (default a quarter of them, at least 1). A server whose callers
// are not authenticated has one principal: give it every worker.
func WithPrincipalShare(n int) DelivererOption {
	return func(d *Deliverer) error {
		if n < 1 {
			return fmt.Errorf("push: WithPrincipalShare: want at least 1 worker, got %d", n)
		}
		d.share = n
		return nil
	}
}

// WithHostCalls sets how many calls go to one host (and port) at once
// (default [DefaultHostCalls]).
func WithHostCalls(n int) DelivererOption {
	return func(d *Deliverer) error {
		if n < 1 {
			return fmt.Errorf("push: WithHostCalls: want at least 1 call, got %d", n)
		}
		d.hostCalls = n
		return nil
	}
}

// WithPollInterval sets how often the store is asked for work nobody
// announced (default [DefaultPollInterval]).
func WithPollInterval(p time.Duration) DelivererOption {
	return func(d *Deliverer) error {
		if p <= 0 {
			return fmt.Errorf("push: WithPollInterval: want a positive interval, got %v", p)
		}
		d.poll = p
		return nil
	}
}

// WithLease sets how long a claim on a config lasts (default
// [DefaultLease]); it must exceed the guard's timeout.
func WithLease(l time.Duration) DelivererOption {
	return func(d *Deliverer) error {
		if l <= 0 {
			return fmt.Errorf("push: WithLease: want a positive lease, got %v", l)
		}
		d.lease = l
		return nil
	}
}

// WithResultHook calls f after every webhook call, from the worker that
// made it; f must be quick. Metrics and tests are its purpose. Each
// WithResultHook adds a hook; they are called in the order given.
func WithResultHook(f func(Result)) DelivererOption {
	return func(d *Deliverer) error {
		if f == nil {
			return errors.New("push: WithResultHook: nil hook")
		}
		d.onResult = append(d.onResult, f)
		return nil
	}
}

// CallHook is called before each webhook call with the request about to be
// sent, signed and with every header set, and what is known of the call
// (its task, config, event and attempt). It may add headers (trace
// context, say) and returns the request to send (req, or req with another
// context) and a function called with the call's outcome. Set it with
// [WithCallHook].
type CallHook func(req *http.Request, call Result) (*http.Request, func(Result))

// WithCallHook has hook called around every webhook call, from the worker
// that makes it; it must be quick. Each WithCallHook adds a hook: the
// first given is called first, and told the outcome last.
func WithCallHook(hook CallHook) DelivererOption {
	return func(d *Deliverer) error {
		if hook == nil {
			return errors.New("push: WithCallHook: nil hook")
		}
		d.callHooks = append(d.callHooks, hook)
		return nil
	}
}

// NewDeliverer returns a Deliverer for the push configs kept in st, which
// must implement [store.PushQueue] (every store of this module does).
func NewDeliverer(st store.Store, opts ...DelivererOption) (*Deliverer, error) {
	q, ok := st.(store.PushQueue)
	if !ok {
		return nil, fmt.Errorf("push: the store %T keeps no delivery state (store.PushQueue)", st)
	}
	d := &Deliverer{
		st: st, q: q,
		log:         slog.New(slog.DiscardHandler),
		now:         time.Now,
		maxAttempts: DefaultMaxAttempts,
		backoff:     DefaultBackoff,
		maxBackoff:  DefaultMaxBackoff,
		workers:     DefaultWorkers,
		hostCalls:   DefaultHostCalls,
		poll:        DefaultPollInterval,
		lease:       DefaultLease,
		wake:        make(chan struct{}, 1),
		flights:     make(map[configKey]*flight),
		busy:        make(map[store.Scope]int),
		hosts:       make(map[string]*hostState),
	}
	for _, o := range opts {
		if err := o(d); err != nil {
			return nil, err
		}
	}
	if d.guard == nil {
		g, err := NewGuard()
		if err != nil {
			return nil, err
		}
		d.guard = g
	}
	switch {
	case d.share == 0:
		d.share = max(d.workers/4, 1)
	case d.share > d.workers:
		return nil, fmt.Errorf("push: WithPrincipalShare: a principal's share (%d) exceeds the workers (%d)", d.share, d.workers)
	}
	if d.lease <= d.guard.timeout {
		return nil, fmt.Errorf("push: the lease (%v) must exceed the webhook timeout (%v)", d.lease, d.guard.timeout)
	}
	d.client = d.guard.Client()
	d.slot = make(chan struct{}, d.workers)
	for range d.workers {
		d.slot <- struct{}{}
	}
	return d, nil
}

// Stats are a Deliverer's counters since it was made.
type Stats struct {
	// Delivered counts events receivers acknowledged.
	Delivered int64
	// Failed counts failed attempts.
	Failed int64
	// Failing counts configs this Deliverer marked failing.
	Failing int64
}

// Stats returns the counters.
func (d *Deliverer) Stats() Stats {
	return Stats{Delivered: d.delivered.Load(), Failed: d.failed.Load(), Failing: d.failing.Load()}
}

// Appended tells the Deliverer that a task's log grew, so that its
// configs are served now rather than at the next poll. It never blocks.
func (d *Deliverer) Appended(scope store.Scope, taskID string, seq int64) { d.kick() }

func (d *Deliverer) kick() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Deleted tells the Deliverer that a config was deleted from the store,
// and returns when no call to its webhook is in flight in this process:
// once it returns, the webhook receives nothing more from this process.
// A call in flight is not interrupted (its receiver may already be
// handling it); it ends within the guard's timeout, or when ctx ends.
func (d *Deliverer) Deleted(ctx context.Context, scope store.Scope, taskID, id string) {
	d.mu.Lock()
	k := configKey{scope, taskID, id}
	if d.claiming {
		if d.gone == nil {
			d.gone = make(map[configKey]bool)
		}
		d.gone[k] = true
	}
	f := d.flights[k]
	if f == nil {
		d.mu.Unlock()
		return
	}
	f.deleted = true
	if !f.sending {
		d.mu.Unlock()
		return
	}
	stop := context.AfterFunc(ctx, func() {
		d.mu.Lock()
		f.idle.Broadcast()
		d.mu.Unlock()
	})
	defer stop()
	for f.sending && ctx.Err() == nil {
		f.idle.Wait()
	}
	d.mu.Unlock()
}

// Run delivers until ctx ends, then waits for the calls in flight to end
// and releases the configs it was working on, so that another process, or
// this one restarted, takes them up at once. It returns ctx's error.
func (d *Deliverer) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	tick := time.NewTicker(d.poll)
	defer tick.Stop()
	for {
		n := d.claim(ctx, &wg)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if n > 0 && len(d.slot) > 0 {
			continue // there may be more
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-d.wake:
		case <-tick.C:
		}
	}
}

// claim takes as many jobs as there are free workers and starts them; it
// returns how many it started.
func (d *Deliverer) claim(ctx context.Context, wg *sync.WaitGroup) int {
	free := len(d.slot)
	if free == 0 {
		return 0
	}
	// The scopes that hold their share are skipped, and no claim takes
	// more than any other scope may start: every job claimed is started.
	limit := min(free, d.share)
	var skip []store.Scope
	d.mu.Lock()
	for sc, n := range d.busy {
		if n >= d.share {
			skip = append(skip, sc)
		} else {
			limit = min(limit, d.share-n)
		}
	}
	d.claiming, d.gone = true, nil
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.claiming, d.gone = false, nil
		d.mu.Unlock()
	}()
	jobs, err := d.q.ClaimPush(ctx, d.now(), d.lease, limit, skip...)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Error("push: claiming work", "err", err)
		}
		return 0
	}
	for _, j := range jobs {
		<-d.slot
		k := configKey{j.Scope, j.Config.TaskID, j.Config.ID}
		d.mu.Lock()
		if d.gone[k] {
			// Deleted since the claim: nothing may reach it now.
			d.mu.Unlock()
			d.slot <- struct{}{}
			continue
		}
		if f := d.flights[k]; f != nil {
			// Its worker here is finishing (it released the config, or
			// its claim lapsed): it takes this claim on when done, rather
			// than leave the config claimed by nobody until the lease
			// ends.
			f.next = &j
			d.mu.Unlock()
			d.slot <- struct{}{}
			continue
		}
		f := &flight{idle: sync.NewCond(&d.mu)}
		d.flights[k] = f
		d.busy[k.scope]++
		d.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				d.work(ctx, k, f, j)
				if d.afterWork > 0 {
					time.Sleep(d.afterWork) // a test's hook (export_test.go)
				}
				d.mu.Lock()
				next := f.next
				f.next = nil
				if next == nil || f.deleted || ctx.Err() != nil {
					delete(d.flights, k)
					d.mu.Unlock()
					if next != nil && !f.deleted {
						// Stopping: free that claim for whoever comes next.
						st := next.State
						st.NextAttempt = time.Time{}
						d.q.SetPushState(context.WithoutCancel(ctx), k.scope, k.taskID, k.id, st.Delivered, st)
					}
					break
				}
				d.mu.Unlock()
				// The claim was taken while this worker was still at it: it
				// may have moved the cursor since. Go on from what the store
				// says, not from the claim's copy (no event twice).
				fresh, err := d.q.PushState(context.WithoutCancel(ctx), k.scope, k.taskID, k.id)
				if err != nil {
					d.mu.Lock()
					delete(d.flights, k)
					d.mu.Unlock()
					break
				}
				next.State = fresh
				j = *next
			}
			d.mu.Lock()
			if d.busy[k.scope]--; d.busy[k.scope] <= 0 {
				delete(d.busy, k.scope)
			}
			d.mu.Unlock()
			d.slot <- struct{}{}
			d.kick()
		}()
	}
	return len(jobs)
}

// work delivers the events of one claimed config until it has none left,
// a call fails, or ctx ends; then it records where it stands.
func (d *Deliverer) work(ctx context.Context, k configKey, f *flight, j store.PushJob) {
	stored := j.State.Delivered // what the store says, for SetPushState
	lastSeq := j.Seq            // the last seq of the log read so far
	st := j.State
	// save records st; it reports whether work may go on.
	save := func(next store.PushState) bool {
		// The store's own context: a shutdown must not lose the record.
		err := d.q.SetPushState(context.WithoutCancel(ctx), k.scope, k.taskID, k.id, stored, next)
		switch {
		case err == nil:
			stored, st = next.Delivered, next
			return true
		case errors.Is(err, store.ErrNotFound):
			// Deleted meanwhile.
		case errors.Is(err, store.ErrConflict):
			d.log.Warn("push: config moved on by another worker", "task", k.taskID, "config", k.id)
		default:
			d.log.Error("push: recording delivery state", "task", k.taskID, "config", k.id, "err", err)
		}
		return false
	}
	ended := false // the last event seen ends the task
	release := func() {
		// Caught up, stopped or deleted: free the claim at once; a
		// config whose task has ended and is fully delivered is parked
		// for good, so that claims stop looking at it.
		next := st
		next.Phase, next.NextAttempt = store.PushDue, time.Time{}
		if ended && st.Delivered == lastSeq {
			next.Phase = store.PushParked
		}
		save(next)
	}
	for {
		evs, err := d.st.Events(ctx, k.scope, k.taskID, st.Delivered)
		if err != nil {
			if ctx.Err() == nil {
				d.log.Error("push: reading task events", "task", k.taskID, "err", err)
				next := st
				next.NextAttempt = d.now().Add(d.poll)
				save(next)
			} else {
				release()
			}
			return
		}
		if len(evs) == 0 {
			if ended || st.Delivered != lastSeq {
				release()
				return
			}
			// Caught up on a task that goes on: idle until the log grows
			// (Append wakes it), so that claims do not look at it. An
			// event appended between the read above and this save would
			// find it not yet idle: look once more after.
			next := st
			next.Phase, next.NextAttempt = store.PushIdle, time.Time{}
			if !save(next) {
				return
			}
			if _, seq, err := d.st.Get(ctx, k.scope, k.taskID); err == nil && seq > st.Delivered {
				next.Phase = store.PushDue
				if save(next) {
					d.kick()
				}
			}
			return
		}
		lastSeq = evs[len(evs)-1].Seq
		for _, ev := range evs {
			if su, ok := ev.Payload.(*a2a.TaskStatusUpdateEvent); ok {
				ended = su.Status.State.Terminal()
			}
			if ctx.Err() != nil {
				release()
				return
			}
			switch ev.Payload.(type) {
			case *a2a.TaskStatusUpdateEvent, *a2a.TaskArtifactUpdateEvent:
			default:
				// The snapshot that made the task and client messages
				// are not notifications (the kit sends neither).
				st.Delivered = ev.Seq
				continue
			}
			hc, wait, err := d.enter(ctx, j.Config.URL)
			var res Result
			switch {
			case ctx.Err() != nil:
				release()
				return
			case hc != nil:
				if !d.startSending(f) {
					d.leave(ctx, hc, Result{})
					return // deleted
				}
				res = d.call(ctx, j.Config, ev, st.Attempts+1)
				d.endSending(f)
				d.leave(ctx, hc, res)
			case err == nil:
				// The host stays busy, or another call probes it after a
				// pause: come back later. This is no attempt of this config.
				next := st
				next.NextAttempt = d.now().Add(wait)
				save(next)
				time.AfterFunc(wait, d.kick)
				return
			default:
				// The host is paused: the attempt is not made, and counts.
				res = Result{TaskID: k.taskID, ConfigID: k.id, Seq: ev.Seq, Attempt: st.Attempts + 1,
					Err: &retryable{err: err, after: wait}}
			}
			if ctx.Err() != nil && res.Err != nil {
				// Our own shutdown cut the call: not the receiver's fault.
				release()
				return
			}
			if res.Err == nil {
				d.delivered.Add(1)
				next := store.PushState{Delivered: ev.Seq, NextAttempt: d.now().Add(d.lease)}
				ok := save(next)
				d.report(res)
				if !ok {
					return
				}
				continue
			}
			d.failed.Add(1)
			next := store.PushState{Delivered: st.Delivered, Attempts: st.Attempts + 1, LastError: lastError(res.Err)}
			var retry *retryable
			if errors.As(res.Err, &retry) && next.Attempts < d.maxAttempts {
				wait := d.wait(next.Attempts, retry.after)
				next.NextAttempt = d.now().Add(wait)
				time.AfterFunc(wait, d.kick) // rather than wait for the next poll
				d.log.Info("push: webhook call failed; will retry",
					"task", k.taskID, "config", k.id, "seq", ev.Seq, "attempt", next.Attempts, "in", wait.Round(time.Millisecond), "err", res.Err)
			} else {
				next.Failing = true
				res.Failing = true
				d.failing.Add(1)
				d.log.Warn("push: config failing; it receives nothing until it is registered again",
					"task", k.taskID, "config", k.id, "seq", ev.Seq, "attempts", next.Attempts, "err", res.Err)
			}
			save(next)
			d.report(res)
			return
		}
	}
}

// enter takes a call slot of the host of a webhook URL, waiting for one
// while the host has its fill of calls. It returns the slot, to be given
// back with [Deliverer.leave]; or no slot and how long to wait: with an
// error (a [PausedError]) when the host is paused, with none while
// another call probes it or the host stays busy.
func (d *Deliverer) enter(ctx context.Context, rawURL string) (*hostCall, time.Duration, error) {
	key := hostKey(rawURL)
	d.mu.Lock()
	h := d.hosts[key]
	if h == nil {
		if len(d.hosts) >= maxHosts {
			for k, o := range d.hosts {
				if o.refs == 0 {
					delete(d.hosts, k)
				}
			}
		}
		h = &hostState{slots: make(chan struct{}, d.hostCalls)}
		d.hosts[key] = h
	}
	h.refs++
	d.mu.Unlock()
	// A worker waits a little for a busy host (calls to a host that
	// answers end soon), but not long: it would hold a worker that other
	// hosts' webhooks need. Its config comes back a poll later.
	select {
	case h.slots <- struct{}{}:
	default:
		wait := time.NewTimer(d.poll)
		defer wait.Stop()
		select {
		case h.slots <- struct{}{}:
		case <-wait.C:
			d.unref(key, h)
			return nil, d.poll, nil
		case <-ctx.Done():
			d.unref(key, h)
			return nil, 0, ctx.Err()
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	c := &hostCall{key: key, h: h}
	if h.fails >= HostPauseAfter {
		now := d.now()
		switch {
		case now.Before(h.paused):
			<-h.slots
			h.refs--
			return nil, h.paused.Sub(now), &PausedError{Host: key, Failures: h.fails, Last: h.lastErr, Until: h.paused}
		case h.probing:
			<-h.slots
			h.refs--
			return nil, d.guard.timeout, nil
		}
		h.probing, c.probe = true, true
	}
	return c, 0, nil
}

// leave gives back a slot taken by enter, with the outcome of its call:
// an answer of any status ends the host's pause, a call that ended with
// no answer (not cut by ctx) counts towards one.
func (d *Deliverer) leave(ctx context.Context, c *hostCall, res Result) {
	h := c.h
	<-h.slots
	var retry *retryable
	d.mu.Lock()
	if c.probe {
		h.probing = false
	}
	switch {
	case res.Status != 0:
		h.fails, h.lastErr, h.paused = 0, "", time.Time{}
	case res.Err != nil && errors.As(res.Err, &retry) && ctx.Err() == nil:
		h.fails++
		h.lastErr = res.Err.Error()
		if h.fails >= HostPauseAfter {
			h.paused = d.now().Add(d.wait(h.fails-HostPauseAfter+1, 0))
		}
	}
	d.mu.Unlock()
	d.unref(c.key, h)
}

// unref drops a worker's reference to a host, and forgets the host when
// no worker refers to it and it has no failure to remember.
func (d *Deliverer) unref(key string, h *hostState) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if h.refs--; h.refs == 0 && h.fails == 0 && d.hosts[key] == h {
		delete(d.hosts, key)
	}
}

// hostKey names the host of a webhook URL as connections see it: the
// host in lower case and the port, the scheme's when the URL has none.
func hostKey(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	return net.JoinHostPort(host, port)
}

// report hands a result to the hook, once its state is recorded.
func (d *Deliverer) report(r Result) {
	for _, f := range d.onResult {
		f(r)
	}
}

// startSending marks the flight as calling its webhook, unless its config
// was deleted.
func (d *Deliverer) startSending(f *flight) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f.deleted {
		return false
	}
	f.sending = true
	return true
}

func (d *Deliverer) endSending(f *flight) {
	d.mu.Lock()
	f.sending = false
	f.idle.Broadcast()
	d.mu.Unlock()
}

// retryable marks a failure worth another attempt, with the receiver's
// Retry-After when it gave one.
type retryable struct {
	err   error
	after time.Duration
}

func (e *retryable) Error() string { return e.err.Error() }
func (e *retryable) Unwrap() error { return e.err }

// wait is the delay before attempt n+1: the backoff doubled n-1 times,
// capped, with up to a fifth of it added at random (so that configs that
// failed together do not retry together), or the receiver's Retry-After
// when that is longer.
func (d *Deliverer) wait(n int, retryAfter time.Duration) time.Duration {
	w := d.backoff
	for i := 1; i < n && w < d.maxBackoff; i++ {
		w *= 2
	}
	w = min(w, d.maxBackoff)
	w += rand.N(w/5 + 1)
	return max(w, min(retryAfter, MaxRetryAfter))
}

// call POSTs one event to a config's webhook.
func (d *Deliverer) call(ctx context.Context, cfg *a2a.TaskPushNotificationConfig, ev store.Event, attempt int) (res Result) {
	res = Result{TaskID: cfg.TaskID, ConfigID: cfg.ID, Seq: ev.Seq, Attempt: attempt}
	body, err := ev.Encode() // the stored bytes, as streams send them
	if err != nil {
		res.Err = fmt.Errorf("encoding event %d: %w", ev.Seq, err)
		return res
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL, bytes.NewReader(body))
	if err != nil {
		res.Err = fmt.Errorf("webhook URL: %w", err)
		return res
	}
	eventID := store.EventID(cfg.TaskID, ev.Seq)
	h := req.Header
	h.Set("Content-Type", "application/a2a+json")
	h.Set("User-Agent", "goa2a-push/1")
	h.Set(DeliveryIDHeader, eventID)
	if a := cfg.Authentication; a != nil && a.Scheme != "" {
		h.Set("Authorization", a.Scheme+" "+a.Credentials)
	}
	if cfg.Token != "" {
		h.Set(TokenHeader, cfg.Token)
		h.Set(legacyTokenHeader, cfg.Token)
	}
	if d.signer != nil {
		tok, err := d.signer.SignEvent(cfg.TaskID, eventID, body, d.now())
		if err != nil {
			res.Err = err
			return res
		}
		h.Set(SignatureHeader, tok)
	}
	for _, hook := range d.callHooks {
		var done func(Result)
		req, done = hook(req, res)
		defer func() { done(res) }()
	}
	start := time.Now()
	resp, err := d.guard.Do(req)
	res.Latency = time.Since(start)
	if err != nil {
		var refused *RefusedError
		var redirect *RedirectError
		switch {
		case errors.As(err, &refused):
			res.Err = refused // retrying will not change the address ranges
		case errors.As(err, &redirect):
			res.Err = redirect // nor the receiver's redirect
		default:
			res.Err = &retryable{err: err}
		}
		return res
	}
	defer resp.Body.Close()
	res.Status = resp.StatusCode
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	if resp.StatusCode/100 == 2 {
		return res
	}
	err = fmt.Errorf("webhook answered %s%s", resp.Status, quoteBody(snippet))
	switch {
	case resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
		res.Err = &retryable{err: err, after: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
	case resp.StatusCode/100 == 3:
		res.Err = fmt.Errorf("webhook answered %s; redirects other than 307 and 308 are not followed", resp.Status)
	default:
		res.Err = err
	}
	return res
}

// RefusedPrefix begins the recorded last error (store.PushState.LastError)
// of a call the [Guard] refused, so that whoever reads the state, such as
// a2a push get, can tell the server's own refusal from a receiver's
// answer: registering the config again does not mend it, admitting the
// address does.
const RefusedPrefix = "refused: "

// lastError is the text of a failed call, as the config's state keeps it.
func lastError(err error) string {
	var refused *RefusedError
	if errors.As(err, &refused) {
		return RefusedPrefix + err.Error()
	}
	return err.Error()
}

// quoteBody quotes the start of a refusing receiver's body, for the
// config's last error.
func quoteBody(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ""
	}
	return ": " + strconv.QuoteToGraphic(string(b))
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(min(s, int(MaxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
