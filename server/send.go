package server

import (
	"context"
	"errors"
	"iter"
	"strconv"
	"sync"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// StreamEvent is one frame of a stream: an event and, for task events, its
// position in the task's log as an SSE id ("taskId:seq"). A client that
// reconnects with that id as Last-Event-ID receives exactly the events it
// missed.
//
// Data, when set, is Event encoded as the JSON of an a2a.StreamResponse:
// the bytes the store keeps, encoded once when the event was appended and
// shared by every subscriber, so that a binding sends them as they are. It
// must not be modified.
type StreamEvent struct {
	ID    string
	Event a2a.Event
	Data  []byte
}

// exchange is the hand-off between a SendMessage call and the agent: it
// resolves once the agent has replied, started a task, or failed before
// doing either.
type exchange struct {
	buffer     int // of the caller's subscriber: streamBuffer or waiterBuffer
	scope      store.Scope
	pushConfig *a2a.TaskPushNotificationConfig
	exec       *execution
	// msgID and digest are the client message's id and digest, which its
	// task or reply is recorded with; msgID is "" when the store records
	// no message ids (idempotent.go).
	msgID  string
	digest []byte

	once  sync.Once
	ready chan struct{}
	res   exchangeResult
}

type exchangeResult struct {
	reply *a2a.Message
	lt    *liveTask
	task  *a2a.Task // the task when sub was attached
	seq   int64
	sub   *subscriber
	err   error
}

// resolve settles the exchange with r unless it is settled already, and
// reports whether r was taken.
func (ex *exchange) resolve(r exchangeResult) (taken bool) {
	ex.once.Do(func() {
		ex.res = r
		close(ex.ready)
		taken = true
	})
	return taken
}

// SendMessage sends a message to the agent (A2A §3.1.1). Unless the
// configuration asks to return immediately, it waits until the task is
// terminal or interrupted and returns it; a direct reply is returned as a
// message.
func (h *Handler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	return unary(h, ctx, a2a.MethodSendMessage, req, h.sendMessage)
}

func (h *Handler) sendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	if err := h.begin(ctx); err != nil {
		return nil, err
	}
	res, err := h.startExchange(ctx, req, waiterBuffer)
	if err != nil {
		return nil, err
	}
	if res.reply != nil {
		return &a2a.SendMessageResponse{Result: res.reply}, nil
	}
	defer res.lt.unsubscribe(res.sub)
	cfg := req.Configuration
	var historyLength *int32
	if cfg != nil {
		historyLength = cfg.HistoryLength
	}
	task := res.task
	if (cfg == nil || !cfg.ReturnImmediately) && !settled(task.Status.State) {
		if task, err = h.waitSettled(ctx, res); err != nil {
			return nil, err
		}
	}
	return &a2a.SendMessageResponse{Result: present(task, historyLength, true)}, nil
}

// settled reports whether a blocking SendMessage may return in state s
// (A2A §3.2.2).
func settled(s a2a.TaskState) bool { return s.Terminal() || s.Interrupted() }

// waitSettled follows the task until it is terminal or interrupted.
func (h *Handler) waitSettled(ctx context.Context, res exchangeResult) (*a2a.Task, error) {
	sub := res.sub
	for {
		select {
		case u, ok := <-sub.ch:
			if ok {
				if settled(u.task.Status.State) {
					return u.task, nil
				}
				continue
			}
			// Cut off for falling behind: look at the task as it stands.
			lt := res.lt
			lt.mu.Lock()
			t := lt.task
			if settled(t.Status.State) {
				lt.mu.Unlock()
				return t, nil
			}
			sub = newSubscriber(waiterBuffer)
			lt.subscribe(sub)
			lt.mu.Unlock()
			defer lt.unsubscribe(sub)
		case <-ctx.Done():
			return nil, a2a.AsError(ctx.Err())
		case <-h.done:
			// The task may have settled just before: prefer the answer.
			lt := res.lt
			lt.mu.Lock()
			t := lt.task
			lt.mu.Unlock()
			if settled(t.Status.State) {
				return t, nil
			}
			return nil, errClosed
		}
	}
}

