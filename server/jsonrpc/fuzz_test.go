package jsonrpc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/jsontest"
)

// FuzzJSONRPC feeds arbitrary bodies to the JSON-RPC endpoint. Whatever
// arrives, the server must not panic and must answer with one well-formed
// JSON-RPC response carrying a result or an error with a known code, or
// with an SSE stream for the streaming methods.
func FuzzJSONRPC(f *testing.F) {
	for _, s := range []string{
		sendHello,
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","historyLength":-1}}`,
		`{"jsonrpc":"2.0","id":"s","method":"ListTasks","params":{"pageSize":101,"status":"TASK_STATE_WORKING"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"aGk=","mediaType":"text/plain"}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"t","url":"http://127.0.0.1/x"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]`,
		`{"jsonrpc":"2.0","method":"GetTask"}`,
		`{"jsonrpc": "2.0", "method": `,
		``,
	} {
		f.Add([]byte(s))
	}
	known := map[int]bool{}
	for c := a2a.CodeUnknown; c <= a2a.CodeUnavailable; c++ {
		known[c.JSONRPCCode()] = true
	}
	_, h := newEcho(f)
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","method":"GetTask","params":{"id":"x"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x","id":"y"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := post(t, h, string(body), nil)
		// A request with a member given twice runs nothing: it is
		// refused, whichever member a reader would take.
		dup := jsontest.HasDuplicate(body)
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
			if dup {
				t.Fatalf("a request with a repeated member opened a stream: %q", body)
			}
			for line := range strings.SplitSeq(rec.Body.String(), "\n") {
				if data, ok := strings.CutPrefix(line, "data: "); ok && !json.Valid([]byte(data)) {
					t.Fatalf("invalid frame %q", data)
				}
			}
			return
		}
		var r rpcResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
			t.Fatalf("not JSON: %v: %q", err, rec.Body)
		}
		if r.JSONRPC != "2.0" || (r.Error == nil) == (r.Result == nil) {
			t.Fatalf("malformed response %q", rec.Body)
		}
		if r.Error != nil && !known[r.Error.Code] {
			t.Fatalf("unknown error code %d", r.Error.Code)
		}
		if dup && r.Error == nil {
			t.Fatalf("a request with a repeated member was answered %q", rec.Body)
		}
	})
}
