package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/goa2a/a2a/a2a"
)

func sortStrings(s []string) { sort.Strings(s) }

// style colours text on a terminal and leaves it plain elsewhere.
type style struct{ on bool }

func (s style) wrap(code, text string) string {
	if !s.on {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) bold(t string) string  { return s.wrap("1", t) }
func (s style) dim(t string) string   { return s.wrap("2", t) }
func (s style) green(t string) string { return s.wrap("32", t) }
func (s style) red(t string) string   { return s.wrap("31", t) }
func (s style) cyan(t string) string  { return s.wrap("36", t) }
func (s style) yellow(t string) string {
	return s.wrap("33", t)
}

// stateName is a task state as people say it: "completed", "input required".
func stateName(s a2a.TaskState) string {
	n := strings.TrimPrefix(s.String(), "TASK_STATE_")
	return strings.ReplaceAll(strings.ToLower(n), "_", " ")
}

func (s style) state(st a2a.TaskState) string {
	n := stateName(st)
	switch {
	case st == a2a.TaskStateCompleted:
		return s.green(n)
	case st.Terminal():
		return s.red(n)
	case st.Interrupted():
		return s.yellow(n)
	}
	return s.cyan(n)
}

// partsText renders parts for a person: text as is, data as compact JSON,
// files by name and type.
func partsText(parts []a2a.Part) string {
	var b strings.Builder
	for _, p := range parts {
		switch c := p.Content.(type) {
		case a2a.Text:
			b.WriteString(string(c))
			if !strings.HasSuffix(string(c), "\n") {
				b.WriteByte('\n')
			}
		case a2a.Data:
			b.Write(c)
			b.WriteByte('\n')
		case a2a.Raw:
			fmt.Fprintf(&b, "[%d bytes%s]\n", len(c), fileLabel(p))
		case a2a.URL:
			fmt.Fprintf(&b, "[%s%s]\n", c, fileLabel(p))
		}
	}
	return b.String()
}

func fileLabel(p a2a.Part) string {
	var l []string
	if p.Filename != "" {
		l = append(l, p.Filename)
	}
	if p.MediaType != "" {
		l = append(l, p.MediaType)
	}
	if len(l) == 0 {
		return ""
	}
	return " " + strings.Join(l, ", ")
}

// indent prefixes every line of text.
func indent(text, prefix string) string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return ""
	}
	return prefix + strings.ReplaceAll(text, "\n", "\n"+prefix) + "\n"
}

// hang prefixes the first line of text with first and the others with
// rest, so that the lines of one message read as one block under its
// label.
func hang(text, first, rest string) string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return ""
	}
	return first + strings.ReplaceAll(text, "\n", "\n"+rest) + "\n"
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// cardSigs is what the signature lines of printCard say, for a2a card
// --jwks. The zero value says the signatures were not checked.
type cardSigs struct {
	status    string // the outcome of verifying the shown card's signatures
	unchecked string // else, why they were not verified
	public    string // for an extended card: the public card's count and outcome
}

