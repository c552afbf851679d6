package serve_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/serve"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// TestV03: with WithV03 the Server serves the dual card, whose v0.3 url is
// its JSON-RPC endpoint, and answers a v0.3 call there in v0.3's shapes.
func TestV03(t *testing.T) {
	srv := newServer(t, testCard(), serve.WithV03())
	run(t, srv)
	resp, err := http.Get(srv.URL() + server.WellKnownCardPath)
	if err != nil {
		t.Fatal(err)
	}
	var card map[string]any
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if card["protocolVersion"] != "0.3.0" || card["url"] != srv.URL()+a2ahttp.JSONRPCPath || card["preferredTransport"] != a2a.BindingJSONRPC || card["supportedInterfaces"] == nil {
		t.Errorf("card %v, want the dual card", card)
	}

	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`
	resp, err = http.Post(srv.URL()+a2ahttp.JSONRPCPath, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Result map[string]any `json:"result"`
		Error  any            `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	status, _ := r.Result["status"].(map[string]any)
	if r.Error != nil || r.Result["kind"] != "task" || status["state"] != "completed" {
		t.Errorf("message/send: %v %v", r.Result, r.Error)
	}
}

func TestV03NeedsJSONRPC(t *testing.T) {
	_, err := serve.New(testCard(), reply, serve.WithAddr("127.0.0.1:0"), serve.WithV03(), serve.WithBindings(a2a.BindingHTTPJSON))
	if err == nil || !strings.Contains(err.Error(), "WithV03 needs the JSON-RPC binding") {
		t.Fatalf("WithV03 without JSON-RPC: %v", err)
	}
}
