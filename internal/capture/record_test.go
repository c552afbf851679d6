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

// A received request (a webhook) is written as the kit writes its webhook
// sections, with no Host and no response, and parses back with Status 0
// beside an exchange that has one.
func TestRecorderReceived(t *testing.T) {
	rec := &Recorder{}
	r, _ := http.NewRequest("POST", "http://127.0.0.1:1/a2a-events", nil)
	r.Header.Set("Authorization", "Bearer s")
	r.Header.Set("Content-Type", "application/a2a+json")
	r.Header.Set("X-A2A-Notification-Token", "t")
	r.Header.Set("A2A-Push-Event-Id", "task:2")
	r.Header.Set("User-Agent", "not recorded")
	rec.Received("webhook 1 · received by the client", r, []byte(`{"b":{"c":1}}`))
	want := "### webhook 1 · received by the client\nPOST /a2a-events HTTP/1.1\n" +
		"Content-Type: application/a2a+json\nAuthorization: Bearer s\nX-A2A-Notification-Token: t\nA2A-Push-Event-Id: task:2\n\n" +
		"{\n  \"b\": {\n    \"c\": 1\n  }\n}\n"
	got := string(rec.HTTP())
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	exs, err := Parse("### 1 · call\nGET / HTTP/1.1\nHost: h\n\nHTTP/1.1 200 OK\nContent-Type: application/json\n\n{}\n\n" + got)
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) != 2 {
		t.Fatalf("%d sections, want 2", len(exs))
	}
	if e := exs[0]; e.Status != 200 || e.RBody != "{}" {
		t.Errorf("exchange: status %d body %q", e.Status, e.RBody)
	}
	e := exs[1]
	if e.Title != "webhook 1 · received by the client" || e.Method != "POST" || e.Path != "/a2a-events" || e.Host != "" || e.Status != 0 ||
		e.Header.Get("X-A2A-Notification-Token") != "t" || e.Header.Get("A2A-Push-Event-Id") != "task:2" || e.Body != "{\n  \"b\": {\n    \"c\": 1\n  }\n}" {
		t.Errorf("received: %+v", e)
	}
}
