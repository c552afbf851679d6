package a2a

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Part is one piece of content of a message or an artifact (proto Part, A2A
// §4.1.6). Content holds exactly one of [Text], [Raw], [URL] or [Data];
// Filename, MediaType and Metadata apply to every kind.
type Part struct {
	Content   PartContent
	Filename  string
	MediaType string
	Metadata  map[string]any
}

// PartContent is the content oneof of a Part: [Text], [Raw], [URL] or [Data].
type PartContent interface {
	isPartContent()
}

// Text is the content of a text part.
type Text string

// Raw is the content of a part that carries bytes inline (base64 on the wire).
type Raw []byte

// URL is the content of a part that points at a file.
type URL string

// Data is the content of a structured part: any JSON value (a
// google.protobuf.Value), kept as its encoded form.
//
// JSON null is a valid Value, so {"data": null} is a data part holding null
// (as in ProtoJSON, where null sets a Value field), not a part without
// content. An empty Data encodes as null.
type Data json.RawMessage

func (Text) isPartContent() {}
func (Raw) isPartContent()  {}
func (URL) isPartContent()  {}
func (Data) isPartContent() {}

// TextPart returns a text part.
func TextPart(s string) Part { return Part{Content: Text(s)} }

// DataPart returns a structured part holding the JSON encoding of v, with
// media type application/json.
func DataPart(v any) (Part, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Part{}, fmt.Errorf("a2a: data part: %w", err)
	}
	return Part{Content: Data(b), MediaType: "application/json"}, nil
}

// Kind names the content member: "text", "raw", "url" or "data", or "" when
// Content is nil.
func (p *Part) Kind() string {
	switch p.Content.(type) {
	case Text:
		return "text"
	case Raw:
		return "raw"
	case URL:
		return "url"
	case Data:
		return "data"
	}
	return ""
}

// EffectiveMediaType is the part's media type, defaulting to text/plain for
// text and application/json for data when none is given. It is "" for raw
// and URL parts without a media type.
func (p *Part) EffectiveMediaType() string {
	if p.MediaType != "" {
		return p.MediaType
	}
	switch p.Content.(type) {
	case Text:
		return "text/plain"
	case Data:
		return "application/json"
	}
	return ""
}

// Decode unmarshals a data part's value into v.
func (d Data) Decode(v any) error { return json.Unmarshal(d, v) }

// errPartContent is returned for a part without exactly one content member.
var errPartContent = errors.New("a part must have exactly one of text, raw, url or data")

type partWire struct {
	Text      *string         `json:"text,omitempty"`
	Raw       *string         `json:"raw,omitempty"`
	URL       *string         `json:"url,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitzero"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
}

// MarshalJSON writes the content as a single member beside filename,
// mediaType and metadata.
func (p Part) MarshalJSON() ([]byte, error) {
	if t, ok := p.Content.(Text); ok && p.Metadata == nil && p.Filename == "" && p.MediaType == "" {
		// Fast path for the most common part.
		b := make([]byte, 0, len(t)+len(`{"text":""}`))
		b = append(b, `{"text":`...)
		b = appendJSONString(b, string(t))
		return append(b, '}'), nil
	}
	w := partWire{Metadata: p.Metadata, Filename: p.Filename, MediaType: p.MediaType}
	switch c := p.Content.(type) {
	case Text:
		s := string(c)
		w.Text = &s
	case Raw:
		s := base64.StdEncoding.EncodeToString(c)
		w.Raw = &s
	case URL:
		s := string(c)
		w.URL = &s
	case Data:
		if len(c) == 0 {
			w.Data = json.RawMessage("null")
		} else {
			w.Data = json.RawMessage(c)
		}
	default:
		return nil, errPartContent
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a part, rejecting one with no content member or with
// more than one (A2A §4.1.6, REQUIREMENTS R070). Raw bytes may use the
// standard or URL-safe base64 alphabet, padded or not.
func (p *Part) UnmarshalJSON(b []byte) error {
	var w partWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	n := 0
	*p = Part{Metadata: w.Metadata, Filename: w.Filename, MediaType: w.MediaType}
	if w.Text != nil {
		n++
		p.Content = Text(*w.Text)
	}
	if w.Raw != nil {
		n++
		raw, err := decodeBase64(*w.Raw)
		if err != nil {
			return fmt.Errorf("part raw: %w", err)
		}
		p.Content = Raw(raw)
	}
	if w.URL != nil {
		n++
		p.Content = URL(*w.URL)
	}
	if w.Data != nil {
		n++
		// json.RawMessage copies what it decodes: w.Data is ours.
		p.Content = Data(w.Data)
	}
	if n != 1 {
		return errPartContent
	}
	return nil
}

func decodeBase64(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not valid base64")
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it: HTML-safe, with U+2028 and U+2029 escaped and invalid UTF-8
// replaced by U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // other control characters, <, > and &
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
