package sse

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// got is an event as the tests compare it.
type got struct {
	Type, ID, Data string
}

func readAll(t *testing.T, r io.Reader, max int) ([]got, error) {
	t.Helper()
	rd := NewReader(r, max)
	var out []got
	for {
		ev, err := rd.Next()
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
		out = append(out, got{ev.Type, ev.ID, string(ev.Data)})
	}
}

func TestReader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []got
	}{
		{"one event", "data: {}\n\n", []got{{"", "", "{}"}}},
		{"id and type", "event: error\nid: t:3\ndata: x\n\n", []got{{"error", "t:3", "x"}}},
		{"id persists", "id: a\ndata: 1\n\ndata: 2\n\n", []got{{"", "a", "1"}, {"", "a", "2"}}},
		{"empty id resets", "id: a\ndata: 1\n\nid\ndata: 2\n\n", []got{{"", "a", "1"}, {"", "", "2"}}},
		{"id with NUL ignored", "id: a\ndata: 1\n\nid: b\x00c\ndata: 2\n\n", []got{{"", "a", "1"}, {"", "a", "2"}}},
		{"type does not persist", "event: e\ndata: 1\n\ndata: 2\n\n", []got{{"e", "", "1"}, {"", "", "2"}}},
		{"multi-line data", "data: a\ndata: b\ndata\ndata:c\n\n", []got{{"", "", "a\nb\n\nc"}}},
		{"only one space stripped", "data:  two\n\n", []got{{"", "", " two"}}},
		{"comments and keep-alives", ": keep-alive\n\n:ping\ndata: x\n: mid\n\n", []got{{"", "", "x"}}},
		{"CRLF", "id: 1\r\ndata: x\r\n\r\n", []got{{"", "1", "x"}}},
		{"CR", "id: 1\rdata: x\r\r", []got{{"", "1", "x"}}},
		{"mixed ends", "data: a\r\ndata: b\rdata: c\n\r\n", []got{{"", "", "a\nb\nc"}}},
		{"BOM", "\uFEFFdata: x\n\n", []got{{"", "", "x"}}},
		{"BOM only at start", "data: x\n\n\uFEFFdata: y\n\n", []got{{"", "", "x"}}},
		{"retry and unknown fields", "retry: 1500\nfoo: bar\ndata: x\n\n", []got{{"", "", "x"}}},
		{"no data no event", "event: e\nid: 7\n\n\ndata: x\n\n", []got{{"", "7", "x"}}},
		{"empty data is an event", "data\n\n", []got{{"", "", ""}}},
		{"partial event dropped", "data: x\n\ndata: y\n", []got{{"", "", "x"}}},
		{"partial line dropped", "data: x\n\nid: 12", []got{{"", "", "x"}}},
		{"colon in value", "data: {\"a\":\"b:c\"}\n\n", []got{{"", "", `{"a":"b:c"}`}}},
		{"field without colon", "data\n\n", []got{{"", "", ""}}},
		{"empty stream", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, mode := range []string{"whole", "byte by byte"} {
				var r io.Reader = strings.NewReader(tt.in)
				if mode != "whole" {
					r = iotest.OneByteReader(r)
				}
				out, err := readAll(t, r, 0)
				if err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				if !reflect.DeepEqual(out, tt.want) {
					t.Errorf("%s:\n got %q\nwant %q", mode, out, tt.want)
				}
			}
		})
	}
}

func TestReaderRetry(t *testing.T) {
	t.Parallel()
	rd := NewReader(strings.NewReader("retry: 1500\n\nretry: x\n\nretry: 99999999999999999999999\ndata: a\n\n"), 0)
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	if rd.Retry() <= 1500*time.Millisecond {
		t.Errorf("Retry = %v, want the saturated huge value", rd.Retry())
	}
	rd = NewReader(strings.NewReader("retry: 1500\nid: z\ndata: a\n\n"), 0)
	if _, err := rd.Next(); err != nil {
		t.Fatal(err)
	}
	if rd.Retry() != 1500*time.Millisecond || rd.LastEventID() != "z" {
		t.Errorf("Retry, LastEventID = %v, %q", rd.Retry(), rd.LastEventID())
	}
}

