package a2a_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
)

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	return string(b)
}

// keys returns the sorted member names of a JSON object.
func keys(t *testing.T, js string) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatalf("not an object: %v\n%s", err, js)
	}
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// ---------------------------------------------------------------------------
// Enums

func TestTaskStateNamesAndNumbers(t *testing.T) {
	tests := []struct {
		state       a2a.TaskState
		name        string
		number      int
		terminal    bool
		interrupted bool
	}{
		{a2a.TaskStateUnspecified, "TASK_STATE_UNSPECIFIED", 0, false, false},
		{a2a.TaskStateSubmitted, "TASK_STATE_SUBMITTED", 1, false, false},
		{a2a.TaskStateWorking, "TASK_STATE_WORKING", 2, false, false},
		{a2a.TaskStateCompleted, "TASK_STATE_COMPLETED", 3, true, false},
		{a2a.TaskStateFailed, "TASK_STATE_FAILED", 4, true, false},
		{a2a.TaskStateCanceled, "TASK_STATE_CANCELED", 5, true, false},
		{a2a.TaskStateInputRequired, "TASK_STATE_INPUT_REQUIRED", 6, false, true},
		{a2a.TaskStateRejected, "TASK_STATE_REJECTED", 7, true, false},
		{a2a.TaskStateAuthRequired, "TASK_STATE_AUTH_REQUIRED", 8, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if int(tt.state) != tt.number {
				t.Errorf("number %d, want %d (proto)", tt.state, tt.number)
			}
			if tt.state.String() != tt.name {
				t.Errorf("String() = %q", tt.state.String())
			}
			if got := mustMarshal(t, tt.state); got != `"`+tt.name+`"` {
				t.Errorf("marshal = %s", got)
			}
			for _, in := range []string{`"` + tt.name + `"`, mustMarshal(t, tt.number)} {
				var s a2a.TaskState
				if err := json.Unmarshal([]byte(in), &s); err != nil || s != tt.state {
					t.Errorf("unmarshal %s = %v, %v", in, s, err)
				}
			}
			if p, err := a2a.ParseTaskState(tt.name); err != nil || p != tt.state {
				t.Errorf("ParseTaskState(%q) = %v, %v", tt.name, p, err)
			}
			if tt.state.Terminal() != tt.terminal || tt.state.Interrupted() != tt.interrupted {
				t.Errorf("Terminal %v Interrupted %v", tt.state.Terminal(), tt.state.Interrupted())
			}
			if tt.state.Valid() != (tt.number != 0) {
				t.Errorf("Valid() = %v", tt.state.Valid())
			}
		})
	}
}

func TestRoleNamesAndNumbers(t *testing.T) {
	tests := []struct {
		role   a2a.Role
		name   string
		number int
	}{
		{a2a.RoleUnspecified, "ROLE_UNSPECIFIED", 0},
		{a2a.RoleUser, "ROLE_USER", 1},
		{a2a.RoleAgent, "ROLE_AGENT", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if int(tt.role) != tt.number || tt.role.String() != tt.name {
				t.Errorf("role %d %q", tt.role, tt.role.String())
			}
			if got := mustMarshal(t, tt.role); got != `"`+tt.name+`"` {
				t.Errorf("marshal = %s", got)
			}
			for _, in := range []string{`"` + tt.name + `"`, mustMarshal(t, tt.number)} {
				var r a2a.Role
				if err := json.Unmarshal([]byte(in), &r); err != nil || r != tt.role {
					t.Errorf("unmarshal %s = %v, %v", in, r, err)
				}
			}
		})
	}
}

func TestEnumRejectsUnknownNames(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"v0.3 spelling", `"completed"`},
		{"lower case", `"task_state_completed"`},
		{"unknown name", `"TASK_STATE_DONE"`},
		{"role name for a state", `"ROLE_USER"`},
		{"empty string", `""`},
		{"number in a string", `"3"`},
		{"fraction", `3.5`},
		{"boolean", `true`},
		{"object", `{}`},
		{"array", `[]`},
		{"out of int32", `4294967296`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s a2a.TaskState
			if err := json.Unmarshal([]byte(tt.in), &s); err == nil {
				t.Errorf("TaskState accepted %s as %v", tt.in, s)
			}
			var task a2a.Task
			if err := json.Unmarshal([]byte(`{"id":"t","status":{"state":`+tt.in+`}}`), &task); err == nil {
				t.Errorf("Task accepted state %s", tt.in)
			}
		})
	}
	t.Run("role", func(t *testing.T) {
		for _, in := range []string{`"user"`, `"agent"`, `"ROLE_SYSTEM"`, `"1"`} {
			var r a2a.Role
			if err := json.Unmarshal([]byte(in), &r); err == nil {
				t.Errorf("Role accepted %s as %v", in, r)
			}
		}
	})
}

