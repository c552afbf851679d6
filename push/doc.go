// Package push delivers A2A push notifications: it calls the webhooks that
// clients register with CreateTaskPushNotificationConfig (A2A §4.3.3,
// §13.2) and helps Go programs receive them.
//
// The package is built in parts, each usable alone:
//
//   - [Guard] makes the HTTP client that every webhook call goes through,
//     safe against server-side request forgery by default: only http and
//     https, every resolved address checked at connection time (loopback,
//     private, link-local, metadata and other internal ranges refused
//     unless an allow-list admits them), no proxy, checked redirects that
//     do not carry credentials to another host, and a timeout.
//   - [Signer] signs each notification with a short-lived ES256 JWT bound
//     to the task and a hash of the body, and serves its public key as a
//     JWKS, so that a receiver can verify the server without a shared
//     secret.
//   - [Receiver], an [net/http.Handler] for webhook endpoints
//     written in Go, verifies the signature or the token, checks the task
//     id, drops duplicates and hands each event to a callback.
//   - [Deliverer], the delivery worker, reads each task's event log with
//     a durable cursor per webhook (kept by a [store.PushQueue]), so that
//     every status and artifact update reaches every config in order,
//     with retries and backoff, surviving restarts; a server.Handler
//     made with server.WithPusher wakes it.
//
// A notification is a POST of the ProtoJSON StreamResponse with
// Content-Type application/a2a+json. It carries the config's
// authentication as "Authorization: <scheme> <credentials>" and its token
// in the [TokenHeader] header (REQUIREMENTS R186, B4), and the event's id
// in [DeliveryIDHeader].
//
// What a config may contain is checked when it is registered, by the
// server (package server); the guard is the check that counts, since a
// host name can resolve to anything by the time a notification is sent.
package push
