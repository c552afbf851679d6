package cli

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
)

// TestCompletionValuesAccepted: each value completion offers for a flag is
// one the command accepts, so that the lists cannot drift from the code
// that checks them.
func TestCompletionValuesAccepted(t *testing.T) {
	t.Parallel()
	values := map[string][]string{}
	for _, c := range completionCommands() {
		for _, f := range c.flags {
			if f.value == valueWords {
				values[c.name+" --"+f.name] = f.words
			}
		}
	}
	for key, words := range values {
		cmd, flagName, _ := strings.Cut(key, " --")
		for _, w := range words {
			switch {
			case cmd == "serve":
				if strings.HasSuffix(w, ":") || strings.HasSuffix(w, "//") {
					continue // the beginning of a value: sqlite:PATH, postgres://...
				}
				args := []string{"--" + flagName, w, "--data-dir", t.TempDir()}
				if flagName == "agent" && w == agentCommand {
					args = append(args, "--exec", "cat")
				}
				var stderr bytes.Buffer
				if cfg, _ := parseServeArgs(args, &stderr); cfg == nil {
					t.Errorf("a2a serve %q is refused: %s", args, stderr.String())
				}
			case key == "list --status":
				if _, err := parseState(w); err != nil {
					t.Errorf("list --status %s: %v", w, err)
				}
			case key == "demo --store":
				if w != storeSQLite && w != storeMemory {
					t.Errorf("demo --store %s is refused", w)
				}
			case flagName == "binding":
				// A binding the client takes gets as far as calling the
				// agent; nobody answers at port 1 (exit 4), where a wrong one
				// is a usage error (exit 2).
				var stdout, stderr bytes.Buffer
				if code := Main(t.Context(), []string{"card", "--binding", w, "--timeout", "5s", "http://127.0.0.1:1"}, &stdout, &stderr); code != ExitConnection {
					t.Errorf("card --binding %s: exit %d, want %d: %s", w, code, ExitConnection, stderr.String())
				}
			default:
				t.Errorf("%s: no check for its values %q", key, words)
			}
		}
	}
	// The agents and states are all there, each once.
	if got, want := values["serve --agent"], append(slices.Sorted(maps.Keys(agents)), agentCommand); !slices.Equal(got, want) {
		t.Errorf("serve --agent completes %q, want %q", got, want)
	}
	states := 0
	for s := a2a.TaskStateUnspecified + 1; s.Valid(); s++ {
		states++
	}
	if got := values["list --status"]; len(got) != states || len(slices.Compact(slices.Sorted(slices.Values(got)))) != states {
		t.Errorf("list --status completes %q, want the %d states once each", got, states)
	}
	for _, key := range []string{"serve --store", "serve --bindings", "list --status", "send --binding", "push create --binding", "demo --store"} {
		if values[key] == nil {
			t.Errorf("%s has no values to complete", key)
		}
	}
}
