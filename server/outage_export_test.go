package server

import "time"

// SetRetryBase sets the first wait before h stores again while its store
// is unavailable (50 ms), and the longest to ten times that (5 s), so that
// a test goes through many attempts fast.
func SetRetryBase(h *Handler, d time.Duration) { h.retryBase, h.retryMax = d, 10*d }
