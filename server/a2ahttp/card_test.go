package a2ahttp_test

import (
	"context"
	"encoding/json"
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

// TestDualCard: with server.WithV03 the mux serves the dual card (v0.3
// members beside v1.0's), whose v0.3 url is the JSON-RPC endpoint, the
// only one that speaks v0.3; without it, the v1.0 card.
func TestDualCard(t *testing.T) {
	for _, v03 := range []bool{false, true} {
		card := &a2a.AgentCard{Name: "t", Description: "d", Version: "1", SupportedInterfaces: a2ahttp.Interfaces("http://127.0.0.1"),
			DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
			Skills:     []a2a.AgentSkill{{ID: "s", Name: "s", Description: "s", Tags: []string{"t"}}},
			Signatures: []a2a.AgentCardSignature{{Protected: "e30", Signature: "c2ln"}}}
		var opts []server.Option
		if v03 {
			opts = append(opts, server.WithV03())
		}
		h, err := server.NewHandler(card, server.AgentFunc(func(context.Context, *server.Request, *server.Writer) error { return nil }), opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close(context.Background())
		mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, server.WellKnownCardPath, nil))
		var got map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		ifs, _ := got["supportedInterfaces"].([]any)
		if !v03 {
			if got["protocolVersion"] != nil || got["url"] != nil || len(ifs) != 2 || got["signatures"] == nil {
				t.Errorf("v1.0 card %v", got)
			}
			continue
		}
		if got["protocolVersion"] != "0.3.0" || got["url"] != "http://127.0.0.1/a2a/jsonrpc" || got["preferredTransport"] != "JSONRPC" || got["additionalInterfaces"] != nil {
			t.Errorf("dual card's v0.3 members: %v", got)
		}
		if len(ifs) != 3 || got["name"] != "t" || got["signatures"] != nil {
			t.Errorf("dual card's v1.0 members: %v", got)
		}
		twin, _ := ifs[2].(map[string]any)
		if twin["protocolVersion"] != "0.3" || twin["protocolBinding"] != "JSONRPC" || twin["url"] != "http://127.0.0.1/a2a/jsonrpc" {
			t.Errorf("v0.3 interface %v", ifs[2])
		}
		// A v1.0 reader reads the dual card as the card, plus the twin.
		var back a2a.AgentCard
		if err := json.Unmarshal(rec.Body.Bytes(), &back); err != nil || back.Name != "t" || len(back.SupportedInterfaces) != 3 {
			t.Errorf("as a v1.0 card: %+v, %v", back, err)
		}
	}
}
