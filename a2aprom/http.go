package a2aprom

import (
	"context"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// Values of the binding label, and of the method label besides the
// a2a.Method names: the card's, and MethodUnknown for a request the
// Handler never saw.
const (
	BindingJSONRPC = "jsonrpc"
	BindingREST    = "rest"
	BindingGRPC    = "grpc"
	BindingCard    = "card" // the agent card, a binding only for metrics
	MethodCard     = "GetAgentCard"
	MethodUnknown  = "unknown"
)

// Middleware counts and times the requests next answers, and logs each
// with [WithRequestLog]. Paths outside the card and the bindings' (at
// server/a2ahttp's paths) pass through untouched. The method of a request
// is what the Handler's interceptor ([Metrics.ServerOptions]) noted.
func (m *Metrics) Middleware(next http.Handler) http.Handler {
	log := m.log
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		binding := classify(r)
		if binding == "" {
			next.ServeHTTP(w, r)
			return
		}
		note := &callNote{}
		r = r.WithContext(context.WithValue(r.Context(), callNoteKey{}, note))
		rec := &recorder{ResponseWriter: w, onStream: func() { m.streamOpened(binding) }}
		start := time.Now()
		m.requestStarted()
		done := func() {
			d := time.Since(start)
			if rec.stream {
				m.streamClosed(binding)
			}
			status := rec.status()
			method, errName := note.method, note.err
			switch {
			case binding == BindingCard:
				method = MethodCard
			case method == "":
				// The Handler never saw it: what the binding (or the
				// authentication in front of it) answered.
				method, errName = MethodUnknown, rec.errorKind()
			}
			m.requestDone(binding, method, status, errName, d)
			if log == nil || !log.Enabled(r.Context(), slog.LevelDebug) {
				return
			}
			attrs := []slog.Attr{
				slog.String("binding", binding), slog.String("method", method),
				slog.Int("status", status), slog.Duration("duration", d),
			}
			if rec.stream {
				attrs = append(attrs, slog.Bool("stream", true))
			}
			if errName != "" {
				attrs = append(attrs, slog.String("error", errName))
			}
			log.LogAttrs(r.Context(), slog.LevelDebug, "request", attrs...)
		}
		// A stream that goes on after the handler returns (server.StreamWatcher)
		// is counted, timed and logged when it ends.
		rec.done = done
		defer func() {
			if !rec.detached {
				done()
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

// classify names the binding of a request, or "" for paths that are
// neither the card nor a binding's. The method is the Handler's to say
// (callNote): nothing of the request is read here, so that a request
// refused by authentication is refused from its headers alone.
func classify(r *http.Request) string {
	p := r.URL.Path
	switch {
	case p == server.WellKnownCardPath:
		return BindingCard
	case p == a2ahttp.JSONRPCPath, p == a2ahttp.JSONRPCPath+"/":
		return BindingJSONRPC
	case strings.HasPrefix(p, a2ahttp.RESTPath+"/"):
		return BindingREST
	}
	return ""
}

// callNote is what the Handler's interceptor (noteCalls) tells Middleware
// of the call an HTTP request made: its method and, if it failed, the kind
// of its error. A request the Handler never saw (refused by
// authentication, or by the binding as malformed) leaves it empty.
type callNote struct {
	method string
	err    string // a2a.Code name, "" for none
}

type callNoteKey struct{}

// noteCalls is the interceptor that fills the callNote of the request.
type noteCalls struct{}

func noteOf(ctx context.Context, c *server.Call) *callNote {
	n, _ := ctx.Value(callNoteKey{}).(*callNote)
	if n != nil {
		n.method = c.Method
	}
	return n
}

func (noteCalls) WrapUnary(next server.UnaryFunc) server.UnaryFunc {
	return func(ctx context.Context, c *server.Call) (any, error) {
		n := noteOf(ctx, c)
		res, err := next(ctx, c)
		if n != nil && err != nil {
			n.err = a2a.AsError(err).Code.String()
		}
		return res, err
	}
}

func (noteCalls) WrapStream(next server.StreamFunc) server.StreamFunc {
	return func(ctx context.Context, c *server.Call) iter.Seq2[server.StreamEvent, error] {
		noteOf(ctx, c)
		return next(ctx, c)
	}
}

// recorder notes a response's status, whether it is a stream, and the A2A
// error the binding answered with. It unwraps for http.ResponseController,
// which the SSE writer flushes through.
type recorder struct {
	http.ResponseWriter
	onStream func()
	done     func() // the request's accounting, once it has ended
	detached bool   // the stream outlives the handler, which must not call done

	code    int
	stream  bool
	a2aCode a2a.Code // the binding's error (server.ErrorWatcher); 0 for none
	noted   bool
}

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 && code >= 200 {
		r.code = code
		if strings.HasPrefix(r.Header().Get("Content-Type"), "text/event-stream") {
			r.stream = true
			r.onStream()
		}
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.WriteHeader(http.StatusOK)
	}
	return r.ResponseWriter.Write(b)
}

// Flush is for handlers that assert http.Flusher rather than use
// http.ResponseController.
func (r *recorder) Flush() {
	if r.code == 0 {
		r.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// StreamDetached lets a stream go on after the handler returns
// ([server.StreamWatcher]): its request stays in flight (shutdown waits for
// it) until the stream ends.
func (r *recorder) StreamDetached() (func(bool), bool) {
	r.detached = true
	return func(detached bool) {
		if detached {
			r.done()
		} else {
			r.detached = false // in the handler's goroutine, before it returns
		}
	}, true
}

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK // the handler wrote nothing
	}
	return r.code
}

// A2AError implements server.ErrorWatcher: the binding says which error it
// answers with, so that nothing of the body is read here.
func (r *recorder) A2AError(code a2a.Code) { r.a2aCode, r.noted = code, true }

// errorKind is the A2A error kind of a response the Handler never saw
// ("TaskNotFoundError"), or "" for a success: the binding's, or for a
// refusal in front of the bindings (authentication, the failure limit)
// the kind of its HTTP status.
func (r *recorder) errorKind() string {
	switch {
	case r.noted:
		return r.a2aCode.String()
	case r.status() >= 400:
		return a2a.CodeFromHTTPStatus(r.status()).String()
	}
	return ""
}
