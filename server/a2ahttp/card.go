package a2ahttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server/internal/wire"
)

// CardHandler serves card, as at [server.WellKnownCardPath]. The card is
// encoded once; responses carry Cache-Control with the given max age and a
// strong ETag of the content, and a request whose If-None-Match matches
// gets 304 Not Modified (A2A §8.6). The card must not change afterwards.
func CardHandler(card *a2a.AgentCard, maxAge time.Duration) (http.Handler, error) {
	return cardHandler(card, maxAge)
}

// cardHandler is CardHandler for a card of any type (a v0.3 dual card).
func cardHandler(card any, maxAge time.Duration) (http.Handler, error) {
	body, err := json.Marshal(card)
	if err != nil {
		return nil, fmt.Errorf("a2ahttp: encoding agent card: %w", err)
	}
	etag := wire.ETag(body)
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
		if wire.ETagMatches(r.Header.Get("If-None-Match"), etag) {
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
