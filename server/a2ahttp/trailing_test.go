package a2ahttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/goa2a/a2a/server/a2ahttp"
)

// TestJSONRPCTrailingSlash: the JSON-RPC endpoint answers at its URL with a
// trailing slash as at its URL, and nothing more below it.
func TestJSONRPCTrailingSlash(t *testing.T) {
	mux, err := a2ahttp.NewMux(newHandler(t), a2ahttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	call := func(path string) (int, string) {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"missing"}}`))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	for _, path := range []string{a2ahttp.JSONRPCPath, a2ahttp.JSONRPCPath + "/"} {
		code, body := call(path)
		var res struct {
			Error struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal([]byte(body), &res); err != nil || code != http.StatusOK || res.Error.Code != -32001 {
			t.Errorf("POST %s: %d %s, want the JSON-RPC answer TaskNotFound (-32001)", path, code, body)
		}
	}
	if code, _ := call(a2ahttp.JSONRPCPath + "/more"); code != http.StatusNotFound {
		t.Errorf("POST %s/more: %d, want 404", a2ahttp.JSONRPCPath, code)
	}
}
