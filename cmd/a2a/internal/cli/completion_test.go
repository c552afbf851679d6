package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// completeBash runs the completion function of script in bash with
// COMP_WORDS set to words and COMP_CWORD to the last of them, and returns
// COMPREPLY.
func completeBash(t *testing.T, script string, words ...string) []string {
	t.Helper()
	const driver = `source "$1" || exit 1
shift
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
_a2a || exit 1
for w in "${COMPREPLY[@]}"; do printf '%s\n' "$w"; done`
	out, err := exec.CommandContext(t.Context(), "bash", append([]string{"-c", driver, "bash", script}, words...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("bash completing %q: %v\n%s", words, err, out)
	}
	if len(out) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

// TestCompletionBash sources the output of a2a completion bash in bash and
// completes command lines with it.
func TestCompletionBash(t *testing.T) {
	r := runCLI(t, "completion", "bash")
	wantExit(t, r, 0)
	dir := t.TempDir()
	script := filepath.Join(dir, "a2a.bash")
	if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	pems := filepath.Join(dir, "pems")
	if err := os.Mkdir(pems, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ca.pem", "my cert.pem"} {
		if err := os.WriteFile(filepath.Join(pems, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		words []string // the last one is being completed
		want  []string
	}{
		{[]string{"a2a", "se"}, []string{"send", "serve"}},
		{[]string{"a2a", "send", "--bi"}, []string{"--binding"}},
		{[]string{"a2a", "send", "--binding", ""}, []string{"jsonrpc", "rest", "grpc"}},
		{[]string{"a2a", "send", "http://127.0.0.1:8080", "hi", "--binding", "g"}, []string{"grpc"}},
		// bash splits --binding=r and URLs at = and : into words.
		{[]string{"a2a", "send", "--binding", "=", "r"}, []string{"rest"}},
		{[]string{"a2a", "send", "http", ":", "//127.0.0.1", ":", "8080", "--str"}, []string{"--stream"}},
		{[]string{"a2a", "send", "--stream", ""}, nil}, // the URL: nothing to offer
		{[]string{"a2a", "list", "--status", "in"}, []string{"input-required"}},
		{[]string{"a2a", "serve", "--store", "p"}, []string{"postgres:", "postgres://"}},
		{[]string{"a2a", "serve", "--bindings", "j"}, []string{"jsonrpc", "jsonrpc,rest"}},
		{[]string{"a2a", "push", ""}, []string{"create", "get", "list", "delete", "listen"}},
		{[]string{"a2a", "push", "create", "--push"}, []string{"--push-token"}},
		{[]string{"a2a", "push", "listen", "--to"}, []string{"--token"}},
		{[]string{"a2a", "help", "pu"}, []string{"push"}},
		{[]string{"a2a", "help", "push", "l"}, []string{"list", "listen"}},
		{[]string{"a2a", "completion", ""}, []string{"bash", "zsh", "fish"}},
		{[]string{"a2a", "send", "--cacert", pems + "/"}, []string{pems + "/ca.pem", pems + "/my cert.pem"}},
		{[]string{"a2a", "demo", "--record", dir + "/p"}, []string{pems}},
	} {
		got := completeBash(t, script, c.words...)
		if !slices.Equal(got, c.want) {
			t.Errorf("completing %q: got %q, want %q", c.words, got, c.want)
		}
	}
	agents := completeBash(t, script, "a2a", "serve", "--agent", "")
	for _, a := range []string{"echo", "test-runner", "code-reviewer", "command"} {
		if !slices.Contains(agents, a) {
			t.Errorf("serve --agent completes %q, which lacks %q", agents, a)
		}
	}

	// Every command completes the flags its help lists, and --help.
	entry := regexp.MustCompile(`(?m)^  (-[-\w]+)`)
	for _, cmd := range helpCommands {
		if cmd[0] == "help" {
			continue
		}
		h := runCLI(t, append(slices.Clone(cmd), "--help")...)
		want := []string{"--help"}
		for _, m := range entry.FindAllStringSubmatch(h.stdout, -1) {
			want = append(want, m[1])
		}
		if cmd[0] == "push" && len(cmd) == 1 {
			want = []string{"--help"} // its help lists commands, not flags
		}
		slices.Sort(want)
		got := completeBash(t, script, append(append([]string{"a2a"}, cmd...), "-")...)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("a2a %s -<TAB>: got %q, want the flags of its help %q", strings.Join(cmd, " "), got, want)
		}
	}
}

// TestCompletionZshFish: the zsh and fish scripts are written and name the
// commands and their flags; where the shell is installed, it parses them.
func TestCompletionZshFish(t *testing.T) {
	for _, c := range []struct {
		shell string
		want  []string
	}{
		{"zsh", []string{"#compdef a2a", "compdef _a2a a2a", "'send:send a message", "'push')", "'push create')", "'--binding=[binding to use", ":(jsonrpc rest grpc)'", "'1:shell:(bash zsh fish)'", "'-v[debug logs"}},
		{"fish", []string{"complete -c a2a -n '__a2a_is \\'\\'' -a 'send'", "complete -c a2a -n '__a2a_is \\'push create\\'' -l push-token -x", "-l binding -x -a 'jsonrpc rest grpc'", "-l cacert -r -F", "-s v -d", "-a 'bash zsh fish'"}},
	} {
		t.Run(c.shell, func(t *testing.T) {
			r := runCLI(t, "completion", c.shell)
			wantExit(t, r, 0)
			if r.stderr != "" {
				t.Errorf("stderr: %s", r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stdout, w) {
					t.Errorf("the %s script lacks %q", c.shell, w)
				}
			}
			for _, cmd := range helpCommands {
				if !strings.Contains(r.stdout, "'"+cmd[len(cmd)-1]) {
					t.Errorf("the %s script does not name %q", c.shell, cmd)
				}
			}
			path, err := exec.LookPath(c.shell)
			if err != nil {
				return // not installed here: the texts above are what can be checked
			}
			file := filepath.Join(t.TempDir(), "a2a."+c.shell)
			if err := os.WriteFile(file, []byte(r.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.CommandContext(t.Context(), path, "-n", file).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", c.shell, err, out)
			}
		})
	}
}
