package jose

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxJCSDepth is how deeply objects and arrays may nest in a text given to
// [Canonicalize]. An agent card nests a handful of levels; the limit only
// keeps a hostile text from exhausting the stack.
const maxJCSDepth = 256

// Canonicalize rewrites a JSON text in the form of the JSON
// Canonicalization Scheme (RFC 8785): no white space, the members of every
// object sorted by their names as UTF-16 code units, strings escaped as
// ECMAScript's JSON.stringify does (only '"', '\\' and control characters;
// \b \t \n \f \r by name, others as \u00xx), and numbers written as
// ECMAScript writes an IEEE 754 double (shortest form that reads back to
// the same value: 1e+21, 0.000001, 1e-7, -0 as 0).
//
// The text must be I-JSON (RFC 7493), as RFC 8785 requires: valid UTF-8,
// no escaped lone surrogate, no object with two members of the same name,
// no number beyond the range of a double. It must hold exactly one value,
// nested at most 256 levels deep. Otherwise Canonicalize returns an error
// that names the problem and its byte offset.
func Canonicalize(data []byte) ([]byte, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("jose: canonicalize: the JSON text is not valid UTF-8")
	}
	p := &jcsParser{data: data}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.errorf("unexpected data after the JSON value")
	}
	return v.appendTo(make([]byte, 0, len(data))), nil
}

// jcsValue is a parsed JSON value, kept as what its canonical form needs:
// the literal or number text already canonical, a string decoded, an
// object's members in their order in the text.
type jcsValue struct {
	kind    byte // 'l' literal or number (text), 's' string, 'a' array, 'o' object
	text    string
	items   []jcsValue
	members []jcsMember
}

type jcsMember struct {
	name  string
	value jcsValue
}

func (v *jcsValue) appendTo(b []byte) []byte {
	switch v.kind {
	case 'l':
		return append(b, v.text...)
	case 's':
		return appendJCSString(b, v.text)
	case 'a':
		b = append(b, '[')
		for i := range v.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = v.items[i].appendTo(b)
		}
		return append(b, ']')
	default:
		ms := slices.Clone(v.members)
		slices.SortFunc(ms, func(x, y jcsMember) int { return compareUTF16(x.name, y.name) })
		b = append(b, '{')
		for i := range ms {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJCSString(b, ms[i].name)
			b = append(b, ':')
			b = ms[i].value.appendTo(b)
		}
		return append(b, '}')
	}
}

// compareUTF16 orders two strings by their UTF-16 code units (RFC 8785
// §3.2.3), which differs from the order of their UTF-8 bytes only for
// characters beyond U+FFFF against those from U+E000 to U+FFFF.
func compareUTF16(x, y string) int {
	if x == y {
		return 0
	}
	return slices.Compare(utf16.Encode([]rune(x)), utf16.Encode([]rune(y)))
}

// appendJCSString writes s as RFC 8785 §3.2.2.2 asks.
func appendJCSString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c >= 0x20:
			b = append(b, c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
	}
	return append(b, '"')
}

// formatJCSNumber writes f as ECMAScript's Number.prototype.toString does
// (ECMA-262 Number::toString, radix 10), which RFC 8785 §3.2.2.3 adopts.
func formatJCSNumber(f float64) string {
	if f == 0 {
		return "0" // -0 too
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// The shortest digits that read back to f, as d.ddde±x.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k := len(digits)
	n := x + 1 // f = 0.digits × 10^n
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		es := "+"
		if n-1 < 0 {
			es = "-"
		}
		m := digits[:1]
		if k > 1 {
			m += "." + digits[1:]
		}
		s = m + "e" + es + strconv.Itoa(max(n-1, 1-n))
	}
	return sign + s
}

// jcsParser is a strict JSON (RFC 8259) parser for [Canonicalize].
type jcsParser struct {
	data []byte
	pos  int
}

func (p *jcsParser) errorf(format string, args ...any) error {
	return fmt.Errorf("jose: canonicalize: at byte %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *jcsParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jcsParser) value(depth int) (jcsValue, error) {
	if p.pos >= len(p.data) {
		return jcsValue{}, p.errorf("unexpected end of the JSON text")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, err := p.str()
		return jcsValue{kind: 's', text: s}, err
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(string(p.data[p.pos:min(len(p.data), p.pos+len(lit))]), lit) {
				p.pos += len(lit)
				return jcsValue{kind: 'l', text: lit}, nil
			}
		}
		return jcsValue{}, p.errorf("invalid character %q looking for a value", rune(c))
	}
}

