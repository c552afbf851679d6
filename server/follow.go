package server

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/goa2a/a2a/store"
)

// Following tasks that other processes append to.
//
// A live task is the fold of the log as this process last read or wrote
// it. When another process shares the store (a replica on one PostgreSQL
// schema, a second Handler on one store value), its appends reach this one
// through the store's change feed ([store.Feed]): for each change to a task
// that is live here, with a seq beyond what this process has, one
// goroutine reads the log after that seq, outside the task's lock, then
// applies what it read under the lock and publishes it to the task's
// subscribers (streams, blocking waits), exactly as if this process had
// appended it. A cancel stored elsewhere thus ends the streams here and
// cancels the agent executions running here at once, not at the agent's
// next write.
//
// The feed's changes are wake-ups: the log says what happened. A change
// this process made itself is ignored by its seq. A resync (the feed lost
// its connection) and a task loaded from the store (an append may have
// come between the read and the task becoming live) read the log whatever
// the seq. And every poll interval (WithFollowPoll), the tasks that somebody here is waiting
// on are read once more: a slow poll that is only a safety net for a lost
// change.

// DefaultFollowPoll is the interval of the safety-net poll.
const DefaultFollowPoll = 5 * time.Second

// WithFollowPoll sets how often the Handler reads again the logs of the
// live tasks that a stream or blocking call here waits on, in case the
// store's change feed lost a change (DefaultFollowPoll). With a store
// that has no feed ([store.Feed]) it is how other processes' appends are
// seen at all. A negative interval turns the poll off.
func WithFollowPoll(d time.Duration) Option {
	return func(h *Handler) error {
		if d == 0 {
			return errors.New("server: WithFollowPoll: zero interval")
		}
		h.followPoll = d
		return nil
	}
}

// changed is the Handler's follower of the store's change feed. It runs
// on the feed's goroutine and must not block.
func (h *Handler) changed(c store.Change) {
	if c.TaskID == "" {
		h.mu.Lock()
		lts := slices.Collect(maps.Values(h.live))
		h.mu.Unlock()
		for _, lt := range lts {
			h.wake(lt, 0)
		}
		return
	}
	h.mu.Lock()
	lt := h.live[c.TaskID]
	h.mu.Unlock()
	if lt != nil {
		h.wake(lt, c.Seq)
	}
}

// wake tells lt that its log reaches seq, or with seq 0 that it may have
// grown, and starts a goroutine that catches up unless one runs.
func (h *Handler) wake(lt *liveTask, seq int64) {
	if seq == 0 {
		lt.recheck.Store(true)
	} else {
		for cur := lt.notified.Load(); seq > cur && !lt.notified.CompareAndSwap(cur, seq); cur = lt.notified.Load() {
		}
		if seq <= lt.stored.Load() {
			return // this process has it: its own append, most often
		}
	}
	if !lt.catching.CompareAndSwap(false, true) {
		return // the running one looks again before it stops
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		lt.catching.Store(false)
		return
	}
	h.followers.Add(1)
	h.mu.Unlock()
	go h.followLog(lt)
}

// followLog catches lt up with its log until it has everything the feed
// reported, then stops; wake starts it again.
func (h *Handler) followLog(lt *liveTask) {
	defer h.followers.Done()
	lt.mu.Lock()
	defer lt.mu.Unlock()
	for {
		// An Append of this process in flight may be in the log already:
		// read once it is stored, so that nothing is applied twice.
		for lt.inflight > 0 {
			drained := lt.drained
			lt.mu.Unlock()
			select {
			case <-drained:
			case <-h.done:
			}
			lt.mu.Lock()
			if h.isClosed() {
				lt.catching.Store(false)
				return
			}
		}
		due := func() bool {
			return !lt.broken && lt.seq > 0 && !lt.task.Status.State.Terminal() &&
				(lt.recheck.Load() || lt.notified.Load() > lt.seq)
		}
		if !due() {
			lt.catching.Store(false)
			// A wake between the test and the store above saw catching
			// set and left it to this goroutine: look once more.
			if !due() || !lt.catching.CompareAndSwap(false, true) {
				return
			}
		}
		lt.recheck.Store(false)
		after := lt.seq
		lt.mu.Unlock()
		evs, err := h.store.Events(h.baseCtx, lt.scope, lt.id, after)
		lt.mu.Lock()
		if err != nil {
			lt.catching.Store(false)
			switch {
			case h.isClosed():
			case errors.Is(err, store.ErrNotFound):
				h.forgetLocked(lt) // deleted meanwhile (retention)
			default:
				// The next change, or the poll, tries again.
				h.log.Warn("following a task appended to elsewhere", "task", lt.id, "err", err)
			}
			return
		}
		if lt.inflight > 0 {
			lt.recheck.Store(true)
			continue
		}
		if err := h.applyLocked(lt, evs); err != nil {
			lt.catching.Store(false)
			h.log.Error("following a task appended to elsewhere", "task", lt.id, "err", err)
			return
		}
		if len(lt.queue) > 0 {
			h.refoldLocked(lt)
		}
	}
}

// forgetLocked stops following a task that no longer exists.
func (h *Handler) forgetLocked(lt *liveTask) {
	h.mu.Lock()
	if h.live[lt.id] == lt {
		delete(h.live, lt.id)
	}
	h.mu.Unlock()
}

// pollLoop reads once more, every poll interval, the log of each live task
// that a stream or a blocking call here is waiting on: the safety net for
// a change the feed lost.
func (h *Handler) pollLoop() {
	defer h.maintenance.Done()
	tick := time.NewTicker(h.followPoll)
	defer tick.Stop()
	for {
		select {
		case <-h.baseCtx.Done():
			return
		case <-tick.C:
		}
		h.mu.Lock()
		lts := slices.Collect(maps.Values(h.live))
		h.mu.Unlock()
		for _, lt := range lts {
			lt.mu.Lock()
			waited := len(lt.subs) > 0 || lt.streams > 0
			lt.mu.Unlock()
			if waited {
				h.wake(lt, 0)
			}
		}
	}
}
