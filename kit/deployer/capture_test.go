package deployer

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/internal/capture"
	"github.com/goa2a/a2a/server"
)

// kitBase is the deployer's base URL in the recordings. Our test servers
// listen on 127.0.0.1 but call themselves by this URL, so their cards and
// approval links read exactly as recorded.
const kitBase = "http://localhost:41243"

func load(t *testing.T, name string) []capture.Exchange {
	t.Helper()
	exs, err := capture.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return exs
}

// loadEvents returns the frames of each streamed exchange of an
// .events.json file, by exchange number.
func loadEvents(t *testing.T, name string) map[int][]json.RawMessage {
	t.Helper()
	dir, err := capture.Dir()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var recs []struct {
		Exchange int               `json:"exchange"`
		Events   []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(b, &recs); err != nil {
		t.Fatal(err)
	}
	out := map[int][]json.RawMessage{}
	for _, r := range recs {
		out[r.Exchange] = r.Events
	}
	return out
}

// send replays the request of ex against s, with recorded ids translated.
func (s *testServer) send(t *testing.T, ids *idMap, ex capture.Exchange) *http.Response {
	t.Helper()
	if ex.Host != "localhost:41243" {
		t.Fatalf("%q is addressed to %s, not the deployer", ex.Title, ex.Host)
	}
	req, err := http.NewRequest(ex.Method, s.URL+ids.Translate(ex.Path), strings.NewReader(ids.Translate(ex.Body)))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range ex.Header {
		if k != "Host" {
			req.Header[k] = vs
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%q: %v", ex.Title, err)
	}
	checkHead(t, ex, resp)
	return resp
}

// checkHead compares the status and the recorded response headers.
// Headers we add (Content-Length, the card's caching headers) are not
// compared.
func checkHead(t *testing.T, ex capture.Exchange, resp *http.Response) {
	t.Helper()
	if resp.StatusCode != ex.Status {
		t.Errorf("%q: status %d, recorded %d", ex.Title, resp.StatusCode, ex.Status)
	}
	for k := range ex.RHeader {
		want, got := ex.RHeader.Get(k), resp.Header.Get(k)
		if k == "Content-Type" {
			got, _, _ = strings.Cut(got, ";")
		}
		if got != want {
			t.Errorf("%q: %s %q, recorded %q", ex.Title, k, got, want)
		}
	}
}

// replay sends ex and compares our JSON answer with the recorded one;
// normalize, when given, is applied to the recorded body and must change
// it (so that a stale normalisation fails).
func (s *testServer) replay(t *testing.T, ids *idMap, ex capture.Exchange, normalize func(any) bool) {
	t.Helper()
	resp := s.send(t, ids, ex)
	got := readBody(t, resp)
	want := parseJSON(t, ex.Title, []byte(recordedJSON(ex.RBody)))
	if normalize != nil && !normalize(want) {
		t.Errorf("%q: the normalisation changed nothing; remove it", ex.Title)
	}
	if diffs := ids.Compare("body", want, parseJSON(t, ex.Title, got)); len(diffs) > 0 {
		t.Errorf("%q differs from the recording:\n  %s\nours:\n%s", ex.Title, strings.Join(diffs, "\n  "), got)
	}
}

// recordedJSON cuts what the recording appends after a JSON body: its
// comments and the frames of a stream that continues meanwhile.
func recordedJSON(body string) string {
	if i := strings.Index(body, "\n\n#"); i >= 0 {
		body = body[:i]
	}
	if i := strings.Index(body, "\n\ndata: "); i >= 0 {
		body = body[:i]
	}
	return body
}

// stream replays a streaming request and returns its frames.
func (s *testServer) stream(t *testing.T, ids *idMap, ex capture.Exchange) *frames {
	t.Helper()
	resp := s.send(t, ids, ex)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%q: status %d: %s", ex.Title, resp.StatusCode, readBody(t, resp))
	}
	return readFrames(t, resp.Body)
}

// expectFrames compares the next frames of f with the recorded ones.
func expectFrames(t *testing.T, ids *idMap, title string, f *frames, want []json.RawMessage) {
	t.Helper()
	for _, w := range want {
		same(t, ids, title+" frame", w, f.next(t))
	}
}

// TestCaptureCard: the public card of capture 01 #3, read without a token,
// signature entry included.
func TestCaptureCard(t *testing.T) {
	s := startServer(t, kitBase, nil)
	exs := load(t, "01-agent-cards.http")
	ex := exs[2]
	if !strings.Contains(ex.Title, "deployer") {
		t.Fatalf("exchange 3 of 01 is %q", ex.Title)
	}
	s.replay(t, newIDMap(), ex, kitCard(t))
}

// kitCard normalises a recorded deployer card for comparison with ours:
// the empty scope list and the signature value.
func kitCard(t *testing.T) func(any) bool {
	return func(v any) bool { return capture.DropEmptyStringLists(v) && demoSignature(t, v) }
}

// demoSignature puts in the recorded card v the signature value that
// [DemoSigner] makes for our card at kitBase, and reports whether that
// changed it. The protected header stays as recorded, and the replay
// compares it: ours is the kit's. The value differs because the kit's
// secret is not recorded (docs/kit-differences.md, card-signature).
func demoSignature(t *testing.T, v any) bool {
	t.Helper()
	ours, err := Card(kitBase+"/a2a/jsonrpc", kitBase+"/a2a/rest", DemoSigner())
	if err != nil {
		t.Fatal(err)
	}
	sigs, _ := v.(map[string]any)["signatures"].([]any)
	if len(sigs) != 1 || len(ours.Signatures) != 1 {
		t.Fatalf("recorded signatures %v, ours %v", sigs, ours.Signatures)
	}
	entry := sigs[0].(map[string]any)
	if entry["signature"] == ours.Signatures[0].Signature {
		return false
	}
	entry["signature"] = ours.Signatures[0].Signature
	return true
}

// TestCaptureAuthRequiredAndRejected replays 07 (a staging deploy streamed
// through auth-required, approved by the test as the operator, on the same
// stream) and then 08 (a production deploy, rejected) on one server, so the
// kit's clock gives every timestamp as recorded.
func TestCaptureAuthRequiredAndRejected(t *testing.T) {
	s := startServer(t, kitBase, nil, server.WithClock(kitClock(kitEpoch)))
	ids := newIDMap()

	exs := load(t, "07-auth-required.http")
	events := loadEvents(t, "07-auth-required.events.json")[1]
	if len(exs) != 2 || len(events) != 6 {
		t.Fatalf("07: %d exchanges and %d frames, want 2 and 6", len(exs), len(events))
	}
	f := s.stream(t, ids, exs[0])
	expectFrames(t, ids, "07 #1", f, events[:3]) // submitted, working, auth-required
	f.idle(t)                                    // the stream stays open
	s.replay(t, ids, exs[1], nil)                // the operator approves
	expectFrames(t, ids, "07 #1", f, events[3:]) // working, deploy-report, completed
	f.end(t)

	for _, ex := range load(t, "08-rejected.http") {
		s.replay(t, ids, ex, nil)
	}
}

// TestCaptureExtendedCard replays 18: 401 with the challenge without a
// token, the extended card with the rollback skill with one.
func TestCaptureExtendedCard(t *testing.T) {
	s := startServer(t, kitBase, nil)
	ids := newIDMap()
	exs := load(t, "18-extended-card.http")
	if len(exs) != 2 {
		t.Fatalf("18: %d exchanges, want 2", len(exs))
	}
	s.replay(t, ids, exs[0], nil) // checkHead compares WWW-Authenticate
	s.replay(t, ids, exs[1], capture.DropEmptyStringLists)
}

// TestCapturePlanner replays the deployer's part of 19: the planner reads
// the card, sends a blocking deploy that returns at auth-required,
// subscribes, and the operator approves while it listens.
func TestCapturePlanner(t *testing.T) {
	// The kit ran the planner's three agents on one clock; the deployer's
	// first stamp there was 09:00:02.000.
	s := startServer(t, kitBase, nil, server.WithClock(kitClock(kitEpoch.Add(1750*time.Millisecond))))
	ids := newIDMap()
	var mine []capture.Exchange
	for _, ex := range load(t, "19-planner.http") {
		if ex.Host == "localhost:41243" {
			mine = append(mine, ex)
		}
	}
	if len(mine) != 4 {
		t.Fatalf("19: %d deployer exchanges, want 4", len(mine))
	}
	events := loadEvents(t, "19-planner.events.json")[8]
	if len(events) != 4 {
		t.Fatalf("19: %d frames of the subscription, want 4", len(events))
	}
	s.replay(t, ids, mine[0], kitCard(t)) // the card
	s.replay(t, ids, mine[1], nil)        // SendMessage: auth-required
	f := s.stream(t, ids, mine[2])        // SubscribeToTask
	expectFrames(t, ids, "19 #8", f, events[:1])
	s.replay(t, ids, mine[3], nil) // the operator approves
	expectFrames(t, ids, "19 #8", f, events[1:])
	f.end(t)
}