func TestReaderLimit(t *testing.T) {
	t.Parallel()
	in := "data: " + strings.Repeat("x", 100) + "\n\n"
	if _, err := readAll(t, strings.NewReader(in), 50); !errors.Is(err, ErrEventTooLarge) {
		t.Errorf("long line: err = %v, want ErrEventTooLarge", err)
	}
	in = strings.Repeat("data: "+strings.Repeat("x", 20)+"\n", 10) + "\n"
	if _, err := readAll(t, strings.NewReader(in), 100); !errors.Is(err, ErrEventTooLarge) {
		t.Errorf("many lines: err = %v, want ErrEventTooLarge", err)
	}
	if out, err := readAll(t, strings.NewReader(in), 1000); err != nil || len(out) != 1 {
		t.Errorf("within the limit: %v, %v", out, err)
	}
}

func TestReaderError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: x\n\ndata: y"), iotest.ErrReader(boom))
	out, err := readAll(t, r, 0)
	if !errors.Is(err, boom) || len(out) != 1 {
		t.Errorf("got %v, %v; want one event then boom", out, err)
	}
}

// TestRoundTrip reads back what the Writer writes.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	w := Start(rec, 0)
	_ = w.Event("t:1", []byte(`{"task":{}}`))
	_ = w.NamedEvent("error", "", []byte("line1\nline2"))
	_ = w.Retry(2 * time.Second)
	_ = w.Event("t:2", []byte(""))
	w.Close()
	out, err := readAll(t, rec.Body, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []got{{"", "t:1", `{"task":{}}`}, {"error", "t:1", "line1\nline2"}, {"", "t:2", ""}}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("got %q\nwant %q", out, want)
	}
}

// reference is a direct transcription of the W3C "event stream
// interpretation" rules on strings, for FuzzReader to compare against.
func reference(in []byte) []got {
	s := strings.TrimPrefix(string(in), "\uFEFF")
	var lines []string
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			break // an unterminated last line is never processed
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	var (
		out               []got
		data, typ, lastID string
		hasData           bool
	)
	for _, line := range lines {
		switch {
		case line == "":
			if hasData {
				out = append(out, got{typ, lastID, strings.TrimSuffix(data, "\n")})
			}
			data, typ, hasData = "", "", false
		case line[0] == ':':
		default:
			field, value, found := strings.Cut(line, ":")
			if found {
				value = strings.TrimPrefix(value, " ")
			}
			switch field {
			case "data":
				data += value + "\n"
				hasData = true
			case "event":
				typ = value
			case "id":
				if !strings.ContainsRune(value, 0) {
					lastID = value
				}
			}
		}
	}
	return out
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"data: {}\n\n",
		"event: error\nid: t:3\ndata: x\n\n",
		"id: 1\r\ndata: a\r\ndata: b\r\n\r\n",
		"id: 1\rdata: x\r\r: c\r",
		"\uFEFFdata: x\n\n",
		": keep-alive\n\nretry: 10\ndata\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		want := reference(in)
		for _, r := range []io.Reader{bytes.NewReader(in), iotest.OneByteReader(bytes.NewReader(in))} {
			out, err := readAll(t, r, 1<<20)
			if err != nil {
				t.Fatalf("input %q: %v", in, err)
			}
			if !reflect.DeepEqual(out, want) {
				t.Fatalf("input %q:\n got %q\nwant %q", in, out, want)
			}
		}
	})
}

// FuzzRoundTrip checks that what the Writer writes, the Reader reads back.
func FuzzRoundTrip(f *testing.F) {
	f.Add("t:1", "", []byte(`{"task":{}}`))
	f.Add("", "error", []byte("a\nb"))
	f.Add("x", "", []byte(" lead"))
	f.Fuzz(func(t *testing.T, id, event string, data []byte) {
		if strings.ContainsAny(id, "\r\n\x00") || strings.ContainsAny(event, "\r\n") || bytes.ContainsRune(data, '\r') {
			t.Skip("the Writer's contract excludes line ends in ids and types, and CR in data")
		}
		rec := httptest.NewRecorder()
		w := Start(rec, 0)
		if err := w.NamedEvent(event, id, data); err != nil {
			t.Fatal(err)
		}
		w.Close()
		out, err := readAll(t, rec.Body, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		want := []got{{event, id, string(data)}}
		if !reflect.DeepEqual(out, want) {
			t.Fatalf("got %q\nwant %q", out, want)
		}
	})
}
