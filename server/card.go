package server

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// WellKnownCardPath is where agent cards are published (A2A §8.2).
const WellKnownCardPath = "/.well-known/agent-card.json"

// CardHandler serves card, as at [WellKnownCardPath]. The card is encoded
// once; responses carry Cache-Control with the given max age and a strong
// ETag of the content, and a request whose If-None-Match matches gets 304
// Not Modified (A2A §8.6). The card must not change afterwards.
func CardHandler(card *a2a.AgentCard, maxAge time.Duration) (http.Handler, error) {
	body, err := json.Marshal(card)
	if err != nil {
		return nil, fmt.Errorf("server: encoding agent card: %w", err)
	}
	sum := sha256.Sum256(body)
	etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
	cacheControl := "public, max-age=" + strconv.Itoa(int(maxAge.Seconds()))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("ETag", etag)
		h.Set("Cache-Control", cacheControl)
		h.Set("Vary", "Accept-Encoding")
		if etagMatches(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		if r.Method == http.MethodHead {
			return
		}
		_, _ = w.Write(body)
	}), nil
}

// etagMatches implements the weak comparison of If-None-Match (RFC 9110
// §13.1.2): "*" or any listed tag equal to etag, ignoring a W/ prefix.
func etagMatches(header, etag string) bool {
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
