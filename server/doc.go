// Package server is the A2A protocol without a wire: a [Handler] answers
// the eleven operations of A2A v1.0 for an [Agent], keeping every task as
// an append-only log in a [store.Store], and every protocol rule lives
// here once, for all bindings.
//
// An agent is Go code that gets one [Request] per incoming message and a
// [Writer] to answer it: a direct reply ([Writer.Reply]), or a task whose
// states and artifacts it reports until the task is terminal or asks the
// client for something (input, authorization). The Handler stores each
// event before any client sees it, streams them (resumable by SSE id),
// waits for them on blocking sends, and hands them to push delivery.
//
// The bindings adapt a Handler to the wire: server/jsonrpc and server/rest
// (both, with the card, on one mux: server/a2ahttp) and server/a2agrpc.
// Package serve puts all of it, with authentication, TLS, health probes,
// push delivery and a graceful shutdown, behind one type; use it unless
// you lay the bindings out yourself.
//
// Interceptors ([WithInterceptors]) see every operation, whichever the
// binding: method, binding, principal, tenant, task, outcome, and each
// event of a stream. An [ExecutionHook] sees every execution of the agent.
// Metrics, logs and traces (package a2aotel) are built on them.
//
// The Handler knows no HTTP: what a binding read from headers or metadata
// reaches it as [ServiceParams], and what it adds to an answer goes back
// through [ResponseMetadata].
package server
