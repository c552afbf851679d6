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

// WithDelivererClock sets the Deliverer's clock: the time claims, retries and
// pauses are reckoned in (calls still time out by the real one).
func WithDelivererClock(now func() time.Time) DelivererOption {
	return func(dl *Deliverer) error {
		dl.now = now
		return nil
	}
}
