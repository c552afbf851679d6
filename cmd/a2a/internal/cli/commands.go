package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/internal/uuid"
)

// command is one client subcommand.
type command struct {
	name     string
	args     string // synopsis of the positional arguments
	about    string
	want     int // positional arguments required
	optional int // and allowed beyond those
	// setup registers the command's own flags on fs and returns the
	// function that runs it with the positional arguments.
	setup func(fs *flag.FlagSet) func(e *env, cf *clientFlags, pos []string) error
}

// exitCode lets a command that succeeded at the protocol level report a
// task's outcome as its exit status.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit %d", int(c)) }

// flagSet returns the flag set c parses its command line with, the client
// flags it fills, and the function that runs c. Parse errors and help are
// printed by runClientCommand, not by the flag package.
func (c *command) flagSet() (*flag.FlagSet, *clientFlags, func(*env, *clientFlags, []string) error) {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cf := new(clientFlags)
	cf.register(fs)
	return fs, cf, c.setup(fs)
}

func runClientCommand(e *env, c *command, args []string) int {
	fs, cf, run := c.flagSet()
	pos, err := parseArgs(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		c.help(e.stdout, fs)
		return ExitOK
	case err != nil:
		return usageFail(e.stderr, c.name, flagProblem(fs, err))
	}
	if problem := c.checkArgs(pos); problem != "" {
		return usageFail(e.stderr, c.name, problem)
	}
	err = run(e, cf, pos)
	if code, ok := err.(exitCode); ok {
		return int(code)
	}
	if err != nil {
		if _, ok := err.(usageError); ok {
			return usageFail(e.stderr, c.name, err.Error())
		}
		return e.fail(c.name, err)
	}
	return ExitOK
}

// checkArgs says what is wrong with the number of positional arguments
// pos: which ones are missing, or the first one too many; "" when nothing
// is.
func (c *command) checkArgs(pos []string) string {
	names := strings.Fields(c.args)
	switch {
	case len(pos) < c.want:
		missing := names[min(len(pos), len(names)):min(c.want, len(names))]
		switch len(missing) {
		case 0: // a synopsis shorter than want
			return fmt.Sprintf("missing arguments (a2a %s takes %s)", c.name, c.args)
		case 1:
			return "missing argument " + missing[0]
		}
		return "missing arguments " + strings.Join(missing[:len(missing)-1], ", ") + " and " + missing[len(missing)-1]
	case len(pos) > c.want+c.optional:
		return fmt.Sprintf("unexpected argument %q (a2a %s takes %s)", pos[c.want+c.optional], c.name, c.args)
	}
	return ""
}

// help writes c's help: its synopsis, what it does, its own flags, and the
// flags every client command takes.
func (c *command) help(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: a2a %s %s [flags]\n\n  %s\n", c.name, c.args, c.about)
	common := clientFlagNames()
	own := func(f *flag.Flag) bool { return !common[f.Name] }
	if len(flagNames(fs)) > len(common) {
		fmt.Fprint(w, "\nFlags:\n")
		printFlags(w, fs, own)
	}
	fmt.Fprint(w, "\nFlags of every client command:\n")
	printFlags(w, fs, func(f *flag.Flag) bool { return common[f.Name] })
}

var cardCommand = &command{
	name: "card", args: "URL", about: "fetch and show an agent's card (its extended card with --token, --api-key or --header)", want: 1,
	setup: func(fs *flag.FlagSet) func(*env, *clientFlags, []string) error {
		var o cardFlags
		fs.StringVar(&o.jwks, "jwks", "", "verify the card's signatures (A2A §8.4) with the keys of this JWK set, a file or an http(s) URL; exit 1 if none verifies")
		return o.run
	},
}

// cardFlags are the flags of a2a card.
type cardFlags struct {
	jwks string
}