// Proto3 enums are open: ProtoJSON reads any int32 number and writes a value
// without a name as its number. Valid tells the known states apart.
func TestEnumUnknownNumbers(t *testing.T) {
	tests := []struct {
		name string
		v    a2a.TaskState
		json string
	}{
		{"future state", 42, `42`},
		{"negative", -1, `-1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustMarshal(t, tt.v); got != tt.json {
				t.Errorf("marshal = %s, want %s", got, tt.json)
			}
			var s a2a.TaskState
			if err := json.Unmarshal([]byte(tt.json), &s); err != nil || s != tt.v {
				t.Errorf("unmarshal = %v, %v", s, err)
			}
			if s.Valid() {
				t.Errorf("%v is Valid", s)
			}
		})
	}
	if got := mustMarshal(t, a2a.Role(7)); got != `7` {
		t.Errorf("Role(7) marshals as %s", got)
	}
}

func TestEnumMarshalSharedNames(t *testing.T) {
	// MarshalJSON returns shared literals: appending to one must not
	// change what the next call returns.
	b, _ := a2a.TaskStateWorking.MarshalJSON()
	_ = append(b, 'x')
	r, _ := a2a.RoleUser.MarshalJSON()
	_ = append(r, 'x')
	if b2, _ := a2a.TaskStateWorking.MarshalJSON(); string(b2) != `"TASK_STATE_WORKING"` {
		t.Errorf("TaskState literal changed: %s", b2)
	}
	if r2, _ := a2a.RoleUser.MarshalJSON(); string(r2) != `"ROLE_USER"` {
		t.Errorf("Role literal changed: %s", r2)
	}
	// An escaped name is still the name.
	var s a2a.TaskState
	if err := json.Unmarshal([]byte(`"TASK\u005fSTATE_FAILED"`), &s); err != nil || s != a2a.TaskStateFailed {
		t.Errorf("escaped name = %v, %v", s, err)
	}
}

func TestEnumNullIsUnset(t *testing.T) {
	var m a2a.Message
	if err := json.Unmarshal([]byte(`{"messageId":"m","role":null,"parts":[{"text":"x"}]}`), &m); err != nil || m.Role != a2a.RoleUnspecified {
		t.Errorf("role null = %v, %v", m.Role, err)
	}
}

// ---------------------------------------------------------------------------
// Part

func TestPartOneof(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		kind    string // "" means the part must be rejected
		content a2a.PartContent
	}{
		{"text", `{"text":"hi"}`, "text", a2a.Text("hi")},
		{"empty text is set", `{"text":""}`, "text", a2a.Text("")},
		{"raw", `{"raw":"aGk="}`, "raw", a2a.Raw("hi")},
		{"url", `{"url":"https://example.com/a.pdf"}`, "url", a2a.URL("https://example.com/a.pdf")},
		{"data object", `{"data":{"a":1}}`, "data", a2a.Data(`{"a":1}`)},
		{"data array", `{"data":[1,"x"]}`, "data", a2a.Data(`[1,"x"]`)},
		{"data string", `{"data":"s"}`, "data", a2a.Data(`"s"`)},
		{"data number", `{"data":1.5}`, "data", a2a.Data(`1.5`)},
		{"data false", `{"data":false}`, "data", a2a.Data(`false`)},
		// google.protobuf.Value: null is a value (null_value), so the
		// member is set, as in ProtoJSON.
		{"data null is a value", `{"data":null}`, "data", a2a.Data(`null`)},
		// Other members: null means unset (REQUIREMENTS D6).
		{"text null is unset", `{"text":null,"url":"u"}`, "url", a2a.URL("u")},
		{"no member", `{}`, "", nil},
		{"only siblings", `{"filename":"a.txt","mediaType":"text/plain","metadata":{"k":1}}`, "", nil},
		{"text null only", `{"text":null}`, "", nil},
		{"text and url", `{"text":"a","url":"u"}`, "", nil},
		{"text and raw", `{"text":"a","raw":"aGk="}`, "", nil},
		{"raw and data", `{"raw":"aGk=","data":{}}`, "", nil},
		{"text and data null", `{"text":"a","data":null}`, "", nil},
		{"v0.3 kind", `{"kind":"text","text":"a","file":{}}`, "text", a2a.Text("a")},
		{"v0.3 file only", `{"kind":"file","file":{"uri":"u"}}`, "", nil},
		{"bad raw", `{"raw":"not base64!"}`, "", nil},
		{"text not a string", `{"text":5}`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p a2a.Part
			err := json.Unmarshal([]byte(tt.in), &p)
			if tt.kind == "" {
				if err == nil {
					t.Fatalf("accepted %s as %#v", tt.in, p)
				}
				return
			}
			if err != nil {
				t.Fatalf("rejected %s: %v", tt.in, err)
			}
			if p.Kind() != tt.kind || !reflect.DeepEqual(p.Content, tt.content) {
				t.Errorf("got %s %#v, want %s %#v", p.Kind(), p.Content, tt.kind, tt.content)
			}
			// The part re-encodes to one member of the oneof.
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(mustMarshal(t, p)), &m); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, k := range []string{"text", "raw", "url", "data"} {
				if _, ok := m[k]; ok {
					n++
				}
			}
			if n != 1 || m[tt.kind] == nil {
				t.Errorf("re-encoded %v", m)
			}
		})
	}
}

func TestPartMarshalNeedsContent(t *testing.T) {
	for _, p := range []a2a.Part{{}, {Filename: "a.txt", MediaType: "text/plain"}} {
		if b, err := json.Marshal(p); err == nil {
			t.Errorf("marshaled a part without content: %s", b)
		}
	}
	if b, err := json.Marshal(a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{{}}}); err == nil {
		t.Errorf("marshaled a message with an empty part: %s", b)
	}
}

func TestPartRawBase64(t *testing.T) {
	want := []byte{0xfb, 0xff, 0xfe, 0x01, 0x02} // uses + and / (or - and _)
	const std = "+//+AQI="
	tests := []struct {
		name string
		in   string
	}{
		{"std padded", "+//+AQI="},
		{"std unpadded", "+//+AQI"},
		{"url-safe padded", "-__-AQI="},
		{"url-safe unpadded", "-__-AQI"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p a2a.Part
			if err := json.Unmarshal([]byte(`{"raw":"`+tt.in+`"}`), &p); err != nil {
				t.Fatal(err)
			}
			if got, _ := p.Content.(a2a.Raw); !reflect.DeepEqual([]byte(got), want) {
				t.Errorf("decoded % x", got)
			}
			if got := mustMarshal(t, p); got != `{"raw":"`+std+`"}` {
				t.Errorf("re-encoded %s, want standard padded %s", got, std)
			}
		})
	}
	for _, in := range []string{"+//+AQI==", "a", "!!!!", "+/_-AQI="} {
		var p a2a.Part
		if err := json.Unmarshal([]byte(`{"raw":"`+in+`"}`), &p); err == nil {
			t.Errorf("accepted raw %q as % x", in, p.Content)
		}
	}
	t.Run("empty", func(t *testing.T) {
		if got := mustMarshal(t, a2a.Part{Content: a2a.Raw(nil)}); got != `{"raw":""}` {
			t.Errorf("empty raw = %s", got)
		}
	})
	t.Run("padding lengths", func(t *testing.T) {
		for n := range 7 {
			b := []byte("abcdef")[:n]
			out := mustMarshal(t, a2a.Part{Content: a2a.Raw(b)})
			var p a2a.Part
			if err := json.Unmarshal([]byte(out), &p); err != nil || string(p.Content.(a2a.Raw)) != string(b) {
				t.Errorf("%d bytes: %s -> %v", n, out, err)
			}
			if (len(out)-len(`{"raw":""}`))%4 != 0 {
				t.Errorf("%d bytes: %s is not padded", n, out)
			}
		}
	})
}

func TestPartDataNull(t *testing.T) {
	// A data part whose Value is null encodes as "data":null, both from the
	// wire and from an empty Data built in Go.
	for _, p := range []a2a.Part{
		{Content: a2a.Data(nil)},
		{Content: a2a.Data("null")},
	} {
		if got := mustMarshal(t, p); got != `{"data":null}` {
			t.Errorf("%#v -> %s", p.Content, got)
		}
	}
	p, err := a2a.DataPart(nil)
	if err != nil || p.Kind() != "data" || p.MediaType != "application/json" {
		t.Fatalf("DataPart(nil) = %#v, %v", p, err)
	}
	assertJSONEqual(t, `{"data":null,"mediaType":"application/json"}`, mustMarshal(t, p))
	var v any = "not nil"
	if err := p.Content.(a2a.Data).Decode(&v); err != nil || v != nil {
		t.Errorf("Decode(null) = %v, %v", v, err)
	}
}

func TestPartSiblings(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"text", `{"text":"hello","filename":"a.txt","mediaType":"text/plain","metadata":{"k":"v","n":1}}`},
		{"raw", `{"raw":"aGk=","filename":"a.bin","mediaType":"application/octet-stream","metadata":{"k":[1,2]}}`},
		{"url", `{"url":"https://example.com/a.png","filename":"a.png","mediaType":"image/png","metadata":{}}`},
		{"data", `{"data":{"x":null},"filename":"a.json","mediaType":"application/json","metadata":{"k":{"nested":true}}}`},
		{"text with html characters", `{"text":"<a href=\"x\">&amp;</a> \u2028","mediaType":"text/html"}`},
		{"text with only metadata", `{"text":"x","metadata":{"a":"b"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := assertRoundTrip[a2a.Part](t, tt.in, "")
			var w struct {
				Filename  string         `json:"filename"`
				MediaType string         `json:"mediaType"`
				Metadata  map[string]any `json:"metadata"`
			}
			_ = json.Unmarshal([]byte(tt.in), &w)
			if p.Filename != w.Filename || p.MediaType != w.MediaType || !reflect.DeepEqual(p.Metadata, w.Metadata) {
				t.Errorf("siblings %q %q %v", p.Filename, p.MediaType, p.Metadata)
			}
		})
	}
	t.Run("effective media type", func(t *testing.T) {
		cases := []struct {
			p    a2a.Part
			want string
		}{
			{a2a.TextPart("x"), "text/plain"},
			{a2a.Part{Content: a2a.Data("{}")}, "application/json"},
			{a2a.Part{Content: a2a.Raw("x")}, ""},
			{a2a.Part{Content: a2a.URL("u")}, ""},
			{a2a.Part{Content: a2a.Text("x"), MediaType: "text/markdown"}, "text/markdown"},
		}
		for _, c := range cases {
			if got := c.p.EffectiveMediaType(); got != c.want {
				t.Errorf("%#v: %q, want %q", c.p, got, c.want)
			}
		}
	})
}

// textEscapeCases are strings whose escaping the hand-written text encoder
// must do exactly as encoding/json does.
var textEscapeCases = []string{
	"", "plain", "line\nbreak\r\n", "tab\there", "quote \" and \\ backslash",
	"<script>&amp;</script>", "\x00\x01\x1f\x7f", "\b\f", "é ü 日本 🚀",
	"\u2028 and \u2029", "bad \xff utf-8 \xc3", "trunc \xe2\x82", "\ufffd",
}

func TestTextPartEscapingMatchesEncodingJSON(t *testing.T) {
	for _, s := range textEscapeCases {
		checkTextEscaping(t, s)
	}
}

func FuzzTextPartEscaping(f *testing.F) {
	for _, s := range textEscapeCases {
		f.Add(s)
	}
	f.Fuzz(checkTextEscaping)
}

func checkTextEscaping(t *testing.T, s string) {
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a2a.TextPart(s).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if w := `{"text":` + string(want) + `}`; string(got) != w {
		t.Errorf("%q: got %s, want %s", s, got, w)
	}
	var p a2a.Part
	if err := json.Unmarshal(got, &p); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	var back string
	_ = json.Unmarshal(want, &back)
	if p.Content != a2a.Text(back) {
		t.Errorf("%q decoded to %q, want %q", s, p.Content, back)
	}
}

// ---------------------------------------------------------------------------
// Timestamp

func TestTimestampMarshal(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{"UTC whole second", time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC), `"2026-10-06T09:00:00.000Z"`},
		{"offset converted to UTC", time.Date(2026, 10, 6, 11, 0, 0, 0, time.FixedZone("CEST", 2*3600)), `"2026-10-06T09:00:00.000Z"`},
		{"negative offset crosses midnight", time.Date(2026, 10, 5, 23, 30, 0, 0, time.FixedZone("", -2*3600)), `"2026-10-06T01:30:00.000Z"`},
		{"nanoseconds truncated to milliseconds", time.Date(2026, 10, 6, 9, 0, 0, 123_999_999, time.UTC), `"2026-10-06T09:00:00.123Z"`},
		{"first year", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), `"0001-01-01T00:00:00.000Z"`},
		{"last year", time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC), `"9999-12-31T23:59:59.999Z"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustMarshal(t, a2a.Timestamp{Time: tt.in}); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	for _, y := range []int{0, 10000} {
		if b, err := json.Marshal(a2a.Timestamp{Time: time.Date(y, 6, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
			t.Errorf("year %d marshaled as %s", y, b)
		}
	}
	if got := a2a.TimestampOf(time.Date(2026, 10, 6, 11, 0, 0, 123_456_789, time.FixedZone("", 7200))); got.Location() != time.UTC || got.Nanosecond() != 123_000_000 {
		t.Errorf("TimestampOf = %v", got.Time)
	}
}

func TestTimestampUnmarshal(t *testing.T) {
	ref := time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		in   string
		want time.Time
	}{
		{"Z with milliseconds", `"2026-10-06T09:00:00.000Z"`, ref},
		{"Z without fraction", `"2026-10-06T09:00:00Z"`, ref},
		{"nanoseconds", `"2026-10-06T09:00:00.123456789Z"`, ref.Add(123456789)},
		{"positive offset", `"2026-10-06T11:00:00+02:00"`, ref},
		{"negative offset", `"2026-10-06T04:30:00.5-04:30"`, ref.Add(500 * time.Millisecond)},
		{"zero offset", `"2026-10-06T09:00:00+00:00"`, ref},
		{"escaped", `"2026-10-06T09:00:00\u002e000Z"`, ref},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ts a2a.Timestamp
			if err := json.Unmarshal([]byte(tt.in), &ts); err != nil {
				t.Fatal(err)
			}
			if !ts.Equal(tt.want) || ts.Location() != time.UTC {
				t.Errorf("got %v (%v), want %v in UTC", ts.Time, ts.Location(), tt.want)
			}
		})
	}
	bad := []struct{ name, in string }{
		{"words", `"yesterday"`},
		{"date only", `"2026-10-06"`},
		{"space separator", `"2026-10-06 09:00:00Z"`},
		{"no zone", `"2026-10-06T09:00:00"`},
		{"month 13", `"2026-13-06T09:00:00Z"`},
		{"hour 25", `"2026-10-06T25:00:00Z"`},
		{"ten fractional digits", `"2026-10-06T09:00:00.1234567891Z"`},
		{"year 0", `"0000-12-31T00:00:00Z"`},
		{"before year 1 after offset", `"0001-01-01T00:30:00+01:00"`},
		{"empty", `""`},
		{"number", `1728205200`},
		{"object", `{"seconds":1}`},
	}
	for _, tt := range bad {
		t.Run("rejects "+tt.name, func(t *testing.T) {
			var ts a2a.Timestamp
			if err := json.Unmarshal([]byte(tt.in), &ts); err == nil {
				t.Errorf("accepted %s as %v", tt.in, ts.Time)
			}
		})
	}
	t.Run("null is unset", func(t *testing.T) {
		ts := a2a.Timestamp{Time: ref}
		if err := json.Unmarshal([]byte(`null`), &ts); err != nil || !ts.IsZero() {
			t.Errorf("null -> %v, %v", ts, err)
		}
	})
	t.Run("unset is omitted", func(t *testing.T) {
		got := mustMarshal(t, a2a.TaskStatus{State: a2a.TaskStateWorking})
		if got != `{"state":"TASK_STATE_WORKING"}` {
			t.Errorf("got %s", got)
		}
		got = mustMarshal(t, a2a.ListTasksRequest{})
		if strings.Contains(got, "statusTimestampAfter") {
			t.Errorf("got %s", got)
		}
	})
}

// ---------------------------------------------------------------------------
// Presence

func TestOptionalInt32Presence(t *testing.T) {
	type optCase struct {
		name string
		v    *int32
		json string
	}
	cases := []optCase{
		{"unset", nil, `{"id":"t"}`},
		{"zero", a2a.Ptr[int32](0), `{"id":"t","historyLength":0}`},
		{"three", a2a.Ptr[int32](3), `{"id":"t","historyLength":3}`},
	}
	for _, c := range cases {
		t.Run("GetTaskRequest "+c.name, func(t *testing.T) {
			if got := mustMarshal(t, a2a.GetTaskRequest{ID: "t", HistoryLength: c.v}); got != c.json {
				t.Errorf("marshal = %s, want %s", got, c.json)
			}
			var r a2a.GetTaskRequest
			if err := json.Unmarshal([]byte(c.json), &r); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.HistoryLength, c.v) {
				t.Errorf("unmarshal historyLength = %v, want %v", r.HistoryLength, c.v)
			}
		})
	}
	t.Run("SendMessageConfiguration", func(t *testing.T) {
		for _, c := range []struct {
			v    *int32
			json string
		}{{nil, `{}`}, {a2a.Ptr[int32](0), `{"historyLength":0}`}, {a2a.Ptr[int32](10), `{"historyLength":10}`}} {
			if got := mustMarshal(t, a2a.SendMessageConfiguration{HistoryLength: c.v}); got != c.json {
				t.Errorf("marshal = %s, want %s", got, c.json)
			}
			var cfg a2a.SendMessageConfiguration
			if err := json.Unmarshal([]byte(c.json), &cfg); err != nil || !reflect.DeepEqual(cfg.HistoryLength, c.v) {
				t.Errorf("unmarshal %s = %v, %v", c.json, cfg.HistoryLength, err)
			}
		}
	})
	t.Run("ListTasksRequest", func(t *testing.T) {
		r := a2a.ListTasksRequest{PageSize: a2a.Ptr[int32](0), HistoryLength: a2a.Ptr[int32](0)}
		assertJSONEqual(t, `{"pageSize":0,"historyLength":0}`, mustMarshal(t, r))
		var back a2a.ListTasksRequest
		if err := json.Unmarshal([]byte(`{"pageSize":0}`), &back); err != nil || back.PageSize == nil || *back.PageSize != 0 || back.HistoryLength != nil {
			t.Errorf("unmarshal = %+v, %v", back, err)
		}
	})
}

func TestIncludeArtifactsPresence(t *testing.T) {
	cases := []struct {
		name string
		v    *bool
		json string
	}{
		{"unset", nil, `{}`},
		{"false", a2a.Ptr(false), `{"includeArtifacts":false}`},
		{"true", a2a.Ptr(true), `{"includeArtifacts":true}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := mustMarshal(t, a2a.ListTasksRequest{IncludeArtifacts: c.v}); got != c.json {
				t.Errorf("marshal = %s, want %s", got, c.json)
			}
			var r a2a.ListTasksRequest
			if err := json.Unmarshal([]byte(c.json), &r); err != nil || !reflect.DeepEqual(r.IncludeArtifacts, c.v) {
				t.Errorf("unmarshal = %v, %v", r.IncludeArtifacts, err)
			}
		})
	}
}

