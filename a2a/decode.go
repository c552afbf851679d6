package a2a

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Unmarshal decodes ProtoJSON into v, one of this package's types, with the
// leniency ProtoJSON parsers owe their peers (REQUIREMENTS D1, D6): member
// names in the proto's original snake_case ("message_id") as well as
// camelCase, and int32 fields written as decimal strings ("historyLength":
// "3"). Unknown members are ignored. Free-form values (metadata, data,
// params, header) and map keys (securitySchemes, schemes, scopes) are taken
// as they are.
//
// Bodies that need none of this, the usual case, are decoded directly; only
// a body with an underscore in a member name or a quoted int32 pays for the
// rewrite.
func Unmarshal(data []byte, v any) error {
	if needsRewrite(data) {
		if fixed, ok := rewrite(data); ok {
			data = fixed
		}
	}
	return json.Unmarshal(data, v)
}

// int32Fields are the int32 members of the model, which ProtoJSON also
// accepts as strings.
var int32Fields = map[string]bool{"historyLength": true, "pageSize": true, "totalSize": true}

// quotedInt32Fields are the int32 member names as they appear in JSON.
var quotedInt32Fields = [][]byte{[]byte(`"historyLength"`), []byte(`"pageSize"`), []byte(`"totalSize"`)}

// freeForm members hold any JSON; nothing inside them is rewritten.
var freeForm = map[string]bool{"metadata": true, "data": true, "params": true, "header": true}

// mapMembers hold maps whose keys are names chosen by people; their keys
// stay, their values are rewritten as usual.
var mapMembers = map[string]bool{"securitySchemes": true, "schemes": true, "scopes": true}

// needsRewrite scans data once, without allocating, for a member name with
// an underscore or an int32 member whose value is a string.
func needsRewrite(data []byte) bool {
	for _, key := range quotedInt32Fields {
		if i := bytes.Index(data, key); i >= 0 {
			rest := bytes.TrimLeft(data[i+len(key):], " \t\r\n")
			if len(rest) > 0 && rest[0] == ':' {
				rest = bytes.TrimLeft(rest[1:], " \t\r\n")
				if len(rest) > 0 && rest[0] == '"' {
					return true
				}
			}
		}
	}
	if bytes.IndexByte(data, '_') < 0 {
		return false
	}
	// An underscore somewhere: is it in a member name?
	inString, escaped, hasUnderscore := false, false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '_':
				hasUnderscore = true
			case c == '"':
				inString = false
				if hasUnderscore {
					j := i + 1
					for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\r' || data[j] == '\n') {
						j++
					}
					if j < len(data) && data[j] == ':' {
						return true
					}
				}
			}
			continue
		}
		if c == '"' {
			inString, hasUnderscore = true, false
		}
	}
	return false
}

// rewrite re-encodes data with camelCase member names and numeric int32
// values. It reports false when data is not valid JSON, leaving the error to
// the real decoder.
func rewrite(data []byte) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	out, err := json.Marshal(normalize(v, false))
	if err != nil {
		return nil, false
	}
	return out, true
}

func normalize(v any, keepKeys bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			name := k
			if !keepKeys {
				name = lowerCamel(k)
			}
			switch {
			case keepKeys:
				out[name] = normalize(val, false)
			case freeForm[name]:
				out[name] = val
			case mapMembers[name]:
				out[name] = normalize(val, true)
			case int32Fields[name]:
				if s, ok := val.(string); ok {
					val = json.Number(strings.TrimSpace(s))
				}
				out[name] = val
			default:
				out[name] = normalize(val, false)
			}
		}
		return out
	case []any:
		for i := range x {
			x[i] = normalize(x[i], keepKeys)
		}
		return x
	}
	return v
}

// lowerCamel turns a proto field name such as "message_id" into its JSON
// name "messageId" (protoc's json_name rule: drop each underscore and
// upper-case the letter after it). Names without underscores are unchanged.
func lowerCamel(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' {
			upper = true
			continue
		}
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		upper = false
		b.WriteByte(c)
	}
	return b.String()
}
