package v03_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/a2a/v03"
)

// The files of testdata are v0.3 JSON as v0.3 peers write it, after the
// examples of the v0.3 specification and the JS SDK: requests/ holds
// JSON-RPC requests, responses/<method>/ JSON-RPC responses of the method
// (its slashes written as dashes), webhooks/ push notification bodies,
// errors/ error responses, cards/ agent cards. Each goes v0.3 → v1.0 →
// v0.3 and must come back as the same JSON value. They are written in the
// forms v0.3 → v1.0 → v0.3 keeps (see the package documentation): a send
// configuration has blocking, a status update's final says whether its
// state is terminal or interrupted, artifact updates have append and
// lastChunk, a card has preferredTransport and does not list its main
// interface again.

func samples(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in testdata/%s (%v)", dir, err)
	}
	out := make(map[string][]byte, len(files))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = b
	}
	return out
}

type envelope struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *v03.Error      `json:"error"`
}

func readEnvelope(t *testing.T, b []byte) envelope {
	t.Helper()
	var e envelope
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSampleRequests(t *testing.T) {
	for name, b := range samples(t, "requests") {
		t.Run(name, func(t *testing.T) {
			e := readEnvelope(t, b)
			op, req, err := v03.ToV1Request(e.Method, e.Params)
			if err != nil {
				t.Fatalf("ToV1Request: %v", err)
			}
			method, params, err := v03.FromV1Request(op, req)
			if err != nil {
				t.Fatalf("FromV1Request(%s, %s): %v", op, canonical(t, req), err)
			}
			if method != e.Method {
				t.Errorf("method %s came back as %s", e.Method, method)
			}
			if e.Params == nil {
				if params != nil {
					t.Errorf("params %v for a method without", params)
				}
				return
			}
			if got, want := canonical(t, params), canonicalJSON(t, e.Params); got != want {
				t.Errorf("v0.3 → v1.0 → v0.3 changed the params:\n got %s\nwant %s\nv1.0 %s", got, want, canonical(t, req))
			}
		})
	}
}

func TestSampleResponses(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "responses", "*"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, dir := range dirs {
		method := strings.ReplaceAll(filepath.Base(dir), "-", "/")
		op, ok := v03.ToV1Method(method)
		if !ok {
			t.Fatalf("%s: no v0.3 method %s", dir, method)
		}
		seen[method] = true
		for name, b := range samples(t, filepath.Join("responses", filepath.Base(dir))) {
			t.Run(method+"/"+name, func(t *testing.T) {
				e := readEnvelope(t, b)
				v1, err := v03.ToV1Result(op, e.Result)
				if err != nil {
					t.Fatalf("ToV1Result: %v", err)
				}
				back, err := v03.FromV1Result(op, v1)
				if err != nil {
					t.Fatalf("FromV1Result(%s): %v", canonical(t, v1), err)
				}
				got, want := canonical(t, back), canonicalJSON(t, e.Result)
				if op == a2a.MethodGetExtendedAgentCard {
					got = canonical(t, withoutV1Members(decodeJSON(t, []byte(got))))
				}
				if got != want {
					t.Errorf("v0.3 → v1.0 → v0.3 changed the result:\n got %s\nwant %s\nv1.0 %s", got, want, canonical(t, v1))
				}
			})
		}
	}
	for _, op := range a2a.Methods() {
		if m, err := v03.FromV1Method(op); err == nil && !seen[m] {
			t.Errorf("no sample response of %s", m)
		}
	}
}

func TestSampleWebhooks(t *testing.T) {
	for name, b := range samples(t, "webhooks") {
		t.Run(name, func(t *testing.T) {
			ev, err := v03.UnmarshalEvent(b)
			if err != nil {
				t.Fatal(err)
			}
			v1, err := v03.ToV1Event(ev)
			if err != nil {
				t.Fatal(err)
			}
			back, err := v03.FromV1Event(v1)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := canonical(t, back), canonicalJSON(t, b); got != want {
				t.Errorf("changed:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestSampleErrors(t *testing.T) {
	for name, b := range samples(t, "errors") {
		t.Run(name, func(t *testing.T) {
			e := readEnvelope(t, b)
			v1 := v03.ToV1Error(e.Error)
			back := v03.FromV1Error(v1)
			if got, want := canonical(t, back), canonical(t, e.Error); got != want {
				t.Errorf("changed:\n got %s\nwant %s\nv1.0 %v", got, want, v1)
			}
		})
	}
}

// TestSampleCards: a v0.3 card → v1.0 → dual card whose v0.3 members are
// the sample and whose v1.0 members are the v1.0 card's JSON, which v1.0
// readers, strict ones included, read back as the same card.
func TestSampleCards(t *testing.T) {
	for name, b := range samples(t, "cards") {
		t.Run(name, func(t *testing.T) {
			var c v03.AgentCard
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			v1, err := v03.ToV1AgentCard(&c)
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range v1.SupportedInterfaces {
				if i.ProtocolVersion != v03.Version {
					t.Errorf("interface %+v: protocol version %q, want %q", i, i.ProtocolVersion, v03.Version)
				}
			}
			dual, err := v03.FromV1AgentCard(v1)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(dual)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := canonical(t, withoutV1Members(decodeJSON(t, raw))), canonicalJSON(t, b); got != want {
				t.Errorf("the v0.3 members changed:\n got %s\nwant %s", got, want)
			}
			checkDual(t, v1, raw)
		})
	}
}

// checkDual checks the v1.0 half of a dual card: without its v0.3 members
// it is the JSON of card, and a v1.0 reader gets card from it.
func checkDual(t *testing.T, card *a2a.AgentCard, dual []byte) {
	t.Helper()
	if got, want := canonical(t, withoutV03Members(decodeJSON(t, dual))), canonical(t, card); got != want {
		t.Errorf("the v1.0 members are not the v1.0 card:\n got %s\nwant %s", got, want)
	}
	if err := a2a.CheckMembers(dual, &a2a.AgentCard{}); err != nil {
		t.Errorf("a strict v1.0 reader refuses the dual card: %v", err)
	}
	var read a2a.AgentCard
	if err := a2a.Unmarshal(dual, &read); err != nil {
		t.Fatalf("a v1.0 reader cannot read the dual card: %v", err)
	}
	if got, want := canonical(t, &read), canonical(t, card); got != want {
		t.Errorf("a v1.0 reader reads another card:\n got %s\nwant %s", got, want)
	}
}

// TestDualCard: the dual card of a v1.0 card with every member is read by
// v1.0 readers as that card, and translates back to it.
func TestDualCard(t *testing.T) {
	c := card()
	dual, err := v03.FromV1AgentCard(c)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(dual)
	if err != nil {
		t.Fatal(err)
	}
	checkDual(t, c, raw)
	var read v03.AgentCard
	if err := json.Unmarshal(raw, &read); err != nil {
		t.Fatal(err)
	}
	back, err := v03.ToV1AgentCard(&read)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := canonical(t, back), canonical(t, c); got != want {
		t.Errorf("v1.0 → dual → v1.0 changed the card:\n got %s\nwant %s", got, want)
	}
	// The v0.3 members: JSON-RPC first, the tenant's interface left out.
	if dual.URL != "https://agent.example.com/a2a/jsonrpc" || dual.PreferredTransport != a2a.BindingJSONRPC || dual.ProtocolVersion != "0.3.0" {
		t.Errorf("main interface %s %s %s", dual.URL, dual.PreferredTransport, dual.ProtocolVersion)
	}
	if got, want := canonical(t, dual.AdditionalInterfaces), `[{"transport":"HTTP+JSON","url":"https://agent.example.com/a2a/rest"},{"transport":"GRPC","url":"agent.example.com:443"}]`; got != want {
		t.Errorf("additional interfaces %s, want %s", got, want)
	}
	if dual.SupportsAuthenticatedExtendedCard == nil || !*dual.SupportsAuthenticatedExtendedCard {
		t.Error("supportsAuthenticatedExtendedCard not set")
	}
}

var v1SchemeMembers = []string{"apiKeySecurityScheme", "httpAuthSecurityScheme", "oauth2SecurityScheme", "openIdConnectSecurityScheme", "mtlsSecurityScheme"}

// withoutV1Members removes from a card's JSON the members only v1.0 has.
func withoutV1Members(x any) any {
	c := x.(map[string]any)
	delete(c, "supportedInterfaces")
	delete(c, "securityRequirements")
	if caps, ok := c["capabilities"].(map[string]any); ok {
		delete(caps, "extendedAgentCard")
	}
	for _, s := range asList(c["skills"]) {
		delete(s.(map[string]any), "securityRequirements")
	}
	if ss, ok := c["securitySchemes"].(map[string]any); ok {
		for _, s := range ss {
			for _, m := range v1SchemeMembers {
				delete(s.(map[string]any), m)
			}
		}
	}
	return c
}

// withoutV03Members removes from a card's JSON the members only v0.3 has.
func withoutV03Members(x any) any {
	c := x.(map[string]any)
	for _, m := range []string{"protocolVersion", "url", "preferredTransport", "additionalInterfaces", "security", "supportsAuthenticatedExtendedCard"} {
		delete(c, m)
	}
	if caps, ok := c["capabilities"].(map[string]any); ok {
		delete(caps, "stateTransitionHistory")
	}
	for _, s := range asList(c["skills"]) {
		delete(s.(map[string]any), "security")
	}
	if ss, ok := c["securitySchemes"].(map[string]any); ok {
		for name, s := range ss {
			kept := map[string]any{}
			for _, m := range v1SchemeMembers {
				if v, ok := s.(map[string]any)[m]; ok {
					kept[m] = v
				}
			}
			ss[name] = kept
		}
	}
	return c
}

func asList(x any) []any {
	l, _ := x.([]any)
	return l
}