func TestListTasksRequestStatusFilter(t *testing.T) {
	if got := mustMarshal(t, a2a.ListTasksRequest{}); got != `{}` {
		t.Errorf("unset status written: %s", got)
	}
	if got := mustMarshal(t, a2a.ListTasksRequest{Status: a2a.TaskStateCanceled}); got != `{"status":"TASK_STATE_CANCELED"}` {
		t.Errorf("got %s", got)
	}
}

func TestListTasksResponseAlwaysWritesEveryMember(t *testing.T) {
	cases := []struct {
		name string
		r    a2a.ListTasksResponse
		want string
	}{
		{"zero", a2a.ListTasksResponse{}, `{"tasks":[],"nextPageToken":"","pageSize":0,"totalSize":0}`},
		{"empty non-nil", a2a.ListTasksResponse{Tasks: []a2a.Task{}}, `{"tasks":[],"nextPageToken":"","pageSize":0,"totalSize":0}`},
		{"one page", a2a.ListTasksResponse{
			Tasks:         []a2a.Task{{ID: "t1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}},
			NextPageToken: "next", PageSize: 1, TotalSize: 3,
		}, `{"tasks":[{"id":"t1","status":{"state":"TASK_STATE_WORKING"}}],"nextPageToken":"next","pageSize":1,"totalSize":3}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assertJSONEqual(t, c.want, mustMarshal(t, c.r))
			assertJSONEqual(t, c.want, mustMarshal(t, &c.r))
		})
	}
}

func TestTaskArtifactsPresence(t *testing.T) {
	base := a2a.Task{ID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
	withEmpty := base
	withEmpty.Artifacts = []a2a.Artifact{}
	cases := []struct {
		name string
		task a2a.Task
		want string
	}{
		{"nil is omitted (not included)", base, `{"id":"t","status":{"state":"TASK_STATE_COMPLETED"}}`},
		{"empty is written (included, none yet)", withEmpty, `{"id":"t","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mustMarshal(t, c.task)
			assertJSONEqual(t, c.want, got)
			var back a2a.Task
			if err := json.Unmarshal([]byte(got), &back); err != nil {
				t.Fatal(err)
			}
			if (back.Artifacts == nil) != (c.task.Artifacts == nil) {
				t.Errorf("artifacts nil-ness lost: %#v", back.Artifacts)
			}
		})
	}
}

func TestRequiredRepeatedNeverNull(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"message without parts", a2a.Message{MessageID: "m", Role: a2a.RoleAgent}, `{"messageId":"m","role":"ROLE_AGENT"}`},
		{"message with empty parts", a2a.Message{MessageID: "m", Role: a2a.RoleAgent, Parts: []a2a.Part{}}, `{"messageId":"m","role":"ROLE_AGENT","parts":[]}`},
		{"artifact without parts", a2a.Artifact{ArtifactID: "a"}, `{"artifactId":"a"}`},
		{"request without message", a2a.SendMessageRequest{}, `{}`},
		{"skill without tags", a2a.AgentSkill{ID: "s", Name: "n", Description: "d"}, `{"id":"s","name":"n","description":"d","tags":[]}`},
		{"client credentials without scopes", a2a.ClientCredentialsOAuthFlow{TokenURL: "https://t"}, `{"tokenUrl":"https://t","scopes":{}}`},
		{"authorization code without scopes", a2a.AuthorizationCodeOAuthFlow{AuthorizationURL: "https://a", TokenURL: "https://t"}, `{"authorizationUrl":"https://a","tokenUrl":"https://t","scopes":{}}`},
		{"device code without scopes", a2a.DeviceCodeOAuthFlow{DeviceAuthorizationURL: "https://d", TokenURL: "https://t"}, `{"deviceAuthorizationUrl":"https://d","tokenUrl":"https://t","scopes":{}}`},
		{"implicit without scopes (optional)", a2a.ImplicitOAuthFlow{}, `{}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mustMarshal(t, c.v)
			if strings.Contains(got, "null") {
				t.Errorf("null in %s", got)
			}
			assertJSONEqual(t, c.want, got)
		})
	}
}

// google.protobuf.Struct members are messages: an empty object is set and
// written back, a nil map is unset and omitted.
func TestStructPresence(t *testing.T) {
	cases := []struct {
		name string
		in   string
		dec  func(string) (any, error)
	}{
		{"task metadata", `{"id":"t","status":{"state":"TASK_STATE_WORKING"},"metadata":{}}`, decodeAs[a2a.Task]},
		{"message metadata", `{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{}}`, decodeAs[a2a.Message]},
		{"part metadata", `{"text":"x","metadata":{}}`, decodeAs[a2a.Part]},
		{"artifact metadata", `{"artifactId":"a","parts":[{"text":"x"}],"metadata":{}}`, decodeAs[a2a.Artifact]},
		{"status update metadata", `{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"metadata":{}}`, decodeAs[a2a.TaskStatusUpdateEvent]},
		{"send request metadata", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"metadata":{}}`, decodeAs[a2a.SendMessageRequest]},
		{"cancel request metadata", `{"id":"t","metadata":{}}`, decodeAs[a2a.CancelTaskRequest]},
		{"extension params", `{"uri":"urn:x","params":{}}`, decodeAs[a2a.AgentExtension]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := c.dec(c.in)
			if err != nil {
				t.Fatal(err)
			}
			assertJSONEqual(t, c.in, mustMarshal(t, v))
		})
	}
	if got := mustMarshal(t, a2a.Task{ID: "t"}); strings.Contains(got, "metadata") {
		t.Errorf("nil metadata written: %s", got)
	}
}

