package auth

import (
	"net/http"
	"testing"
	"time"

	"github.com/goa2a/a2a/internal/jose"
)

func TestJWKSMaxAge(t *testing.T) {
	tests := []struct {
		cacheControl []string
		want         time.Duration
	}{
		{nil, DefaultJWKSMaxAge},
		{[]string{"public"}, DefaultJWKSMaxAge},
		{[]string{"public, max-age=300"}, 5 * time.Minute},
		{[]string{"MAX-AGE=7200"}, 2 * time.Hour},
		{[]string{`max-age="600"`}, 10 * time.Minute},
		{[]string{"max-age=5"}, MinJWKSMaxAge},
		{[]string{"max-age=0"}, MinJWKSMaxAge},
		{[]string{"max-age=999999999999999"}, MaxJWKSMaxAge},
		{[]string{"max-age=-1"}, DefaultJWKSMaxAge},
		{[]string{"max-age=abc"}, DefaultJWKSMaxAge},
		{[]string{"no-store"}, MinJWKSMaxAge},
		{[]string{"max-age=3600", "no-cache"}, MinJWKSMaxAge},
	}
	for _, tt := range tests {
		h := http.Header{"Cache-Control": tt.cacheControl}
		if got := jose.CacheAge(h, DefaultJWKSMaxAge, MinJWKSMaxAge, MaxJWKSMaxAge); got != tt.want {
			t.Errorf("%q: %v, want %v", tt.cacheControl, got, tt.want)
		}
	}
}

func TestCheckJWKSURL(t *testing.T) {
	for _, ok := range []string{"https://issuer.example/.well-known/jwks.json", "http://127.0.0.1:8080/jwks"} {
		if _, err := checkJWKSURL(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "issuer.example/jwks", "ftp://issuer.example/jwks", "file:///etc/jwks.json", "https:///jwks", "https://user:pw@issuer.example/jwks", "http://[::1"} {
		if _, err := checkJWKSURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