func (o *cardFlags) run(e *env, cf *clientFlags, pos []string) error {
	var check *cardCheck
	var extra []client.Option
	if o.jwks != "" {
		hc, err := cf.tls.httpClient(io.Discard)
		if err != nil {
			return err
		}
		keys, err := loadCardKeys(e.ctx, hc, o.jwks, cf.timeout)
		if err != nil {
			return err
		}
		check = &cardCheck{v: &auth.CardVerifier{Keys: keys}}
		extra = append(extra, client.WithCardSignatures(check))
	}
	if err := runCard(e, cf, pos, check, extra...); err != nil {
		return err
	}
	if check != nil && check.failed() {
		if cf.json {
			for _, f := range []struct {
				o   *cardOutcome
				err error
			}{{&check.public, errNotVerified}, {&check.extended, errExtendedNotVerified}} {
				if f.o.err != nil {
					fmt.Fprintf(e.stderr, "a2a card: %v: %s\n", f.err, strings.TrimPrefix(f.o.status(), "not verified: "))
				}
			}
		}
		return exitCode(ExitError)
	}
	return nil
}

func runCard(e *env, cf *clientFlags, pos []string, check *cardCheck, extra ...client.Option) error {
	c, err := cf.connect(e, pos[0], extra...)
	if err != nil {
		return err
	}
	// With credentials, show what they unlock: the extended card, when
	// the agent offers one (A2A §3.1.11).
	public := c.Card()
	extended := false
	if cf.authenticated() {
		if public.Capabilities.SupportsExtendedCard() {
			if check != nil {
				check.inExtended = true // the client verifies a signed extended card
			}
			if _, err := c.GetExtendedAgentCard(e.ctx); err != nil {
				return err
			}
			extended = true
		}
	}
	if cf.json {
		return e.printJSON(c.Card())
	}
	// The signatures line describes the card shown. The extended card
	// replaces the public one, whose outcome is then said as its own.
	var sigs cardSigs
	switch {
	case check == nil:
	case !extended:
		sigs.status = check.public.status()
	default:
		sigs.public = fmt.Sprintf("%d, %s", len(public.Signatures), check.public.status())
		if check.extended.checked {
			sigs.status = check.extended.status()
		} else {
			sigs.unchecked = "the extended card came over the authenticated connection"
		}
	}
	printCard(e.stdout, style{e.term}, c.Card(), sigs)
	if extended {
		fmt.Fprintf(e.stdout, "\n%s\n", style{e.term}.dim("the extended card, shown to authenticated callers"))
	}
	return nil
}

// sendFlags are the flags of a2a send.
type sendFlags struct {
	files     filesFlag
	data      string
	taskID    string
	contextID string
	stream    bool
	async     bool
	history   int
	webhook   string
	hookToken string
}

var sendCommand = &command{
	name: "send", args: "URL TEXT", about: "send a message (TEXT - reads it from standard input); wait for the task to finish (or stream it with --stream)", want: 2,
	setup: func(fs *flag.FlagSet) func(*env, *clientFlags, []string) error {
		o := &sendFlags{history: -1}
		fs.Var(&o.files, "file", "attach `PATH` as a raw part, its media type guessed from its extension, else its content (repeatable)")
		fs.Var(fileTypeFlag{&o.files}, "file-type", "the media `TYPE` of the --file before it, instead of the guess")
		fs.StringVar(&o.data, "data", "", "attach a `JSON` value as a data part")
		fs.StringVar(&o.taskID, "task", "", "continue this task (answer an input-required task)")
		fs.StringVar(&o.contextID, "context", "", "send within this context")
		fs.BoolVar(&o.stream, "stream", false, "stream the task's progress as it happens")
		fs.BoolVar(&o.async, "async", false, "return as soon as the task exists (returnImmediately)")
		fs.IntVar(&o.history, "history", -1, "return at most N history messages (default: the server's)")
		fs.StringVar(&o.webhook, "webhook", "", "have the agent POST the task's updates to this `URL` (a push notification config sent with\n"+
			"the message; a2a push listen prints what arrives)")
		fs.StringVar(&o.hookToken, "webhook-token", "", "with --webhook, the token the agent sends with each notification")
		return o.run
	},
}

