package cli

import (
	"flag"
	"io"
	"strings"

	"github.com/goa2a/a2a/kit/planner"
)

// cmdSpec is a command of a2a as suggestions and completion know it.
type cmdSpec struct {
	name  string // as typed after a2a: "send", "push create"
	about string // what it does, in a line
	// flags returns a new flag set of the command, the one it parses its
	// command line with, so that what is said of a command's flags follows
	// its code; nil for a command without flags.
	flags   func() *flag.FlagSet
	args    []string // the words its first argument may be; nil: any
	argName string   // and what that argument is, as help writes it
}

// commandTable lists the commands of a2a in the order of the usage text.
// Main dispatches on the names; TestCommandTable checks that each one runs.
func commandTable() []cmdSpec {
	var t []cmdSpec
	for _, c := range []*command{cardCommand, sendCommand, getCommand, listCommand, cancelCommand, watchCommand} {
		t = append(t, c.spec())
	}
	t = append(t, cmdSpec{name: "push", about: "manage the webhooks of a task (push notification configs), or receive them"})
	for _, verb := range []string{"create", "get", "list", "delete"} {
		t = append(t, pushCommands[verb].spec())
	}
	t = append(t,
		cmdSpec{name: "push listen", about: pushListenAbout, flags: func() *flag.FlagSet {
			return newPushListenFlags(new(pushListenFlags))
		}},
		cmdSpec{name: "serve", about: serveAbout, flags: func() *flag.FlagSet {
			return newServeFlags(new(serveConfig), io.Discard)
		}},
		cmdSpec{name: "demo", about: "run the A2A 101 kit (three agents and a planner) on this machine", flags: func() *flag.FlagSet {
			plan := planner.DefaultPlan()
			return newDemoFlags(new(demoFlags), &plan)
		}},
		cmdSpec{name: "version", about: versionAbout, flags: func() *flag.FlagSet {
			return newVersionFlags(new(bool))
		}},
		cmdSpec{name: "completion", about: "print a shell completion script: " + orList(completionShells()), args: completionShells(), argName: "SHELL"},
		cmdSpec{name: "help", about: "show the help of a2a, or of a command"},
	)
	return t
}

func (c *command) spec() cmdSpec {
	return cmdSpec{name: c.name, about: c.about, flags: func() *flag.FlagSet {
		fs, _, _ := c.flagSet()
		return fs
	}}
}

// subcommands returns the names of the commands under parent ("" for the
// top level, "push" for its verbs), in the table's order.
func subcommands(parent string) []string {
	var names []string
	for _, c := range commandTable() {
		p, name, found := strings.Cut(c.name, " ")
		switch {
		case parent == "" && !found:
			names = append(names, c.name)
		case parent != "" && found && p == parent:
			names = append(names, name)
		}
	}
	return names
}
