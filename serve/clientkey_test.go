package serve

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
	"github.com/goa2a/a2a/server/jsonrpc"
)

type nopAgent struct{}

func (nopAgent) Execute(context.Context, *server.Request, *server.Writer) error { return nil }

// TestClientKey: without a principal, remote callers are told apart by
// their IP address; loopback callers are not limited per caller.
func TestClientKey(t *testing.T) {
	t.Parallel()
	h, err := server.NewHandler(&a2a.AgentCard{Name: "t", Version: "1", SupportedInterfaces: a2ahttp.Interfaces("http://127.0.0.1")}, nopAgent{},
		server.WithLimits(server.Limits{Rate: 0.01, Burst: 1}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	app := withClientKey(jsonrpc.NewHandler(h))
	call := func(remote string) int {
		req := httptest.NewRequest("POST", "/a2a/jsonrpc", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"missing"}}`))
		req.RemoteAddr = remote
		req.Header.Set("A2A-Version", "1.0")
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, req)
		var r struct {
			Error struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v: %s", remote, err, rec.Body)
		}
		return r.Error.Code
	}
	for _, c := range []struct {
		remote string
		want   int
	}{
		{"192.0.2.1:1000", -32001},
		{"192.0.2.1:2000", -31429}, // the same address, another port
		{"192.0.2.2:1000", -32001},
		{"[2001:db8::1]:1000", -32001},
		{"[2001:db8::1]:1001", -31429},
		// IPv6 callers are counted by their /64: one host usually has one.
		{"[2001:db8::2]:1000", -31429},
		{"[2001:db8:0:0:ffff:ffff:ffff:ffff]:1000", -31429},
		{"[2001:db8:0:1::1]:1000", -32001},
		{"[2001:db8:0:1::2]:1000", -31429},
		{"[fe80::1%eth0]:1000", -32001},
		{"[fe80::2%eth1]:1000", -31429},
		// IPv4 callers are counted by their whole address, however written.
		{"[::ffff:192.0.2.9]:1000", -32001},
		{"192.0.2.9:1000", -31429},
		{"192.0.2.10:1000", -32001},
		{"[::ffff:127.0.0.1]:1000", -32001},
		{"[::ffff:127.0.0.1]:1000", -32001},
		{"127.0.0.1:1000", -32001},
		{"127.0.0.1:1000", -32001},
		{"[::1]:1000", -32001},
		{"[::1]:1000", -32001},
	} {
		if got := call(c.remote); got != c.want {
			t.Errorf("from %s: code %d, want %d", c.remote, got, c.want)
		}
	}
}

// TestClientKeyOf: the key of an anonymous caller is its IPv4 address or
// its IPv6 /64, and none for loopback or what is not an address.
func TestClientKeyOf(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]string{
		"192.0.2.1:1000":             "192.0.2.1",
		"192.0.2.1":                  "192.0.2.1",
		"[::ffff:192.0.2.1]:80":      "192.0.2.1",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:DB8:1:2::]:443":       "2001:db8:1:2::/64",
		"2001:db8:1:2::9":            "2001:db8:1:2::/64",
		"[fe80::1%eth0]:1":           "fe80::/64",
		"127.0.0.1:1":                "",
		"127.9.9.9:1":                "",
		"[::1]:1":                    "",
		"[::ffff:127.0.0.1]:1":       "",
		"":                           "",
		"pipe":                       "",
		"[not-an-address]:1":         "",
	} {
		if got := ClientKey(remote); got != want {
			t.Errorf("ClientKey(%q) = %q, want %q", remote, got, want)
		}
	}
}