func (o *sendFlags) run(e *env, cf *clientFlags, pos []string) error {
	if o.stream && o.async {
		return usageError("--stream and --async do not go together")
	}
	text := pos[1]
	if text == "-" {
		t, err := e.readMessage()
		if err != nil {
			return err
		}
		text = t
	}
	msg, err := o.message(text)
	if err != nil {
		return err
	}
	req := &a2a.SendMessageRequest{Message: msg, Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: o.async}}
	if o.history >= 0 {
		req.Configuration.HistoryLength = a2a.Ptr(int32(o.history))
	}
	if o.webhook != "" {
		// The config's id is ours to choose (A2A §4.3), so that we can
		// say which config the message registered.
		req.Configuration.TaskPushNotificationConfig = &a2a.TaskPushNotificationConfig{ID: uuid.New(), URL: o.webhook, Token: o.hookToken}
	} else if o.hookToken != "" {
		return usageError("--webhook-token needs --webhook")
	}
	notes := e.newStreamNotes("send", pos[0])
	c, err := cf.connect(e, pos[0], notes.option())
	if err != nil {
		return err
	}
	if o.stream {
		var taskID string
		err := e.follow(cf, notes, noteTaskID(c.SendAndFollow(e.ctx, req), &taskID))
		if _, ok := err.(exitCode); err == nil || ok {
			e.noteWebhook(cf, req, taskID)
		}
		return err
	}
	res, err := c.SendMessage(e.ctx, req)
	if err != nil {
		return err
	}
	if cf.json {
		if err := e.printJSON(res); err != nil {
			return err
		}
	}
	switch r := res.Result.(type) {
	case *a2a.Message:
		if !cf.json {
			printMessage(e.stdout, style{e.term}, r)
		}
	case *a2a.Task:
		if !cf.json {
			printTask(e.stdout, style{e.term}, r)
		}
		e.noteWebhook(cf, req, r.ID)
		if code := taskExit(r.Status.State); code != ExitOK {
			return exitCode(code)
		}
	}
	return nil
}

// noteWebhook says which webhook config the message of a2a send
// registered on task taskID, if it carried one: on stdout after the task,
// or on stderr with --json, whose stdout is the protocol's JSON only.
func (e *env) noteWebhook(cf *clientFlags, req *a2a.SendMessageRequest, taskID string) {
	pc := req.Configuration.TaskPushNotificationConfig
	if pc == nil || taskID == "" {
		return
	}
	w := e.stdout
	if cf.json {
		w = e.stderr
	}
	fmt.Fprintf(w, "webhook config %s registered for task %s\n", pc.ID, taskID)
}