// SendStreamingMessage sends a message and streams what follows (A2A
// §3.1.2): a single message for a direct reply, or the task followed by its
// status and artifact updates until it is terminal or needs input. Streams
// stay open through auth-required (A2A §7.6.1). An error before the first
// frame comes as the only item; a binding answers it as a plain error.
func (h *Handler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[StreamEvent, error] {
	return stream(h, ctx, a2a.MethodSendStreamingMessage, req, h.sendStreamingMessage)
}

func (h *Handler) sendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) {
		release, ok := h.openStream(ctx, yield)
		if !ok {
			return
		}
		defer release()
		res, err := h.startExchange(ctx, req, streamBuffer)
		if err != nil {
			yield(StreamEvent{}, err)
			return
		}
		if res.reply != nil {
			yield(StreamEvent{Event: res.reply}, nil)
			return
		}
		var historyLength *int32
		if req.Configuration != nil {
			historyLength = req.Configuration.HistoryLength
		}
		first := StreamEvent{ID: store.EventID(res.lt.id, res.seq), Event: present(res.task, historyLength, true)}
		if s := res.task.Status.State; !yield(first, nil) || s.Terminal() || s == a2a.TaskStateInputRequired {
			// A retry (idempotent.go) may find the task where its
			// stream ends: the task is then the one frame.
			res.lt.unsubscribe(res.sub)
			return
		}
		h.follow(ctx, res.lt, res.sub, res.seq, yield)
	}
}

// follow streams the events of lt after seq from sub until the stream must
// close, the consumer stops, or ctx ends. A nil sub, or one cut off for
// falling behind, first catches up from the store, then follows again, with
// no gap and no repeat. follow unsubscribes before returning.
func (h *Handler) follow(ctx context.Context, lt *liveTask, sub *subscriber, seq int64, yield func(StreamEvent, error) bool) {
	subscribed := sub != nil
	if sub == nil {
		sub = newSubscriber(streamBuffer)
	}
	defer lt.unsubscribe(sub)
	for {
		if !subscribed {
			// The task's recent events in memory serve first, a batch at
			// a time: a reader further behind than its channel takes
			// them at its own pace, and subscribes once a batch reaches
			// the task's seq (under the lock, so nothing comes between).
			// Older ones come from the store: subscribe first, then read
			// it without the task's lock (the agent's writes go on
			// meanwhile): every event up to the task's seq at this point
			// is stored, every later one comes through sub, and emit
			// drops what comes twice.
			lt.mu.Lock()
			ended := lt.task.Status.State.Terminal()
			evs, ok := lt.recentAfter(seq, catchUpBatch)
			caughtUp := !ok || len(evs) == 0 || evs[len(evs)-1].Seq == lt.seq
			if caughtUp {
				if sub.lost {
					sub.ch, sub.lost = make(chan *update, streamBuffer), false
				}
				lt.subscribe(sub)
				subscribed = true
			} else {
				lt.countStream(sub)
			}
			lt.mu.Unlock()
			if !ok {
				var err error
				if evs, err = h.store.Events(ctx, lt.scope, lt.id, seq); err != nil {
					yield(StreamEvent{}, a2a.AsError(err))
					return
				}
			}
			for _, ev := range evs {
				var done bool
				if seq, done = emit(lt.id, ev, seq, yield); done {
					return
				}
			}
			if !caughtUp {
				continue
			}
			if ended {
				return
			}
		}
		select {
		case u, ok := <-sub.ch:
			if !ok {
				subscribed = false // cut off: catch up
				continue
			}
			var done bool
			if seq, done = emit(lt.id, u.ev, seq, yield); done {
				return
			}
		case <-ctx.Done():
			return
		case <-h.done:
			// Deliver what already arrived first (select picks among
			// ready cases at random), then tell the client the stream
			// did not end with the task, so it can resume elsewhere.
			for {
				select {
				case u, ok := <-sub.ch:
					if ok {
						var done bool
						if seq, done = emit(lt.id, u.ev, seq, yield); done {
							return
						}
						continue
					}
				default:
				}
				break
			}
			yield(StreamEvent{}, errClosed)
			return
		}
	}
}

// emit yields ev as a frame if it is new, and reports whether the stream is
// over: after a terminal or input-required status (A2A §3.1.2, REQUIREMENTS
// C2), or when the consumer stopped.
func emit(taskID string, ev store.Event, seq int64, yield func(StreamEvent, error) bool) (int64, bool) {
	if ev.Seq <= seq {
		return seq, false
	}
	switch p := ev.Payload.(type) {
	case *a2a.TaskStatusUpdateEvent:
		if !yield(StreamEvent{ID: store.EventID(taskID, ev.Seq), Event: p, Data: ev.Data}, nil) {
			return ev.Seq, true
		}
		s := p.Status.State
		return ev.Seq, s.Terminal() || s == a2a.TaskStateInputRequired
	case *a2a.TaskArtifactUpdateEvent:
		return ev.Seq, !yield(StreamEvent{ID: store.EventID(taskID, ev.Seq), Event: p, Data: ev.Data}, nil)
	}
	// Client messages and the creating snapshot are part of the task, not
	// frames of their own.
	return ev.Seq, false
}

// checkStreaming checks the service parameters, then that the card
// declares streaming (A2A §3.3.4).
func (h *Handler) checkStreaming(ctx context.Context) error {
	if err := h.begin(ctx); err != nil {
		return err
	}
	if !h.card.Capabilities.SupportsStreaming() {
		return a2a.NewError(a2a.CodeUnsupportedOperation, "streaming is not supported by this agent")
	}
	return nil
}

