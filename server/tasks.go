package server

import (
	"context"
	"encoding/binary"
	"errors"
	"iter"
	"strconv"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// ListTasks page sizes (proto ListTasksRequest.page_size).
const (
	DefaultPageSize = 50
	MaxPageSize     = 100
)

// GetTask returns a task with its history trimmed as asked (A2A §3.1.3).
func (h *Handler) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	return unary(h, ctx, a2a.MethodGetTask, req, h.getTask)
}

func (h *Handler) getTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if err := h.begin(ctx); err != nil {
		return nil, err
	}
	if err := requireID("id", req.ID); err != nil {
		return nil, err
	}
	if err := checkHistoryLength("historyLength", req.HistoryLength); err != nil {
		return nil, err
	}
	t, _, err := h.store.Get(ctx, h.scope(ctx, req.Tenant), req.ID)
	if err != nil {
		return nil, storeErr(err, req.ID)
	}
	return present(t, req.HistoryLength, true), nil
}

// ListTasks returns one page of the caller's tasks, newest status first
// (A2A §3.1.4).
func (h *Handler) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return unary(h, ctx, a2a.MethodListTasks, req, h.listTasks)
}

func (h *Handler) listTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	if err := h.begin(ctx); err != nil {
		return nil, err
	}
	q := store.ListQuery{ContextID: req.ContextID, Status: req.Status, StatusAfter: req.StatusTimestampAfter.Time, Limit: DefaultPageSize}
	v := appendID(nil, "contextId", req.ContextID, false)
	if req.PageSize != nil {
		if n := *req.PageSize; n < 1 || n > MaxPageSize {
			v = append(v, a2a.FieldViolation{Field: "pageSize", Description: "pageSize must be between 1 and 100 inclusive, got " + strconv.Itoa(int(n))})
		} else {
			q.Limit = int(n)
		}
	}
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		v = append(v, a2a.FieldViolation{Field: "historyLength", Description: "historyLength must not be negative"})
	}
	if req.Status != a2a.TaskStateUnspecified && !req.Status.Valid() {
		v = append(v, a2a.FieldViolation{Field: "status", Description: "unknown task state " + req.Status.String()})
	}
	scope := h.scope(ctx, req.Tenant)
	if req.PageToken != "" {
		c, err := h.decodePageToken(ctx, scope, req.PageToken)
		switch {
		case errors.Is(err, errBadToken):
			v = append(v, a2a.FieldViolation{Field: "pageToken", Description: err.Error()})
		case err != nil:
			return nil, a2a.AsError(err)
		}
		q.After = c
	}
	if len(v) > 0 {
		return nil, a2a.InvalidParams(v...)
	}
	res, err := h.store.List(ctx, scope, q)
	if err != nil {
		return nil, a2a.AsError(err)
	}
	withArtifacts := req.IncludeArtifacts != nil && *req.IncludeArtifacts
	out := &a2a.ListTasksResponse{
		Tasks:     make([]a2a.Task, len(res.Tasks)),
		PageSize:  int32(q.Limit),
		TotalSize: int32(res.Total),
	}
	for i, t := range res.Tasks {
		p := present(t, req.HistoryLength, withArtifacts)
		if withArtifacts && p.Artifacts == nil {
			p.Artifacts = []a2a.Artifact{} // asked for: present even when empty (A2A §3.1.4)
		}
		out.Tasks[i] = *p
	}
	if res.More && len(res.Tasks) > 0 {
		last := res.Tasks[len(res.Tasks)-1]
		if out.NextPageToken, err = h.encodePageToken(ctx, scope, store.Cursor{Timestamp: last.Status.Timestamp.Time, ID: last.ID}); err != nil {
			return nil, a2a.AsError(err)
		}
	}
	return out, nil
}

// Page tokens of ListTasks carry the keyset cursor: the status timestamp in
// milliseconds and the task id (see token.go for the seal).
const listTokenKind = "tasks"

func (h *Handler) encodePageToken(ctx context.Context, scope store.Scope, c store.Cursor) (string, error) {
	b := binary.AppendVarint(nil, c.Timestamp.UnixMilli())
	b = append(b, c.ID...)
	return h.sealToken(ctx, listTokenKind, scope, "", b)
}

func (h *Handler) decodePageToken(ctx context.Context, scope store.Scope, s string) (*store.Cursor, error) {
	b, err := h.openToken(ctx, listTokenKind, scope, "", s)
	if err != nil {
		return nil, err
	}
	ms, n := binary.Varint(b)
	if n <= 0 || n == len(b) {
		return nil, errBadToken
	}
	return &store.Cursor{Timestamp: time.UnixMilli(ms).UTC(), ID: string(b[n:])}, nil
}

// canceledText is the status message of a task canceled by its client.
const canceledText = "Canceled at the client's request."

