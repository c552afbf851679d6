package a2a

import "strconv"

// DefaultMaxDepth is the default limit on how deeply a request's JSON may
// nest objects and arrays. A2A requests need about ten levels; metadata and
// data parts carry client JSON, which rarely needs more than a few dozen.
const DefaultMaxDepth = 64

// CheckDepth reports an InvalidRequest error when the JSON text data nests
// objects and arrays more than max levels deep ({"a":[1]} is two levels).
// A max of zero or less checks nothing. It does not validate the JSON: it
// only counts brackets outside strings, so malformed input is left to the
// decoder to report. The bindings call it before decoding a request, so a
// deeply nested body costs one pass over its bytes and nothing more.
func CheckDepth(data []byte, max int) error {
	if max <= 0 {
		return nil
	}
	depth := 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++ // skip the escaped byte; \uXXXX holds no quote or bracket
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return NewError(CodeInvalidRequest, "JSON nested deeper than "+strconv.Itoa(max)+" levels")
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}
