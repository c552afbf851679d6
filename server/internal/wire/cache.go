package wire

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ExtendedCardVary lists the request headers that select an extended card
// response: the credentials the authenticators of package auth read
// (Authorization for bearer tokens, X-API-Key for API keys). A cache keyed
// on them never hands one caller's card to another.
const ExtendedCardVary = "Authorization, X-API-Key"

// ETag is the strong entity tag of body.
func ETag(body []byte) string {
	sum := sha256.Sum256(body)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
}

// ETagMatches implements the weak comparison of If-None-Match (RFC 9110
// §13.1.2): "*" or any listed tag equal to etag, ignoring a W/ prefix.
func ETagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
			return true
		}
	}
	return false
}

// ExtendedCardHeaders sets the caching headers of a successful
// GetExtendedAgentCard answer on hdr and reports whether the binding
// should answer 304 Not Modified, with no body, instead of the card.
// method is the HTTP method of the request, ifNoneMatch its If-None-Match
// header, body the encoded card and maxAge the Handler's
// (server.Handler.ExtendedCardMaxAge).
//
// An answer to GET (the HTTP+JSON binding) gets "Cache-Control: private,
// max-age=N", a strong ETag of body, and "Vary: [ExtendedCardVary]"; a
// matching If-None-Match means Not Modified (A2A §13.3, REQUIREMENTS
// R173, R219). Any other answer (JSON-RPC, over POST) gets "Cache-Control:
// private, no-store": a POST answer is reused only with explicit freshness
// and a matching Content-Location (RFC 9110 §9.3.3, RFC 9111 §4), never to
// answer a later POST, so a stored copy could only leak the card. Clients
// keep the card for their session instead (A2A §3.1.11), and revalidate
// with GET.
func ExtendedCardHeaders(hdr http.Header, maxAge time.Duration, method, ifNoneMatch string, body []byte) (notModified bool) {
	if method != http.MethodGet && method != http.MethodHead {
		hdr.Set("Cache-Control", "private, no-store")
		return false
	}
	etag := ETag(body)
	hdr.Set("Cache-Control", "private, max-age="+strconv.Itoa(int(maxAge/time.Second)))
	hdr.Set("ETag", etag)
	hdr.Set("Vary", ExtendedCardVary)
	return ETagMatches(ifNoneMatch, etag)
}
