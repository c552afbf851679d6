package push

import (
	"strings"
	"testing"
	"time"
)

// TestReceiverStrictMembers: a notification whose members repeat, or
// match a field only when case is ignored, reads as another event to a
// reader that takes the first or the exact member (a "taskId" given
// twice names two tasks): the receiver refuses it with 400 naming the
// member, signed or not, and runs no callback. The same body with its
// members written once is delivered.
func TestReceiverStrictMembers(t *testing.T) {
	s, _ := GenerateSigner("k1")
	const good = `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`
	for _, c := range []struct {
		name, body, member string
	}{
		{"well formed", good, ""},
		{"taskId twice", `{"statusUpdate":{"taskId":"t1","taskId":"t2","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}`, `"taskId"`},
		{"event twice", `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}},"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}`, `"statusUpdate"`},
		{"state in another case", `{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"State":"TASK_STATE_WORKING"}}}`, `"State"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recorder{}
			_, u := newReceiverServer(t, rec, WithSigner(s), WithTasks("t1"))
			code, text := post(t, u, []byte(c.body), sign(t, s, "t1", []byte(c.body), time.Now()))
			if c.member == "" {
				if code != 200 || rec.count() != 1 {
					t.Fatalf("got %d %q and %d callbacks, want 200 and 1", code, text, rec.count())
				}
				return
			}
			if code != 400 || !strings.Contains(text, c.member) {
				t.Fatalf("got %d %q, want 400 naming %s", code, text, c.member)
			}
			if rec.count() != 0 {
				t.Fatal("the callback ran")
			}
		})
	}
}
