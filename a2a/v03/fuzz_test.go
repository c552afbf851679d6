package v03_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/a2a/v03"
)

// seedFiles adds the JSON of every sample under testdata/dir (the result
// of a response, the whole file otherwise) to f.
func seedFiles(f *testing.F, dir string, result bool) {
	files, err := filepath.Glob(filepath.Join("testdata", dir))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if result {
			var e envelope
			if json.Unmarshal(b, &e) != nil || e.Result == nil {
				continue
			}
			b = e.Result
		}
		f.Add(b)
	}
}

// FuzzEvent decodes arbitrary JSON as a v0.3 event (by its kind), message
// and task. Translation never panics, and whatever translates to v1.0
// translates back to v0.3 and, through its JSON, to the same v1.0 value.
func FuzzEvent(f *testing.F) {
	seedFiles(f, "responses/*/*.json", true)
	seedFiles(f, "webhooks/*.json", false)
	for _, c := range resultCases() {
		if r, ok := c.res.(*a2a.StreamResponse); ok {
			ev, err := v03.FromV1Event(r.Event)
			if err != nil {
				f.Fatal(err)
			}
			b, err := json.Marshal(ev)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(`{"kind":"data","data":{"value":[1]},"metadata":{"data_part_compat":true}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		decoders := []func([]byte) (v03.Event, error){
			v03.UnmarshalEvent,
			func(b []byte) (v03.Event, error) {
				var m v03.Message
				return &m, json.Unmarshal(b, &m)
			},
			func(b []byte) (v03.Event, error) {
				var t v03.Task
				return &t, json.Unmarshal(b, &t)
			},
		}
		for _, decode := range decoders {
			ev, err := decode(data)
			if err != nil {
				continue
			}
			v1, err := v03.ToV1Event(ev)
			if err != nil {
				checkRefusal(t, err)
				continue
			}
			first := canonical(t, &a2a.StreamResponse{Event: v1})
			back, err := v03.FromV1Event(v1)
			if err != nil {
				t.Fatalf("%s translates to v1.0 %s but not back: %v", data, first, err)
			}
			raw, err := json.Marshal(back)
			if err != nil {
				t.Fatalf("the v0.3 form of %s does not encode: %v", first, err)
			}
			ev2, err := v03.UnmarshalEvent(raw)
			if err != nil {
				t.Fatalf("the v0.3 JSON %s does not decode: %v", raw, err)
			}
			v1b, err := v03.ToV1Event(ev2)
			if err != nil {
				t.Fatalf("the v0.3 JSON %s of %s does not translate: %v", raw, first, err)
			}
			if second := canonical(t, &a2a.StreamResponse{Event: v1b}); second != first {
				t.Fatalf("v1.0 → v0.3 → v1.0 changed the event:\n got %s\nwant %s\nv0.3 %s\ninput %s", second, first, raw, data)
			}
		}
	})
}

// FuzzRequest does for the params of every v0.3 method what FuzzEvent
// does for events.
func FuzzRequest(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "requests", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var e envelope
		if err := json.Unmarshal(b, &e); err != nil {
			f.Fatal(err)
		}
		f.Add(e.Method, []byte(e.Params))
	}
	f.Fuzz(func(t *testing.T, method string, params []byte) {
		op, req, err := v03.ToV1Request(method, params)
		if err != nil {
			return
		}
		first := canonical(t, req)
		m, p, err := v03.FromV1Request(op, req)
		if err != nil {
			t.Fatalf("%s %s translates to v1.0 %s but not back: %v", method, params, first, err)
		}
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("the v0.3 params of %s do not encode: %v", first, err)
		}
		if p == nil {
			raw = nil
		}
		op2, req2, err := v03.ToV1Request(m, raw)
		if err != nil || op2 != op {
			t.Fatalf("the v0.3 params %s %s of %s do not translate: %s %v", m, raw, first, op2, err)
		}
		if second := canonical(t, req2); second != first {
			t.Fatalf("v1.0 → v0.3 → v1.0 changed the request:\n got %s\nwant %s\nv0.3 %s", second, first, raw)
		}
	})
}

// FuzzCard decodes arbitrary JSON as a v0.3 card. When it translates to
// v1.0 and that to a dual card, the dual card's JSON translates to the
// same v1.0 card; a v1.0 card that has no dual card is refused with an
// *a2a.Error.
func FuzzCard(f *testing.F) {
	seedFiles(f, "cards/*.json", false)
	for _, s := range []string{
		`{"url":"https://a","preferredTransport":"GRPC","additionalInterfaces":[{"url":"https://a","transport":"GRPC"},{"url":"https://b","transport":"JSONRPC"}]}`,
		`{"url":"https://a","securitySchemes":{"k":{"type":"apiKey","in":"header","name":"X"},"o":{"type":"oauth2","flows":{"password":{"tokenUrl":"t","scopes":{}}}}}}`,
		`{"supportedInterfaces":[{"url":"https://a","protocolBinding":"JSONRPC","tenant":"t"}],"securitySchemes":{"m":{"type":"mutualTLS","mtlsSecurityScheme":{}}}}`,
		`{"url":"https://a","security":[{"k":[]}],"skills":[{"id":"s","security":[{"k":["a"]}]}],"supportsAuthenticatedExtendedCard":true}`,
	} {
		f.Add([]byte(s))
	}
	if dual, err := v03.FromV1AgentCard(card()); err == nil {
		b, _ := json.Marshal(dual)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c v03.AgentCard
		if json.Unmarshal(data, &c) != nil {
			return
		}
		v1, err := v03.ToV1AgentCard(&c)
		if err != nil {
			checkRefusal(t, err)
			return
		}
		b, err := json.Marshal(v1)
		if err != nil {
			return // a dual card's v1.0 members as received, which v1.0 refuses to write
		}
		first := canonicalJSON(t, b)
		dual, err := v03.FromV1AgentCard(v1)
		if err != nil {
			checkRefusal(t, err)
			return
		}
		raw, err := json.Marshal(dual)
		if err != nil {
			t.Fatalf("the dual card of %s does not encode: %v", first, err)
		}
		var c2 v03.AgentCard
		if err := json.Unmarshal(raw, &c2); err != nil {
			t.Fatalf("the dual card %s does not decode: %v", raw, err)
		}
		v1b, err := v03.ToV1AgentCard(&c2)
		if err != nil {
			t.Fatalf("the dual card %s does not translate: %v", raw, err)
		}
		if second := canonical(t, v1b); second != first {
			t.Fatalf("v1.0 → dual → v1.0 changed the card:\n got %s\nwant %s\ndual %s", second, first, raw)
		}
	})
}

// checkRefusal fails unless err is an *a2a.Error that names a field.
func checkRefusal(t *testing.T, err error) {
	t.Helper()
	var e *a2a.Error
	if !errors.As(err, &e) || (e.Code != a2a.CodeInvalidParams && e.Code != a2a.CodeUnsupportedOperation) {
		t.Fatalf("refusal %v (%T) is not InvalidParams or UnsupportedOperation", err, err)
	}
}

// FuzzError decodes arbitrary JSON as a v0.3 error object: the v1.0 error
// it stands for translates back to v0.3 and, through its JSON, to the same
// v1.0 error. Compared are what the v1.0 bindings carry too: the kind
// (Unknown and Unavailable are Internal on either JSON-RPC), the text, the
// metadata, the field violations, the retry delay to the millisecond and
// the peer's details.
func FuzzError(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "errors", "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		var e struct {
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(b, &e); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(e.Error))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var e v03.Error
		if json.Unmarshal(data, &e) != nil {
			return
		}
		v1 := v03.ToV1Error(&e)
		raw, err := json.Marshal(v03.FromV1Error(v1))
		if err != nil {
			t.Fatalf("the v0.3 form of %v does not encode: %v", v1, err)
		}
		var e2 v03.Error
		if err := json.Unmarshal(raw, &e2); err != nil {
			t.Fatalf("%s does not decode: %v", raw, err)
		}
		if got, want := canonical(t, errorShape(v03.ToV1Error(&e2))), canonical(t, errorShape(v1)); got != want {
			t.Fatalf("v1.0 → v0.3 → v1.0 changed the error:\n got %s\nwant %s\nv0.3 %s\ninput %s", got, want, raw, data)
		}
	})
}

func errorShape(e *a2a.Error) map[string]any {
	code := e.Code
	if code == a2a.CodeUnknown || code == a2a.CodeUnavailable {
		code = a2a.CodeInternal
	}
	m := map[string]any{"code": code.String(), "text": e.Text(), "retry": e.RetryAfter.Round(time.Millisecond).String()}
	if len(e.Metadata) > 0 {
		m["metadata"] = e.Metadata
	}
	if len(e.Violations) > 0 {
		m["violations"] = e.Violations
	}
	if len(e.Details) > 0 {
		m["details"] = e.Details
	}
	return m
}
