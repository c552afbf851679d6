package push

import "time"

// WithAfterWorkDelay makes each delivery goroutine pause for d between the
// end of its work on a config and forgetting that config, widening the
// window in which a new claim of the same config can arrive.
func WithAfterWorkDelay(d time.Duration) DelivererOption {
	return func(dl *Deliverer) error {
		dl.afterWork = d
		return nil
	}
}
