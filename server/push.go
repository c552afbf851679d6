package server

import (
	"context"
	"errors"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
)

// checkPush gates the push config operations on the card (A2A §3.3.4).
func (h *Handler) checkPush(ctx context.Context) error {
	if err := h.begin(ctx); err != nil {
		return err
	}
	if !h.card.Capabilities.SupportsPush() {
		return a2a.NewError(a2a.CodePushNotificationNotSupported, "")
	}
	return nil
}

// pushConfigID is the id of a config created without one: a new id, or on
// a v0.3 call the task's, as v0.3 servers give it (and look a config up by
// when a get names none); the JS SDK 0.3 does both.
func (h *Handler) pushConfigID(ctx context.Context, taskID string) string {
	if isV03Call(ctx) {
		return taskID
	}
	return h.newID()
}

// isV03Call reports whether the call of ctx was translated from A2A v0.3
// (see [WithV03]).
func isV03Call(ctx context.Context) bool {
	p, ok := ServiceParamsFrom(ctx)
	return ok && p.V03
}

// MaxPushConfigsPerTask is the most webhook configs one task may have.
// Creating one more is ResourceExhausted naming the limit; replacing a
// config (creating one with the id of an existing one) is always allowed.
// Every config is called on every update of the task, so the cap bounds
// the calls one client can make the server send.
const MaxPushConfigsPerTask = 10

// CreateTaskPushNotificationConfig registers a webhook for a task's updates
// (A2A §3.1.7). A config without an id gets a new one. The config is
// checked as pushConfigViolations describes, and a task may have at most
// [MaxPushConfigsPerTask] of them.
func (h *Handler) CreateTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	return unary(h, ctx, a2a.MethodCreateTaskPushNotificationConfig, req, h.createTaskPushNotificationConfig)
}

func (h *Handler) createTaskPushNotificationConfig(ctx context.Context, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	if err := h.checkPush(ctx); err != nil {
		return nil, err
	}
	v := appendID(nil, "taskId", req.TaskID, true)
	v = append(v, pushConfigViolations("", req)...)
	if len(v) > 0 {
		return nil, a2a.InvalidParams(v...)
	}
	scope := h.scope(ctx, req.Tenant)
	c := *req
	if c.ID == "" {
		c.ID = h.pushConfigID(ctx, c.TaskID)
	}
	// The stripe lock is released before the task's lock is taken:
	// continueTask takes them in the other order (task, then stripe).
	unlock := h.lockPushConfigs(scope, c.TaskID)
	err := h.checkPushConfigCap(ctx, scope, c.TaskID, c.ID)
	if err == nil {
		if err = h.store.PutPushConfig(ctx, scope, &c); err != nil {
			err = storeErr(err, req.TaskID)
		}
	}
	unlock()
	if err != nil {
		return nil, err
	}
	if h.pusher != nil {
		h.mu.Lock()
		lt := h.live[c.TaskID]
		h.mu.Unlock()
		if lt != nil && lt.scope == scope {
			lt.mu.Lock()
			lt.pushed = true
			lt.mu.Unlock()
		}
	}
	return &c, nil
}

// checkPushConfigCap refuses a new config id on a task that already has
// MaxPushConfigsPerTask configs; an existing id may be replaced.
func (h *Handler) checkPushConfigCap(ctx context.Context, scope store.Scope, taskID, id string) error {
	if _, err := h.store.GetPushConfig(ctx, scope, taskID, id); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return storeErr(err, taskID)
	}
	cs, err := h.store.ListPushConfigs(ctx, scope, taskID, "", MaxPushConfigsPerTask)
	if err != nil {
		return storeErr(err, taskID)
	}
	if len(cs) >= MaxPushConfigsPerTask {
		return exhausted("a task may have at most "+strconv.Itoa(MaxPushConfigsPerTask)+
			" push notification configs; delete one first", "maxPushConfigsPerTask", MaxPushConfigsPerTask).
			With("taskId", taskID)
	}
	return nil
}

// pushConfigLocks serialize, per task (hashed into a few stripes), the
// count and the put of CreateTaskPushNotificationConfig, so that
// concurrent creates through one Handler cannot pass the cap together.
// Handlers that share a store (replicas) can still exceed it by one
// each. Lock order: a task's lock (liveTask.mu) before a stripe, never
// the other way round.
type pushConfigLocks [64]sync.Mutex

