package a2a

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Strict member names. encoding/json takes the last of two members with
// one name, and a member whose name matches a field only when case is
// ignored ("METHOD" for "method"). A gateway or firewall that reads the
// request differently (the first member, the exact name) would then see
// another request than the server runs. CheckMembers finds such members
// before decoding, so that every reader agrees or the request is refused.

// MemberError is a member of a JSON document that a strict reader refuses.
type MemberError struct {
	// Path is where the member is, such as "params.message" ("" for the
	// document's top level).
	Path string
	// Member is the member's name as written.
	Member string
	// Reason says what is wrong with it.
	Reason string
}

func (e *MemberError) Error() string {
	where := "the top level"
	if e.Path != "" {
		where = e.Path
	}
	return "member " + strconv.Quote(e.Member) + " of " + where + ": " + e.Reason
}

// Field is the member's path, as a field violation names it.
func (e *MemberError) Field() string {
	if e.Path == "" {
		return e.Member
	}
	return e.Path + "." + e.Member
}

// CheckMembers returns a *MemberError for the first member of data, a
// JSON document to be decoded into v (a pointer), that a strict reader
// refuses: a name given twice in one object, exactly or differing only in
// case, at any depth; or a name that matches a field of the struct it
// decodes into only if case is ignored. Members no field takes are not its
// concern, nor the value of a field tagged a2a:"unchecked" (raw JSON its
// reader checks with its own type). A document that is not valid JSON is left to the decoder: it
// returns nil.
func CheckMembers(data []byte, v any) error {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var s scanner
	s.data = data
	s.names, s.path = s.namesBuf[:0], s.pathBuf[:0]
	s.skipSpace()
	if err := s.value(shapeFor(t)); err != nil && err != errSyntax {
		return err
	}
	return nil
}

// errSyntax stops the scan of a document that is not valid JSON.
var errSyntax = &MemberError{Reason: "syntax"}

// shape is what a JSON value decodes into, as far as member names go.
type shape struct {
	fields map[string]*shape // a struct's members by exact name; nil for no struct
	elem   *shape            // of a map's values or a slice's elements
}

// anyShape decodes into an interface or raw JSON: names are free, but not
// twice in one object.
var anyShape = &shape{}

// deferredShape is a member tagged a2a:"unchecked": raw JSON that its
// reader checks where it decodes it, with its own type (the JSON-RPC
// params), so that it is walked once.
var deferredShape = &shape{}

// shapes caches the shape of each type: derived from the type alone, never
// changed once stored, as encoding/json caches its own.
var shapes sync.Map // reflect.Type -> *shape

// wireShapes are the JSON forms of the model's types that decode
// themselves into another struct.
var wireShapes = map[reflect.Type]reflect.Type{
	reflect.TypeFor[Part]():                reflect.TypeFor[partWire](),
	reflect.TypeFor[SendMessageResponse](): reflect.TypeFor[sendMessageResponseWire](),
	reflect.TypeFor[StreamResponse]():      reflect.TypeFor[streamResponseWire](),
}

func shapeFor(t reflect.Type) *shape {
	if t == nil {
		return anyShape
	}
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	s := buildShape(t, map[reflect.Type]*shape{})
	shapes.Store(t, s)
	return s
}

func buildShape(t reflect.Type, building map[reflect.Type]*shape) *shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if w, ok := wireShapes[t]; ok {
		t = w
	}
	if s, ok := building[t]; ok {
		return s // a recursive type: the shape being built
	}
	switch t.Kind() {
	case reflect.Struct:
		if t == reflect.TypeFor[Timestamp]() {
			return anyShape
		}
		s := &shape{fields: map[string]*shape{}}
		building[t] = s
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if f.Tag.Get("a2a") == "unchecked" {
				s.fields[name] = deferredShape
				continue
			}
			s.fields[name] = buildShape(f.Type, building)
		}
		return s
	case reflect.Map, reflect.Slice, reflect.Array:
		if t == reflect.TypeFor[json.RawMessage]() {
			return anyShape
		}
		return &shape{elem: buildShape(t.Elem(), building)}
	}
	return anyShape
}

// scanner walks a JSON document, checking member names against shapes.
// It allocates nothing for a document it accepts but its two stacks: the
// names seen in the objects being read, and the path, made into a string
// only for an error.
type scanner struct {
	data  []byte
	pos   int
	names [][]byte // the names of the open objects, innermost last
	path  []step   // where the scan is

	namesBuf [8][]byte // the stacks' first backing arrays, with the scanner
	pathBuf  [8]step
}

// step is one element of a path: a member name, or an array index.
type step struct {
	name  []byte
	index int // -1 for a name
}

