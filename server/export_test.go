package server

// Subscribers reports how many streams and waiting SendMessage calls follow
// task id in h: what a consumer that stopped early, or a caller that gave
// up, must have released. It is 0 for a task h does not follow (for
// example a terminal one).
func Subscribers(h *Handler, id string) int {
	h.mu.Lock()
	lt := h.live[id]
	h.mu.Unlock()
	if lt == nil {
		return 0
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return len(lt.subs)
}

// MaxQueued is how many writes of a task wait for the store at most.
const MaxQueued = maxQueued

// Queued reports how many writes of task id h holds that the store does
// not have yet: queued, and in the Append under way.
func Queued(h *Handler, id string) (queued, inflight int) {
	h.mu.Lock()
	lt := h.live[id]
	h.mu.Unlock()
	if lt == nil {
		return 0, 0
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return len(lt.queue), lt.inflight
}