// printCard writes a readable summary of an agent card; sig says how its
// signatures (and for an extended card, the public card's) were checked.
func printCard(w io.Writer, s style, c *a2a.AgentCard, sig cardSigs) {
	fmt.Fprintf(w, "%s %s\n", s.bold(c.Name), s.dim("v"+c.Version))
	if c.Description != "" {
		fmt.Fprintf(w, "%s\n", c.Description)
	}
	if c.Provider != nil {
		fmt.Fprintf(w, "\n%-13s %s (%s)\n", "provider", c.Provider.Organization, c.Provider.URL)
	}
	fmt.Fprintln(w)
	for i, in := range c.SupportedInterfaces {
		label := ""
		if i == 0 {
			label = "interfaces"
		}
		tenant := ""
		if in.Tenant != "" {
			tenant = "  tenant " + in.Tenant
		}
		fmt.Fprintf(w, "%-13s %-10s %-4s %s%s\n", label, in.ProtocolBinding, in.ProtocolVersion, in.URL, tenant)
	}
	var caps []string
	if c.Capabilities.SupportsStreaming() {
		caps = append(caps, "streaming")
	}
	if c.Capabilities.SupportsPush() {
		caps = append(caps, "push notifications")
	}
	if c.Capabilities.SupportsExtendedCard() {
		caps = append(caps, "extended card")
	}
	for _, e := range c.Capabilities.Extensions {
		x := "extension " + e.URI
		if e.Required {
			x += " (required)"
		}
		caps = append(caps, x)
	}
	if len(caps) == 0 {
		caps = []string{"none declared"}
	}
	fmt.Fprintf(w, "%-13s %s\n", "capabilities", strings.Join(caps, ", "))
	fmt.Fprintf(w, "%-13s %s\n", "input", strings.Join(c.DefaultInputModes, ", "))
	fmt.Fprintf(w, "%-13s %s\n", "output", strings.Join(c.DefaultOutputModes, ", "))
	if len(c.SecuritySchemes) > 0 {
		names := make([]string, 0, len(c.SecuritySchemes))
		for n := range c.SecuritySchemes {
			names = append(names, n)
		}
		sort.Strings(names)
		for i, n := range names {
			label := ""
			if i == 0 {
				label = "security"
			}
			fmt.Fprintf(w, "%-13s %s: %s\n", label, n, schemeText(c.SecuritySchemes[n]))
		}
	}
	label := "signatures"
	switch {
	case sig.status != "": // a2a card --jwks
		fmt.Fprintf(w, "%-13s %d, %s\n", label, len(c.Signatures), sig.status)
		label = ""
	case sig.unchecked != "":
		fmt.Fprintf(w, "%-13s %d (not verified: %s)\n", label, len(c.Signatures), sig.unchecked)
		label = ""
	case len(c.Signatures) > 0:
		fmt.Fprintf(w, "%-13s %d (not verified)\n", label, len(c.Signatures))
		label = ""
	}
	if sig.public != "" {
		fmt.Fprintf(w, "%-13s public card: %s\n", label, sig.public)
	}
	if len(c.Skills) > 0 {
		fmt.Fprintf(w, "\nskills\n")
		for _, sk := range c.Skills {
			fmt.Fprintf(w, "  %s  %s\n", s.bold(sk.ID), sk.Name)
			if sk.Description != "" {
				fmt.Fprintf(w, "      %s\n", sk.Description)
			}
			for _, ex := range sk.Examples {
				fmt.Fprintf(w, "      %s %q\n", s.dim("e.g."), ex)
			}
		}
	}
}

func schemeText(s a2a.SecurityScheme) string {
	switch {
	case s.HTTPAuth != nil:
		return "HTTP " + s.HTTPAuth.Scheme
	case s.APIKey != nil:
		return "API key in " + s.APIKey.Location + " " + s.APIKey.Name
	case s.OAuth2 != nil:
		return "OAuth 2.0"
	case s.OpenIDConnect != nil:
		return "OpenID Connect " + s.OpenIDConnect.OpenIDConnectURL
	case s.MutualTLS != nil:
		return "mutual TLS"
	}
	return "unknown"
}

// printMessage writes a direct reply.
func printMessage(w io.Writer, s style, m *a2a.Message) {
	fmt.Fprintf(w, "%s %s\n", s.bold("reply"), s.dim("(no task; context "+m.ContextID+")"))
	fmt.Fprint(w, indent(partsText(m.Parts), "  "))
}

// printTask writes a task: its state and status message, artifacts, and
// the history the server returned.
func printTask(w io.Writer, s style, t *a2a.Task) {
	fmt.Fprintf(w, "%s %s  %s\n", s.bold("task"), t.ID, s.state(t.Status.State))
	fmt.Fprintf(w, "  context  %s\n", t.ContextID)
	if !t.Status.Timestamp.IsZero() {
		fmt.Fprintf(w, "  updated  %s\n", t.Status.Timestamp)
	}
	if m := t.Status.Message; m != nil {
		fmt.Fprint(w, indent(partsText(m.Parts), "  │ "))
	}
	for _, a := range t.Artifacts {
		fmt.Fprintf(w, "%s %s\n", s.bold("artifact"), artifactLabel(a))
		fmt.Fprint(w, indent(partsText(a.Parts), "  "))
	}
	if len(t.History) > 0 {
		fmt.Fprintf(w, "%s (%s)\n", s.bold("history"), plural(len(t.History), "message"))
		for _, m := range t.History {
			who := "user "
			if m.Role == a2a.RoleAgent {
				who = "agent"
			}
			fmt.Fprint(w, hang(partsText(m.Parts), "  "+s.dim(who)+" ", "        "))
		}
	}
	switch t.Status.State {
	case a2a.TaskStateInputRequired:
		fmt.Fprintf(w, "%s answer with: a2a send URL TEXT --task %s\n", s.yellow("→"), t.ID)
	case a2a.TaskStateAuthRequired:
		fmt.Fprintf(w, "%s waiting for authorization; follow it with: a2a watch URL %s\n", s.yellow("→"), t.ID)
	}
}

