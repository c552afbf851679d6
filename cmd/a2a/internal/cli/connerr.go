package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// connProblem is a failure to find an agent at the URL given: nothing
// there answers A2A, so it is a connection problem (exit 4) whatever the
// client made of the answer, said with what to do about it.
type connProblem struct {
	msg  string
	hint string // what to do, "" for nothing to suggest
}

func (p *connProblem) Error() string { return p.msg }

// cardProbe is the transport under the client's HTTP client. It notes how
// the first agent card fetch was answered, so that a failed connect can
// tell a web page or a missing route from an agent's A2A error, and passes
// every request on untouched.
type cardProbe struct {
	next http.RoundTripper

	mu     sync.Mutex
	seen   bool   // the card fetch was answered
	url    string // the card URL it was sent to
	status int
	ctype  string
	head   []byte // the start of the body
}

func (p *cardProbe) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := p.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || !strings.HasSuffix(req.URL.Path, client.WellKnownCardPath) {
		return resp, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.seen {
		p.seen, p.url, p.status, p.ctype = true, req.URL.String(), resp.StatusCode, resp.Header.Get("Content-Type")
		resp.Body = &headReader{ReadCloser: resp.Body, p: p}
	}
	return resp, nil
}

// probeHead is how much of the card answer's body cardProbe keeps.
const probeHead = 512

// headReader keeps the first bytes read from a body in its cardProbe.
type headReader struct {
	io.ReadCloser
	p *cardProbe
}

func (r *headReader) Read(b []byte) (int, error) {
	n, err := r.ReadCloser.Read(b)
	r.p.mu.Lock()
	if room := probeHead - len(r.p.head); room > 0 {
		r.p.head = append(r.p.head, b[:min(n, room)]...)
	}
	r.p.mu.Unlock()
	return n, err
}

// answer returns what the card fetch was answered with; ok is false when
// it got no answer.
func (p *cardProbe) answer() (cardURL string, status int, ctype string, head []byte, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.url, p.status, p.ctype, bytes.Clone(p.head), p.seen
}

// diagnose explains a failure of client.New to connect to the agent at
// rawURL (as given), when it is one
// people make: a URL that serves no agent card (a missing page, a web
// page, an A2A endpoint given instead of the base URL) or the wrong one of
// http and https. It returns nil for other errors, which are said as they
// are.
func diagnose(err error, rawURL string, p *cardProbe) error {
	if err == nil || errors.Is(err, client.ErrInvalidOption) || errors.Is(err, client.ErrCardNotVerified) {
		return nil
	}
	u, perr := url.Parse(rawURL)
	if perr != nil {
		return nil
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "server gave HTTP response to HTTPS client"):
		return &connProblem{
			msg:  fmt.Sprintf("%s answers in plain HTTP, not HTTPS", origin(u)),
			hint: "use " + withScheme(u, "http"),
		}
	case strings.Contains(msg, `malformed HTTP response "\x15\x03`), strings.Contains(msg, `malformed HTTP response "\x16\x03`):
		// A TLS alert or handshake record in answer to a plain request.
		return httpsOnly(u)
	}
	cardURL, status, ctype, head, ok := p.answer()
	if !ok {
		return nil
	}
	var ae *a2a.Error
	if !errors.As(err, &ae) {
		return nil // the answer was a card; what failed came after
	}
	if status == http.StatusBadRequest && u.Scheme == "http" && sentToHTTPS(head) {
		return httpsOnly(u)
	}
	var what string
	switch {
	case status != http.StatusOK:
		what = fmt.Sprintf("HTTP %d", status)
		if t := http.StatusText(status); t != "" {
			what += " " + t
		}
	case !looksJSON(head):
		mt, _, _ := mime.ParseMediaType(ctype)
		switch {
		case mt == "text/html" || bytes.HasPrefix(bytes.TrimSpace(bytes.ToLower(head)), []byte("<!doctype html")):
			what = "HTTP 200 with a web page"
		case mt != "":
			what = "HTTP 200 with " + mt + ", not JSON"
		default:
			what = "HTTP 200, not JSON"
		}
	default:
		return nil // JSON that is not a valid card: the agent's own fault
	}
	pr := &connProblem{msg: fmt.Sprintf("no A2A agent card at %s (%s)", cardURL, what)}
	switch status {
	case http.StatusOK, http.StatusNotFound, http.StatusGone, http.StatusMethodNotAllowed:
		pr.hint = baseURLHint(u)
	}
	return pr
}

// httpsOnly is the problem of a plain HTTP request to a TLS server.
func httpsOnly(u *url.URL) error {
	return &connProblem{
		msg:  fmt.Sprintf("%s answers in HTTPS, not plain HTTP", origin(u)),
		hint: "use " + withScheme(u, "https"),
	}
}

// sentToHTTPS reports whether a 400 body is what web servers answer to
// plain HTTP on their TLS port: Go's "Client sent an HTTP request to an
// HTTPS server.", nginx's "The plain HTTP request was sent to HTTPS port".
func sentToHTTPS(body []byte) bool {
	b := bytes.ToLower(body)
	return bytes.Contains(b, []byte("http request to an https server")) || bytes.Contains(b, []byte("plain http request was sent to https port"))
}

// looksJSON reports whether a body starts like a JSON object or array.
func looksJSON(head []byte) bool {
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	return len(head) > 0 && (head[0] == '{' || head[0] == '[')
}

// baseURLHint suggests the base URL the user probably meant: for an A2A
// endpoint (URL/a2a/jsonrpc, URL/a2a/rest) the URL before it, for any
// other path the origin.
func baseURLHint(u *url.URL) string {
	p := strings.TrimSuffix(strings.TrimRight(u.Path, "/"), client.WellKnownCardPath)
	p = strings.TrimRight(p, "/")
	if p == "" {
		return "give the agent's base URL, the one its card is published under (BASE" + client.WellKnownCardPath + ")"
	}
	base := ""
	for _, ep := range []string{a2ahttp.JSONRPCPath, a2ahttp.RESTPath} {
		if before, ok := strings.CutSuffix(p, ep); ok {
			base = before
			break
		}
	}
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: base}
	return "give the agent's base URL, such as " + v.String()
}

// origin is scheme://host of u.
func origin(u *url.URL) string { return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String() }

// withScheme is u with another scheme, without its query and fragment.
func withScheme(u *url.URL, scheme string) string {
	v := url.URL{Scheme: scheme, Host: u.Host, Path: u.Path}
	return v.String()
}