func decodeAs[T any](s string) (any, error) {
	var v T
	err := json.Unmarshal([]byte(s), &v)
	return v, err
}

// ---------------------------------------------------------------------------
// Agent card

func TestAgentCardPresence(t *testing.T) {
	required := []string{"capabilities", "defaultInputModes", "defaultOutputModes", "description", "name", "skills", "supportedInterfaces", "version"}
	t.Run("zero card writes required members only", func(t *testing.T) {
		got := mustMarshal(t, a2a.AgentCard{})
		if !reflect.DeepEqual(keys(t, got), required) {
			t.Errorf("members %v, want %v", keys(t, got), required)
		}
		assertJSONEqual(t, `{"name":"","description":"","supportedInterfaces":[],"version":"","capabilities":{},
			"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`, got)
	})
	t.Run("optional members set to defaults are written", func(t *testing.T) {
		c := a2a.AgentCard{
			DocumentationURL: a2a.Ptr(""),
			IconURL:          a2a.Ptr(""),
			Capabilities:     a2a.AgentCapabilities{Streaming: a2a.Ptr(false), PushNotifications: a2a.Ptr(false)},
		}
		got := mustMarshal(t, c)
		want := append(slices.Clone(required), "documentationUrl", "iconUrl")
		slices.Sort(want)
		if !reflect.DeepEqual(keys(t, got), want) {
			t.Errorf("members %v, want %v", keys(t, got), want)
		}
		if !strings.Contains(got, `"capabilities":{"streaming":false,"pushNotifications":false}`) {
			t.Errorf("capabilities in %s", got)
		}
	})
	t.Run("§8.4.1 example", func(t *testing.T) {
		// The spec's example after default removal: optional booleans set to
		// false stay, the empty non-required extensions go.
		in := `{"name":"Example Agent","description":"","capabilities":{"streaming":false,"pushNotifications":false,"extensions":[]},"skills":[]}`
		var c a2a.AgentCard
		if err := json.Unmarshal([]byte(in), &c); err != nil {
			t.Fatal(err)
		}
		got := mustMarshal(t, c)
		assertJSONEqual(t, `{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[],
			"supportedInterfaces":[],"version":"","defaultInputModes":[],"defaultOutputModes":[]}`, got)
	})
}

