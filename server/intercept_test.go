package server_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// recording is an interceptor that logs what it sees, as "name: ...".
type recording struct {
	name string
	mu   *sync.Mutex
	log  *[]string
}

func (r recording) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.log = append(*r.log, r.name+": "+fmt.Sprintf(format, args...))
}

func describeCall(c *server.Call) string {
	return fmt.Sprintf("%s binding=%q principal=%q tenant=%q task=%q", c.Method, c.Binding, c.Principal, c.Tenant, c.TaskID)
}

func (r recording) WrapUnary(next server.UnaryFunc) server.UnaryFunc {
	return func(ctx context.Context, c *server.Call) (any, error) {
		r.add("before %s", describeCall(c))
		res, err := next(ctx, c)
		code := ""
		if err != nil {
			code = a2a.AsError(err).Code.String()
		}
		r.add("after %s result=%T error=%q", describeCall(c), res, code)
		return res, err
	}
}

func (r recording) WrapStream(next server.StreamFunc) server.StreamFunc {
	return func(ctx context.Context, c *server.Call) iter.Seq2[server.StreamEvent, error] {
		r.add("open %s", describeCall(c))
		return func(yield func(server.StreamEvent, error) bool) {
			n := 0
			for ev, err := range next(ctx, c) {
				n++
				if !yield(ev, err) {
					break
				}
			}
			r.add("end %s events=%d", describeCall(c), n)
		}
	}
}

