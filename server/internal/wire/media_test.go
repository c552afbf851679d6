package wire

import (
	"net/http/httptest"
	"testing"
)

// TestResponseMediaType: plain JSON to a client that sends it, or accepts
// it and not A2A's; A2A's otherwise.
func TestResponseMediaType(t *testing.T) {
	for _, tc := range []struct {
		contentType, accept, want string
	}{
		{"", "", MediaA2A},
		{"application/a2a+json", "", MediaA2A},
		{"application/json", "", MediaJSON},
		{"application/json; charset=utf-8", "application/a2a+json", MediaJSON},
		{"", "application/json", MediaJSON},
		{"", "application/json, text/event-stream", MediaJSON},
		{"", "application/a2a+json, application/json", MediaA2A},
		{"", "application/json;q=0.5, application/a2a+json", MediaA2A},
		{"", "application/a2a+json;q=0, application/json", MediaJSON},
		{"", "*/*", MediaA2A},
		{"", "text/event-stream", MediaA2A},
		{"text/plain", "", MediaA2A},
	} {
		r := httptest.NewRequest("POST", "/", nil)
		if tc.contentType != "" {
			r.Header.Set("Content-Type", tc.contentType)
		}
		if tc.accept != "" {
			r.Header.Set("Accept", tc.accept)
		}
		if got := ResponseMediaType(r); got != tc.want {
			t.Errorf("Content-Type %q, Accept %q: %s, want %s", tc.contentType, tc.accept, got, tc.want)
		}
	}
}
