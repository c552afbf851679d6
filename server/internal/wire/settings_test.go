package wire

import (
	"testing"
	"time"
)

// TestSettingsNormalize: the values that mean "default" or "off" are the
// same for both bindings.
func TestSettingsNormalize(t *testing.T) {
	s := Settings{MaxBody: -1, KeepAlive: -time.Second}
	s.Normalize()
	if s.MaxBody != DefaultMaxBodyBytes || s.KeepAlive != 0 || s.Log == nil {
		t.Errorf("Normalize of {-1, -1s, nil} = %+v, want the default body limit, keep-alives off and a logger", s)
	}
	s = Settings{MaxBody: 5, KeepAlive: time.Second}
	s.Normalize()
	if s.MaxBody != 5 || s.KeepAlive != time.Second {
		t.Errorf("Normalize changed set values: %+v", s)
	}
	if d := DefaultSettings(); d.MaxBody != DefaultMaxBodyBytes || d.KeepAlive != DefaultKeepAlive || d.Log == nil {
		t.Errorf("DefaultSettings = %+v", d)
	}
}
