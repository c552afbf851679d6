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
