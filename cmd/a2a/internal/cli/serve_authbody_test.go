package cli

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/server/a2ahttp"
)

// TestServeAuthBeforeBody: a request without credentials is refused from
// its headers alone, on both HTTP bindings: the 401 comes before the
// client has sent a byte of the 10 MiB body it declared, and 20 such
// requests open at once leave the server's heap where it was. (The
// metrics used to read every JSON-RPC body to find its method, before
// authentication: 20 such requests took the server from 22 to 359 MB.)
func TestServeAuthBeforeBody(t *testing.T) {
	ts := startServe(t, "--api-key", "alice="+keyAlice, "--max-body", fmt.Sprint(10<<20), "--max-auth-failures", "0")
	addr := strings.TrimPrefix(ts.base, "http://")
	const (
		conns = 20
		size  = 10 << 20
	)
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	for _, path := range []string{a2ahttp.JSONRPCPath, a2ahttp.RESTPath + "/message:send"} {
		before := heap()
		var open []net.Conn
		for i := range conns {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			open = append(open, c)
			fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: %d\r\n\r\n", path, addr, size)
			// Only the headers are sent: the answer must come anyway.
			c.SetReadDeadline(time.Now().Add(60 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("%s, request %d: no answer to the headers alone: %v", path, i, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("%s, request %d: status %d, want 401", path, i, resp.StatusCode)
			}
		}
		if grown := int64(heap()) - int64(before); grown > 8<<20 {
			t.Errorf("%s: the heap grew by %d bytes over %d refused requests, each declaring %d bytes", path, grown, conns, size)
		}
		for _, c := range open {
			c.Close()
		}
	}
}
