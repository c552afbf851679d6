package cli

import (
	"fmt"
	"strings"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
)

// streamNotes says on stderr what happens to a followed task besides its
// events (a2a send --stream, a2a watch): that the connection was lost and
// the client is resuming, and, when Ctrl-C ends the command, the task and
// the commands that pick it up. Its methods are called on the goroutine
// that follows the stream.
type streamNotes struct {
	e    *env
	cmd  string    // the command, for messages
	url  string    // the agent's URL as given, for the commands to suggest
	view *liveView // the live view of the events; nil with --json

	taskID string
	state  a2a.TaskState
	lost   bool // a lost connection was said, and no event came since
}

func (e *env) newStreamNotes(cmd, agentURL string) *streamNotes {
	return &streamNotes{e: e, cmd: cmd, url: agentURL}
}

// option makes the client report its reconnections to n.
func (n *streamNotes) option() client.Option { return client.WithReconnectHook(n.reconnecting) }

// reconnecting says that the stream was lost: once, however many attempts
// the client needs, and again only after the stream delivered something.
func (n *streamNotes) reconnecting(string, error) {
	if n.lost {
		return
	}
	n.lost = true
	n.say(fmt.Sprintf("a2a %s: connection lost, reconnecting…", n.cmd))
}

// event notes an event received.
func (n *streamNotes) event(ev a2a.Event) {
	n.lost = false
	switch x := ev.(type) {
	case *a2a.Task:
		n.taskID, n.state = x.ID, x.Status.State
	case *a2a.TaskStatusUpdateEvent:
		n.taskID, n.state = x.TaskID, x.Status.State
	case *a2a.TaskArtifactUpdateEvent:
		n.taskID = x.TaskID
	}
}

func (n *streamNotes) say(line string) {
	if n.view != nil {
		n.view.Note(n.e.stderr, line)
		return
	}
	fmt.Fprintln(n.e.stderr, line)
}

// closeView stops the live view's spinner; it may be called again.
func (n *streamNotes) closeView() {
	if n.view != nil {
		n.view.Close()
		n.view = nil
	}
}

// interrupted says, after Ctrl-C, which task was being followed and how
// to pick it up: the task goes on at the agent, which does not learn that
// nobody is watching any more. It returns the exit status.
func (n *streamNotes) interrupted() error {
	n.closeView()
	w := n.e.stderr
	if n.taskID == "" {
		fmt.Fprintf(w, "a2a %s: interrupted before the agent named a task\n", n.cmd)
		return exitCode(ExitInterrupted)
	}
	if n.state == a2a.TaskStateUnspecified {
		fmt.Fprintf(w, "a2a %s: interrupted while following task %s\n", n.cmd, n.taskID)
	} else {
		fmt.Fprintf(w, "a2a %s: interrupted; task %s was %s\n", n.cmd, n.taskID, stateName(n.state))
	}
	fmt.Fprintf(w, "  follow it again:  a2a watch %s %s\n", shellWord(n.url), shellWord(n.taskID))
	fmt.Fprintf(w, "  cancel it:        a2a cancel %s %s\n", shellWord(n.url), shellWord(n.taskID))
	return exitCode(ExitInterrupted)
}

// shellWord quotes s for a POSIX shell when it holds anything but the
// characters of plain URLs and ids, so that a suggested command can be
// pasted as it is.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
