package server

import (
	"context"
	"errors"
	"sync"

	"github.com/goa2a/a2a/a2a"
)

// Agent is the Go code behind an A2A server. The Handler calls Execute once
// per incoming message, in its own goroutine, with a context that is
// cancelled when the task is canceled or the Handler closes.
//
// Execute either replies with a direct message ([Writer.Reply]), or runs a
// task: it reports states and artifacts through the [Writer] until the task
// is terminal (completed, failed, rejected) or interrupted (input-required,
// auth-required). When Execute returns and the task is neither, the Handler
// fails the task: with the error's text if Execute returned an error,
// otherwise saying the agent stopped early. A panic in Execute fails the
// task as well; it never takes the server down. An Execute that returns
// while another call for the same task runs (a client answered the task in
// the meantime) leaves the task to that call, whatever its state.
//
// When a client answers an interrupted task, Execute is called again with
// [Request.Task] set to the task as it stood when the answer arrived (still
// input-required or auth-required, its question as the status message), so
// the agent knows what it is resuming from. By the time Execute runs, the
// Handler has moved the task back to working and added the answer to its
// history. An answer to auth-required is taken to carry credentials: the
// agent receives it in full, but the history keeps it with its parts and
// metadata withheld ([WithheldText]), so that no credential reaches the
// store, GetTask, streams or push payloads.
type Agent interface {
	Execute(ctx context.Context, req *Request, w *Writer) error
}

// AgentFunc adapts a function to [Agent].
type AgentFunc func(ctx context.Context, req *Request, w *Writer) error

// Execute calls f.
func (f AgentFunc) Execute(ctx context.Context, req *Request, w *Writer) error {
	return f(ctx, req, w)
}

// ExecutionHook is called as the agent starts on a message, or resumes a
// task ([Resumer]), in the goroutine the agent runs in: from is the
// context of the request that brought the message (the Handler's own for
// a task resumed by its maintenance), ctx the execution's, which the
// Handler cancels. It returns the context the agent runs with, made from
// ctx (from ends with its request, long before a task may), carrying what
// the agent should see of from (a trace span, say), and a function called
// with what the agent returned. Set it with [WithExecutionHook].
type ExecutionHook func(from, ctx context.Context, req *Request) (context.Context, func(error))

// WithExecutionHook has hook called around every execution of the agent.
// Each WithExecutionHook adds a hook: the first given is called first,
// with the execution's context, the next with what the first returned,
// and their done functions are called in the reverse order.
func WithExecutionHook(hook ExecutionHook) Option {
	return func(h *Handler) error {
		if hook == nil {
			return errors.New("server: WithExecutionHook: nil hook")
		}
		h.execHooks = append(h.execHooks, hook)
		return nil
	}
}

// Request is what an agent receives for one incoming message.
type Request struct {
	// Message is the client's message, with its contextId (and taskId,
	// when it continues a task) filled in.
	Message *a2a.Message
	// Task is the task this message continues, as it stood before the
	// message arrived, or nil for a new exchange. It must not be modified.
	Task *a2a.Task
	// TaskID is the id of the task: the existing one, or the one the task
	// will have if the agent starts one.
	TaskID string
	// ContextID is the conversation the message belongs to.
	ContextID string
	// Configuration is the client's SendMessageConfiguration, or nil.
	Configuration *a2a.SendMessageConfiguration
	// Metadata is the request's metadata.
	Metadata map[string]any
	// Extensions are the extension URIs the client declared.
	Extensions []string
	// Tenant is the tenant the request was addressed to.
	Tenant string
}

// ErrTaskClosed is returned by [Writer] methods once the task is in a
// terminal state (for example after the client canceled it): no event may
// follow a terminal state (A2A §3.2.2).
var ErrTaskClosed = errors.New("server: task is in a terminal state")

// ErrReplied is returned when an agent that replied with a direct message
// tries to start a task, or replies twice, or replies after starting one.
var ErrReplied = errors.New("server: the agent already replied or started a task")

// Writer is how an agent reports progress. Its methods are safe for
// concurrent use. Values passed to it must not be modified afterwards.
type Writer struct {
	h    *Handler
	ex   *exchange
	req  *Request
	exec *execution

	mu      sync.Mutex
	lt      *liveTask // set once the task exists
	replied bool
}

// TaskID is the id of the task this writer reports on.
func (w *Writer) TaskID() string { return w.req.TaskID }

// ContextID is the context id of the exchange.
func (w *Writer) ContextID() string { return w.req.ContextID }

// NewMessage returns an agent message with the given parts, a fresh id, and
// the exchange's context (and task, once one exists).
func (w *Writer) NewMessage(parts ...a2a.Part) *a2a.Message {
	m := &a2a.Message{MessageID: w.h.newID(), ContextID: w.req.ContextID, Role: a2a.RoleAgent, Parts: parts}
	w.mu.Lock()
	if w.lt != nil {
		m.TaskID = w.req.TaskID
	}
	w.mu.Unlock()
	return m
}

