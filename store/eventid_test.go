package store_test

import (
	"testing"

	"github.com/goa2a/a2a/store"
)

func TestEventID(t *testing.T) {
	for _, tc := range []struct {
		task string
		seq  int64
	}{{"t1", 1}, {"0f9e-uuid", 12345}, {"with:colon", 7}} {
		id := store.EventID(tc.task, tc.seq)
		task, seq, ok := store.ParseEventID(id)
		if !ok || task != tc.task || seq != tc.seq {
			t.Errorf("ParseEventID(%q) = %q, %d, %v; want %q, %d", id, task, seq, ok, tc.task, tc.seq)
		}
	}
	for _, bad := range []string{"", "t1", "t1:", "t1:0", "t1:-3", "t1:x", ":"} {
		if task, seq, ok := store.ParseEventID(bad); ok {
			t.Errorf("ParseEventID(%q) = %q, %d, true; want false", bad, task, seq)
		}
	}
}
