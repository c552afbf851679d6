package server

import (
	"context"
	"net/textproto"
	"strings"
)

// ServiceParams are the A2A service parameters of a call (A2A §3.2.6): what
// a binding read from HTTP headers or gRPC metadata. Bindings attach them to
// the context with [WithServiceParams]; the Handler checks them.
type ServiceParams struct {
	// Binding is the protocol binding that received the call:
	// a2a.BindingJSONRPC, a2a.BindingHTTPJSON or a2a.BindingGRPC.
	Binding string
	// Version is the A2A-Version value as sent, "" when absent.
	Version string
	// V03 marks a call the binding received in A2A v0.3's shapes and
	// translated to v1.0's (package a2a/v03). The Handler serves a v0.3
	// Version only on such calls, and only with [WithV03].
	V03 bool
	// Extensions are the extension URIs the client declared in
	// A2A-Extensions.
	Extensions []string
	// LastEventID is the SSE Last-Event-ID of a reconnecting client.
	LastEventID string
	// Metadata is everything the request carried beside its message: the
	// HTTP request's headers, or the gRPC call's metadata, keyed as the
	// binding received them; read it with [ServiceParams.Get].
	// Interceptors read trace context (traceparent) from it. It holds the
	// caller's credentials too (Authorization): never log it whole. It
	// must not be modified.
	Metadata map[string][]string
	// Response receives what the Handler adds to the answer beside its
	// result (see [PushDeliveryExtension]); nil for a call in process.
	Response ResponseMetadata
}

// ResponseMetadata is what a call adds to its answer besides the result:
// the extensions it activated, which the binding echoes to the client in
// A2A-Extensions (A2A §3.2.6), and fields of extension data. The bindings
// implement it: the HTTP ones as response headers, gRPC as header
// metadata.
type ResponseMetadata interface {
	// ActivateExtension reports that the answer uses extension uri.
	ActivateExtension(uri string)
	// Set sets the field key of the answer's metadata to value.
	Set(key, value string)
}

type paramsKey struct{}

// WithServiceParams returns ctx carrying p. A call whose context carries no
// ServiceParams is an in-process call: the Handler skips the version and
// extension checks for it.
func WithServiceParams(ctx context.Context, p ServiceParams) context.Context {
	return context.WithValue(ctx, paramsKey{}, &p)
}

// ServiceParamsFrom returns the parameters attached by a binding.
func ServiceParamsFrom(ctx context.Context) (ServiceParams, bool) {
	p, ok := ctx.Value(paramsKey{}).(*ServiceParams)
	if !ok {
		return ServiceParams{}, false
	}
	return *p, true
}

// ParseList splits comma-separated header values, trimming spaces and
// dropping empty items, across any number of repeated headers (A2A §3.2.6).
func ParseList(values []string) []string {
	var out []string
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

// Get returns the first value of the request's metadata named key, whose
// case does not matter, or "".
func (p ServiceParams) Get(key string) string {
	if vs := p.Metadata[textproto.CanonicalMIMEHeaderKey(key)]; len(vs) > 0 {
		return vs[0]
	}
	if vs := p.Metadata[strings.ToLower(key)]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}
