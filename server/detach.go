package server

import "github.com/goa2a/a2a/a2a"

// A StreamWatcher is an http.ResponseWriter, or a wrapper of one found by
// following Unwrap methods, that wants to know when a stream outlives its
// HTTP handler.
//
// The HTTP bindings (server/jsonrpc, server/rest) serve a stream on an
// HTTP/1.x connection from a goroutine of their own once its first frame is
// written: they hijack the connection and let the handler return, so that
// net/http frees what it holds for a request in progress (its buffers, the
// parsed request, the handler's goroutine: about two thirds of the memory
// of an open stream). Middleware that observes a request until its handler
// returns (access logs, metrics, tracing spans, in-flight counts) would
// see such a stream end at its first frame; one that implements
// StreamWatcher is told instead. HTTP/2 streams are never detached.
type StreamWatcher interface {
	// StreamDetached asks, in the handler's goroutine, whether the stream
	// may go on after its handler returns. It returns ok false to keep the
	// stream on its handler, or the function the stream then calls
	// exactly once: ended(true) when the detached stream has ended (its
	// connection is closed), ended(false) at once if it stays on its
	// handler after all (another watcher refused, or the connection could
	// not be hijacked).
	StreamDetached() (ended func(detached bool), ok bool)
}

// An ErrorWatcher is an http.ResponseWriter, or a wrapper of one found by
// following Unwrap methods, that wants to know the A2A error a binding
// answers a request with: those of the Handler's operations, and those
// the binding finds itself before any operation runs (a malformed body, an
// unknown method or route, a body too large), which no interceptor sees.
// Metrics and access logs implement it rather than parse response bodies.
type ErrorWatcher interface {
	// A2AError is called, in the handler's goroutine, before the error
	// response is written.
	A2AError(code a2a.Code)
}
