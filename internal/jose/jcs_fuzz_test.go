package jose

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzCanonicalize round-trips RFC 8785 against encoding/json: whatever
// Canonicalize accepts, encoding/json accepts too and reads as the same
// value from the input and from the canonical form; the canonical form is
// valid JSON and is its own canonical form.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		`{"b":[1,2.5,-0,1e21,1e-7,"x\u00e9\n"],"a":{"z":null,"y":true}}`,
		`{"\u20ac":1,"\r":2,"1":3,"\ud83d\ude00":4}`,
		`[123456789012345678901234567890, 0.1, 5e-324]`,
		`"\u2028\u2029<>&"`,
		`{"a":1,"a":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Canonicalize(in)
		if err != nil {
			return
		}
		var a, b any
		if err := json.Unmarshal(in, &a); err != nil {
			t.Fatalf("Canonicalize accepted %q, which encoding/json refuses: %v", in, err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("the canonical form %q of %q is not JSON: %v", out, in, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%q reads as %#v, its canonical form %q as %#v", in, a, out, b)
		}
		again, err := Canonicalize(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("the canonical form %q of %q canonicalizes to %q, %v", out, in, again, err)
		}
	})
}
