package server

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/goa2a/a2a/a2a"
)

// Interceptors. Every operation of a Handler, whichever binding called it
// (or a Go caller), runs through the Handler's interceptors, outermost
// first, as in connect-go: each wraps the next and may look at the call
// before it, its outcome after it, and, for the streaming operations, each
// event as it passes. Metrics, logs and traces are interceptors.

// Call describes one operation, as the interceptors see it. The Handler
// makes one per call and hands the same value to each interceptor, which
// passes it on to next as it is: one that looks after the operation (when
// next has returned, or a stream has ended) sees TaskID set from the
// outcome.
type Call struct {
	// Method is the operation's name, one of the a2a.Method constants.
	Method string
	// Binding is the protocol binding that received the call
	// (a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC), or ""
	// for a call made in process.
	Binding string
	// Principal is the authenticated caller ([WithPrincipal]), "" when
	// the server runs open.
	Principal string
	// Tenant is the request's tenant.
	Tenant string
	// TaskID is the task the request names; once the operation has
	// answered, the task it answered about (the task SendMessage made,
	// for instance). It stays "" for calls about no task (ListTasks, a
	// direct reply).
	TaskID string
	// Request is the operation's request: *a2a.SendMessageRequest for
	// SendMessage and SendStreamingMessage, *a2a.GetTaskRequest for
	// GetTask, *a2a.TaskPushNotificationConfig for
	// CreateTaskPushNotificationConfig, and so on. Interceptors must not
	// modify it.
	Request any

	state *callState
}

// UnaryFunc is an operation that answers once: its result is the typed
// answer of the Handler's method (*a2a.Task for GetTask, ...), nil for
// DeleteTaskPushNotificationConfig.
type UnaryFunc func(ctx context.Context, call *Call) (any, error)

// StreamFunc is a streaming operation (SendStreamingMessage,
// SubscribeToTask).
type StreamFunc func(ctx context.Context, call *Call) iter.Seq2[StreamEvent, error]

// Interceptor wraps the Handler's operations. WrapUnary and WrapStream
// return the function to call in place of next; they are called once,
// when the Handler is made, and what they return is called for each call,
// from many goroutines at once.
type Interceptor interface {
	WrapUnary(next UnaryFunc) UnaryFunc
	WrapStream(next StreamFunc) StreamFunc
}

// UnaryInterceptor is an Interceptor of the operations that answer once;
// streams pass through it untouched.
type UnaryInterceptor func(next UnaryFunc) UnaryFunc

// WrapUnary implements [Interceptor].
func (f UnaryInterceptor) WrapUnary(next UnaryFunc) UnaryFunc { return f(next) }

// WrapStream implements [Interceptor]: it returns next.
func (f UnaryInterceptor) WrapStream(next StreamFunc) StreamFunc { return next }

// WithInterceptors adds interceptors to the Handler's operations: the
// first given is the outermost, and interceptors of a later
// WithInterceptors run inside those of an earlier one.
func WithInterceptors(is ...Interceptor) Option {
	return func(h *Handler) error {
		for _, i := range is {
			if i == nil {
				return errors.New("server: WithInterceptors: nil interceptor")
			}
		}
		h.interceptors = append(h.interceptors, is...)
		return nil
	}
}

// interceptors is the chain of a Handler, built once by NewHandler.
type interceptors struct {
	unary  UnaryFunc
	stream StreamFunc
}

// buildInterceptors wraps the innermost functions, which run the typed
// operation that each Call carries, in h.interceptors.
func (h *Handler) buildInterceptors() {
	if len(h.interceptors) == 0 {
		return
	}
	unary := UnaryFunc(func(ctx context.Context, c *Call) (any, error) {
		return c.run(ctx)
	})
	stream := StreamFunc(func(ctx context.Context, c *Call) iter.Seq2[StreamEvent, error] {
		return c.open(ctx)
	})
	for i := len(h.interceptors) - 1; i >= 0; i-- {
		unary = h.interceptors[i].WrapUnary(unary)
		stream = h.interceptors[i].WrapStream(stream)
	}
	h.chain = &interceptors{unary: unary, stream: stream}
}

// callState is what the innermost function of a Call runs.
type callState struct {
	run  func(ctx context.Context) (any, error)
	open func(ctx context.Context) iter.Seq2[StreamEvent, error]
}

// newCall describes a call of method with req.
func newCall(ctx context.Context, method string, req any) *Call {
	c := &Call{Method: method, Principal: principalFrom(ctx), Request: req}
	c.Tenant, c.TaskID = a2a.RequestTask(req)
	if p, ok := ctx.Value(paramsKey{}).(*ServiceParams); ok {
		c.Binding = p.Binding
	}
	return c
}

// unary runs op, through the interceptors if the Handler has any.
func unary[Req, Res any](h *Handler, ctx context.Context, method string, req *Req, op func(context.Context, *Req) (Res, error)) (Res, error) {
	if h.chain == nil {
		return op(ctx, req)
	}
	c := newCall(ctx, method, req)
	var res Res
	c.state = &callState{run: func(ctx context.Context) (any, error) {
		var err error
		res, err = op(ctx, req)
		if id := a2a.AnswerTaskID(any(res)); id != "" {
			c.TaskID = id
		}
		if err != nil {
			return nil, err
		}
		if _, none := any(res).(struct{}); none {
			return nil, nil // DeleteTaskPushNotificationConfig
		}
		return res, nil
	}}
	out, err := h.chain.unary(ctx, c)
	if err != nil {
		var zero Res
		return zero, err
	}
	if out == nil {
		var zero Res
		return zero, nil
	}
	typed, ok := out.(Res)
	if !ok {
		var zero Res
		return zero, a2a.NewError(a2a.CodeInternal, "").WithCause(fmt.Errorf("server: an interceptor of %s answered %T, not %T", method, out, res))
	}
	return typed, nil
}

// stream opens op, through the interceptors if the Handler has any.
func stream[Req any](h *Handler, ctx context.Context, method string, req *Req, op func(context.Context, *Req) iter.Seq2[StreamEvent, error]) iter.Seq2[StreamEvent, error] {
	if h.chain == nil {
		return op(ctx, req)
	}
	c := newCall(ctx, method, req)
	c.state = &callState{open: func(ctx context.Context) iter.Seq2[StreamEvent, error] {
		inner := op(ctx, req)
		return func(yield func(StreamEvent, error) bool) {
			for ev, err := range inner {
				if c.TaskID == "" && err == nil {
					c.TaskID = a2a.EventTaskID(ev.Event)
				}
				if !yield(ev, err) {
					return
				}
			}
		}
	}}
	return h.chain.stream(ctx, c)
}

// errForeignCall answers a Call that the Handler did not make: an
// interceptor must pass on the one it was given.
var errForeignCall = a2a.NewError(a2a.CodeInternal, "").WithCause(errors.New("server: an interceptor passed on a Call the Handler did not make"))

func (c *Call) run(ctx context.Context) (any, error) {
	if c.state == nil || c.state.run == nil {
		return nil, errForeignCall
	}
	return c.state.run(ctx)
}

func (c *Call) open(ctx context.Context) iter.Seq2[StreamEvent, error] {
	if c.state == nil || c.state.open == nil {
		return func(yield func(StreamEvent, error) bool) { yield(StreamEvent{}, errForeignCall) }
	}
	return c.state.open(ctx)
}