// TestInterceptorOrder: interceptors run outermost first, in the order
// given, each around the next; they see the call's method, principal,
// tenant and task, and after the call its outcome.
func TestInterceptorOrder(t *testing.T) {
	var (
		mu  sync.Mutex
		log []string
	)
	outer, inner := recording{"outer", &mu, &log}, recording{"inner", &mu, &log}
	h := newHandler(t, nil, scripted, server.WithInterceptors(outer), server.WithInterceptors(inner))
	ctx := server.WithPrincipal(testCtx(t), "alice")

	task := sendTask(t, h, ctx, &a2a.SendMessageRequest{Tenant: "t1", Message: newMessage("artifact")})
	if _, err := h.GetTask(ctx, &a2a.GetTaskRequest{Tenant: "t1", ID: "nope"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("GetTask of a missing task: %v", err)
	}
	want := []string{
		`outer: before SendMessage binding="" principal="alice" tenant="t1" task=""`,
		`inner: before SendMessage binding="" principal="alice" tenant="t1" task=""`,
		`inner: after SendMessage binding="" principal="alice" tenant="t1" task="` + task.ID + `" result=*a2a.SendMessageResponse error=""`,
		`outer: after SendMessage binding="" principal="alice" tenant="t1" task="` + task.ID + `" result=*a2a.SendMessageResponse error=""`,
		`outer: before GetTask binding="" principal="alice" tenant="t1" task="nope"`,
		`inner: before GetTask binding="" principal="alice" tenant="t1" task="nope"`,
		`inner: after GetTask binding="" principal="alice" tenant="t1" task="nope" result=<nil> error="TaskNotFoundError"`,
		`outer: after GetTask binding="" principal="alice" tenant="t1" task="nope" result=<nil> error="TaskNotFoundError"`,
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(log, want) {
		t.Errorf("interceptors saw\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
}

// TestInterceptorStream: a stream interceptor sees the stream open, each
// of its events, and its end; the task is known from the first event.
func TestInterceptorStream(t *testing.T) {
	var (
		mu  sync.Mutex
		log []string
	)
	h := newHandler(t, nil, scripted, server.WithInterceptors(recording{"i", &mu, &log}))
	ctx := testCtx(t)
	var frames []server.StreamEvent
	for ev, err := range h.SendStreamingMessage(ctx, newRequest("artifact")) {
		if err != nil {
			t.Fatal(err)
		}
		frames = append(frames, ev)
	}
	if len(frames) < 2 {
		t.Fatalf("%d frames, want the task, its artifact and its end", len(frames))
	}
	id := asTask(t, frames[0]).ID
	want := []string{
		`i: open SendStreamingMessage binding="" principal="" tenant="" task=""`,
		fmt.Sprintf(`i: end SendStreamingMessage binding="" principal="" tenant="" task=%q events=%d`, id, len(frames)),
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(log, want) {
		t.Errorf("interceptor saw\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
}

// TestInterceptorRefuses: an interceptor that answers without calling
// next decides the outcome, and the operation does not run; one that
// answers a value of the wrong type is an internal error, not a panic.
func TestInterceptorRefuses(t *testing.T) {
	ran := false
	deny := server.UnaryInterceptor(func(next server.UnaryFunc) server.UnaryFunc {
		return func(ctx context.Context, c *server.Call) (any, error) {
			if c.Method == a2a.MethodSendMessage {
				return nil, a2a.NewError(a2a.CodePermissionDenied, "not today")
			}
			if c.Method == a2a.MethodGetTask {
				return "a string", nil
			}
			return next(ctx, c)
		}
	})
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		ran = true
		return w.Complete(ctx, "done")
	}, server.WithInterceptors(deny))
	ctx := testCtx(t)
	_, err := h.SendMessage(ctx, newRequest("hi"))
	if e := wantErr(t, err, a2a.ErrPermissionDenied); e.Message != "not today" {
		t.Errorf("SendMessage refused with %q, want the interceptor's message", e.Message)
	}
	if ran {
		t.Error("the agent ran although the interceptor refused the call")
	}
	_, err = h.GetTask(ctx, &a2a.GetTaskRequest{ID: "x"})
	wantErr(t, err, a2a.ErrInternal)
	res, err := h.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil || res == nil {
		t.Errorf("ListTasks through the interceptor: %v, %v", res, err)
	}
	if _, err := server.NewHandler(testCard(), server.AgentFunc(scripted), server.WithInterceptors(nil)); err == nil {
		t.Error("WithInterceptors(nil) accepted")
	}
}

// TestInterceptorDelete: DeleteTaskPushNotificationConfig answers nil.
func TestInterceptorDelete(t *testing.T) {
	var got []any
	var mu sync.Mutex
	keep := server.UnaryInterceptor(func(next server.UnaryFunc) server.UnaryFunc {
		return func(ctx context.Context, c *server.Call) (any, error) {
			res, err := next(ctx, c)
			mu.Lock()
			got = append(got, res)
			mu.Unlock()
			return res, err
		}
	})
	h := newHandler(t, testCard(func(c *a2a.AgentCard) { c.Capabilities.PushNotifications = a2a.Ptr(true) }), scripted,
		server.WithInterceptors(keep), server.WithPusher(nopPusher{}))
	ctx := testCtx(t)
	task := sendTask(t, h, ctx, immediate(newRequest("input")))
	if err := h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "none"}); err != nil {
		t.Fatalf("DeleteTaskPushNotificationConfig: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[1] != nil {
		t.Errorf("the interceptor saw results %v, want the SendMessage answer and nil for the delete", got)
	}
}

// TestInterceptorBinding: a call that arrives over a binding names it.
func TestInterceptorBinding(t *testing.T) {
	var (
		mu       sync.Mutex
		bindings []string
	)
	rec := server.UnaryInterceptor(func(next server.UnaryFunc) server.UnaryFunc {
		return func(ctx context.Context, c *server.Call) (any, error) {
			mu.Lock()
			bindings = append(bindings, c.Method+" "+c.Binding)
			mu.Unlock()
			return next(ctx, c)
		}
	})
	srv := httptest.NewUnstartedServer(nil) // on 127.0.0.1
	defer srv.Close()
	base := "http://" + srv.Listener.Addr().String()
	h := newHandler(t, testCard(func(c *a2a.AgentCard) { c.SupportedInterfaces = a2ahttp.Interfaces(base) }), scripted, server.WithInterceptors(rec))
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = mux
	srv.Start()
	ctx := testCtx(t)
	for _, b := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON} {
		c, err := client.New(ctx, base, client.WithBindings(b))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "nope"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("%s GetTask: %v", b, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"GetTask " + a2a.BindingJSONRPC, "GetTask " + a2a.BindingHTTPJSON}
	if !slices.Equal(bindings, want) {
		t.Errorf("interceptor saw %q, want %q", bindings, want)
	}
}

// TestInterceptorForeignCall: an interceptor that passes on a Call of its
// own making gets an internal error, not a panic.
func TestInterceptorForeignCall(t *testing.T) {
	forge := server.UnaryInterceptor(func(next server.UnaryFunc) server.UnaryFunc {
		return func(ctx context.Context, c *server.Call) (any, error) {
			return next(ctx, &server.Call{Method: c.Method})
		}
	})
	h := newHandler(t, nil, scripted, server.WithInterceptors(forge))
	_, err := h.GetTask(testCtx(t), &a2a.GetTaskRequest{ID: "x"})
	wantErr(t, err, a2a.ErrInternal)
}