func TestSecuritySchemeOneof(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"api key", `{"apiKeySecurityScheme":{"location":"header","name":"X-Key"}}`, true},
		{"http", `{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}}`, true},
		{"oauth2", `{"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"https://t","scopes":{"a":"b"}}}}}`, true},
		{"openid", `{"openIdConnectSecurityScheme":{"openIdConnectUrl":"https://o"}}`, true},
		{"mtls", `{"mtlsSecurityScheme":{}}`, true},
		{"mtls with description", `{"mtlsSecurityScheme":{"description":"client certs"}}`, true},
		{"none", `{}`, false},
		{"v0.3 shape", `{"type":"http","scheme":"bearer"}`, false},
		{"two", `{"mtlsSecurityScheme":{},"httpAuthSecurityScheme":{"scheme":"Bearer"}}`, false},
		{"null member only", `{"mtlsSecurityScheme":null}`, false},
		{"oauth2 without flow", `{"oauth2SecurityScheme":{"flows":{}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s a2a.SecurityScheme
			err := json.Unmarshal([]byte(tt.in), &s)
			if !tt.ok {
				if err == nil {
					t.Errorf("accepted %s", tt.in)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertJSONEqual(t, tt.in, mustMarshal(t, s))
		})
	}
	t.Run("marshal rejects zero and two members", func(t *testing.T) {
		for _, s := range []a2a.SecurityScheme{{}, {MutualTLS: &a2a.MutualTLSSecurityScheme{}, HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}}} {
			if b, err := json.Marshal(s); err == nil {
				t.Errorf("marshaled %s", b)
			}
		}
		if b, err := json.Marshal(a2a.AgentCard{SecuritySchemes: map[string]a2a.SecurityScheme{"x": {}}}); err == nil {
			t.Errorf("marshaled a card with an empty scheme: %s", b)
		}
	})
}

func TestOAuthFlowsOneof(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"authorization code", `{"authorizationCode":{"authorizationUrl":"https://a","tokenUrl":"https://t","scopes":{},"pkceRequired":true}}`, true},
		{"client credentials", `{"clientCredentials":{"tokenUrl":"https://t","scopes":{"read":"Read"}}}`, true},
		{"device code", `{"deviceCode":{"deviceAuthorizationUrl":"https://d","tokenUrl":"https://t","scopes":{}}}`, true},
		{"implicit (deprecated, read)", `{"implicit":{"authorizationUrl":"https://a","scopes":{"a":"b"}}}`, true},
		{"password (deprecated, read)", `{"password":{"tokenUrl":"https://t"}}`, true},
		{"none", `{}`, false},
		{"two", `{"clientCredentials":{"tokenUrl":"https://t","scopes":{}},"deviceCode":{"deviceAuthorizationUrl":"https://d","tokenUrl":"https://t","scopes":{}}}`, false},
		{"v0.3 name", `{"authorizationCodeFlow":{"authorizationUrl":"https://a","tokenUrl":"https://t","scopes":{}}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f a2a.OAuthFlows
			err := json.Unmarshal([]byte(tt.in), &f)
			if !tt.ok {
				if err == nil {
					t.Errorf("accepted %s", tt.in)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			assertJSONEqual(t, tt.in, mustMarshal(t, f))
		})
	}
	for _, f := range []a2a.OAuthFlows{{}, {ClientCredentials: &a2a.ClientCredentialsOAuthFlow{}, DeviceCode: &a2a.DeviceCodeOAuthFlow{}}} {
		if b, err := json.Marshal(f); err == nil {
			t.Errorf("marshaled %s", b)
		}
	}
}

