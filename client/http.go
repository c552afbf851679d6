package client

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/sse"
)

// Limits on what the client reads from a peer.
const (
	maxResponseBytes = 64 << 20 // a unary answer
	maxCardBytes     = 4 << 20  // an agent card
	maxEventBytes    = sse.DefaultMaxEventBytes
)

// Header names.
const (
	headerVersion     = a2a.HeaderVersion
	headerExtensions  = a2a.HeaderExtensions
	headerLastEventID = a2a.HeaderLastEventID
	mediaJSON         = "application/json"
	mediaA2AJSON      = a2a.MediaTypeA2AJSON
	mediaEventStream  = sse.ContentType
)

// conn is what both bindings share: the HTTP client, the options, and the
// credentials compiled against the card in use.
type conn struct {
	hc    *http.Client
	cfg   *config
	creds []credential
	ids   *atomic.Int64 // JSON-RPC request ids, shared by the Client's states
}

// credential is one [WithCredentials] entry with the scheme the card
// declares for it.
type credential struct {
	name   string
	scheme a2a.SecurityScheme
	fn     func(context.Context) (string, error)
}

// compileCredentials checks the [WithCredentials] entries against the
// card's security schemes and fixes their order.
func compileCredentials(cfg *config, card *a2a.AgentCard) ([]credential, error) {
	names := make([]string, 0, len(cfg.credentials))
	for name := range cfg.credentials {
		names = append(names, name)
	}
	slices.Sort(names)
	writes := map[string]string{} // canonical header -> what sets it
	for k := range cfg.header {
		writes[http.CanonicalHeaderKey(k)] = "WithHeader"
	}
	if cfg.bearer != "" {
		writes["Authorization"] = "WithBearerToken"
	}
	var out []credential
	for _, name := range names {
		s, ok := card.SecuritySchemes[name]
		if !ok {
			return nil, optionError("WithCredentials", "the agent card declares no security scheme %q", name)
		}
		header := ""
		switch {
		case s.HTTPAuth != nil:
			if s.HTTPAuth.Scheme == "" || strings.ContainsAny(s.HTTPAuth.Scheme, " \r\n") {
				return nil, optionError("WithCredentials", "security scheme %q has an invalid HTTP scheme %q", name, s.HTTPAuth.Scheme)
			}
			header = "Authorization"
		case s.OAuth2 != nil, s.OpenIDConnect != nil:
			header = "Authorization"
		case s.APIKey != nil:
			if s.APIKey.Name == "" {
				return nil, optionError("WithCredentials", "API key scheme %q has no name", name)
			}
			switch strings.ToLower(s.APIKey.Location) {
			case "header":
				if !validHeaderName(s.APIKey.Name) {
					return nil, optionError("WithCredentials", "API key scheme %q names an invalid header %q", name, s.APIKey.Name)
				}
				header = http.CanonicalHeaderKey(s.APIKey.Name)
			case "query", "cookie":
			default:
				return nil, optionError("WithCredentials", "API key scheme %q has unknown location %q", name, s.APIKey.Location)
			}
		case s.MutualTLS != nil:
			return nil, optionError("WithCredentials", "security scheme %q is mutual TLS: configure the client certificate on the http.Client's transport", name)
		default:
			return nil, optionError("WithCredentials", "security scheme %q has no scheme member", name)
		}
		if header != "" {
			if prev, dup := writes[header]; dup {
				return nil, optionError("WithCredentials", "security scheme %q and %s both set the %s header", name, prev, header)
			}
			writes[header] = fmt.Sprintf("security scheme %q", name)
		}
		out = append(out, credential{name: name, scheme: s, fn: cfg.credentials[name]})
	}
	return out, nil
}

// newRequest makes an A2A request: the headers of [WithHeader], then the
// service parameters (A2A-Version always, A2A-Extensions when declared,
// A2A §3.2.6), then the credentials.
func (cn *conn) newRequest(ctx context.Context, method, target string, body io.Reader, contentType, accept string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", method, target, err)
	}
	for k, vs := range cn.cfg.header {
		req.Header[k] = slices.Clone(vs)
	}
	addCallHeader(ctx, req.Header)
	req.Header.Set(headerVersion, a2a.ProtocolVersion)
	if len(cn.cfg.extensions) > 0 {
		req.Header.Set(headerExtensions, strings.Join(cn.cfg.extensions, ","))
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", accept)
	if err := cn.authorize(ctx, req); err != nil {
		return nil, err
	}
	return req, nil
}