// startExchange validates a SendMessage request and hands the message to the
// agent: to a new exchange, or to the task it continues. The caller has
// checked the service parameters.
func (h *Handler) startExchange(ctx context.Context, req *a2a.SendMessageRequest, buffer int) (exchangeResult, error) {
	if err := h.validateSend(req); err != nil {
		return exchangeResult{}, err
	}
	scope := h.scope(ctx, req.Tenant)
	msg := *req.Message
	r := &Request{
		Message:       &msg,
		Configuration: req.Configuration,
		Metadata:      req.Metadata,
		Tenant:        req.Tenant,
	}
	if p, ok := ServiceParamsFrom(ctx); ok {
		r.Extensions = p.Extensions
	}
	var pushConfig *a2a.TaskPushNotificationConfig
	if req.Configuration != nil {
		pushConfig = req.Configuration.TaskPushNotificationConfig
	}
	// A message the store has a record of is a retry: it gets what the
	// first attempt got (idempotent.go).
	if rec, known, err := h.recall(ctx, scope, req.Message); err != nil || known {
		if err != nil {
			return exchangeResult{}, err
		}
		return h.replay(ctx, scope, req.Message, rec, buffer)
	}
	if msg.TaskID != "" {
		res, err := h.continueTask(ctx, scope, r, pushConfig, buffer)
		if used := usedError(err); used != nil {
			// Another attempt with this id came first.
			return h.replay(ctx, scope, req.Message, used.Record, buffer)
		}
		return res, err
	}
	r.TaskID = h.newID()
	r.ContextID = msg.ContextID
	if r.ContextID == "" {
		r.ContextID = h.newID()
	}
	msg.TaskID, msg.ContextID = r.TaskID, r.ContextID
	if pushConfig != nil && pushConfig.ID == "" && isV03Call(ctx) {
		c := *pushConfig
		c.ID = h.pushConfigID(ctx, r.TaskID)
		pushConfig = &c
	}
	ex := &exchange{buffer: buffer, scope: scope, pushConfig: pushConfig, exec: h.newExecution(ctx), ready: make(chan struct{})}
	if h.messages() != nil {
		ex.msgID, ex.digest = msg.MessageID, messageDigest(&msg)
	}
	if err := h.admitTask(ctx, ex.exec, true); err != nil {
		return exchangeResult{}, err
	}
	w := &Writer{h: h, ex: ex, req: r, exec: ex.exec}
	if err := h.execute(r, w); err != nil {
		return exchangeResult{}, err
	}
	select {
	case <-ex.ready:
	case <-ctx.Done():
		// Settle the exchange so that a task the agent starts later
		// attaches no subscriber for a caller who is gone.
		err := a2a.AsError(ctx.Err())
		if ex.resolve(exchangeResult{err: err}) {
			return exchangeResult{}, err
		}
		// The agent got there first.
	}
	if used := usedError(ex.res.err); used != nil {
		// Another attempt with this id recorded it first (its task, or
		// its reply): this one's task was never stored, and its agent
		// stops. The caller gets the other's answer.
		ex.exec.cancel()
		return h.replay(ctx, scope, req.Message, used.Record, buffer)
	}
	return ex.res, ex.res.err
}