// ---------------------------------------------------------------------------
// StreamResponse and SendMessageResponse

const (
	wireTask    = `{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}`
	wireMessage = `{"messageId":"m","contextId":"c","role":"ROLE_AGENT","parts":[{"text":"hi"}]}`
	wireStatus  = `{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-10-06T09:00:00.000Z"}}`
	wireArtUpd  = `{"taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]},"append":true,"lastChunk":true}`
)

func TestStreamResponseOneof(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // Go type of the event; "" means rejected
	}{
		{"task", `{"task":` + wireTask + `}`, "*a2a.Task"},
		{"message", `{"message":` + wireMessage + `}`, "*a2a.Message"},
		{"statusUpdate", `{"statusUpdate":` + wireStatus + `}`, "*a2a.TaskStatusUpdateEvent"},
		{"artifactUpdate", `{"artifactUpdate":` + wireArtUpd + `}`, "*a2a.TaskArtifactUpdateEvent"},
		{"one member and a null one", `{"task":` + wireTask + `,"message":null}`, "*a2a.Task"},
		{"none", `{}`, ""},
		{"null only", `{"task":null}`, ""},
		{"two", `{"task":` + wireTask + `,"statusUpdate":` + wireStatus + `}`, ""},
		{"v0.3 kind discriminator", `{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"},"final":true}`, ""},
		{"v0.3 wrapper name", `{"taskStatusUpdate":` + wireStatus + `}`, ""},
		{"not an object", `[]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r a2a.StreamResponse
			err := json.Unmarshal([]byte(tt.in), &r)
			if tt.want == "" {
				if err == nil {
					t.Errorf("accepted %s as %T", tt.in, r.Event)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := reflect.TypeOf(r.Event).String(); got != tt.want {
				t.Errorf("event %s, want %s", got, tt.want)
			}
			want := strings.Replace(tt.in, `,"message":null`, "", 1)
			assertJSONEqual(t, want, mustMarshal(t, r))
			assertJSONEqual(t, want, mustMarshal(t, &r))
		})
	}
	t.Run("marshal rejects no event", func(t *testing.T) {
		for _, r := range []a2a.StreamResponse{{}, {Event: (*a2a.Task)(nil)}, {Event: (*a2a.Message)(nil)},
			{Event: (*a2a.TaskStatusUpdateEvent)(nil)}, {Event: (*a2a.TaskArtifactUpdateEvent)(nil)}} {
			if b, err := json.Marshal(r); err == nil {
				t.Errorf("marshaled %#v as %s", r.Event, b)
			}
		}
	})
}

func TestSendMessageResponseOneof(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"task", `{"task":` + wireTask + `}`, "*a2a.Task"},
		{"message", `{"message":` + wireMessage + `}`, "*a2a.Message"},
		{"none", `{}`, ""},
		{"two", `{"task":` + wireTask + `,"message":` + wireMessage + `}`, ""},
		{"bare task", wireTask, ""},
		{"stream member", `{"statusUpdate":` + wireStatus + `}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r a2a.SendMessageResponse
			err := json.Unmarshal([]byte(tt.in), &r)
			if tt.want == "" {
				if err == nil {
					t.Errorf("accepted %s as %T", tt.in, r.Result)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := reflect.TypeOf(r.Result).String(); got != tt.want {
				t.Errorf("result %s, want %s", got, tt.want)
			}
			assertJSONEqual(t, tt.in, mustMarshal(t, r))
		})
	}
	for _, r := range []a2a.SendMessageResponse{{}, {Result: (*a2a.Task)(nil)}, {Result: (*a2a.Message)(nil)}} {
		if b, err := json.Marshal(r); err == nil {
			t.Errorf("marshaled %#v as %s", r.Result, b)
		}
	}
}

