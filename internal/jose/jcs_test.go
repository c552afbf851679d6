package jose

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestCanonicalizeRFC8785Example is the example of RFC 8785 §3.2.2: its
// input and its canonical output as the RFC prints them.
func TestCanonicalizeRFC8785Example(t *testing.T) {
	in := `{
  "numbers": [333333333.33333329, 1E30, 4.50,
              2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	got, err := Canonicalize([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("Canonicalize:\n got %s\nwant %s", got, want)
	}
}

// TestCanonicalizeSortingRFC8785 is the sorting example of RFC 8785
// §3.2.3: names compare as UTF-16 code units, so U+1F600 (a surrogate pair
// starting 0xD83D) sorts before U+FB33 although its UTF-8 bytes are larger.
func TestCanonicalizeSortingRFC8785(t *testing.T) {
	in := `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`
	want := "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"
	got, err := Canonicalize([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("Canonicalize:\n got %s\nwant %s", got, want)
	}
}

// TestJCSNumbers checks the number serialization against the examples of
// RFC 8785 Appendix B (given there as IEEE 754 bit patterns) and
// ECMAScript's rules for where exponents start.
func TestJCSNumbers(t *testing.T) {
	bits := []struct {
		hex  string
		want string
	}{
		{"0000000000000000", "0"},
		{"8000000000000000", "0"}, // minus zero
		{"0000000000000001", "5e-324"},
		{"8000000000000001", "-5e-324"},
		{"7fefffffffffffff", "1.7976931348623157e+308"},
		{"ffefffffffffffff", "-1.7976931348623157e+308"},
		{"4340000000000000", "9007199254740992"},
		{"c340000000000000", "-9007199254740992"},
		{"4430000000000000", "295147905179352830000"},
		{"44b52d02c7e14af5", "9.999999999999997e+22"},
		{"44b52d02c7e14af6", "1e+23"},
		{"44b52d02c7e14af7", "1.0000000000000001e+23"},
		{"444b1ae4d6e2ef4e", "999999999999999700000"},
		{"444b1ae4d6e2ef4f", "999999999999999900000"},
		{"444b1ae4d6e2ef50", "1e+21"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"},
		{"3eb0c6f7a0b5ed8d", "0.000001"},
		{"41b3de4355555553", "333333333.3333332"},
		{"41b3de4355555554", "333333333.33333325"},
		{"41b3de4355555555", "333333333.3333333"},
		{"41b3de4355555556", "333333333.3333334"},
		{"41b3de4355555557", "333333333.33333343"},
		{"becbf647612f3696", "-0.0000033333333333333333"},
		{"43143ff3c1cb0959", "1424953923781206.2"},
	}
	for _, c := range bits {
		u, err := strconv.ParseUint(c.hex, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		f := math.Float64frombits(u)
		if got := formatJCSNumber(f); got != c.want {
			t.Errorf("formatJCSNumber(%s) = %s, want %s", c.hex, got, c.want)
		}
		// The same through the parser, from Go's own shortest text.
		got, err := Canonicalize([]byte(strconv.FormatFloat(f, 'g', -1, 64)))
		if err != nil {
			t.Errorf("Canonicalize(%s): %v", c.hex, err)
		} else if string(got) != c.want {
			t.Errorf("Canonicalize(%s) = %s, want %s", c.hex, got, c.want)
		}
	}
	texts := []struct{ in, want string }{
		{"1", "1"},
		{"-1", "-1"},
		{"1.0", "1"},
		{"-0.0", "0"},
		{"100", "100"},
		{"1e2", "100"},
		{"1E+2", "100"},
		{"123456789012345678901", "123456789012345680000"},
		{"1e20", "100000000000000000000"},
		{"1e21", "1e+21"},
		{"12e20", "1.2e+21"},
		{"0.1", "0.1"},
		{"0.000001", "0.000001"},
		{"0.0000001", "1e-7"},
		{"0.00000123", "0.00000123"},
		{"1.5e-7", "1.5e-7"},
		{"1e-400", "0"}, // underflows to zero, as in ECMAScript
		{"123.456", "123.456"},
		{"0.30000000000000004", "0.30000000000000004"},
	}
	for _, c := range texts {
		got, err := Canonicalize([]byte(c.in))
		if err != nil {
			t.Errorf("Canonicalize(%s): %v", c.in, err)
		} else if string(got) != c.want {
			t.Errorf("Canonicalize(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestCanonicalizeStrings(t *testing.T) {
	cases := []struct{ in, want string }{
		{`"\u0000\u001f\u007f"`, "\"\\u0000\\u001f\x7f\""},
		{`"\b\f\n\r\t"`, `"\b\f\n\r\t"`},
		{`"\/<>&"`, `"/<>&"`},                          // no HTML escaping
		{`"\u2028\u2029"`, "\"\u2028\u2029\""},         // written as they are
		{`"\u00e9t\u00C9"`, `"étÉ"`},                   // escapes of printable text undone
		{`"\ud834\udd1e"`, `"𝄞"`},                      // a surrogate pair
		{"\"caf\u00e9 \U0001F600\"", "\"café 😀\""},     // UTF-8 kept
		{` [ 1 , "a" , { } , [ ] ] `, `[1,"a",{},[]]`}, // white space removed
	}
	for _, c := range cases {
		got, err := Canonicalize([]byte(c.in))
		if err != nil {
			t.Errorf("Canonicalize(%s): %v", c.in, err)
		} else if string(got) != c.want {
			t.Errorf("Canonicalize(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestCanonicalizeNested(t *testing.T) {
	in := `{"b":{"z":1,"a":[{"y":true,"x":null}]},"a":"1"}`
	want := `{"a":"1","b":{"a":[{"x":null,"y":true}],"z":1}}`
	got, err := Canonicalize([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// Canonical text is a fixed point.
	again, err := Canonicalize(got)
	if err != nil || string(again) != want {
		t.Errorf("Canonicalize(canonical) = %s, %v", again, err)
	}
}

func TestCanonicalizeRejects(t *testing.T) {
	deep := strings.Repeat("[", maxJCSDepth+1) + strings.Repeat("]", maxJCSDepth+1)
	cases := []struct{ name, in, want string }{
		{"duplicate name", `{"a":1,"b":2,"a":3}`, `duplicate member name "a"`},
		{"duplicate name after unescaping", `{"a":1,"\u0061":2}`, `duplicate member name "a"`},
		{"invalid UTF-8", "\"\xff\"", "not valid UTF-8"},
		{"lone high surrogate", `"\ud800"`, "lone surrogate"},
		{"lone low surrogate", `"\udc00x"`, "lone surrogate"},
		{"high surrogate then letter", `"\ud800\u0041"`, "lone surrogate"},
		{"too deep", deep, "nest more than"},
		{"number too large", `1e400`, "out of the range"},
		{"leading zero", `01`, "after the JSON value"},
		{"plus sign", `+1`, "looking for a value"},
		{"bare dot", `1.`, "after '.'"},
		{"NaN", `NaN`, "looking for a value"},
		{"trailing comma", `[1,]`, "looking for a value"},
		{"trailing data", `{} {}`, "after the JSON value"},
		{"empty", ``, "unexpected end"},
		{"raw control", "\"a\tb\"", "must be escaped"},
		{"bad escape", `"\x"`, "invalid escape"},
		{"unterminated", `{"a":"b`, "unexpected end"},
		{"single quotes", `{'a':1}`, "expected a member name"},
		{"bad literal", `tru`, "looking for a value"},
	}
	for _, c := range cases {
		_, err := Canonicalize([]byte(c.in))
		if err == nil {
			t.Errorf("%s: Canonicalize(%q) succeeded", c.name, c.in)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not contain %q", c.name, err, c.want)
		}
	}
	// Nesting at the limit is fine.
	ok := strings.Repeat("[", maxJCSDepth) + strings.Repeat("]", maxJCSDepth)
	if _, err := Canonicalize([]byte(ok)); err != nil {
		t.Errorf("nesting %d deep: %v", maxJCSDepth, err)
	}
}
