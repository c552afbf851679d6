package capture

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPythonCompact(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"b":[1,2],"c":{}}`:         `{"a": 1, "b": [1, 2], "c": {}}`,
		`{"t":"x, y: \"z\\\",:","n":null}`: `{"t": "x, y: \"z\\\",:", "n": null}`,
		`[]`:                               `[]`,
	} {
		if got := string(PythonCompact([]byte(in))); got != want {
			t.Errorf("PythonCompact(%s) = %s, want %s", in, got, want)
		}
	}
}

// The recorder writes the kit's layout: heading, request line, Host and
// the headers that matter, pretty JSON, the status line, Content-Type,
// and for a stream the data lines as the client reads them, with an
// exchange made meanwhile between them.
func TestRecorder(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stream":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			io.WriteString(w, "data: {\"id\":1,\"n\":1}\n\ndata: {\"id\":1,\"n\":2}\n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"z":1,"a":[]}`)
		}
	}))
	defer srv.Close()
	rec := &Recorder{Title: func(r *http.Request, _ []byte) string { return "call " + r.URL.Path }}
	hc := &http.Client{Transport: rec}
	host := strings.TrimPrefix(srv.URL, "http://")

	req, _ := http.NewRequest("POST", srv.URL+"/stream", strings.NewReader(`{"b":2,"a":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Other", "not recorded")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("data: {\"id\":1,\"n\":1}\n"))
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	rec.Note("Meanwhile.")
	r2, err := hc.Get(srv.URL + "/plain")
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	io.ReadAll(resp.Body)
	resp.Body.Close()

	want := "### 1 · call /stream\n" +
		"POST /stream HTTP/1.1\nHost: " + host + "\nContent-Type: application/json\nA2A-Version: 1.0\nAccept: text/event-stream\n\n" +
		"{\n  \"b\": 2,\n  \"a\": 1\n}\n\n" +
		"HTTP/1.1 200 OK\nContent-Type: text/event-stream\n\n" +
		"data: {\"id\": 1, \"n\": 1}\n\n" +
		"# Meanwhile.\n\n" +
		"### 2 · call /plain\nGET /plain HTTP/1.1\nHost: " + host + "\n\n" +
		"HTTP/1.1 200 OK\nContent-Type: application/json\n\n{\n  \"z\": 1,\n  \"a\": []\n}\n\n" +
		"data: {\"id\": 1, \"n\": 2}\n"
	if got := string(rec.HTTP()); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	wantEv := "[\n  {\n    \"exchange\": 1,\n    \"title\": \"call /stream\",\n    \"events\": [\n      {\n        \"id\": 1,\n        \"n\": 1\n      },\n      {\n        \"id\": 1,\n        \"n\": 2\n      }\n    ]\n  }\n]\n"
	if got := string(rec.Events()); got != wantEv {
		t.Errorf("events:\n%s\nwant:\n%s", got, wantEv)
	}
}
