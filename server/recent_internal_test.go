package server

import (
	"bytes"
	"testing"

	"github.com/goa2a/a2a/store"
)

// TestRecentEvents checks the window of recent events that lagging
// subscribers catch up from: contiguous, ending at the task's seq, at least
// recentEvents long, longer while the bytes allow (more bytes for more
// streams), never more than both bounds need, and in order across the
// moves to the slice's front.
func TestRecentEvents(t *testing.T) {
	for _, c := range []struct{ size, streams int }{{16, 0}, {200, 0}, {4 << 10, 0}, {200, 10}, {200, 1000}} {
		size := c.size
		lt := newLiveTask("t", store.Scope{}, nil, 0)
		lt.streams = c.streams
		limit := min(recentBytes+c.streams*recentBytesPerStream, maxRecentBytes)
		data := bytes.Repeat([]byte("x"), size)
		const n = 40000
		for seq := int64(1); seq <= n; seq++ {
			lt.seq = seq
			lt.remember(store.Event{Seq: seq, Data: data})

			kept := len(lt.recent) - lt.first
			if kept < min(int(seq), recentEvents) {
				t.Fatalf("size %d, seq %d: %d events kept, want at least %d", size, seq, kept, min(int(seq), recentEvents))
			}
			if kept > recentEvents && lt.rbytes > limit+size {
				t.Fatalf("size %d, seq %d: %d events of %d bytes kept, over both bounds", size, seq, kept, lt.rbytes)
			}
			if lt.rbytes != kept*size {
				t.Fatalf("size %d, seq %d: rbytes %d, want %d", size, seq, lt.rbytes, kept*size)
			}
			if cap(lt.recent) > 4*max(recentEvents, limit/size+1) {
				t.Fatalf("size %d, seq %d: slice of capacity %d for %d events", size, seq, cap(lt.recent), kept)
			}
		}
		kept := int64(len(lt.recent) - lt.first)
		if evs, ok := lt.recentAfter(n-kept, 10); !ok || len(evs) != 10 || evs[0].Seq != n-kept+1 {
			t.Fatalf("size %d: recentAfter(%d, 10) = %d events from %v, %v; want 10 from %d", size, n-kept, len(evs), evs, ok, n-kept+1)
		}
		want := max(int64(recentEvents), int64(limit/size))
		if kept < want-1 || kept > want+1 {
			t.Errorf("size %d: %d events kept at the end, want about %d", size, kept, want)
		}
		for _, after := range []int64{n, n - 1, n - kept, n - kept - 1, 0} {
			evs, ok := lt.recentAfter(after, n)
			if want := after >= n-kept; ok != want {
				t.Fatalf("size %d: recentAfter(%d) ok = %v, want %v", size, after, ok, want)
			}
			if !ok {
				continue
			}
			if int64(len(evs)) != n-after {
				t.Fatalf("size %d: recentAfter(%d) gave %d events, want %d", size, after, len(evs), n-after)
			}
			for i, ev := range evs {
				if ev.Seq != after+1+int64(i) {
					t.Fatalf("size %d: recentAfter(%d)[%d] has seq %d", size, after, i, ev.Seq)
				}
			}
		}
	}
}
