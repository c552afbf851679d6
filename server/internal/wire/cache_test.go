package wire

import (
	"net/http"
	"testing"
)

// TestExtendedCardHeaders: a GET answer is private with the max age, an
// ETag of the body and Vary on the credentials; a listed ETag means Not
// Modified, another body's does not; a POST answer is never stored.
func TestExtendedCardHeaders(t *testing.T) {
	hdr := http.Header{}
	if ExtendedCardHeaders(hdr, 0, http.MethodGet, "", []byte(`{}`)) {
		t.Error("Not Modified without If-None-Match")
	}
	if got := hdr.Get("Cache-Control"); got != "private, max-age=0" {
		t.Errorf("Cache-Control %q", got)
	}
	if hdr.Get("Vary") != ExtendedCardVary || hdr.Get("ETag") != ETag([]byte(`{}`)) {
		t.Errorf("headers %v", hdr)
	}
	if !ExtendedCardHeaders(http.Header{}, 0, http.MethodGet, `W/"x", `+hdr.Get("ETag"), []byte(`{}`)) {
		t.Error("a listed ETag did not match")
	}
	if ExtendedCardHeaders(http.Header{}, 0, http.MethodGet, hdr.Get("ETag"), []byte(`{"changed":true}`)) {
		t.Error("the ETag of other content matched")
	}
	post := http.Header{}
	if ExtendedCardHeaders(post, 300e9, http.MethodPost, hdr.Get("ETag"), []byte(`{}`)) || post.Get("Cache-Control") != "private, no-store" || post.Get("ETag") != "" {
		t.Errorf("POST: headers %v", post)
	}
}
