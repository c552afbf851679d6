package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/jsontest"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/rest"
)

// FuzzRoute drives the binding with arbitrary methods, request targets
// (path and query), content types and bodies. Whatever comes in, it must
// not panic, and every answer must be a 200 with a JSON body or an SSE
// stream of JSON frames, or an error status with a well-formed error body
// whose code is that status. The seed corpus is in
// testdata/fuzz/FuzzRoute.
func FuzzRoute(f *testing.F) {
	f.Add("POST", "/message:send", "application/a2a+json", []byte(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`))
	f.Add("GET", "/tasks?pageSize=5&status=TASK_STATE_WORKING&includeArtifacts=true", "", []byte(nil))
	f.Add("GET", "/acme/tasks/x?historyLength=-1", "", []byte(nil))
	f.Add("POST", "/message:send", "application/json", []byte(`{"message":{"messageId":"m","messageId":"n","role":"ROLE_USER","parts":[{"text":"hi"}]}}`))

	release := make(chan struct{})
	close(release) // no task waits
	h, err := server.NewHandler(testCard(), testAgent(release), server.WithExtendedCard(func(context.Context) (*a2a.AgentCard, error) {
		return testCard(), nil
	}))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Close(ctx)
	})
	rh := rest.NewHandler(h, rest.WithMaxBodyBytes(1<<12), rest.WithKeepAlive(0))

	f.Fuzz(func(t *testing.T, method, target, contentType string, body []byte) {
		if method == "" || strings.ContainsAny(method, " \t\r\n") {
			return
		}
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return // net/http rejects such targets before any handler
		}
		// A generous limit: a handler that hangs is cut, and fails below.
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, "GET", "/", bytes.NewReader(body))
		req.Method, req.URL, req.RequestURI = method, u, target
		req.Header.Set("A2A-Version", "1.0")
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		w := httptest.NewRecorder()
		rh.ServeHTTP(w, req)
		if ctx.Err() != nil {
			t.Fatalf("%s %s did not answer before its context ended", method, target)
		}

		res := w.Result()
		b := w.Body.Bytes()
		// A body with a member given twice runs nothing.
		if method == "POST" && res.StatusCode/100 == 2 && jsontest.HasDuplicate(body) {
			t.Fatalf("%s %s with a repeated member answered %d", method, target, res.StatusCode)
		}
		// The answer's media type follows the request's: plain JSON for a
		// plain JSON body, A2A's otherwise.
		want := "application/a2a+json"
		if mt, _, err := mime.ParseMediaType(contentType); err == nil && mt == "application/json" {
			want = "application/json"
		}
		switch ct := res.Header.Get("Content-Type"); {
		case res.StatusCode == http.StatusOK && ct == "text/event-stream":
			checkSSE(t, b)
		case res.StatusCode == http.StatusOK:
			if ct != want || !json.Valid(b) {
				t.Fatalf("200 with Content-Type %q and body %q", ct, b)
			}
		default:
			if ct != want {
				t.Fatalf("status %d with Content-Type %q", res.StatusCode, ct)
			}
			checkFuzzErrorBody(t, b, res.StatusCode)
			if res.StatusCode == http.StatusMethodNotAllowed && res.Header.Get("Allow") == "" {
				t.Fatal("405 without Allow")
			}
		}
	})
}

// checkSSE checks that every frame of a stream holds one JSON object: a
// StreamResponse, or an error body in a last "event: error" frame.
func checkSSE(t *testing.T, b []byte) {
	t.Helper()
	frames := strings.Split(string(b), "\n\n")
	for i, fr := range frames {
		if fr == "" {
			continue
		}
		var data, event string
		for line := range strings.SplitSeq(fr, "\n") {
			switch {
			case strings.HasPrefix(line, "data: "):
				data += strings.TrimPrefix(line, "data: ")
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "id: "), strings.HasPrefix(line, ":"):
			default:
				t.Fatalf("unexpected SSE line %q", line)
			}
		}
		if event == "error" {
			if i != len(frames)-2 { // the last frame, before the final ""
				t.Fatalf("error frame %d of %d", i, len(frames))
			}
			var e struct {
				Error struct{ Code int } `json:"error"`
			}
			if err := json.Unmarshal([]byte(data), &e); err != nil || e.Error.Code == 0 {
				t.Fatalf("error frame %q", data)
			}
			continue
		}
		var sr a2a.StreamResponse
		if err := json.Unmarshal([]byte(data), &sr); err != nil {
			t.Fatalf("frame %q: %v", data, err)
		}
	}
}

func checkFuzzErrorBody(t *testing.T, b []byte, status int) {
	t.Helper()
	var e struct {
		Error *struct {
			Code    int              `json:"code"`
			Status  string           `json:"status"`
			Message string           `json:"message"`
			Details []map[string]any `json:"details"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error == nil {
		t.Fatalf("status %d, body %q: %v", status, b, err)
	}
	if e.Error.Code != status || e.Error.Status == "" || e.Error.Message == "" {
		t.Fatalf("status %d, error %+v", status, *e.Error)
	}
	for _, d := range e.Error.Details {
		if _, ok := d["@type"].(string); !ok {
			t.Fatalf("detail without @type in %q", b)
		}
	}
}