// authorize adds the credentials (A2A §7.3: on every request).
func (cn *conn) authorize(ctx context.Context, req *http.Request) error {
	if cn.cfg.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+cn.cfg.bearer)
	}
	for _, c := range cn.creds {
		v, err := c.fn(ctx)
		if err != nil {
			return fmt.Errorf("client: credentials of security scheme %q: %w", c.name, err)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return fmt.Errorf("client: credentials of security scheme %q contain a line break or NUL", c.name)
		}
		s := c.scheme
		switch {
		case s.HTTPAuth != nil:
			scheme := s.HTTPAuth.Scheme
			switch strings.ToLower(scheme) {
			case "basic":
				scheme, v = "Basic", base64.StdEncoding.EncodeToString([]byte(v))
			case "bearer":
				scheme = "Bearer"
			}
			req.Header.Set("Authorization", scheme+" "+v)
		case s.OAuth2 != nil, s.OpenIDConnect != nil:
			req.Header.Set("Authorization", "Bearer "+v)
		case s.APIKey != nil:
			switch strings.ToLower(s.APIKey.Location) {
			case "header":
				req.Header.Set(s.APIKey.Name, v)
			case "query":
				kv := url.QueryEscape(s.APIKey.Name) + "=" + url.QueryEscape(v)
				if req.URL.RawQuery == "" {
					req.URL.RawQuery = kv
				} else {
					req.URL.RawQuery += "&" + kv
				}
			case "cookie":
				req.AddCookie(&http.Cookie{Name: s.APIKey.Name, Value: v})
			}
		}
	}
	return nil
}

// do sends req. A failure to get an answer is a transport error. Its
// message names the URL without the query, which may hold an API key.
func (cn *conn) do(op string, req *http.Request) (*http.Response, error) {
	resp, err := cn.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			if u, perr := url.Parse(ue.URL); perr == nil && u.RawQuery != "" {
				u.RawQuery = ""
				ue.URL = u.String() + "?…"
			}
		}
		return nil, transportError(op, err)
	}
	if sink, ok := req.Context().Value(headerSinkKey{}).(*http.Header); ok {
		*sink = resp.Header.Clone()
	}
	return resp, nil
}

type headerSinkKey struct{}

// WithResponseHeader returns ctx that makes a call of a Client store the
// header of its HTTP response in *into: for headers an extension adds, such
// as the push delivery state of a2a push get (server.PushDeliveryHeader).
// With several HTTP requests in one call (a retried stream), the last one
// wins.
func WithResponseHeader(ctx context.Context, into *http.Header) context.Context {
	return context.WithValue(ctx, headerSinkKey{}, into)
}

// SetResponseHeader is for [Transport] implementations: it hands the
// header of a call's response (for gRPC, its header metadata) to the
// caller that asked for it with [WithResponseHeader], and does nothing
// otherwise.
func SetResponseHeader(ctx context.Context, h http.Header) {
	if sink, ok := ctx.Value(headerSinkKey{}).(*http.Header); ok {
		*sink = h
	}
}

// readBody reads and closes a response body, up to limit bytes. A body
// cut off is a transport error; one over the limit is an invalid response.
func readBody(op string, resp *http.Response, limit int64) ([]byte, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, transportError(op, fmt.Errorf("reading the response: %w", err))
	}
	if int64(len(b)) > limit {
		return nil, invalidResponse("%s: the response is larger than %d bytes", op, limit)
	}
	return b, nil
}

// isEventStream reports whether the response is an SSE stream.
func isEventStream(resp *http.Response) bool {
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return err == nil && mt == mediaEventStream
}

// success reports a 2xx status.
func success(resp *http.Response) bool { return resp.StatusCode >= 200 && resp.StatusCode < 300 }

// errNilRequest is returned for a nil request argument.
var errNilRequest = errors.New("client: nil request")
