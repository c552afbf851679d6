package client

import (
	"context"
	"errors"
	"iter"
	"sync"
	"sync/atomic"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/uuid"
)

// Client calls one A2A agent over the interface its card offers. Make one
// with [New] or [NewFromCard]. A Client is safe for concurrent use.
type Client struct {
	cfg     *config
	cardURL string // "" when made from a card

	chain *chain // the interceptors; nil for none

	state   atomic.Pointer[state]
	refresh sync.Mutex // serializes RefreshCard
	ids     atomic.Int64
}

// New fetches the agent card from baseURL + "/.well-known/agent-card.json"
// (a baseURL that already ends in that path is used as it is), checks it,
// and returns a Client for the interface it selects (see the package doc).
// The card must have a name, a version and at least one interface with a
// URL, a binding and a protocol version; a card that does not is an
// [a2a.ErrInvalidAgentResponse] wrapping [ErrInvalidCard]. A card with no
// interface the client can use yields an error wrapping
// [ErrNoSupportedInterface]; bad options, one wrapping [ErrInvalidOption].
func New(ctx context.Context, baseURL string, opts ...Option) (*Client, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	u, err := cardURL(baseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, cardURL: u, chain: newChain(cfg.interceptors)}
	card, info, _, err := c.fetchCard(ctx, nil)
	if err != nil {
		return nil, err
	}
	st, err := c.newState(ctx, card)
	if err != nil {
		return nil, err
	}
	st.cache = info
	c.state.Store(st)
	return c, nil
}

// NewFromCard returns a Client for a card obtained some other way, checked
// as [New] checks a fetched one (an invalid card is an error wrapping
// [ErrInvalidCard]). The card must not be modified afterwards.
func NewFromCard(ctx context.Context, card *a2a.AgentCard, opts ...Option) (*Client, error) {
	if card == nil {
		return nil, errors.New("client: nil agent card")
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg, chain: newChain(cfg.interceptors)}
	st, err := c.newState(ctx, card)
	if err != nil {
		return nil, err
	}
	c.state.Store(st)
	return c, nil
}

func (c *Client) st() *state { return c.state.Load() }

// Card returns the agent card in use. It must not be modified.
func (c *Client) Card() *a2a.AgentCard { return c.st().card }

// Interface returns the card's interface the client calls.
func (c *Client) Interface() a2a.AgentInterface { return c.st().iface }

// Binding returns the protocol binding of the interface in use:
// [a2a.BindingJSONRPC], [a2a.BindingHTTPJSON], or one given to
// [WithTransport] (under the name it was given there).
func (c *Client) Binding() string { return c.st().iface.ProtocolBinding }

// withTimeout applies the [WithTimeout] default to a context without a
// deadline.
func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.cfg.timeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			return context.WithTimeout(ctx, c.cfg.timeout)
		}
	}
	return ctx, func() {}
}

// call makes one unary call on the binding in use.
func (c *Client) call(ctx context.Context, st *state, o op, req, out any) error {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	if c.chain != nil {
		return c.chain.unary(ctx, c.newCall(st, o, req, ""), out)
	}
	return st.t.call(ctx, o, req, out)
}

// SendMessage sends a message (A2A §3.1.1). Unless the request's
// configuration sets ReturnImmediately, the agent answers once the task is
// terminal or interrupted. The result is a [*a2a.Task] or a direct
// [*a2a.Message]; switch on resp.Result.
func (c *Client) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	return unary[a2a.SendMessageRequest, a2a.SendMessageResponse](ctx, c, opSendMessage, req, func(r *a2a.SendMessageRequest) *string { return &r.Tenant })
}

// SendStreamingMessage sends a message and streams what follows (A2A
// §3.1.2): one [*a2a.Message] for a direct reply, or the [*a2a.Task] and
// then its [*a2a.TaskStatusUpdateEvent]s and [*a2a.TaskArtifactUpdateEvent]s
// until the task is terminal or needs input. Each iteration sends the
// request anew; stopping early (break) closes the response and cancels the
// request. An error ends the sequence. The end of the stream is the
// completion signal; to survive a dropped connection use
// [Client.SendAndFollow].
func (c *Client) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	if req == nil {
		return errSeq(errNilRequest)
	}
	r := *req
	return c.events(ctx, opSendStreamingMessage, func(st *state) any {
		sent := r
		sent.Tenant = st.tenant(r.Tenant)
		return &sent
	})
}

// GetTask returns a task (A2A §3.1.3).
func (c *Client) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	return unary[a2a.GetTaskRequest, a2a.Task](ctx, c, opGetTask, req, func(r *a2a.GetTaskRequest) *string { return &r.Tenant })
}

