package server_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/server"
)

// The server benchmarks call the Handler in process, with no wire format:
// what remains is the protocol work of the echo exchange (validation, the
// agent goroutine, four appends to the memory store, fan-out to the
// waiting caller, presenting the task). The memory store keeps every task,
// so memory grows with b.N.
//
//	go test -run='^$' -bench=. -benchmem ./server/...

// benchTexts are the message sizes of the sub-benchmarks.
var benchTexts = []struct {
	name string
	text string
}{
	{"text=12B", "hello, agent"},
	{"text=4KiB", strings.Repeat("0123456789abcdef", 256)},
}

func newBenchHandler(b *testing.B) *server.Handler {
	b.Helper()
	h, err := server.NewHandler(echo.Card("http://127.0.0.1/a2a/jsonrpc", "http://127.0.0.1/a2a/rest"), echo.Agent{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			b.Error(err)
		}
	})
	return h
}

// benchRequest returns a request for text; the caller sets a fresh
// MessageID before each call. The Handler copies the message, so reusing
// the request after SendMessage returns is safe.
func benchRequest(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "", text)}
}

// ctxWithParams is the context a binding hands the Handler: it carries the
// service parameters, so the version check runs as it does for real calls.
func ctxWithParams() context.Context {
	return server.WithServiceParams(context.Background(), server.ServiceParams{Version: a2a.ProtocolVersion})
}

func checkCompleted(res *a2a.SendMessageResponse) string {
	t, ok := res.Result.(*a2a.Task)
	switch {
	case !ok:
		return "result is not a task"
	case t.Status.State != a2a.TaskStateCompleted:
		return "task state " + t.Status.State.String()
	case len(t.Artifacts) != 1:
		return "want one artifact, got " + strconv.Itoa(len(t.Artifacts))
	}
	return ""
}

func BenchmarkSendMessage(b *testing.B) {
	for _, tc := range benchTexts {
		b.Run(tc.name, func(b *testing.B) {
			h := newBenchHandler(b)
			ctx := ctxWithParams()
			req := benchRequest(tc.text)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				req.Message.MessageID = "m-" + strconv.Itoa(i)
				res, err := h.SendMessage(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				if msg := checkCompleted(res); msg != "" {
					b.Fatal(msg)
				}
			}
		})
	}
}

func BenchmarkSendMessageParallel(b *testing.B) {
	for _, tc := range benchTexts {
		b.Run(tc.name, func(b *testing.B) {
			h := newBenchHandler(b)
			var next atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				ctx := ctxWithParams()
				req := benchRequest(tc.text)
				for pb.Next() {
					req.Message.MessageID = "m-" + strconv.FormatInt(next.Add(1), 10)
					res, err := h.SendMessage(ctx, req)
					if err != nil {
						b.Error(err)
						return
					}
					if msg := checkCompleted(res); msg != "" {
						b.Error(msg)
						return
					}
				}
			})
		})
	}
}

func BenchmarkStream(b *testing.B) {
	for _, tc := range benchTexts {
		b.Run(tc.name, func(b *testing.B) {
			h := newBenchHandler(b)
			ctx := ctxWithParams()
			req := benchRequest(tc.text)
			b.ReportAllocs()
			i, events := 0, 0
			for b.Loop() {
				i++
				req.Message.MessageID = "m-" + strconv.Itoa(i)
				var last a2a.Event
				for ev, err := range h.SendStreamingMessage(ctx, req) {
					if err != nil {
						b.Fatal(err)
					}
					last = ev.Event
					events++
				}
				su, ok := last.(*a2a.TaskStatusUpdateEvent)
				if !ok || su.Status.State != a2a.TaskStateCompleted {
					b.Fatalf("stream ended with %#v, want a completed status", last)
				}
			}
			b.ReportMetric(float64(events)/float64(i), "events/op")
		})
	}
}
