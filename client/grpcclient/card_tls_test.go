package grpcclient_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/client/grpcclient"
)

// wrapped is a RoundTripper around another, as instrumentation libraries
// install: the client's *http.Transport is then out of sight.
type wrapped struct{ rt http.RoundTripper }

func (w wrapped) RoundTrip(r *http.Request) (*http.Response, error) { return w.rt.RoundTrip(r) }

// TestNoPlaintextAfterHTTPSCard: a card fetched over https:// that lists
// its gRPC interface as "host:port" (the form a2a serve writes, with or
// without TLS) makes the client dial that address with TLS, even when it
// cannot see TLS settings (system roots, or a wrapped RoundTripper): the
// bearer token never travels in the clear. The plaintext listener here
// stands for whoever is on the path.
func TestNoPlaintextAfterHTTPSCard(t *testing.T) {
	fake, addr := serve(t) // plaintext gRPC
	card := cardFor(addr, "")
	fake.card = card
	cardSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(card)
	}))
	defer cardSrv.Close()

	hc := &http.Client{Transport: wrapped{cardSrv.Client().Transport}}
	c, err := client.New(t.Context(), cardSrv.URL, client.WithHTTPClient(hc), client.WithBearerToken("s3cret"),
		client.WithBindings(a2a.BindingGRPC), grpcclient.Transport())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t1"})
	for _, call := range fake.all() {
		if v := call.md.Get("authorization"); len(v) > 0 {
			t.Fatalf("card fetched over https, then %s sent %q over plaintext gRPC to %s", call.method, v[0], addr)
		}
	}
}

// TestSpecExampleGRPCURL: the spec's own card example (A2A §8,
// "GeoSpatial Route Planner Agent") writes its gRPC interface as
// "https://host/a2a/grpc", which gRPC cannot use (its method paths are
// fixed). A card that lists such an interface first must not keep the
// client from the JSON-RPC interface listed after it.
func TestSpecExampleGRPCURL(t *testing.T) {
	card := cardFor("https://georoute-agent.example.com/a2a/grpc", "")
	card.SupportedInterfaces = append(card.SupportedInterfaces,
		a2a.AgentInterface{URL: "https://georoute-agent.example.com/a2a/v1", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"})
	c, err := client.NewFromCard(t.Context(), card, grpcclient.Transport())
	if err != nil {
		t.Fatalf("a card with the spec's gRPC URL form first, JSON-RPC second: %v", err)
	}
	if c.Binding() != a2a.BindingJSONRPC {
		t.Errorf("binding in use %s, want the JSON-RPC interface after the unusable gRPC one", c.Binding())
	}
}
