package client_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
)

// callLog is an interceptor that records each call it sees, adds a header
// naming it, and records each event of a stream with its id.
type callLog struct {
	name string
	mu   sync.Mutex
	log  []string
	n    int
}

func (l *callLog) note(s string) {
	l.mu.Lock()
	l.log = append(l.log, s)
	l.mu.Unlock()
}

func (l *callLog) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.log...)
}

func (l *callLog) tag(call *client.Call) {
	l.mu.Lock()
	l.n++
	n := l.n
	l.mu.Unlock()
	call.Header.Add("X-Intercepted", l.name+strconv.Itoa(n))
}

func (l *callLog) WrapUnary(next client.UnaryFunc) client.UnaryFunc {
	return func(ctx context.Context, call *client.Call, out any) error {
		l.tag(call)
		l.note(l.name + " " + call.Method + " " + call.Binding)
		err := next(ctx, call, out)
		if err != nil {
			l.note(l.name + " " + call.Method + " error " + a2a.AsError(err).Code.String())
		}
		return err
	}
}

func (l *callLog) WrapStream(next client.StreamFunc) client.StreamFunc {
	return func(ctx context.Context, call *client.Call) (client.Stream, error) {
		l.tag(call)
		l.note(l.name + " " + call.Method + " after " + strconv.Quote(call.LastEventID))
		s, err := next(ctx, call)
		if err != nil {
			return nil, err
		}
		return &loggedStream{Stream: s, l: l}, nil
	}
}

type loggedStream struct {
	client.Stream
	l *callLog
}

func (s *loggedStream) Next() (a2a.Event, string, error) {
	ev, id, err := s.Stream.Next()
	if err == nil {
		s.l.note(s.l.name + " event " + id)
	}
	return ev, id, err
}

// TestInterceptors: every call on the wire runs through the interceptors,
// outermost first; their headers reach the server; errors come back as
// the binding answered them; a stream's events pass with their ids, and
// a resumed stream is a call of its own, after the last id seen.
func TestInterceptors(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			agent := &stepsAgent{start: make(chan struct{}), n: 2, pause: time.Millisecond}
			cut := &cutter{frames: []int{3}, abort: true}
			rec := &recorder{}
			ts := newTestServer(t, serverOpts{agent: agent, wrap: func(h http.Handler) http.Handler { return rec.wrap(cut.wrap(h)) }})
			outer, inner := &callLog{name: "outer"}, &callLog{name: "inner"}
			c := newClient(t, ts.URL, b, client.WithInterceptors(outer), client.WithInterceptors(inner),
				client.WithBackoff(time.Millisecond, 10*time.Millisecond))

			_, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "missing"})
			if !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("GetTask: %v, want TaskNotFound", err)
			}
			evs := followSteps(t, c, agent)
			taskID := evs[0].(*a2a.Task).ID

			want := []string{
				"outer GetTask " + b, "outer GetTask error TaskNotFoundError",
				"outer SendMessage " + b,
				"outer SubscribeToTask after \"\"",
				"outer event " + taskID + ":1", "outer event " + taskID + ":2", "outer event " + taskID + ":3",
				"outer SubscribeToTask after \"" + taskID + ":3\"",
			}
			got := outer.lines()
			if len(got) < len(want) || !reflect.DeepEqual(got[:len(want)], want) {
				t.Errorf("outer interceptor saw:\n%q\nwant it to begin with:\n%q", got, want)
			}
			if g, o := len(inner.lines()), len(got); g != o {
				t.Errorf("the inner interceptor saw %d lines, the outer %d", g, o)
			}
			// Each request carries the header of both interceptors, the
			// outer's first.
			var tagged int
			for _, r := range rec.all() {
				if r.path == "/.well-known/agent-card.json" {
					continue
				}
				vs := r.header.Values("X-Intercepted")
				if len(vs) != 2 || vs[0][:5] != "outer" || vs[1][:5] != "inner" {
					t.Errorf("%s %s: X-Intercepted %q, want outer then inner", r.method, r.path, vs)
				}
				tagged++
			}
			if tagged < 3 {
				t.Errorf("%d requests on the bindings, want at least 3", tagged)
			}
		})
	}
}