// CancelTask cancels a task: it ends in canceled at once, and the agent's
// context is cancelled (A2A §3.1.5). A terminal task is not cancelable. A
// cancel the store refuses changes nothing: the executions run on.
func (h *Handler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return unary(h, ctx, a2a.MethodCancelTask, req, h.cancelTask)
}

func (h *Handler) cancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	if err := h.begin(ctx); err != nil {
		return nil, err
	}
	if err := requireID("id", req.ID); err != nil {
		return nil, err
	}
	lt, err := h.getLive(ctx, h.scope(ctx, req.Tenant), req.ID)
	if err != nil {
		return nil, err
	}
	lt.mu.Lock()
	t := lt.head // a terminal state the agent has queued comes first
	if s := t.Status.State; s.Terminal() {
		lt.mu.Unlock()
		return nil, a2a.NewError(a2a.CodeTaskNotCancelable, "").With("taskId", t.ID).With("state", s.String())
	}
	msg := &a2a.Message{MessageID: h.newID(), ContextID: t.ContextID, TaskID: t.ID, Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart(canceledText)}}
	err = h.appendLocked(ctx, lt, &a2a.TaskStatusUpdateEvent{
		TaskID: t.ID, ContextID: t.ContextID, Metadata: req.Metadata,
		Status: a2a.TaskStatus{State: a2a.TaskStateCanceled, Message: msg, Timestamp: h.stamp()},
	})
	t = lt.task
	if errors.Is(err, ErrTaskClosed) {
		t = lt.head
	}
	// Only a stored cancel stops the executions. One the store refused
	// leaves them running and tracked, for settle and recovery to count;
	// if the last of them returned meanwhile, settled as if the task were
	// canceled, nothing runs the task any more: it fails as settle fails it.
	var execs map[*execution]struct{}
	var abandoned *a2a.Message
	switch {
	case err == nil:
		execs = lt.execs
		lt.execs = nil
	case lt.abandonedLocked():
		abandoned = &a2a.Message{MessageID: h.newID(), ContextID: t.ContextID, TaskID: t.ID, Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart(stoppedText)}}
	}
	lt.mu.Unlock()
	if errors.Is(err, ErrTaskClosed) {
		// Another writer of the store ended it first.
		return nil, a2a.NewError(a2a.CodeTaskNotCancelable, "").With("taskId", t.ID).With("state", t.Status.State.String())
	}
	if err != nil {
		if abandoned != nil {
			h.failSettled(lt, abandoned)
		}
		return nil, a2a.AsError(err)
	}
	for e := range execs {
		e.cancel()
	}
	return present(t, nil, true), nil
}

// SubscribeToTask streams a task (A2A §3.1.6): first its current state, then
// every later event in order, until it is terminal or needs input. A
// terminal task cannot be subscribed to.
//
// With a Last-Event-ID of "taskId:seq" in the call's [ServiceParams], the
// stream resumes instead: it carries exactly the events after seq, with no
// snapshot, so a client that lost its connection misses nothing.
func (h *Handler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[StreamEvent, error] {
	return stream(h, ctx, a2a.MethodSubscribeToTask, req, h.subscribeToTask)
}

func (h *Handler) subscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[StreamEvent, error] {
	return func(yield func(StreamEvent, error) bool) {
		release, ok := h.openStream(ctx, yield)
		if !ok {
			return
		}
		defer release()
		if err := requireID("id", req.ID); err != nil {
			yield(StreamEvent{}, err)
			return
		}
		lt, err := h.getLive(ctx, h.scope(ctx, req.Tenant), req.ID)
		if err != nil {
			yield(StreamEvent{}, err)
			return
		}
		resumeAt, resume := h.resumePoint(ctx, req.ID)
		lt.mu.Lock()
		if resume && resumeAt <= lt.seq {
			lt.mu.Unlock()
			h.follow(ctx, lt, nil, resumeAt, yield)
			return
		}
		t, seq := lt.task, lt.seq
		if t.Status.State.Terminal() {
			lt.mu.Unlock()
			yield(StreamEvent{}, a2a.NewError(a2a.CodeUnsupportedOperation, "").With("taskId", t.ID).With("state", t.Status.State.String()))
			return
		}
		sub := newSubscriber(streamBuffer)
		lt.subscribe(sub)
		lt.mu.Unlock()
		if !yield(StreamEvent{ID: store.EventID(t.ID, seq), Event: present(t, nil, true)}, nil) {
			lt.unsubscribe(sub)
			return
		}
		h.follow(ctx, lt, sub, seq, yield)
	}
}

// resumePoint parses a Last-Event-ID of the form "taskId:seq" for taskID.
func (h *Handler) resumePoint(ctx context.Context, taskID string) (int64, bool) {
	p, ok := ServiceParamsFrom(ctx)
	if !ok || p.LastEventID == "" {
		return 0, false
	}
	id, seq, ok := store.ParseEventID(p.LastEventID)
	if !ok || id != taskID {
		return 0, false
	}
	return seq, true
}
