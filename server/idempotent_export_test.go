package server

import "time"

// MessageRetention is how long h remembers client message ids.
func MessageRetention(h *Handler) time.Duration { return h.messageRetention() }
