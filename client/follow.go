package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// followMaxFailures is how many consecutive failed attempts (to connect,
// or to poll) [Client.Follow] makes before it gives up with the last
// error.
const followMaxFailures = 8

// Follow follows a task to its end, whatever the server offers, and yields
// what happens to it: first the [*a2a.Task] as it stands, then
// [*a2a.TaskStatusUpdateEvent]s and [*a2a.TaskArtifactUpdateEvent]s, each
// once and in order. The sequence ends after the task reaches a terminal
// state or TASK_STATE_INPUT_REQUIRED (the client must answer); it goes on
// through TASK_STATE_AUTH_REQUIRED, which is resolved out of band (A2A
// §7.6.1, REQUIREMENTS R041). It also ends when the consumer stops, or
// with an error: one the server answered (such as [a2a.ErrTaskNotFound]),
// the end of ctx, or the last of eight consecutive failures to reach the
// server (connection errors and UnavailableError are retried, with
// backoff).
//
// When the card declares streaming, Follow subscribes to the task. If the
// stream drops before the task ends, it reconnects, sending the SSE id of
// the last event it received as Last-Event-ID: a server that resumes (as
// this module's does) sends exactly the events that were missed. A server
// that answers with a fresh Task snapshot instead is handled too: the
// snapshot is compared with what was already yielded and only the
// difference is yielded, as artifact updates (new artifacts, appended
// parts, replaced artifacts) and a status update. Intermediate status
// changes the client was not connected for are lost then, as A2A §3.7
// warns.
//
// Without streaming, Follow polls GetTask, waiting between polls with
// exponential backoff ([WithBackoff]; reset whenever something changed),
// and yields the differences in the same way.
func (c *Client) Follow(ctx context.Context, taskID string) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if taskID == "" {
			yield(nil, a2a.InvalidParam("id", "id is required"))
			return
		}
		f := c.newFollower(taskID, yield)
		if c.Card().Capabilities.SupportsStreaming() {
			f.stream(ctx, nil)
		} else {
			f.poll(ctx)
		}
	}
}

// WithReconnectHook sets fn to be told when [Client.Follow] or
// [Client.SendAndFollow] lost a stream before the task ended and is about to
// reconnect: once per lost stream, before the wait and the attempts to
// reconnect (which are not reported one by one), so that a program can say
// so while it waits. taskID is the task being followed; err is what ended
// the stream, nil when the server closed it cleanly. fn is called on the
// goroutine that ranges over the sequence, between two events; it must
// return quickly. A stream the client gives up on is not reported: the
// sequence ends with its error. By default nothing is called.
func WithReconnectHook(fn func(taskID string, err error)) Option {
	return func(c *config) error {
		if fn == nil {
			return optionError("WithReconnectHook", "nil function")
		}
		c.onReconnect = fn
		return nil
	}
}

// SendAndFollow sends a message and follows what it starts, like
// [Client.Follow]. With streaming it sends a SendStreamingMessage and, if
// that stream drops after the task is known, resumes with SubscribeToTask
// and Last-Event-ID; without streaming it sends a SendMessage and then
// polls the task if it is not settled. A direct [*a2a.Message] reply is the
// only event. The message is sent once: a failure before the task is
// known ends the sequence with the error, since sending again could start
// a second task. The exception is a streaming call refused with
// UnsupportedOperationError (a stale card): the message is then sent again
// without streaming.
func (c *Client) SendAndFollow(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	if req == nil {
		return errSeq(errNilRequest)
	}
	r := *req
	return func(yield func(a2a.Event, error) bool) {
		f := c.newFollower("", yield)
		st := c.st()
		if !st.card.Capabilities.SupportsStreaming() {
			f.send(ctx, &r)
			return
		}
		sent := r
		sent.Tenant = st.tenant(r.Tenant)
		s, err := c.open(ctx, st, opSendStreamingMessage, &sent, "")
		if isCode(err, a2a.CodeUnsupportedOperation) {
			// The card is stale, or the message continues a finished
			// task: the message was refused, so sending it without
			// streaming is safe, and tells which.
			f.send(ctx, &r)
			return
		}
		if err != nil {
			yield(nil, err)
			return
		}
		f.stream(ctx, s)
	}
}

// send sends req with SendMessage, yields the result, and polls the task
// if it is not settled.
func (f *follower) send(ctx context.Context, req *a2a.SendMessageRequest) {
	resp, err := f.c.SendMessage(ctx, req)
	if err != nil {
		f.fail(err)
		return
	}
	ev, ok := resp.Result.(a2a.Event)
	if !ok {
		f.fail(invalidResponse("SendMessage: empty result"))
		return
	}
	if f.emit(ev) > 0 && !f.over() {
		f.poll(ctx)
	}
}