func (p *jcsParser) object(depth int) (jcsValue, error) {
	if depth > maxJCSDepth {
		return jcsValue{}, p.errorf("objects and arrays nest more than %d levels deep", maxJCSDepth)
	}
	p.pos++ // '{'
	v := jcsValue{kind: 'o'}
	seen := make(map[string]bool)
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return jcsValue{}, p.errorf("expected a member name")
		}
		at := p.pos
		name, err := p.str()
		if err != nil {
			return jcsValue{}, err
		}
		if seen[name] {
			p.pos = at
			return jcsValue{}, p.errorf("duplicate member name %q", name)
		}
		seen[name] = true
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return jcsValue{}, p.errorf("expected ':' after member name %q", name)
		}
		p.pos++
		p.skipSpace()
		mv, err := p.value(depth)
		if err != nil {
			return jcsValue{}, err
		}
		v.members = append(v.members, jcsMember{name: name, value: mv})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return jcsValue{}, p.errorf("unexpected end of the JSON text in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return v, nil
		default:
			return jcsValue{}, p.errorf("expected ',' or '}' in an object")
		}
	}
}

func (p *jcsParser) array(depth int) (jcsValue, error) {
	if depth > maxJCSDepth {
		return jcsValue{}, p.errorf("objects and arrays nest more than %d levels deep", maxJCSDepth)
	}
	p.pos++ // '['
	v := jcsValue{kind: 'a'}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		p.skipSpace()
		item, err := p.value(depth)
		if err != nil {
			return jcsValue{}, err
		}
		v.items = append(v.items, item)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return jcsValue{}, p.errorf("unexpected end of the JSON text in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, nil
		default:
			return jcsValue{}, p.errorf("expected ',' or ']' in an array")
		}
	}
}

// number reads a number of RFC 8259 §6 grammar and canonicalizes it.
func (p *jcsParser) number() (jcsValue, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return jcsValue{}, p.errorf("invalid number: expected a digit")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return jcsValue{}, p.errorf("invalid number: expected a digit after '.'")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return jcsValue{}, p.errorf("invalid number: expected a digit in the exponent")
		}
	}
	text := string(p.data[start:p.pos])
	f, err := strconv.ParseFloat(text, 64)
	if err != nil && !(errors.Is(err, strconv.ErrRange) && !math.IsInf(f, 0)) {
		p.pos = start
		return jcsValue{}, p.errorf("number %s is out of the range of an IEEE 754 double", text)
	}
	return jcsValue{kind: 'l', text: formatJCSNumber(f)}, nil
}

// str reads a string and returns it decoded.
func (p *jcsParser) str() (string, error) {
	p.pos++ // '"'
	var sb strings.Builder
	for {
		if p.pos >= len(p.data) {
			return "", p.errorf("unexpected end of the JSON text in a string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return sb.String(), nil
		case c < 0x20:
			return "", p.errorf("control character U+%04X in a string must be escaped", c)
		case c != '\\':
			sb.WriteByte(c)
			p.pos++
			continue
		}
		// An escape.
		if p.pos+1 >= len(p.data) {
			return "", p.errorf("unexpected end of the JSON text in a string")
		}
		switch e := p.data[p.pos+1]; e {
		case '"', '\\', '/':
			sb.WriteByte(e)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			r, ok := p.hex4(p.pos + 2)
			if !ok {
				return "", p.errorf(`invalid \u escape`)
			}
			switch {
			case utf16.IsSurrogate(r) && r < 0xDC00:
				// A high surrogate must be followed by an escaped low one.
				r2, ok := rune(0), false
				if p.pos+8 <= len(p.data) && p.data[p.pos+6] == '\\' && p.data[p.pos+7] == 'u' {
					r2, ok = p.hex4(p.pos + 8)
				}
				if !ok || r2 < 0xDC00 || r2 > 0xDFFF {
					return "", p.errorf(`lone surrogate \u%04X in a string`, r)
				}
				sb.WriteRune(utf16.DecodeRune(r, r2))
				p.pos += 12
				continue
			case utf16.IsSurrogate(r):
				return "", p.errorf(`lone surrogate \u%04X in a string`, r)
			}
			sb.WriteRune(r)
			p.pos += 6
			continue
		default:
			return "", p.errorf("invalid escape '\\%c' in a string", rune(e))
		}
		p.pos += 2
	}
}

// hex4 reads four hexadecimal digits at i.
func (p *jcsParser) hex4(i int) (rune, bool) {
	if i+4 > len(p.data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.data[i:i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}