func (s *scanner) pathString() string {
	var b strings.Builder
	for _, st := range s.path {
		if st.index >= 0 {
			b.WriteString("[" + strconv.Itoa(st.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(st.name)
	}
	return b.String()
}

func (s *scanner) fail(name []byte, reason string) error {
	return &MemberError{Path: s.pathString(), Member: string(name), Reason: reason}
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value checks the value at pos, of shape sh.
func (s *scanner) value(sh *shape) error {
	if s.pos >= len(s.data) {
		return errSyntax
	}
	if sh == deferredShape {
		return s.skip()
	}
	switch s.data[s.pos] {
	case '{':
		return s.object(sh)
	case '[':
		return s.array(sh)
	case '"':
		_, err := s.str()
		return err
	}
	// A number, true, false or null: up to the next delimiter.
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return nil
		}
		s.pos++
	}
	return nil
}

// skip moves past the value at pos, checking nothing in it.
func (s *scanner) skip() error {
	depth := 0
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '"':
			if _, err := s.str(); err != nil {
				return err
			}
			if depth == 0 {
				return nil
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return nil // the enclosing value's end: a scalar ended here
			}
			if depth--; depth == 0 {
				s.pos++
				return nil
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return nil
			}
		}
		s.pos++
	}
	if depth > 0 {
		return errSyntax
	}
	return nil
}

// str reads a string at pos and returns its value: a slice of the
// document when it has no escapes, else a new, unescaped copy.
func (s *scanner) str() ([]byte, error) {
	start := s.pos
	s.pos++
	escaped := false
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		s.pos++
		switch {
		case c == '\\':
			escaped = true
			s.pos++ // the escaped byte (a \u escape's digits are plain)
		case c == '"':
			raw := s.data[start:s.pos]
			if !escaped {
				return raw[1 : len(raw)-1], nil
			}
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, errSyntax
			}
			return []byte(v), nil
		}
	}
	return nil, errSyntax
}

// field is the shape of the member name of struct shape sh, and whether
// the name differs from a field's only in case (then want is the field's).
func (sh *shape) field(name []byte) (f *shape, want string, ok bool) {
	if f, ok := sh.fields[string(name)]; ok {
		return f, "", true
	}
	for n := range sh.fields {
		if bytes.EqualFold([]byte(n), name) {
			return nil, n, false
		}
	}
	return anyShape, "", true
}

func (s *scanner) object(sh *shape) error {
	s.pos++ // {
	// The names of this object so far: none may repeat, and for a struct
	// none may repeat when case is ignored, since encoding/json would give
	// both to one field.
	first := len(s.names)
	defer func() { s.names = s.names[:first] }()
	for {
		s.skipSpace()
		if s.pos >= len(s.data) {
			return errSyntax
		}
		if s.data[s.pos] == '}' {
			s.pos++
			return nil
		}
		if s.data[s.pos] != '"' {
			return errSyntax
		}
		name, err := s.str()
		if err != nil {
			return err
		}
		for _, prev := range s.names[first:] {
			switch {
			case bytes.Equal(prev, name):
				return s.fail(name, "given twice in one object")
			case sh.fields != nil && bytes.EqualFold(prev, name):
				return s.fail(name, "given twice in one object, as "+strconv.Quote(string(prev))+" and "+strconv.Quote(string(name))+" (names are case-sensitive)")
			}
		}
		s.names = append(s.names, name)
		child := anyShape
		switch {
		case sh.fields != nil:
			f, want, ok := sh.field(name)
			if !ok {
				return s.fail(name, "no such member (names are case-sensitive): "+strconv.Quote(want))
			}
			child = f
		case sh.elem != nil:
			child = sh.elem
		}
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return errSyntax
		}
		s.pos++
		s.skipSpace()
		if end, err := s.member(step{name: name, index: -1}, child, '}'); end || err != nil {
			return err
		}
	}
}

// member checks the value at pos, of shape sh, at step st below the path,
// then reads the separator after it: a comma, or close, which ends the
// object or array (end true).
func (s *scanner) member(st step, sh *shape, close byte) (end bool, err error) {
	s.path = append(s.path, st)
	err = s.value(sh)
	s.path = s.path[:len(s.path)-1]
	if err != nil {
		return false, err
	}
	s.skipSpace()
	if s.pos >= len(s.data) {
		return false, errSyntax
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		return false, nil
	case close:
		s.pos++
		return true, nil
	}
	return false, errSyntax
}

func (s *scanner) array(sh *shape) error {
	s.pos++ // [
	elem := anyShape
	if sh.elem != nil {
		elem = sh.elem
	}
	for i := 0; ; i++ {
		s.skipSpace()
		if s.pos >= len(s.data) {
			return errSyntax
		}
		if s.data[s.pos] == ']' {
			s.pos++
			return nil
		}
		if end, err := s.member(step{index: i}, elem, ']'); end || err != nil {
			return err
		}
	}
}