// follower is the state of one Follow or SendAndFollow.
type follower struct {
	c       *Client
	taskID  string
	yield   func(a2a.Event, error) bool
	tr      tracker
	lastID  string // SSE id of the last event received
	bo      backoff
	stopped bool // the consumer stopped
}

func (c *Client) newFollower(taskID string, yield func(a2a.Event, error) bool) *follower {
	return &follower{c: c, taskID: taskID, yield: yield, bo: backoff{min: c.cfg.backoffMin, max: c.cfg.backoffMax}}
}

// over reports whether following is done: the consumer stopped or the task
// ended.
func (f *follower) over() bool { return f.stopped || f.tr.ended() }

// fail yields a final error.
func (f *follower) fail(err error) {
	if !f.stopped {
		f.stopped = true
		f.yield(nil, err)
	}
}

// emit yields an event received from the server: a Task after the first
// is a snapshot, yielded as its difference from what was seen. It returns
// how many events were yielded.
func (f *follower) emit(ev a2a.Event) int {
	evs := []a2a.Event{ev}
	if t, ok := ev.(*a2a.Task); ok && f.tr.seen() {
		evs = f.tr.diff(t)
	}
	for _, e := range evs {
		f.tr.apply(e)
		if f.taskID == "" {
			f.taskID = f.tr.taskID()
		}
		if !f.yield(e, nil) {
			f.stopped = true
			return len(evs)
		}
	}
	return len(evs)
}

// stream follows over SSE, starting with s if it is not nil, else with a
// subscription; it reconnects until the task ends. It falls back to
// polling when the server will not stream the task.
func (f *follower) stream(ctx context.Context, s *eventStream) {
	failures := 0
	for {
		if s == nil {
			st := f.c.st()
			var err error
			s, err = f.c.open(ctx, st, opSubscribeToTask, &a2a.SubscribeToTaskRequest{Tenant: st.tenant(""), ID: f.taskID}, f.lastID)
			switch {
			case err == nil:
			case isCode(err, a2a.CodeUnsupportedOperation):
				// The task is terminal now, or the server does not
				// stream: read it instead.
				f.poll(ctx)
				return
			case transient(ctx, err) && failures < followMaxFailures:
				failures++
				if !f.sleep(ctx) {
					return
				}
				continue
			default:
				f.fail(err)
				return
			}
		}
		yielded, err := f.drain(s)
		hint := min(s.retry(), f.bo.max)
		s.close()
		s = nil
		if f.over() {
			return
		}
		if f.taskID == "" {
			// A send stream that ended before naming its task cannot be
			// resumed.
			if err == nil {
				err = invalidResponse("SendStreamingMessage: the stream ended before naming a task")
			}
			f.fail(err)
			return
		}
		if err != nil {
			if !transient(ctx, err) || failures >= followMaxFailures {
				f.fail(err)
				return
			}
			failures++
		}
		if f.c.cfg.onReconnect != nil {
			f.c.cfg.onReconnect(f.taskID, err)
		}
		// Reconnect at once after a stream that delivered something new,
		// unless the server asked for a delay ("retry:"); back off after
		// one that did not (a server that closes streams early, say at
		// auth-required) or that failed.
		wait := hint
		if yielded > 0 {
			failures = 0
			f.bo.reset()
		} else {
			wait = max(wait, f.bo.next())
		}
		if wait > 0 && !f.wait(ctx, wait) {
			return
		}
	}
}

// drain yields the events of s until it ends, returning how many events
// were yielded and the error that ended it (nil for a clean end).
func (f *follower) drain(s *eventStream) (int, error) {
	n := 0
	for {
		ev, id, err := s.next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n += f.emit(ev)
		if id != "" {
			f.lastID = id
		}
		if f.over() {
			return n, nil
		}
	}
}

// poll follows by GetTask until the task ends.
func (f *follower) poll(ctx context.Context) {
	failures := 0
	for {
		req := &a2a.GetTaskRequest{ID: f.taskID}
		if f.tr.seen() {
			req.HistoryLength = a2a.Ptr[int32](0) // the history is not compared
		}
		t, err := f.c.GetTask(ctx, req)
		if err != nil {
			if !transient(ctx, err) || failures >= followMaxFailures {
				f.fail(err)
				return
			}
			failures++
		} else {
			failures = 0
			if f.emit(t) > 0 {
				f.bo.reset()
			}
			if f.over() {
				return
			}
		}
		if !f.sleep(ctx) {
			return
		}
	}
}

