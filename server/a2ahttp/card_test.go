package a2ahttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// TestCardHandlerCaching: the card is served with Cache-Control and a
// strong ETag, and a matching If-None-Match gets 304 (A2A §8.6).
func TestCardHandlerCaching(t *testing.T) {
	card := &a2a.AgentCard{Name: "t", Version: "1", SupportedInterfaces: a2ahttp.Interfaces("http://127.0.0.1")}
	h, err := a2ahttp.CardHandler(card, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	get := func(method string, header map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, server.WellKnownCardPath, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	first := get(http.MethodGet, nil)
	etag := first.Header().Get("ETag")
	if first.Code != 200 || etag == "" || first.Header().Get("Cache-Control") != "public, max-age=300" || first.Body.Len() == 0 {
		t.Fatalf("first GET: %d, headers %v", first.Code, first.Header())
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		if rec := get(http.MethodGet, map[string]string{"If-None-Match": inm}); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
			t.Errorf("If-None-Match %s: %d with %d bytes, want 304 and no body", inm, rec.Code, rec.Body.Len())
		}
	}
	if rec := get(http.MethodGet, map[string]string{"If-None-Match": `"stale"`}); rec.Code != 200 {
		t.Errorf("stale tag: %d, want 200", rec.Code)
	}
	if rec := get(http.MethodHead, nil); rec.Code != 200 || rec.Body.Len() != 0 || rec.Header().Get("ETag") != etag {
		t.Errorf("HEAD: %d, %d bytes", rec.Code, rec.Body.Len())
	}
	if rec := get(http.MethodPost, nil); rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") == "" {
		t.Errorf("POST: %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}
