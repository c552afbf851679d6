package grpcpb

import (
	"testing"

	"github.com/goa2a/a2a/a2a"
)

// TestDecodeCompact: protojson may put spaces in its output (it does so
// in some builds and not others); the raw JSON of a data part must not
// carry them into the model, where it is printed and forwarded as it is.
func TestDecodeCompact(t *testing.T) {
	spaced := []byte(`{"messageId": "m", "role": "ROLE_AGENT", "parts": [{"data": {"passed": 11,  "failures": [ {"test": "t"} ]}}]}`)
	var m a2a.Message
	if err := decodeCompact(spaced, &m); err != nil {
		t.Fatal(err)
	}
	d, ok := m.Parts[0].Content.(a2a.Data)
	if !ok {
		t.Fatalf("part %#v is not data", m.Parts[0].Content)
	}
	if want := `{"passed":11,"failures":[{"test":"t"}]}`; string(d) != want {
		t.Errorf("data part holds %s, want %s", d, want)
	}
}
