package a2a

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
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
	Metadata  map[string]any  `json:"metadata,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
}

// MarshalJSON writes the content as a single member beside filename,
// mediaType and metadata.
func (p Part) MarshalJSON() ([]byte, error) {
	if t, ok := p.Content.(Text); ok && p.Metadata == nil && p.Filename == "" && p.MediaType == "" {
		// Fast path for the most common part.
		b := make([]byte, 0, len(t)+12)
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
		p.Content = Data(bytes.Clone(w.Data))
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

// appendJSONString appends s as a JSON string, escaping as encoding/json
// does (HTML-safe, with U+2028 and U+2029 escaped).
func appendJSONString(dst []byte, s string) []byte {
	// Fast path: no byte needs escaping.
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' || c >= 0x80 {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