// Reply answers with a direct message and no task (A2A §3.1.1). It is only
// allowed for a new exchange, before any task event.
func (w *Writer) Reply(ctx context.Context, parts ...a2a.Part) error {
	return w.ReplyMessage(ctx, w.NewMessage(parts...))
}

// ReplyMessage is [Writer.Reply] with a message the agent built. Missing
// messageId, contextId and role are filled in.
func (w *Writer) ReplyMessage(ctx context.Context, m *a2a.Message) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.replied || w.lt != nil {
		return ErrReplied
	}
	msg := *m
	if msg.MessageID == "" {
		msg.MessageID = w.h.newID()
	}
	msg.ContextID = w.req.ContextID
	msg.TaskID = ""
	msg.Role = a2a.RoleAgent
	w.replied = true
	w.ex.resolve(w.h.recordReply(ctx, w.ex, &msg)) // idempotent.go
	return nil
}

// Submit creates the task in the submitted state without doing anything
// else. Status and artifact methods create the task implicitly, so calling
// Submit is only needed to make the task visible before the first update.
func (w *Writer) Submit(ctx context.Context) error {
	_, err := w.task(ctx)
	return err
}

// Status moves the task to state with an optional message from the agent.
// A message without an id, context or task gets them filled in.
func (w *Writer) Status(ctx context.Context, state a2a.TaskState, msg *a2a.Message) error {
	lt, err := w.task(ctx)
	if err != nil {
		return err
	}
	if msg != nil {
		m := *msg
		if m.MessageID == "" {
			m.MessageID = w.h.newID()
		}
		m.ContextID, m.TaskID, m.Role = w.req.ContextID, w.req.TaskID, a2a.RoleAgent
		msg = &m
	}
	return w.h.setStatus(ctx, lt, state, msg, false)
}

// statusText is Status with a text message, none when text is "".
func (w *Writer) statusText(ctx context.Context, state a2a.TaskState, text string) error {
	var msg *a2a.Message
	if text != "" {
		msg = &a2a.Message{Parts: []a2a.Part{a2a.TextPart(text)}}
	}
	return w.Status(ctx, state, msg)
}

// Working moves the task to working, with text as the status message unless
// it is empty.
func (w *Writer) Working(ctx context.Context, text string) error {
	return w.statusText(ctx, a2a.TaskStateWorking, text)
}

// Complete ends the task as completed.
func (w *Writer) Complete(ctx context.Context, text string) error {
	return w.statusText(ctx, a2a.TaskStateCompleted, text)
}

// Fail ends the task as failed; text says why.
func (w *Writer) Fail(ctx context.Context, text string) error {
	return w.statusText(ctx, a2a.TaskStateFailed, text)
}

// Reject ends the task as rejected; text says why.
func (w *Writer) Reject(ctx context.Context, text string) error {
	return w.statusText(ctx, a2a.TaskStateRejected, text)
}

// RequireInput interrupts the task until the client answers; text is the
// question.
func (w *Writer) RequireInput(ctx context.Context, text string) error {
	return w.statusText(ctx, a2a.TaskStateInputRequired, text)
}

// RequireAuth interrupts the task until authorization arrives; text says
// what is needed (A2A §7.6.1). Streams stay open through this state.
func (w *Writer) RequireAuth(ctx context.Context, text string) error {
	return w.statusText(ctx, a2a.TaskStateAuthRequired, text)
}

// Artifact emits a whole artifact in one event.
func (w *Writer) Artifact(ctx context.Context, art a2a.Artifact) error {
	return w.ArtifactChunk(ctx, art, false, true)
}

// ArtifactChunk emits part of an artifact: with appendParts the parts are
// added to the artifact already sent under the same id; lastChunk marks the
// artifact complete (A2A §4.1.7).
func (w *Writer) ArtifactChunk(ctx context.Context, art a2a.Artifact, appendParts, lastChunk bool) error {
	lt, err := w.task(ctx)
	if err != nil {
		return err
	}
	return w.h.addArtifact(ctx, lt, art, appendParts, lastChunk)
}

// task returns the live task, creating it on first use.
// Flush waits until everything the agent has written so far is stored,
// and so visible to clients, and returns the error of a write that could
// not be stored, if any. Writes do not wait for the store (they are
// queued, and stored together); an agent that must know its writes are
// stored before it goes on (before it tells another system the task is
// there, say) calls Flush.
func (w *Writer) Flush(ctx context.Context) error {
	w.mu.Lock()
	lt := w.lt
	w.mu.Unlock()
	if lt == nil {
		return nil
	}
	return w.h.flushWrites(ctx, lt)
}

func (w *Writer) task(ctx context.Context) (*liveTask, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lt != nil {
		return w.lt, nil
	}
	if w.replied {
		return nil, ErrReplied
	}
	lt, err := w.h.createTask(ctx, w.ex, w.req)
	if err != nil {
		return nil, err
	}
	w.lt = lt
	return lt, nil
}
