package a2ahttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/goa2a/a2a/server/a2ahttp"
)

// TestStrictMembers: a request with a member given twice, or named in
// another case, is refused the same way on JSON-RPC and HTTP+JSON
// (InvalidParams naming the member) and never runs; the JSON-RPC envelope
// refuses its own such members as InvalidRequest.
func TestStrictMembers(t *testing.T) {
	mux, err := a2ahttp.NewMux(newHandler(t), a2ahttp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, body string) (int, map[string]any) {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		var m map[string]any
		json.Unmarshal(rec.Body.Bytes(), &m)
		return rec.Code, m
	}
	for _, params := range []string{
		`{"message":{"messageId":"a","messageId":"b","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
		`{"message":{"MessageId":"a","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
		`{"message":{"messageId":"a","role":"ROLE_USER","parts":[{"text":"hi","TEXT":"bye"}]}}`,
	} {
		code, m := post(a2ahttp.JSONRPCPath, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`+params+`}`)
		e, _ := m["error"].(map[string]any)
		if code != http.StatusOK || e == nil || e["code"] != float64(-32602) {
			t.Errorf("JSON-RPC %s: %d %v, want InvalidParams", params, code, m)
		}
		code, m = post(a2ahttp.RESTPath+"/message:send", params)
		e, _ = m["error"].(map[string]any)
		if code != http.StatusBadRequest || e == nil || e["status"] != "INVALID_ARGUMENT" {
			t.Errorf("HTTP+JSON %s: %d %v, want 400 INVALID_ARGUMENT", params, code, m)
		}
	}
	for _, env := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ListTasks","method":"GetTask","params":{"id":"x"}}`,
		`{"jsonrpc":"2.0","ID":1,"method":"GetTask","params":{"id":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"METHOD":"GetTask","method":"ListTasks","params":{}}`,
	} {
		code, m := post(a2ahttp.JSONRPCPath, env)
		e, _ := m["error"].(map[string]any)
		if code != http.StatusOK || e == nil || e["code"] != float64(-32600) {
			t.Errorf("JSON-RPC %s: %d %v, want InvalidRequest", env, code, m)
		}
	}
}
