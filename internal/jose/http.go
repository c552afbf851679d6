package jose

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// JWKSHandler serves jwks, a JWK set, to GET and HEAD with Content-Type
// application/jwk-set+json and five minutes of public caching: the form
// both published key sets (the card's and the push signer's) take.
func JWKSHandler(jwks []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		if r.Method == http.MethodGet {
			_, _ = w.Write(jwks)
		}
	})
}

// CacheAge is how long a fetched key set may be kept: the Cache-Control
// max-age of h, bounded to [least, most]; def without one. no-store and
// no-cache count as the least: keys cannot be fetched for every request.
func CacheAge(h http.Header, def, least, most time.Duration) time.Duration {
	d := def
	for _, v := range h.Values("Cache-Control") {
		for dir := range strings.SplitSeq(v, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(dir), "=")
			switch strings.ToLower(name) {
			case "no-store", "no-cache":
				return least
			case "max-age":
				if n, err := strconv.ParseInt(strings.Trim(val, `"`), 10, 64); err == nil && n >= 0 {
					d = time.Duration(min(n, int64(most/time.Second))) * time.Second
				}
			}
		}
	}
	return min(max(d, least), most)
}