// ListTasks returns one page of tasks (A2A §3.1.4). A nil request lists
// with the server's defaults. [Client.AllTasks] walks every page.
func (c *Client) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	st := c.st()
	var r a2a.ListTasksRequest
	if req != nil {
		r = *req
	}
	r.Tenant = st.tenant(r.Tenant)
	var out a2a.ListTasksResponse
	if err := c.call(ctx, st, opListTasks, &r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AllTasks lists every task matching req, page after page, passing each
// page's nextPageToken exactly as received, until it is empty (A2A
// §3.1.4). req.PageToken, if set, is where the walk starts. Stopping early
// makes no further request. A server that repeats a token ends the walk
// with an [a2a.ErrInvalidAgentResponse].
func (c *Client) AllTasks(ctx context.Context, req *a2a.ListTasksRequest) iter.Seq2[*a2a.Task, error] {
	return func(yield func(*a2a.Task, error) bool) {
		var r a2a.ListTasksRequest
		if req != nil {
			r = *req
		}
		seen := make(map[string]bool)
		for {
			page, err := c.ListTasks(ctx, &r)
			if err != nil {
				yield(nil, err)
				return
			}
			for i := range page.Tasks {
				if !yield(&page.Tasks[i], nil) {
					return
				}
			}
			next := page.NextPageToken
			if next == "" {
				return
			}
			if seen[next] {
				yield(nil, invalidResponse("ListTasks: the server returned page token %q twice", next))
				return
			}
			seen[next] = true
			r.PageToken = next
		}
	}
}

// CancelTask asks the agent to cancel a task and returns it as it then
// stands (A2A §3.1.5).
func (c *Client) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return unary[a2a.CancelTaskRequest, a2a.Task](ctx, c, opCancelTask, req, func(r *a2a.CancelTaskRequest) *string { return &r.Tenant })
}

// SubscribeToTask streams a task (A2A §3.1.6): first the task as it stands,
// then its updates until it is terminal or needs input. Iteration and
// early stop behave as for [Client.SendStreamingMessage]. On HTTP+JSON the
// request is a POST, retried as a GET when the server answers 405
// (REQUIREMENTS C11). [Client.Follow] also survives dropped connections and
// servers without streaming.
func (c *Client) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	if req == nil {
		return errSeq(errNilRequest)
	}
	r := *req
	return c.events(ctx, opSubscribeToTask, func(st *state) any {
		sent := r
		sent.Tenant = st.tenant(r.Tenant)
		return &sent
	})
}

// CreateTaskPushNotificationConfig registers a webhook for a task's
// updates and returns it with its id (A2A §3.1.7).
func (c *Client) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	return unary[a2a.TaskPushNotificationConfig, a2a.TaskPushNotificationConfig](ctx, c, opCreatePushConfig, req, func(r *a2a.TaskPushNotificationConfig) *string { return &r.Tenant })
}

// GetTaskPushNotificationConfig returns one webhook config (A2A §3.1.8).
func (c *Client) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	return unary[a2a.GetTaskPushNotificationConfigRequest, a2a.TaskPushNotificationConfig](ctx, c, opGetPushConfig, req, func(r *a2a.GetTaskPushNotificationConfigRequest) *string { return &r.Tenant })
}

// ListTaskPushNotificationConfigs returns the webhook configs of a task
// (A2A §3.1.9).
func (c *Client) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	return unary[a2a.ListTaskPushNotificationConfigsRequest, a2a.ListTaskPushNotificationConfigsResponse](ctx, c, opListPushConfigs, req, func(r *a2a.ListTaskPushNotificationConfigsRequest) *string { return &r.Tenant })
}

// DeleteTaskPushNotificationConfig removes a webhook config (A2A §3.1.10).
func (c *Client) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	if req == nil {
		return errNilRequest
	}
	st := c.st()
	r := *req
	r.Tenant = st.tenant(r.Tenant)
	return c.call(ctx, st, opDeletePushConfig, &r, nil)
}

// unary sends one request: a copy of req with the tenant of the chosen
// interface (tenant points at the copy's Tenant field), decoding the answer.
func unary[Req, Resp any](ctx context.Context, c *Client, o op, req *Req, tenant func(*Req) *string) (*Resp, error) {
	if req == nil {
		return nil, errNilRequest
	}
	st := c.st()
	r := *req
	t := tenant(&r)
	*t = st.tenant(*t)
	var out Resp
	if err := c.call(ctx, st, o, &r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TextMessage returns a user message with one text part and a new random
// message id, ready for a [a2a.SendMessageRequest]. Set its TaskID and
// ContextID to continue a task.
func TextMessage(text string) *a2a.Message {
	return &a2a.Message{MessageID: uuid.New(), Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(text)}}
}

// errSeq is a sequence of one error.
func errSeq(err error) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { yield(nil, err) }
}

// op is one of the eleven operations; its String is the JSON-RPC method
// name (A2A §9.1).
type op int

const (
	opSendMessage op = iota
	opSendStreamingMessage
	opGetTask
	opListTasks
	opCancelTask
	opSubscribeToTask
	opCreatePushConfig
	opGetPushConfig
	opListPushConfigs
	opDeletePushConfig
	opGetExtendedCard
)

var opNames = [...]string{
	opSendMessage:          a2a.MethodSendMessage,
	opSendStreamingMessage: a2a.MethodSendStreamingMessage,
	opGetTask:              a2a.MethodGetTask,
	opListTasks:            a2a.MethodListTasks,
	opCancelTask:           a2a.MethodCancelTask,
	opSubscribeToTask:      a2a.MethodSubscribeToTask,
	opCreatePushConfig:     a2a.MethodCreateTaskPushNotificationConfig,
	opGetPushConfig:        a2a.MethodGetTaskPushNotificationConfig,
	opListPushConfigs:      a2a.MethodListTaskPushNotificationConfigs,
	opDeletePushConfig:     a2a.MethodDeleteTaskPushNotificationConfig,
	opGetExtendedCard:      a2a.MethodGetExtendedAgentCard,
}

func (o op) String() string { return opNames[o] }

// transport is the seam between the operations and a binding.
type transport interface {
	// call makes a unary call, decoding the result into out (nil to
	// ignore it).
	call(ctx context.Context, o op, req, out any) error
	// open starts a streaming call, resuming after lastEventID when it is
	// not empty.
	open(ctx context.Context, o op, req any, lastEventID string) (*eventStream, error)
}
