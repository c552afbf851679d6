package cli

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestJSONLogDurationsAsText: the JSON logger writes every duration as
// text, at the top level, in groups and in a logger's own attributes, as
// slog.Any as well as slog.Duration; the text logger is as it was.
func TestJSONLogDurationsAsText(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	log := newLogger(&serveConfig{logFormat: "json", level: slog.LevelInfo}, &b)
	log.With("lease", 30*time.Second).Info("push: webhook call failed; will retry",
		"in", 1500*time.Millisecond, slog.Group("call", slog.Duration("latency", 250*time.Microsecond)), slog.Any("wait", 2*time.Minute), "attempt", 2)
	want := `"lease":"30s","in":"1.5s","call":{"latency":"250µs"},"wait":"2m0s","attempt":2}` + "\n"
	if got := b.String(); !strings.HasSuffix(got, want) {
		t.Errorf("JSON log line\n%s\nwant it to end with\n%s", got, want)
	}
	b.Reset()
	newLogger(&serveConfig{logFormat: "text", level: slog.LevelInfo}, &b).Info("x", "in", 1500*time.Millisecond)
	if got := b.String(); !strings.HasSuffix(got, " in=1.5s\n") {
		t.Errorf("text log line %q", got)
	}
}
