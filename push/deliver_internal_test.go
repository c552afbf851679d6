package push

import (
	"net/http"
	"testing"
	"time"

	"github.com/goa2a/a2a/store/memory"
)

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"120", 2 * time.Minute},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"999999999", MaxRetryAfter},
		{"soon", 0},
		{"-5", 0},
	} {
		if got := retryAfter(tc.v, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestBackoff(t *testing.T) {
	d, err := NewDeliverer(memory.New(), WithBackoff(100*time.Millisecond, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for n, base := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 5: time.Second, 30: time.Second} {
		for range 50 {
			w := d.wait(n, 0)
			if w < base || w > base+base/5 {
				t.Fatalf("wait after %d failures = %v, want %v plus at most a fifth of jitter", n, w, base)
			}
		}
	}
	// A receiver's Retry-After longer than the backoff wins; a shorter one
	// does not shorten it.
	if w := d.wait(1, 30*time.Second); w != 30*time.Second {
		t.Errorf("wait with Retry-After 30s = %v", w)
	}
	if w := d.wait(5, time.Millisecond); w < time.Second {
		t.Errorf("wait with a short Retry-After = %v, want the backoff", w)
	}
}
