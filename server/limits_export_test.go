package server

// OnLimitRelease makes h call fn each time a stream or task slot of its
// limits is given back, so tests can wait for it instead of polling.
// Set it before the Handler serves calls.
func OnLimitRelease(h *Handler, fn func()) { h.limits.released = fn }

// RateBuckets reports how many callers' token buckets h keeps.
func RateBuckets(h *Handler) int {
	h.limits.mu.Lock()
	defer h.limits.mu.Unlock()
	return len(h.limits.buckets)
}
