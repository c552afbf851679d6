package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

type hookKey struct{}

// TestExecutionHook: the hook sees the request's context and the task, the
// agent runs with the context the hook returns (carrying what it took from
// the request, and canceled by the Handler, not by the request's end), and
// the hook's done function gets what the agent returned.
func TestExecutionHook(t *testing.T) {
	type seen struct {
		fromValue, agentValue any
		taskID                string
		result                error
	}
	got := make(chan seen, 1)
	var s seen
	hook := func(from, ctx context.Context, req *server.Request) (context.Context, func(error)) {
		s.fromValue, s.taskID = from.Value(hookKey{}), req.TaskID
		ctx = context.WithValue(ctx, hookKey{}, from.Value(hookKey{}))
		return ctx, func(err error) {
			s.result = err
			got <- s
		}
	}
	boom := errors.New("boom")
	agent := func(ctx context.Context, req *server.Request, w *server.Writer) error {
		s.agentValue = ctx.Value(hookKey{})
		if err := w.Submit(ctx); err != nil {
			return err
		}
		return boom
	}
	h := newHandler(t, nil, agent, server.WithExecutionHook(hook))
	reqCtx, cancel := context.WithCancel(context.WithValue(context.Background(), hookKey{}, "from the request"))
	res, err := h.SendMessage(reqCtx, &a2a.SendMessageRequest{Message: newMessage("hi"),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s.fromValue != "from the request" || s.agentValue != "from the request" {
			t.Errorf("hook saw %v in the request's context, the agent %v; want the request's value in both", s.fromValue, s.agentValue)
		}
		if task, _ := res.Result.(*a2a.Task); task == nil || s.taskID != task.ID {
			t.Errorf("hook saw task %q, the answer was %+v", s.taskID, res.Result)
		}
		if !errors.Is(s.result, boom) {
			t.Errorf("done got %v, want the agent's error", s.result)
		}
	case <-time.After(testTimeout):
		t.Fatal("the hook's done function was not called")
	}
	if _, err := server.NewHandler(testCard(), server.AgentFunc(agent), server.WithExecutionHook(nil)); err == nil {
		t.Error("a nil hook was accepted")
	}
}

// TestExecutionHooksCompose: two hooks both run, the first given first,
// the second seeing what the first returned, and their done functions in
// the reverse order.
func TestExecutionHooksCompose(t *testing.T) {
	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	done := make(chan struct{})
	hook := func(name string, last bool) server.ExecutionHook {
		return func(from, ctx context.Context, req *server.Request) (context.Context, func(error)) {
			note(name + " start, sees " + fmt.Sprint(ctx.Value(hookKey{})))
			return context.WithValue(ctx, hookKey{}, name), func(error) {
				note(name + " done")
				if last {
					close(done)
				}
			}
		}
	}
	agent := func(ctx context.Context, req *server.Request, w *server.Writer) error {
		note("agent sees " + fmt.Sprint(ctx.Value(hookKey{})))
		return w.Reply(ctx, a2a.TextPart("ok"))
	}
	h := newHandler(t, nil, agent, server.WithExecutionHook(hook("first", true)), server.WithExecutionHook(hook("second", false)))
	if _, err := h.SendMessage(testCtx(t), &a2a.SendMessageRequest{Message: newMessage("hi")}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(testTimeout):
		t.Fatal("the hooks' done functions were not called")
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"first start, sees <nil>", "second start, sees first", "agent sees second", "second done", "first done"}
	if strings.Join(order, "\n") != strings.Join(want, "\n") {
		t.Errorf("order:\n%s\nwant:\n%s", strings.Join(order, "\n"), strings.Join(want, "\n"))
	}
}
