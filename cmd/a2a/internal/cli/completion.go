package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/goa2a/a2a/a2a"
)

// completionShells are the shells a2a completion writes a script for.
func completionShells() []string { return []string{"bash", "zsh", "fish"} }

const completionHelp = `Usage: a2a completion bash|zsh|fish

  print a script that completes a2a's commands, their flags and the values of
  flags (bindings, agents, stores, task states, file names) in the shell

Load it in the shell's start-up file:
  bash   source <(a2a completion bash)           in ~/.bashrc
  zsh    source <(a2a completion zsh)            in ~/.zshrc, after compinit
  fish   a2a completion fish | source            in ~/.config/fish/config.fish
         (or a2a completion fish > ~/.config/fish/completions/a2a.fish)
`

// completionCommand runs a2a completion SHELL.
func completionCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("completion", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	pos, err := parseArgs(fs, args)
	shells := completionShells()
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, completionHelp)
		return ExitOK
	case err != nil:
		return usageFail(stderr, "completion", flagProblem(fs, err))
	case len(pos) == 0:
		return usageFail(stderr, "completion", "missing argument SHELL ("+orList(shells)+")")
	case len(pos) > 1:
		return usageFail(stderr, "completion", fmt.Sprintf("unexpected argument %q (a2a completion takes SHELL)", pos[1]))
	}
	cmds := completionCommands()
	switch pos[0] {
	case "bash":
		writeBashCompletion(stdout, cmds)
	case "zsh":
		writeZshCompletion(stdout, cmds)
	case "fish":
		writeFishCompletion(stdout, cmds)
	default:
		problem := fmt.Sprintf("unknown shell %q", pos[0])
		if s := didYouMean(pos[0], shells, asTyped); s != "" {
			problem += s
		} else {
			problem += " (want " + orList(shells) + ")"
		}
		return usageFail(stderr, "completion", problem)
	}
	return ExitOK
}

// valueKind is what a flag takes, for completion.
type valueKind int

const (
	valueNone  valueKind = iota // nothing: a boolean flag
	valueAny                    // anything; nothing to offer
	valueWords                  // one of the flag's words
	valueFile                   // a file name
	valueDir                    // a directory name
)

// complCommand is a command as the completion scripts see it.
type complCommand struct {
	name, about string
	flags       []complFlag // sorted by name
	args        []string    // the words of its first argument
	argName     string      // what that argument is
}

// complFlag is a flag as the completion scripts see it.
type complFlag struct {
	name, about string
	value       valueKind
	words       []string // of valueWords
	placeholder string   // what the value is, as help writes it
	repeatable  bool
}

// completionCommands turns the command table into what the scripts
// complete: every command with the flags of its flag set and --help.
func completionCommands() []complCommand {
	var out []complCommand
	for _, spec := range commandTable() {
		c := complCommand{name: spec.name, about: spec.about, args: spec.args, argName: spec.argName}
		if spec.flags != nil {
			spec.flags().VisitAll(func(f *flag.Flag) { c.flags = append(c.flags, complFlagOf(spec.name, f)) })
		}
		c.flags = append(c.flags, complFlag{name: "help", about: "show the help of a2a " + spec.name})
		slices.SortFunc(c.flags, func(a, b complFlag) int { return strings.Compare(a.name, b.name) })
		out = append(out, c)
	}
	return out
}

// complFlagOf is flag f of command cmd for completion: what it takes comes
// from flagValues, else from its placeholder (FILE, DIR), else it is
// anything, or nothing for a boolean flag.
func complFlagOf(cmd string, f *flag.Flag) complFlag {
	placeholder, usage := flagPlaceholder(f)
	about, _, _ := strings.Cut(usage, "\n")
	c := complFlag{name: f.Name, about: about, placeholder: placeholder, repeatable: strings.Contains(usage, "(repeatable")}
	words, kind := flagValues(cmd, f.Name)
	switch {
	case placeholder == "":
		c.value = valueNone
	case words != nil:
		c.value, c.words = valueWords, words
	case kind != valueNone:
		c.value = kind
	case strings.Contains(placeholder, "FILE"):
		c.value = valueFile
	case placeholder == "DIR":
		c.value = valueDir
	default:
		c.value = valueAny
	}
	return c
}

// flagValues returns what flag name of command cmd takes when its
// placeholder does not say it: the words it accepts, or the kind of name.
// The words come from the code that checks the flag where it can (the
// agents, stores, bindings and task states); TestCompletionValuesAccepted
// checks that each one is accepted.
func flagValues(cmd, name string) ([]string, valueKind) {
	switch cmd + " --" + name {
	case "serve --agent":
		return serveAgentNames(), valueWords
	case "serve --store":
		return []string{storeSQLite, storeSQLite + ":", storePostgres + ":", "postgres://", storeMemory}, valueWords
	case "serve --bindings":
		return []string{bindingJSONRPC, bindingREST, bindingJSONRPC + "," + bindingREST}, valueWords
	case "serve --durability":
		return []string{"process", "power"}, valueWords
	case "serve --log-format":
		return []string{"text", "json"}, valueWords
	case "serve --log-level":
		return []string{"debug", "info", "warn", "error"}, valueWords
	case "serve --data-dir", "serve --dir":
		return nil, valueDir
	case "demo --store":
		return []string{storeSQLite, storeMemory}, valueWords
	case "list --status":
		return taskStateWords(), valueWords
	}
	if name == "binding" { // every client command (clientFlags.connect)
		return []string{bindingJSONRPC, bindingREST, "grpc"}, valueWords
	}
	return nil, valueNone
}

// serveAgentNames are the values of a2a serve --agent: the agents of the
// table, and the one of --exec.
func serveAgentNames() []string {
	return append(slices.Sorted(maps.Keys(agents)), agentCommand)
}

// taskStateWords are the task states as a2a list --status takes them:
// "submitted", "input-required", ...
func taskStateWords() []string {
	var words []string
	for s := a2a.TaskStateUnspecified + 1; s.Valid(); s++ {
		words = append(words, strings.ReplaceAll(stateName(s), " ", "-"))
	}
	return words
}
