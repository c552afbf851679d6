package cli

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// TestServeV03: a2a serve --v03 serves the dual card and answers a v0.3
// client on JSON-RPC; its banner says so. Without --v03 the same call is
// VersionNotSupported.
func TestServeV03(t *testing.T) {
	for _, v03 := range []bool{true, false} {
		args := []string{"--store", "memory"}
		if v03 {
			args = append(args, "--v03")
		}
		ts := startServe(t, args...)
		_, body := httpGet(t, ts.base+server.WellKnownCardPath)
		var card map[string]any
		if err := json.Unmarshal([]byte(body), &card); err != nil {
			t.Fatal(err)
		}
		if got := card["url"] == ts.base+a2ahttp.JSONRPCPath && card["protocolVersion"] == "0.3.0"; got != v03 {
			t.Errorf("--v03 %v: card %s", v03, body)
		}
		req := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`
		resp, err := http.Post(ts.base+a2ahttp.JSONRPCPath, "application/json", strings.NewReader(req))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Result struct{ Kind string }
			Error  *struct{ Code int }
		}
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		switch {
		case err != nil:
			t.Fatal(err)
		case v03 && (r.Error != nil || r.Result.Kind != "task"):
			t.Errorf("--v03: message/send %+v", r)
		case !v03 && (r.Error == nil || r.Error.Code != -32009):
			t.Errorf("without --v03: message/send %+v, want -32009", r)
		}
		if got := strings.Contains(ts.stdout.String(), "A2A v0.3"); got != v03 {
			t.Errorf("--v03 %v: banner\n%s", v03, ts.stdout.String())
		}
		ts.stop(t)
	}
}