// noteTaskID passes events on, keeping the id of their task in id.
func noteTaskID(events func(func(a2a.Event, error) bool), id *string) func(func(a2a.Event, error) bool) {
	return func(yield func(a2a.Event, error) bool) {
		for ev, err := range events {
			if *id == "" {
				switch x := ev.(type) {
				case *a2a.Task:
					*id = x.ID
				case *a2a.TaskStatusUpdateEvent:
					*id = x.TaskID
				case *a2a.TaskArtifactUpdateEvent:
					*id = x.TaskID
				}
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// message builds the user message of a2a send.
func (o *sendFlags) message(text string) (*a2a.Message, error) {
	msg := client.TextMessage(text)
	msg.TaskID, msg.ContextID = o.taskID, o.contextID
	if text == "" {
		msg.Parts = nil
	}
	for _, f := range o.files {
		b, err := os.ReadFile(f.path)
		if err != nil {
			return nil, usageError(fileError(f.path, err))
		}
		mt := f.mediaType
		if mt == "" {
			mt = guessMediaType(f.path, b)
		}
		msg.Parts = append(msg.Parts, a2a.Part{Content: a2a.Raw(b), Filename: filepath.Base(f.path), MediaType: mt})
	}
	if o.data != "" {
		var v any
		if err := json.Unmarshal([]byte(o.data), &v); err != nil {
			return nil, usageError(fmt.Sprintf("--data: not valid JSON: %v", err))
		}
		msg.Parts = append(msg.Parts, a2a.Part{Content: a2a.Data(o.data), MediaType: "application/json"})
	}
	if len(msg.Parts) == 0 {
		return nil, usageError("nothing to send: give TEXT, --file or --data")
	}
	return msg, nil
}

// follow prints a stream of events, live for people or as JSON lines, and
// turns the task's last state into the exit status. What happens to the
// stream besides its events goes to stderr through n (streams.go): a lost
// connection, and on Ctrl-C how to pick the task up again.
func (e *env) follow(cf *clientFlags, n *streamNotes, events func(func(a2a.Event, error) bool)) error {
	if !cf.json {
		n.view = newLiveView(e.stdout, style{e.term}, e.term)
		defer n.closeView()
	}
	last := a2a.TaskStateUnspecified
	for ev, err := range events {
		if err != nil {
			if e.ctx.Err() != nil {
				return n.interrupted()
			}
			return err
		}
		n.event(ev)
		switch x := ev.(type) {
		case *a2a.Task:
			last = x.Status.State
		case *a2a.TaskStatusUpdateEvent:
			last = x.Status.State
		}
		if cf.json {
			if err := e.printJSON(a2a.StreamResponse{Event: ev}); err != nil {
				return err
			}
		} else {
			n.view.Event(ev)
		}
	}
	if code := taskExit(last); code != ExitOK {
		return exitCode(code)
	}
	return nil
}

var getCommand = &command{
	name: "get", args: "URL TASK_ID", about: "show a task", want: 2,
	setup: func(fs *flag.FlagSet) func(*env, *clientFlags, []string) error {
		history := fs.Int("history", -1, "show at most N history messages (default: all)")
		return func(e *env, cf *clientFlags, pos []string) error { return runGet(e, cf, pos, *history) }
	},
}

func runGet(e *env, cf *clientFlags, pos []string, getHistory int) error {
	c, err := cf.connect(e, pos[0])
	if err != nil {
		return err
	}
	req := &a2a.GetTaskRequest{ID: pos[1]}
	if getHistory >= 0 {
		req.HistoryLength = a2a.Ptr(int32(getHistory))
	}
	t, err := c.GetTask(e.ctx, req)
	if err != nil {
		return err
	}
	return e.showTask(cf, t)
}

func (e *env) showTask(cf *clientFlags, t *a2a.Task) error {
	if cf.json {
		return e.printJSON(t)
	}
	printTask(e.stdout, style{e.term}, t)
	return nil
}

var cancelCommand = &command{
	name: "cancel", args: "URL TASK_ID", about: "cancel a task", want: 2,
	setup: func(*flag.FlagSet) func(*env, *clientFlags, []string) error { return runCancel },
}

func runCancel(e *env, cf *clientFlags, pos []string) error {
	c, err := cf.connect(e, pos[0])
	if err != nil {
		return err
	}
	t, err := c.CancelTask(e.ctx, &a2a.CancelTaskRequest{ID: pos[1]})
	if err != nil {
		return err
	}
	return e.showTask(cf, t)
}

var watchCommand = &command{
	name: "watch", args: "URL TASK_ID", about: "follow a task to its end (streams, resumes, or polls)", want: 2,
	setup: func(*flag.FlagSet) func(*env, *clientFlags, []string) error {
		return func(e *env, cf *clientFlags, pos []string) error {
			notes := e.newStreamNotes("watch", pos[0])
			c, err := cf.connect(e, pos[0], notes.option())
			if err != nil {
				return err
			}
			return e.follow(cf, notes, c.Follow(e.ctx, pos[1]))
		}
	},
}
