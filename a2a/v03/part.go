package v03

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"maps"

	"github.com/goa2a/a2a/a2a"
)

// The part kinds of v0.3 (A2A v0.3 §6.5).
const (
	KindText = "text"
	KindFile = "file"
	KindData = "data"
)

// Part is a v0.3 part: {"kind": "text", "text"}, {"kind": "file", "file"}
// or {"kind": "data", "data"}, each with optional metadata. The members of
// the other kinds are ignored.
type Part struct {
	Kind     string          `json:"kind"`
	Text     *string         `json:"text,omitempty"`
	File     *File           `json:"file,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
	Metadata map[string]any  `json:"metadata,omitzero"`
}

// File is the file of a file part: its content inline as base64 (Bytes) or
// at a URI, exactly one of them (v0.3 FileWithBytes, FileWithUri).
//
// The v1.0 specification's migration appendix (A2A §A.2.1) spells the
// inline member "fileWithBytes"; the v0.3 schema, the JS SDK and a2a-go
// all write "bytes", which is what v0.3 peers send.
type File struct {
	Bytes    *string `json:"bytes,omitempty"`
	URI      *string `json:"uri,omitempty"`
	MimeType string  `json:"mimeType,omitempty"`
	Name     string  `json:"name,omitempty"`
}

// DataPartCompatKey is the metadata member that marks a v0.3 data part
// whose data wraps a v1.0 value that is not an object: {"value": v}.
// v0.3 data must be an object, v1.0 data may be any JSON value; the JS SDK
// and a2a-go both wrap such values this way, and unwrap them when the
// member is true.
const DataPartCompatKey = "data_part_compat"

// FromV1Part returns the v0.3 form of p: text is a text part, raw bytes and
// URLs are file parts (with the media type as mimeType, the filename as
// name), data is a data part. Data that is not an object is wrapped as
// [DataPartCompatKey] says.
//
// A text or data part has no media type or filename in v0.3: a media type
// that is the kind's default (text/plain, application/json) is dropped,
// since it says nothing more than the kind; any other one, and any
// filename, is an UnsupportedOperation error. So is a data part whose
// metadata already holds the compat member where it would be misread.
func FromV1Part(p *a2a.Part) (*Part, error) {
	out, err := fromV1Part(p, "")
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func fromV1Part(p *a2a.Part, path string) (Part, error) {
	switch c := p.Content.(type) {
	case a2a.Text:
		if err := plainPart(p, "text/plain", path); err != nil {
			return Part{}, err
		}
		s := string(c)
		return Part{Kind: KindText, Text: &s, Metadata: p.Metadata}, nil
	case a2a.Raw:
		s := base64.StdEncoding.EncodeToString(c)
		return Part{Kind: KindFile, File: &File{Bytes: &s, MimeType: p.MediaType, Name: p.Filename}, Metadata: p.Metadata}, nil
	case a2a.URL:
		s := string(c)
		return Part{Kind: KindFile, File: &File{URI: &s, MimeType: p.MediaType, Name: p.Filename}, Metadata: p.Metadata}, nil
	case a2a.Data:
		if err := plainPart(p, "application/json", path); err != nil {
			return Part{}, err
		}
		raw := bytes.TrimSpace(c)
		if len(raw) == 0 {
			raw = []byte("null")
		}
		if !json.Valid(raw) {
			return Part{}, invalid(join(path, "data"), "data is not valid JSON")
		}
		compat, marked := p.Metadata[DataPartCompatKey]
		if raw[0] == '{' {
			if compat == true {
				return Part{}, notInV03(join(path, "metadata."+DataPartCompatKey), "v0.3 readers would unwrap this data part's value")
			}
			return Part{Kind: KindData, Data: json.RawMessage(raw), Metadata: p.Metadata}, nil
		}
		if marked {
			return Part{}, notInV03(join(path, "metadata."+DataPartCompatKey), "the member is needed to wrap data that is not an object")
		}
		md := maps.Clone(p.Metadata)
		if md == nil {
			md = make(map[string]any, 1)
		}
		md[DataPartCompatKey] = true
		wrapped := make([]byte, 0, len(raw)+len(`{"value":}`))
		wrapped = append(append(append(wrapped, `{"value":`...), raw...), '}')
		return Part{Kind: KindData, Data: wrapped, Metadata: md}, nil
	case nil:
		return Part{}, invalid(path, "a part must have exactly one of text, raw, url or data")
	}
	return Part{}, invalid(path, "unknown part content")
}

// plainPart refuses the members a v0.3 text or data part has no place for.
func plainPart(p *a2a.Part, defaultType, path string) error {
	if p.Filename != "" {
		return notInV03(join(path, "filename"), "a v0.3 "+p.Kind()+" part has no filename")
	}
	if p.MediaType != "" && p.MediaType != defaultType {
		return notInV03(join(path, "mediaType"), "a v0.3 "+p.Kind()+" part has no media type other than "+defaultType)
	}
	return nil
}

// ToV1Part returns the v1.0 form of p. Inline file bytes may use the
// standard or URL-safe base64 alphabet, padded or not. A data part marked
// with [DataPartCompatKey] true must be {"value": v}: it becomes data v,
// and the marker leaves the metadata (which is then nil if nothing else
// was in it).
func ToV1Part(p *Part) (*a2a.Part, error) {
	out, err := toV1Part(p, "")
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func toV1Part(p *Part, path string) (a2a.Part, error) {
	switch p.Kind {
	case KindText:
		if p.Text == nil {
			return a2a.Part{}, invalid(join(path, "text"), "a text part needs text")
		}
		return a2a.Part{Content: a2a.Text(*p.Text), Metadata: p.Metadata}, nil
	case KindFile:
		f := p.File
		switch {
		case f == nil:
			return a2a.Part{}, invalid(join(path, "file"), "a file part needs a file")
		case (f.Bytes == nil) == (f.URI == nil):
			return a2a.Part{}, invalid(join(path, "file"), "a file has exactly one of bytes or uri")
		case f.URI != nil:
			return a2a.Part{Content: a2a.URL(*f.URI), MediaType: f.MimeType, Filename: f.Name, Metadata: p.Metadata}, nil
		}
		b, ok := decodeBase64(*f.Bytes)
		if !ok {
			return a2a.Part{}, invalid(join(path, "file.bytes"), "bytes is not valid base64")
		}
		return a2a.Part{Content: a2a.Raw(b), MediaType: f.MimeType, Filename: f.Name, Metadata: p.Metadata}, nil
	case KindData:
		raw := bytes.TrimSpace(p.Data)
		if len(raw) == 0 || raw[0] != '{' {
			return a2a.Part{}, invalid(join(path, "data"), "data must be an object")
		}
		if p.Metadata[DataPartCompatKey] != true {
			return a2a.Part{Content: a2a.Data(raw), Metadata: p.Metadata}, nil
		}
		var w map[string]json.RawMessage
		if err := json.Unmarshal(raw, &w); err != nil || len(w) != 1 || w["value"] == nil {
			return a2a.Part{}, invalid(join(path, "data"), "a data part marked "+DataPartCompatKey+" must be {\"value\": ...}")
		}
		md := maps.Clone(p.Metadata)
		delete(md, DataPartCompatKey)
		if len(md) == 0 {
			md = nil
		}
		return a2a.Part{Content: a2a.Data(w["value"]), Metadata: md}, nil
	case "":
		return a2a.Part{}, invalid(join(path, "kind"), "a part needs a kind")
	}
	return a2a.Part{}, invalid(join(path, "kind"), "unknown part kind "+p.Kind+" (want text, file or data)")
}

func decodeBase64(s string) ([]byte, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, true
		}
	}
	return nil, false
}

func fromV1Parts(ps []a2a.Part, path string) ([]Part, error) {
	out := make([]Part, len(ps)) // parts is required: [] rather than null
	for i := range ps {
		var err error
		if out[i], err = fromV1Part(&ps[i], index(path, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func toV1Parts(ps []Part, path string) ([]a2a.Part, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	out := make([]a2a.Part, len(ps))
	for i := range ps {
		var err error
		if out[i], err = toV1Part(&ps[i], index(path, i)); err != nil {
			return nil, err
		}
	}
	return out, nil
}