// ---------------------------------------------------------------------------
// Unknown members (A2A §5.7)

func TestUnknownMembersIgnored(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
		dec  func(string) (any, error)
	}{
		{"task", `{"id":"t","kind":"task","createdAt":"2026-01-01T00:00:00Z","status":{"state":"TASK_STATE_WORKING","final":true},"future":{"x":[1]}}`,
			`{"id":"t","status":{"state":"TASK_STATE_WORKING"}}`, decodeAs[a2a.Task]},
		{"message and parts", `{"messageId":"m","role":"ROLE_USER","kind":"message","parts":[{"text":"x","kind":"text","future":1}]}`,
			`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}`, decodeAs[a2a.Message]},
		{"stream response", `{"statusUpdate":` + wireStatus + `,"future":true}`, `{"statusUpdate":` + wireStatus + `}`, decodeAs[a2a.StreamResponse]},
		{"send message response", `{"task":` + wireTask + `,"future":null}`, `{"task":` + wireTask + `}`, decodeAs[a2a.SendMessageResponse]},
		{"security scheme", `{"httpAuthSecurityScheme":{"scheme":"Bearer","x":1},"type":"http"}`, `{"httpAuthSecurityScheme":{"scheme":"Bearer"}}`, decodeAs[a2a.SecurityScheme]},
		{"agent card", `{"name":"n","description":"d","supportedInterfaces":[],"version":"1","capabilities":{"future":true},"defaultInputModes":[],"defaultOutputModes":[],"skills":[],"url":"https://old","protocolVersion":"0.3"}`,
			`{"name":"n","description":"d","supportedInterfaces":[],"version":"1","capabilities":{},"defaultInputModes":[],"defaultOutputModes":[],"skills":[]}`, decodeAs[a2a.AgentCard]},
		{"list tasks request", `{"pageSize":5,"filter":"x"}`, `{"pageSize":5}`, decodeAs[a2a.ListTasksRequest]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tt.dec(tt.in)
			if err != nil {
				t.Fatalf("unknown members rejected: %v", err)
			}
			assertJSONEqual(t, tt.want, mustMarshal(t, v))
		})
	}
}

