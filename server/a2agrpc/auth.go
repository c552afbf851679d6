package a2agrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/grpcpb"
)

// HTTPAuthInterceptors adapts mw, HTTP middleware that authenticates a
// request (auth.APIKey, auth.Bearer, auth.JWT, auth.MutualTLS, or a
// composition of them), to gRPC: the interceptors present every call to mw
// as an HTTP request and run the call only if mw passes it on.
//
// The request is a POST to the full method name
// ("/lf.a2a.v1.A2AService/SendMessage") whose header holds the incoming
// metadata (authorization, x-api-key and so on; pseudo-headers and binary
// "-bin" keys left out, :authority as Host), with the peer's TLS
// connection state, if it came over TLS, and its address as RemoteAddr. Its
// body is empty. The call runs inside mw, with the context of the request
// mw passes on: the principal mw attached ([server.WithPrincipal]), and
// anything else it added, are the call's.
//
// When mw answers instead, the call fails before any A2A method runs. The
// HTTP status gives the gRPC code: 401 UNAUTHENTICATED, 403
// PERMISSION_DENIED, 429 RESOURCE_EXHAUSTED, 503 UNAVAILABLE (a Retry-After
// becoming a RetryInfo for those two), and INTERNAL for anything else. The
// message and details are those of the google.rpc.Status JSON body the
// authenticators of package auth write, when the body is one. Every
// WWW-Authenticate challenge is sent as www-authenticate header metadata.
//
// mw is called once, here, to build the chain; it must be safe for
// concurrent use, as any http.Handler.
func HTTPAuthInterceptors(mw func(next http.Handler) http.Handler) (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	chain := mw(http.HandlerFunc(passed))
	unaryI := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		var res any
		var err error
		refused, hdr := authenticate(chain, ctx, info.FullMethod, func(ctx context.Context) {
			res, err = handler(ctx, req)
		})
		if refused != nil {
			if hdr != nil {
				_ = grpc.SetHeader(ctx, hdr)
			}
			return nil, refused.Err()
		}
		return res, err
	}
	streamI := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		var err error
		refused, hdr := authenticate(chain, ss.Context(), info.FullMethod, func(ctx context.Context) {
			err = handler(srv, &ctxStream{ServerStream: ss, ctx: ctx})
		})
		if refused != nil {
			if hdr != nil {
				_ = ss.SetHeader(hdr)
			}
			return refused.Err()
		}
		return err
	}
	return unaryI, streamI
}

// ctxStream is a server stream with the context the middleware passed on.
type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *ctxStream) Context() context.Context { return s.ctx }

// call is one call on its way through the middleware; passed finds it in
// the request context.
type call struct {
	run    func(ctx context.Context)
	passed bool
}

type callKey struct{}

// passed is the end of the middleware chain: the request was admitted, and
// the call runs with its context.
func passed(_ http.ResponseWriter, r *http.Request) {
	c, ok := r.Context().Value(callKey{}).(*call)
	if !ok || c.passed {
		return // not a request of ours, or a middleware that passes twice
	}
	c.passed = true
	c.run(r.Context())
}

// authenticate presents a call to chain, runs it through run if chain
// passes it on, and otherwise returns the status to fail it with and the
// header metadata to send.
func authenticate(chain http.Handler, ctx context.Context, method string, run func(context.Context)) (*status.Status, metadata.MD) {
	c := &call{run: run}
	r := httpRequest(context.WithValue(ctx, callKey{}, c), method)
	rec := &recorder{header: make(http.Header)}
	chain.ServeHTTP(rec, r)
	if c.passed {
		return nil, nil
	}
	var md metadata.MD
	if ch := rec.header.Values("WWW-Authenticate"); len(ch) > 0 {
		md = metadata.MD{"www-authenticate": ch}
	}
	return grpcpb.Status(refusal(rec)), md
}

// httpRequest is the HTTP form of a call to method, for the middleware.
func httpRequest(ctx context.Context, method string) *http.Request {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, method, http.NoBody)
	if err != nil {
		// A full method name is always a valid path; be safe anyway.
		r, _ = http.NewRequestWithContext(ctx, http.MethodPost, "/", http.NoBody)
	}
	r.RequestURI = method
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/2.0", 2, 0
	md, _ := metadata.FromIncomingContext(ctx)
	for k, vs := range md {
		switch {
		case k == ":authority":
			if len(vs) > 0 {
				r.Host = vs[0]
			}
			continue
		case strings.HasPrefix(k, ":"), strings.HasSuffix(k, "-bin"):
			continue
		}
		key := http.CanonicalHeaderKey(k)
		r.Header[key] = append(r.Header[key], vs...)
	}
	if p, ok := peer.FromContext(ctx); ok {
		if p.Addr != nil {
			r.RemoteAddr = p.Addr.String()
		}
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			cs := ti.State
			r.TLS = &cs
		}
	}
	return r
}

// maxRefusalBody bounds what is kept of a refusal's body.
const maxRefusalBody = 64 << 10

// recorder keeps what the middleware answered.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if room := maxRefusalBody - w.body.Len(); room > 0 {
		w.body.Write(b[:min(len(b), room)])
	}
	return len(b), nil
}

// refusal is the A2A error of a request the middleware answered itself.
func refusal(rec *recorder) *a2a.Error {
	if rec.status == 0 {
		rec.status = http.StatusOK // answered nothing, and did not pass the call on
	}
	var code a2a.Code
	switch rec.status {
	case http.StatusUnauthorized:
		code = a2a.CodeUnauthenticated
	case http.StatusForbidden:
		code = a2a.CodePermissionDenied
	case http.StatusTooManyRequests:
		code = a2a.CodeResourceExhausted
	case http.StatusServiceUnavailable:
		code = a2a.CodeUnavailable
	default:
		code = a2a.CodeInternal
	}
	var body struct {
		Error struct {
			Message string           `json:"message"`
			Details []map[string]any `json:"details"`
		} `json:"error"`
	}
	var e *a2a.Error
	if json.Unmarshal(rec.body.Bytes(), &body) == nil && body.Error.Message != "" {
		e = a2a.ErrorFromWire(code, body.Error.Message, body.Error.Details)
		e.Code = code // the status decides, whatever an ErrorInfo says
	} else {
		msg := ""
		if code == a2a.CodeInternal {
			msg = "the authentication middleware refused the call (HTTP " + strconv.Itoa(rec.status) + ")"
		}
		e = a2a.NewError(code, msg)
	}
	if e.RetryAfter == 0 && (code == a2a.CodeResourceExhausted || code == a2a.CodeUnavailable) {
		e.RetryAfter = retryAfter(rec.header.Get("Retry-After"))
	}
	return e
}

// retryAfter reads a Retry-After value: seconds, or an HTTP date. It is 0
// when absent or unreadable.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 && n < 1<<31 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
