package a2a_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
)

func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func TestCheckDepth(t *testing.T) {
	cases := []struct {
		name string
		data string
		max  int
		ok   bool
	}{
		{"flat", `{"a":1}`, 1, true},
		{"at the limit", nested(4), 4, true},
		{"one over", nested(5), 4, false},
		{"objects count", `{"a":{"b":{"c":{}}}}`, 3, false},
		{"mixed at the limit", `{"a":[{"b":[]}]}`, 4, true},
		{"brackets in strings do not count", `{"a":"[[[[{{{{"}`, 1, true},
		{"escaped quote keeps the string open", `{"a":"\"[[[["}`, 1, true},
		{"escaped backslash ends before the quote", `{"a":"\\"}`, 1, true},
		{"siblings do not add up", `[[],[],[],[]]`, 2, true},
		{"zero checks nothing", nested(1000), 0, true},
		{"negative checks nothing", nested(1000), -1, true},
		{"deep", nested(100000), 64, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := a2a.CheckDepth([]byte(c.data), c.max)
			if c.ok != (err == nil) {
				t.Fatalf("CheckDepth = %v, want ok=%v", err, c.ok)
			}
			if err == nil {
				return
			}
			if !errors.Is(err, a2a.ErrInvalidRequest) {
				t.Errorf("error %v is not InvalidRequest", err)
			}
			if want := "JSON nested deeper than"; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		})
	}
	err := a2a.CheckDepth([]byte(nested(65)), 64)
	if got := a2a.AsError(err).Text(); got != "JSON nested deeper than 64 levels" {
		t.Errorf("message %q", got)
	}
}

// BenchmarkCheckDepth measures the pass over a typical SendMessage body;
// BenchmarkUnmarshalSendMessageForDepth decodes the same body, for
// comparison (about 0.85 µs against 20 µs when written).
func BenchmarkCheckDepth(b *testing.B) {
	body := []byte(`{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"` +
		strings.Repeat("hello world ", 100) + `"},{"data":{"a":[1,2,{"b":"c"}]}}],"metadata":{"k":"v"}},` +
		`"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":10}}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := a2a.CheckDepth(body, a2a.DefaultMaxDepth); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalSendMessageForDepth(b *testing.B) {
	body := []byte(`{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"` +
		strings.Repeat("hello world ", 100) + `"},{"data":{"a":[1,2,{"b":"c"}]}}],"metadata":{"k":"v"}},` +
		`"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":10}}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var req a2a.SendMessageRequest
		if err := a2a.Unmarshal(body, &req); err != nil {
			b.Fatal(err)
		}
	}
}