func (h *Handler) lockPushConfigs(scope store.Scope, taskID string) (unlock func()) {
	f := fnv.New32a()
	f.Write([]byte(scope.Tenant))
	f.Write([]byte{0})
	f.Write([]byte(scope.Owner))
	f.Write([]byte{0})
	f.Write([]byte(taskID))
	mu := &h.pushLocks[f.Sum32()%uint32(len(h.pushLocks))]
	mu.Lock()
	return mu.Unlock
}

// GetTaskPushNotificationConfig returns one webhook config. A config that
// does not exist is reported as TaskNotFoundError (A2A §3.1.8).
func (h *Handler) GetTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	return unary(h, ctx, a2a.MethodGetTaskPushNotificationConfig, req, h.getTaskPushNotificationConfig)
}

func (h *Handler) getTaskPushNotificationConfig(ctx context.Context, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	if err := h.checkPush(ctx); err != nil {
		return nil, err
	}
	if req.ID == "" && isV03Call(ctx) {
		r := *req
		r.ID = r.TaskID // see pushConfigID
		req = &r
	}
	if err := requireIDs(req.TaskID, req.ID); err != nil {
		return nil, err
	}
	c, err := h.store.GetPushConfig(ctx, h.scope(ctx, req.Tenant), req.TaskID, req.ID)
	if err != nil {
		e := storeErr(err, req.TaskID)
		if ae, ok := e.(*a2a.Error); ok && ae.Code == a2a.CodeTaskNotFound {
			e = ae.With("configId", req.ID)
		}
		return nil, e
	}
	h.describeDelivery(ctx, h.scope(ctx, req.Tenant), c)
	return c, nil
}

// PushDeliveryExtension is a goa2a extension: a client that declares it
// in A2A-Extensions on GetTaskPushNotificationConfig gets the webhook's
// delivery state in the [PushDeliveryHeader] header of the answer (HTTP
// bindings), and the extension echoed in A2A-Extensions. The body stays
// the plain TaskPushNotificationConfig, so other clients see nothing new.
// a2a push get uses it.
const PushDeliveryExtension = "https://github.com/goa2a/a2a/extensions/push-delivery/v1"

// PushDeliveryHeader carries a webhook's delivery state, as
// semicolon-separated items: "delivered=SEQ" (the last event of the task's
// log it is done with), "attempts=N" (failed attempts at the next one),
// "next=RFC3339" (when it is next tried, for a retry), "failing" (delivery
// gave up: register the config again to resume it), "last=SEQ" (the last
// event of the task's log now, so delivered below last means events are
// on their way), "ended" (the task is in a terminal state),
// "nothing-to-send" (the task had ended when the config was registered:
// no event is left for it, and none will come) and "error=QUOTED" (why the
// last attempt failed, always the last item; a call the server's SSRF
// guard refused begins "refused: "). Clients ignore items they do not
// know, so items may be added.
const PushDeliveryHeader = "A2A-Push-Delivery"

// describeDelivery adds the delivery state of config c to the response
// header when the client declared PushDeliveryExtension and the store
// keeps delivery state.
func (h *Handler) describeDelivery(ctx context.Context, scope store.Scope, c *a2a.TaskPushNotificationConfig) {
	p, ok := ServiceParamsFrom(ctx)
	if !ok || p.Response == nil || !slices.Contains(p.Extensions, PushDeliveryExtension) {
		return
	}
	q, ok := h.store.(store.PushQueue)
	if !ok {
		return
	}
	st, err := q.PushState(ctx, scope, c.TaskID, c.ID)
	if err != nil {
		return // deleted meanwhile: the config alone is still a fair answer
	}
	items := []string{"delivered=" + strconv.FormatInt(st.Delivered, 10), "attempts=" + strconv.Itoa(st.Attempts)}
	if !st.Failing && st.Attempts > 0 && !st.NextAttempt.IsZero() {
		items = append(items, "next="+st.NextAttempt.UTC().Format(time.RFC3339))
	}
	if st.Failing {
		items = append(items, "failing")
	}
	if t, last, err := h.store.Get(ctx, scope, c.TaskID); err == nil {
		items = append(items, "last="+strconv.FormatInt(last, 10))
		if t.Status.State.Terminal() {
			items = append(items, "ended")
			// A config registered on an ended task starts at its last
			// event, due, with nothing to claim (store.PushState): the
			// worker never touches it. One that delivered the task's end
			// is parked, or holds a claim's NextAttempt, instead.
			if st.Delivered == last && st.Phase == store.PushDue && st.NextAttempt.IsZero() &&
				st.Attempts == 0 && !st.Failing && st.LastError == "" {
				items = append(items, "nothing-to-send")
			}
		}
	}
	if st.LastError != "" { // last: its text may hold semicolons
		items = append(items, "error="+strconv.QuoteToASCII(st.LastError))
	}
	p.Response.Set(PushDeliveryHeader, strings.Join(items, "; "))
	p.Response.ActivateExtension(PushDeliveryExtension)
}

