package cli

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"send", "send", 0},
		{"sned", "send", 1}, // two letters swapped: one edit
		{"strem", "stream", 1},
		{"stream", "strem", 1},
		{"serve", "send", 3},
		{"kitten", "sitting", 3},
		{"", "abc", 3},
		{"ca", "abc", 3}, // optimal string alignment: no letter edited twice
		{"timout", "timeout", 1},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	commands := subcommands("")
	for _, c := range []struct {
		typed      string
		candidates []string
		want       []string
	}{
		{"sned", commands, []string{"send"}},
		{"se", commands, []string{"send", "serve"}}, // a prefix of both
		{"lst", commands, []string{"list"}},
		{"ls", commands, []string{"list"}},
		{"frobnicate", commands, nil},
		{"x", commands, nil},
		{"send", commands, nil}, // not a mistake
		{"strem", []string{"stream", "async", "task"}, []string{"stream"}},
		{"bi", []string{"binding", "cacert", "json"}, []string{"binding"}},
		{"ab", []string{"v", "all"}, nil}, // short words match nothing two edits away
	} {
		if got := suggest(c.typed, c.candidates); !slices.Equal(got, c.want) {
			t.Errorf("suggest(%q) = %q, want %q", c.typed, got, c.want)
		}
	}
}

// TestFlagProblem: the flag package's errors become lines that write flags
// as --name and say what a value should look like.
func TestFlagProblem(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--strem"}, "unknown flag --strem; did you mean --stream?"},
		{[]string{"-strem"}, "unknown flag --strem; did you mean --stream?"},
		{[]string{"--zzz"}, "unknown flag --zzz"},
		{[]string{"--timeout"}, "--timeout needs a value"},
		{[]string{"--timeout", "5"}, `invalid value "5" for --timeout: a duration needs a unit, such as 30s, 2m or 1h30m`},
		{[]string{"--timeout=1.5"}, `invalid value "1.5" for --timeout: a duration needs a unit, such as 30s, 2m or 1h30m`},
		{[]string{"--timeout", "abc"}, `invalid value "abc" for --timeout: not a duration: write a number with a unit, such as 30s, 2m or 1h30m`},
		{[]string{"--history", "many"}, `invalid value "many" for --history: want a whole number`},
		{[]string{"--history", "99999999999999999999"}, `invalid value "99999999999999999999" for --history: out of range`},
		{[]string{"--stream=maybe"}, `invalid value "maybe" for --stream: want true or false`},
		{[]string{"---x"}, "bad flag syntax: ---x"},
	} {
		fs, _, _ := sendCommand.flagSet()
		_, err := parseArgs(fs, c.args)
		if err == nil {
			t.Fatalf("%q parsed", c.args)
		}
		if got := flagProblem(fs, err); got != c.want {
			t.Errorf("%q: %q, want %q", c.args, got, c.want)
		}
	}
	// A flag.Value's own error is kept, and a secret's value never shown.
	var cfg serveConfig
	fs := newServeFlags(&cfg, io.Discard)
	err := fs.Parse([]string{"--bindings", "soap"})
	if got, want := flagProblem(fs, err), `invalid value "soap" for --bindings: unknown binding "soap" (choose from: jsonrpc, rest)`; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	fs = flag.NewFlagSet("", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(refusingSecret{}, "key", "")
	err = fs.Parse([]string{"--key", "s3cret"})
	if got := flagProblem(fs, err); strings.Contains(got, "s3cret") || !strings.HasPrefix(got, "invalid value for --key: ") {
		t.Errorf("secret flag: %q", got)
	}
}

// refusingSecret is a secret flag whose Set always fails.
type refusingSecret struct{}

func (refusingSecret) secret()          {}
func (refusingSecret) String() string   { return "" }
func (refusingSecret) Set(string) error { return errors.New("not this one") }

// TestPrintFlags: placeholders, one default at most, none for zero values.
func TestPrintFlags(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	fs.Bool("on", false, "a switch")
	fs.Bool("push", true, "on by default")
	fs.String("addr", "127.0.0.1:80", "address")
	fs.String("name", "", "a `NAME`")
	fs.String("say", "hello world", "what to say")
	fs.Int("history", -1, "history (default: the server's)")
	fs.Duration("timeout", 30*time.Second, "a limit;\nsecond line")
	fs.Duration("none", 0, "zero")
	var m multiFlag
	fs.Var(&m, "header", "repeatable")
	fs.Bool("v", false, "verbose")
	var b bytes.Buffer
	printFlags(&b, fs, nil)
	want := `  --addr string
      address (default 127.0.0.1:80)
  --header HEADER
      repeatable
  --history int
      history (default: the server's)
  --name NAME
      a NAME
  --none duration
      zero
  --on
      a switch
  --push
      on by default (default true)
  --say string
      what to say (default "hello world")
  --timeout duration
      a limit;
      second line (default 30s)
  -v
      verbose
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestCommandTable: every command of the table runs: its help comes from
// Main on stdout with exit 0, so that what completion and suggestions offer
// exists.
func TestCommandTable(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, c := range commandTable() {
		if seen[c.name] {
			t.Errorf("%q twice in the table", c.name)
		}
		seen[c.name] = true
		var stdout, stderr bytes.Buffer
		code := Main(t.Context(), append(strings.Fields(c.name), "--help"), &stdout, &stderr)
		if code != ExitOK || stdout.Len() == 0 || stderr.Len() != 0 {
			t.Errorf("a2a %s --help: exit %d, stdout %q, stderr %q", c.name, code, stdout.String(), stderr.String())
		}
		if c.flags == nil {
			continue
		}
		// The help lists every flag of the command's flag set.
		c.flags().VisitAll(func(f *flag.Flag) {
			if !strings.Contains(stdout.String(), "\n  "+flagName(f.Name)+"\n") && !strings.Contains(stdout.String(), "\n  "+flagName(f.Name)+" ") {
				t.Errorf("a2a %s --help does not list %s", c.name, flagName(f.Name))
			}
		})
	}
	if got, want := subcommands("push"), slices.Sorted(maps.Keys(pushCommands)); len(got) != len(want)+1 || !slices.Contains(got, "listen") {
		t.Errorf("push commands %q, want %q and listen", got, want)
	}
}
