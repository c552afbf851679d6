package cli_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// goldenRun compares a run of the binary with testdata/NAME.golden in a
// form that keeps the exit status, stdout and stderr apart.
func goldenRun(t *testing.T, name string, r result) {
	t.Helper()
	golden(t, name, fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr))
}

// runCLI runs the built binary without an agent: its output is kept as it
// is (run replaces an agent's URL).
func runCLI(t *testing.T, args ...string) result {
	t.Helper()
	return run(t, "\x00", args...) // a URL that never occurs
}

// helpCommands are the commands whose help TestHelpOnStdout asks for.
var helpCommands = [][]string{
	{"card"}, {"send"}, {"get"}, {"list"}, {"cancel"}, {"watch"},
	{"push"}, {"push", "create"}, {"push", "get"}, {"push", "list"}, {"push", "delete"}, {"push", "listen"},
	{"serve"}, {"demo"}, {"version"}, {"completion"}, {"help"},
}

// TestHelpOnStdout: a2a CMD --help, a2a CMD -h and a2a help CMD print the
// same help of the command on stdout, nothing on stderr, and exit 0; each
// flag is written --name (-v for a one-letter one) and shows at most one
// default.
func TestHelpOnStdout(t *testing.T) {
	// serve's --data-dir default comes from the environment.
	t.Setenv("A2A_DATA_DIR", "/var/lib/a2a")
	goldens := map[string]string{"send": "help-send", "serve": "help-serve", "push create": "help-push-create", "push": "help-push"}
	for _, cmd := range helpCommands {
		name := strings.Join(cmd, " ")
		t.Run(name, func(t *testing.T) {
			var first result
			for i, args := range [][]string{
				append(slices.Clone(cmd), "--help"),
				append(slices.Clone(cmd), "-h"),
				append([]string{"help"}, cmd...),
			} {
				r := runCLI(t, args...)
				if r.code != 0 || r.stderr != "" || r.stdout == "" {
					t.Fatalf("a2a %s: exit %d, stdout %q, stderr %q; want the help on stdout and exit 0", strings.Join(args, " "), r.code, r.stdout, r.stderr)
				}
				if i == 0 {
					first = r
				} else if r.stdout != first.stdout {
					t.Errorf("a2a %s prints another help than a2a %s --help:\n%s", strings.Join(args, " "), name, r.stdout)
				}
			}
			want := "Usage: a2a " + name + " "
			if name == "help" {
				want = "a2a: the goa2a command line"
			}
			if !strings.HasPrefix(first.stdout, want) {
				t.Errorf("help begins %q, want %q", strings.SplitN(first.stdout, "\n", 2)[0], want)
			}
			checkFlagEntries(t, first.stdout)
			if g, ok := goldens[name]; ok {
				goldenRun(t, g, first)
			}
		})
	}
}

// flagLine is the first line of a flag's entry in a help.
var flagLine = regexp.MustCompile(`^  (-\S+)( \S.*)?$`)

// checkFlagEntries checks the flag entries of help: --name (or -x), and at
// most one "(default" in each description.
func checkFlagEntries(t *testing.T, help string) {
	t.Helper()
	var flag, desc string
	check := func() {
		if flag == "" {
			return
		}
		if n := strings.Count(desc, "(default"); n > 1 {
			t.Errorf("%s shows %d defaults:%s", flag, n, desc)
		}
		if !strings.HasPrefix(flag, "--") && len(flag) != 2 {
			t.Errorf("flag %s is written with one dash", flag)
		}
	}
	for line := range strings.SplitSeq(help, "\n") {
		switch m := flagLine.FindStringSubmatch(line); {
		case m != nil:
			check()
			flag, desc = m[1], ""
		case strings.HasPrefix(line, "      "):
			desc += "\n" + line
		default:
			check()
			flag, desc = "", ""
		}
	}
	check()
}

// TestMistakes: a mistake on the command line is one line on stderr saying
// what is wrong, with a suggestion when a name is close to a right one,
// and a line saying where the help is; exit 2, nothing on stdout, and
// nothing sent (the agent URL has nobody behind it: exit 4 if it were
// called).
func TestMistakes(t *testing.T) {
	pointer := regexp.MustCompile(`^Run 'a2a( [a-z ]+ --help| help)' for usage\.$`)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"mistake-command", []string{"sned"}},
		{"mistake-push-command", []string{"push", "crate", "http://127.0.0.1:1", "t1", "http://127.0.0.1:1/hook"}},
		{"mistake-flag", []string{"send", "--strem", "http://127.0.0.1:1", "hi"}},
		{"mistake-flag-serve", []string{"serve", "--adr", "127.0.0.1:0"}},
		{"mistake-missing-argument", []string{"get", "http://127.0.0.1:1"}},
		{"mistake-unexpected-argument", []string{"get", "http://127.0.0.1:1", "t1", "extra"}},
		{"mistake-duration", []string{"send", "--timeout", "5", "http://127.0.0.1:1", "hi"}},
		{"mistake-duration-word", []string{"send", "--timeout", "abc", "http://127.0.0.1:1", "hi"}},
		{"mistake-shell", []string{"completion", "fsh"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runCLI(t, c.args...)
			wantExit(t, r, 2)
			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			if r.stdout != "" || len(lines) != 2 || !pointer.MatchString(lines[1]) {
				t.Errorf("a2a %s: stdout %q, stderr:\n%s\nwant stdout empty and two lines on stderr, the second pointing at the help", strings.Join(c.args, " "), r.stdout, r.stderr)
			}
			goldenRun(t, c.name, r)
		})
	}
}