// sleep waits for the next backoff interval; it fails the follow and
// reports false if ctx ends first.
func (f *follower) sleep(ctx context.Context) bool { return f.wait(ctx, f.bo.next()) }

// wait waits d; it fails the follow and reports false if ctx ends first.
func (f *follower) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		f.fail(fmt.Errorf("client: following task %s: %w", f.taskID, context.Cause(ctx)))
		return false
	}
}

// isCode reports whether err is an *a2a.Error of kind code.
func isCode(err error, code a2a.Code) bool {
	var e *a2a.Error
	return errors.As(err, &e) && e.Code == code
}

// backoff is an exponential delay with a cap.
type backoff struct {
	min, max, cur time.Duration
}

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur = min(b.cur*2, b.max)
	}
	return b.cur
}

func (b *backoff) reset() { b.cur = 0 }

// tracker folds the events yielded so far into the task as the consumer
// knows it, so that a later snapshot can be reduced to what is new.
type tracker struct {
	task    *a2a.Task
	message bool // a direct reply: nothing follows
}

func (t *tracker) seen() bool { return t.task != nil }

func (t *tracker) taskID() string {
	if t.task == nil {
		return ""
	}
	return t.task.ID
}

// ended reports a terminal or input-required task, or a direct reply.
func (t *tracker) ended() bool {
	if t.message {
		return true
	}
	if t.task == nil {
		return false
	}
	s := t.task.Status.State
	return s.Terminal() || s == a2a.TaskStateInputRequired
}

// apply folds one yielded event, copying what it keeps so that the
// consumer may modify the events it receives.
func (t *tracker) apply(ev a2a.Event) {
	switch e := ev.(type) {
	case *a2a.Message:
		t.message = true
	case *a2a.Task:
		n := a2a.Task{ID: e.ID, ContextID: e.ContextID, Status: e.Status}
		for _, a := range e.Artifacts {
			a.Parts = slices.Clone(a.Parts)
			n.Artifacts = append(n.Artifacts, a)
		}
		t.task = &n
	case *a2a.TaskStatusUpdateEvent:
		t.ensure(e.TaskID, e.ContextID)
		t.task.Status = e.Status
	case *a2a.TaskArtifactUpdateEvent:
		t.ensure(e.TaskID, e.ContextID)
		arts := t.task.Artifacts
		i := slices.IndexFunc(arts, func(a a2a.Artifact) bool { return a.ArtifactID == e.Artifact.ArtifactID })
		a := e.Artifact
		a.Parts = slices.Clone(a.Parts)
		switch {
		case i < 0:
			t.task.Artifacts = append(arts, a)
		case e.Append:
			arts[i].Parts = append(arts[i].Parts, a.Parts...)
		default:
			arts[i] = a
		}
	}
}

// ensure makes a task to fold updates into when none was seen first.
func (t *tracker) ensure(id, contextID string) {
	if t.task == nil {
		t.task = &a2a.Task{ID: id, ContextID: contextID}
	}
}

// diff returns the events that bring what was yielded up to the snapshot
// s: an artifact update for each new artifact, for each grown one (its new
// parts, appended) and for each changed one (replaced); then a status
// update if the status changed. History is not compared.
func (t *tracker) diff(s *a2a.Task) []a2a.Event {
	var out []a2a.Event
	for _, a := range s.Artifacts {
		i := slices.IndexFunc(t.task.Artifacts, func(p a2a.Artifact) bool { return p.ArtifactID == a.ArtifactID })
		if i < 0 {
			out = append(out, &a2a.TaskArtifactUpdateEvent{TaskID: s.ID, ContextID: s.ContextID, Artifact: a})
			continue
		}
		prev := t.task.Artifacts[i]
		if sameJSON(prev, a) {
			continue
		}
		head := a
		head.Parts = a.Parts[:min(len(prev.Parts), len(a.Parts))]
		if len(a.Parts) > len(prev.Parts) && sameJSON(prev, head) {
			grown := a
			grown.Parts = a.Parts[len(prev.Parts):]
			out = append(out, &a2a.TaskArtifactUpdateEvent{TaskID: s.ID, ContextID: s.ContextID, Artifact: grown, Append: true})
			continue
		}
		out = append(out, &a2a.TaskArtifactUpdateEvent{TaskID: s.ID, ContextID: s.ContextID, Artifact: a})
	}
	if !sameJSON(t.task.Status, s.Status) {
		out = append(out, &a2a.TaskStatusUpdateEvent{TaskID: s.ID, ContextID: s.ContextID, Status: s.Status})
	}
	return out
}

// sameJSON compares two values by their wire form, which is what a peer
// can tell apart.
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