// TestAppendJSONMatchesMarshal: the fast encoders write what MarshalJSON
// writes.
func TestAppendJSONMatchesMarshal(t *testing.T) {
	task := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
		Artifacts: []a2a.Artifact{{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("x <y>")}}}}
	events := []a2a.Event{task, &a2a.Message{MessageID: "m", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("hi")}},
		&a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: task.Artifacts[0], Append: true}}
	for _, ev := range events {
		want, err := json.Marshal(a2a.StreamResponse{Event: ev})
		if err != nil {
			t.Fatal(err)
		}
		got, err := a2a.StreamResponse{Event: ev}.AppendJSON([]byte("prefix"))
		if err != nil || string(got) != "prefix"+string(want) {
			t.Errorf("%T: AppendJSON %s, Marshal %s (%v)", ev, got, want, err)
		}
	}
	for _, r := range []a2a.SendMessageResult{task, &a2a.Message{MessageID: "m", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("hi")}}} {
		want, _ := json.Marshal(a2a.SendMessageResponse{Result: r})
		got, err := a2a.SendMessageResponse{Result: r}.AppendJSON(nil)
		if err != nil || string(got) != string(want) {
			t.Errorf("%T: AppendJSON %s, Marshal %s (%v)", r, got, want, err)
		}
	}
	if _, err := (a2a.StreamResponse{}).AppendJSON(nil); err == nil {
		t.Error("empty StreamResponse encoded")
	}
	if _, err := (a2a.SendMessageResponse{Result: (*a2a.Task)(nil)}).AppendJSON(nil); err == nil {
		t.Error("nil task encoded")
	}
}
