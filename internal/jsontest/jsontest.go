// Package jsontest holds a reference reader for the strict-JSON tests: it
// finds repeated member names with encoding/json's tokenizer, independently
// of a2a.CheckMembers.
package jsontest

import (
	"bytes"
	"encoding/json"
)

// HasDuplicate reports whether some object of the JSON document data has
// a member name twice (exactly). It is false for invalid JSON.
func HasDuplicate(data []byte) bool {
	if !json.Valid(data) {
		return false
	}
	return hasDuplicate(json.NewDecoder(bytes.NewReader(data)))
}

func hasDuplicate(d *json.Decoder) bool {
	tok, err := d.Token()
	if err != nil {
		return false
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		dup := false
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return dup
			}
			name, _ := k.(string)
			if seen[name] {
				dup = true
			}
			seen[name] = true
			if hasDuplicate(d) {
				dup = true
			}
		}
		d.Token() // }
		return dup
	case json.Delim('['):
		dup := false
		for d.More() {
			if hasDuplicate(d) {
				dup = true
			}
		}
		d.Token() // ]
		return dup
	}
	return false
}