func artifactLabel(a a2a.Artifact) string {
	l := a.ArtifactID
	if a.Name != "" && a.Name != a.ArtifactID {
		l += " (" + a.Name + ")"
	}
	return l
}

// liveView prints stream events as they arrive, for a person watching:
// state changes on their own lines, artifact chunks under their artifact,
// and, on a terminal, a spinner while nothing happens.
type liveView struct {
	w     io.Writer
	s     style
	mu    sync.Mutex
	last  string // artifact id of the last chunk printed
	spin  bool   // a spinner line is on screen
	frame int
	stop  chan struct{}
	done  chan struct{}
	state a2a.TaskState
	task  string
}

func newLiveView(w io.Writer, s style, spinner bool) *liveView {
	v := &liveView{w: w, s: s}
	if spinner {
		v.stop, v.done = make(chan struct{}), make(chan struct{})
		go v.spinLoop()
	}
	return v
}

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (v *liveView) spinLoop() {
	defer close(v.done)
	t := time.NewTicker(120 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-v.stop:
			return
		case <-t.C:
			v.mu.Lock()
			v.frame++
			fmt.Fprintf(v.w, "\r%s %s ", v.s.cyan(spinFrames[v.frame%len(spinFrames)]), v.s.dim(stateName(v.state)+"…"))
			v.spin = true
			v.mu.Unlock()
		}
	}
}

// clearSpin removes the spinner line. Callers hold mu.
func (v *liveView) clearSpin() {
	if v.spin {
		fmt.Fprint(v.w, "\r\x1b[2K")
		v.spin = false
	}
}

// Close stops the spinner.
func (v *liveView) Close() {
	if v.stop != nil {
		close(v.stop)
		<-v.done
		v.mu.Lock()
		v.clearSpin()
		v.mu.Unlock()
	}
}

// Note writes line to w (stderr), clearing the spinner first so that the
// two do not share a line on a terminal.
func (v *liveView) Note(w io.Writer, line string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clearSpin()
	fmt.Fprintln(w, line)
}

// Event prints one event.
func (v *liveView) Event(ev a2a.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.clearSpin()
	s := v.s
	switch e := ev.(type) {
	case *a2a.Message:
		printMessage(v.w, s, e)
	case *a2a.Task:
		v.task, v.state = e.ID, e.Status.State
		fmt.Fprintf(v.w, "%s %s  %s\n", s.bold("task"), e.ID, s.state(e.Status.State))
		if m := e.Status.Message; m != nil {
			fmt.Fprint(v.w, indent(partsText(m.Parts), "  │ "))
		}
		for _, a := range e.Artifacts {
			fmt.Fprintf(v.w, "%s %s\n", s.bold("artifact"), artifactLabel(a))
			fmt.Fprint(v.w, indent(partsText(a.Parts), "  "))
			v.last = a.ArtifactID
		}
	case *a2a.TaskStatusUpdateEvent:
		v.state = e.Status.State
		text := ""
		if m := e.Status.Message; m != nil {
			text = strings.TrimRight(partsText(m.Parts), "\n")
		}
		switch {
		case text == "":
			fmt.Fprintf(v.w, "%s %s\n", s.dim("●"), s.state(e.Status.State))
		case !strings.Contains(text, "\n"):
			fmt.Fprintf(v.w, "%s %s: %s\n", s.dim("●"), s.state(e.Status.State), text)
		default: // a message of several lines or parts: one block under the state
			fmt.Fprintf(v.w, "%s %s\n", s.dim("●"), s.state(e.Status.State))
			fmt.Fprint(v.w, indent(text, "  │ "))
		}
		v.last = ""
	case *a2a.TaskArtifactUpdateEvent:
		if !e.Append || v.last != e.Artifact.ArtifactID {
			fmt.Fprintf(v.w, "%s %s\n", s.bold("artifact"), artifactLabel(e.Artifact))
		}
		fmt.Fprint(v.w, indent(partsText(e.Artifact.Parts), "  "))
		v.last = e.Artifact.ArtifactID
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
