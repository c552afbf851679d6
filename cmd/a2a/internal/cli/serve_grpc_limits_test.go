package cli

import (
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
)

// TestServeGRPCInterfaceFollowsPublicURL: with --public-url the gRPC
// interface names the public host (with the gRPC listener's port), not
// the listener's address, which clients elsewhere cannot reach and a TLS
// certificate for the public name does not cover.
func TestServeGRPCInterfaceFollowsPublicURL(t *testing.T) {
	ts := startServe(t, "--agent", "test-runner", "--store", "memory", "--grpc-addr", "127.0.0.1:0",
		"--public-url", "http://agent.example.com:8080")
	_, port, _ := net.SplitHostPort(ts.run.srv.GRPCAddr().String())
	found := 0
	for _, in := range ts.run.srv.Card().SupportedInterfaces {
		if in.ProtocolBinding != a2a.BindingGRPC {
			continue
		}
		found++
		if in.URL != net.JoinHostPort("agent.example.com", port) {
			t.Errorf("gRPC interface %q, want agent.example.com:%s", in.URL, port)
		}
	}
	if found != 1 {
		t.Errorf("%d gRPC interfaces in the card, want 1", found)
	}
}

func TestServeGRPCStreamLimit(t *testing.T) {
	ts := startServe(t, "--agent", "test-runner", "--store", "memory", "--grpc-addr", "127.0.0.1:0", "--api-key", "alice=key-a")
	c, err := net.Dial("tcp", ts.run.srv.GRPCAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	// Client preface and an empty SETTINGS frame.
	if _, err := io.WriteString(c, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte{0, 0, 0, 4, 0, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	for {
		var hdr [9]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			t.Fatalf("reading the server's SETTINGS: %v", err)
		}
		n := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		payload := make([]byte, n)
		if _, err := io.ReadFull(c, payload); err != nil {
			t.Fatal(err)
		}
		if hdr[3] != 4 || hdr[4]&1 != 0 { // not SETTINGS, or an ACK
			continue
		}
		var got []string
		for i := 0; i+6 <= len(payload); i += 6 {
			id, v := binary.BigEndian.Uint16(payload[i:]), binary.BigEndian.Uint32(payload[i+2:])
			if id == 3 { // SETTINGS_MAX_CONCURRENT_STREAMS
				if v > 1000 {
					t.Errorf("SETTINGS_MAX_CONCURRENT_STREAMS %d", v)
				}
				return
			}
			got = append(got, strconv.Itoa(int(id)))
		}
		t.Fatalf("the gRPC server sets no SETTINGS_MAX_CONCURRENT_STREAMS (settings ids %v): unlimited calls per connection", got)
	}
}