// continueTask appends a client message to a non-terminal task and calls the
// agent again (A2A §3.4.3). An interrupted task moves back to working first.
func (h *Handler) continueTask(ctx context.Context, scope store.Scope, r *Request, pushConfig *a2a.TaskPushNotificationConfig, buffer int) (exchangeResult, error) {
	msg := r.Message
	lt, err := h.getLive(ctx, scope, msg.TaskID)
	if err != nil {
		return exchangeResult{}, err
	}
	// abandoned is set when this call leaves the task with no execution
	// after one that returned meanwhile left it to this one (see below);
	// the task is then failed as settle fails it, once the lock is let go.
	var abandoned *a2a.Message
	defer func() {
		if abandoned != nil {
			h.failSettled(lt, abandoned)
		}
	}()
	lt.mu.Lock()
	defer lt.mu.Unlock()
	t := lt.head // what the agent has written, stored or queued
	if err := h.seenInHistory(t, msg.MessageID); err != nil {
		return exchangeResult{}, err // a retry (idempotent.go)
	}
	if t.Status.State.Terminal() {
		return exchangeResult{}, a2a.NewError(a2a.CodeUnsupportedOperation, "").
			With("taskId", t.ID).With("state", t.Status.State.String())
	}
	if msg.ContextID != "" && msg.ContextID != t.ContextID {
		return exchangeResult{}, a2a.InvalidParam("message.contextId",
			"contextId "+strconv.Quote(msg.ContextID)+" does not match the context of task "+strconv.Quote(t.ID))
	}
	if h.isClosed() {
		// No agent would answer: leave the task as it is.
		return exchangeResult{}, errClosed
	}
	// The webhook is registered first: if that fails, the task is left
	// untouched.
	if pushConfig != nil {
		c := *pushConfig
		c.TaskID, c.Tenant = t.ID, scope.Tenant
		if c.ID == "" {
			c.ID = h.pushConfigID(ctx, c.TaskID)
		}
		unlock := h.lockPushConfigs(scope, c.TaskID)
		err := h.checkPushConfigCap(ctx, scope, c.TaskID, c.ID)
		if err == nil {
			err = h.store.PutPushConfig(context.WithoutCancel(ctx), scope, &c)
		}
		unlock()
		if err != nil {
			return exchangeResult{}, a2a.AsError(err)
		}
		lt.pushed = h.pusher != nil
	}
	msg.ContextID = t.ContextID
	r.TaskID, r.ContextID, r.Task = t.ID, t.ContextID, t
	var events []a2a.Event
	if t.Status.State != a2a.TaskStateWorking {
		events = append(events, &a2a.TaskStatusUpdateEvent{
			TaskID: t.ID, ContextID: t.ContextID,
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: h.stamp()},
		})
	}
	if t.Status.State == a2a.TaskStateAuthRequired {
		// The answer carries credentials: the agent gets it, the log
		// does not (credentials.go).
		events = append(events, withholdCredentials(msg))
	} else {
		events = append(events, msg)
	}
	// The execution counts from before the message is stored, with the
	// lock let go: one that returns meanwhile leaves the task to it
	// (abandonedLocked), and a cancel meanwhile cancels it. Each way out
	// without running it gives it up.
	exec := h.newExecution(ctx)
	if lt.execs == nil {
		lt.execs = make(map[*execution]struct{})
	}
	lt.execs[exec] = struct{}{}
	giveUp := func() {
		delete(lt.execs, exec)
		exec.cancel()
		if lt.abandonedLocked() {
			abandoned = &a2a.Message{MessageID: h.newID(), ContextID: t.ContextID, TaskID: t.ID, Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart(stoppedText)}}
		}
	}
	if err := h.appendLocked(ctx, lt, events...); err != nil {
		giveUp()
		if errors.Is(err, ErrTaskClosed) {
			// Another writer of the store ended it first.
			return exchangeResult{}, a2a.NewError(a2a.CodeUnsupportedOperation, "").
				With("taskId", t.ID).With("state", lt.head.Status.State.String())
		}
		if used := usedError(err); used != nil {
			return exchangeResult{}, used // another attempt stored it first
		}
		return exchangeResult{}, a2a.AsError(err)
	}
	if st := lt.task.Status.State; st.Terminal() {
		// The lock was let go while the message was stored: another
		// writer (a cancel) ended the task meanwhile. No agent runs.
		giveUp()
		return exchangeResult{}, a2a.NewError(a2a.CodeUnsupportedOperation, "").
			With("taskId", t.ID).With("state", st.String())
	} else if st != a2a.TaskStateWorking {
		// Another writer (a replica's agent) interrupted the task while
		// the message was stored on top: the agent runs again for it,
		// so the task is working again, after the message.
		if err := h.appendLocked(ctx, lt, &a2a.TaskStatusUpdateEvent{
			TaskID: t.ID, ContextID: t.ContextID,
			Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: h.stamp()},
		}); err != nil {
			giveUp()
			if errors.Is(err, ErrTaskClosed) {
				return exchangeResult{}, a2a.NewError(a2a.CodeUnsupportedOperation, "").
					With("taskId", t.ID).With("state", lt.head.Status.State.String())
			}
			return exchangeResult{}, a2a.AsError(err)
		}
	}
	_ = h.admitTask(ctx, exec, false) // counted, never refused
	w := &Writer{h: h, req: r, exec: exec, lt: lt}
	if err := h.execute(r, w); err != nil {
		// Close came after the check above: the task was moved to working
		// but no agent will answer, so it fails as Close fails every
		// unfinished task.
		delete(lt.execs, exec)
		reason := &a2a.Message{MessageID: h.newID(), ContextID: t.ContextID, TaskID: t.ID, Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart(shutdownText)}}
		if ferr := h.appendLocked(ctx, lt, &a2a.TaskStatusUpdateEvent{
			TaskID: t.ID, ContextID: t.ContextID,
			Status: a2a.TaskStatus{State: a2a.TaskStateFailed, Message: reason, Timestamp: h.stamp()},
		}); ferr != nil {
			h.log.Error("failing task", "task", t.ID, "err", ferr)
		}
		return exchangeResult{}, err
	}
	sub := newSubscriber(buffer)
	lt.subscribe(sub)
	return exchangeResult{lt: lt, task: lt.task, seq: lt.seq, sub: sub}, nil
}