// pushTokenKind marks page tokens of push config lists, which are bound to
// their task and carry the last config id of the page.
const pushTokenKind = "push"

// ListTaskPushNotificationConfigs returns the webhook configs of a task
// (A2A §3.1.9), a page at a time when pageSize is set.
func (h *Handler) ListTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	return unary(h, ctx, a2a.MethodListTaskPushNotificationConfigs, req, h.listTaskPushNotificationConfigs)
}

func (h *Handler) listTaskPushNotificationConfigs(ctx context.Context, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	if err := h.checkPush(ctx); err != nil {
		return nil, err
	}
	if err := requireID("taskId", req.TaskID); err != nil {
		return nil, err
	}
	if req.PageSize < 0 || req.PageSize > MaxPageSize {
		return nil, a2a.InvalidParam("pageSize", "pageSize must be between 1 and 100 inclusive, or unset")
	}
	scope := h.scope(ctx, req.Tenant)
	after := ""
	if req.PageToken != "" {
		b, err := h.openToken(ctx, pushTokenKind, scope, req.TaskID, req.PageToken)
		switch {
		case errors.Is(err, errBadToken) || (err == nil && len(b) == 0):
			return nil, a2a.InvalidParam("pageToken", errBadToken.Error())
		case err != nil:
			return nil, a2a.AsError(err)
		}
		after = string(b)
	}
	limit := int(req.PageSize)
	fetch := 0
	if limit > 0 {
		fetch = limit + 1
	}
	cs, err := h.store.ListPushConfigs(ctx, scope, req.TaskID, after, fetch)
	if err != nil {
		return nil, storeErr(err, req.TaskID)
	}
	out := &a2a.ListTaskPushNotificationConfigsResponse{}
	if limit > 0 && len(cs) > limit {
		cs = cs[:limit]
		if out.NextPageToken, err = h.sealToken(ctx, pushTokenKind, scope, req.TaskID, []byte(cs[limit-1].ID)); err != nil {
			return nil, a2a.AsError(err)
		}
	}
	out.Configs = make([]a2a.TaskPushNotificationConfig, len(cs))
	for i, c := range cs {
		out.Configs[i] = *c
	}
	return out, nil
}

// DeleteTaskPushNotificationConfig removes a webhook config; deleting it
// again succeeds (A2A §3.1.10).
func (h *Handler) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	_, err := unary(h, ctx, a2a.MethodDeleteTaskPushNotificationConfig, req, func(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest) (struct{}, error) {
		return struct{}{}, h.deleteTaskPushNotificationConfig(ctx, req)
	})
	return err
}

func (h *Handler) deleteTaskPushNotificationConfig(ctx context.Context, req *a2a.DeleteTaskPushNotificationConfigRequest) error {
	if err := h.checkPush(ctx); err != nil {
		return err
	}
	if err := requireIDs(req.TaskID, req.ID); err != nil {
		return err
	}
	scope := h.scope(ctx, req.Tenant)
	if err := h.store.DeletePushConfig(ctx, scope, req.TaskID, req.ID); err != nil {
		return storeErr(err, req.TaskID)
	}
	if h.pusher != nil {
		// Once Delete returns, the webhook receives nothing more.
		h.pusher.Deleted(ctx, scope, req.TaskID, req.ID)
	}
	return nil
}

func requireIDs(taskID, id string) error {
	v := appendID(nil, "taskId", taskID, true)
	v = appendID(v, "id", id, true)
	if len(v) > 0 {
		return a2a.InvalidParams(v...)
	}
	return nil
}
