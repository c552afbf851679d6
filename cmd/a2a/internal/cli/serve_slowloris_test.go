package cli

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/server"
)

// slowResult is what became of one slow connection.
type slowResult struct {
	sent   int   // bytes written before the server closed the connection
	err    error // of the read that saw the close
	closed bool  // the server closed it (not our deadline)
}

// slowClient opens a connection to addr, sends prefix, and then msg one byte per
// interval until the server closes the connection or the deadline passes;
// it calls connected once it dialed.
func slowClient(addr string, prefix, msg []byte, interval time.Duration, deadline time.Time, connected func()) slowResult {
	conn, err := net.Dial("tcp", addr)
	connected()
	if err != nil {
		return slowResult{err: err}
	}
	if _, err := conn.Write(prefix); err != nil {
		return slowResult{err: err}
	}
	defer conn.Close()
	conn.SetReadDeadline(deadline)
	readDone := make(chan error, 1)
	go func() {
		// The server sends nothing before the headers end; a read returns
		// when it closes the connection (or sends an error response).
		_, err := io.ReadAll(conn)
		if err == nil {
			err = io.EOF
		}
		readDone <- err
	}()
	sent := 0
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if sent < len(msg) {
			if _, err := conn.Write(msg[sent : sent+1]); err == nil {
				sent++
			}
		}
		select {
		case err := <-readDone:
			var ne net.Error
			return slowResult{sent: sent, err: err, closed: !(errors.As(err, &ne) && ne.Timeout())}
		case <-tick.C:
		}
	}
}

// TestServeSlowloris: connections that send their request headers (or
// their TLS handshake) one byte per second are closed by --header-timeout
// before they finish, those that send their body so are closed by
// --body-timeout, and while dozens of them are open the server still
// answers GetAgentCard and an A2A call on both bindings.
func TestServeSlowloris(t *testing.T) {
	t.Parallel()
	const (
		conns    = 64
		interval = time.Second
	)
	header := []byte("POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: 2\r\n\r\n{}")

	t.Run("HTTP", func(t *testing.T) {
		t.Parallel()
		ts := startServe(t, "--agent", "echo", "--store", "memory", "--header-timeout", "2s")
		addr := ts.run.srv.Addr().String()
		results := attack(t, addr, nil, header, conns, interval, func() {
			checkServing(t, ts.base, http.DefaultClient)
		})
		for i, r := range results {
			if !r.closed {
				t.Errorf("connection %d: not closed by the server (%d bytes sent): %v", i, r.sent, r.err)
			}
			if r.sent >= len(header) {
				t.Errorf("connection %d: sent the whole request (%d bytes) before the server closed it", i, r.sent)
			}
		}
	})

	t.Run("body", func(t *testing.T) {
		t.Parallel()
		ts := startServe(t, "--agent", "echo", "--store", "memory", "--body-timeout", "2s")
		body := []byte(sendJSONRPC)
		head := []byte("POST /a2a/jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
		results := attack(t, ts.run.srv.Addr().String(), head, body, conns, interval, func() {
			checkServing(t, ts.base, http.DefaultClient)
		})
		for i, r := range results {
			if !r.closed {
				t.Errorf("connection %d: not closed by the server (%d bytes of the body sent): %v", i, r.sent, r.err)
			}
			if r.sent >= len(body) {
				t.Errorf("connection %d: sent the whole body (%d bytes) before the server closed it", i, r.sent)
			}
		}
	})

	t.Run("TLS handshake", func(t *testing.T) {
		t.Parallel()
		dataDir := t.TempDir()
		ts := startServe(t, "--agent", "echo", "--store", "memory", "--header-timeout", "2s", "--tls-self-signed", "--data-dir", dataDir)
		pemBytes, err := os.ReadFile(filepath.Join(dataDir, "tls", "self-signed.crt"))
		if err != nil {
			t.Fatal(err)
		}
		block, _ := pem.Decode(pemBytes)
		leaf, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		// The start of a TLS record holding a ClientHello, which the server
		// waits to complete.
		hello := append([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}, make([]byte, 64)...)
		u, _ := url.Parse(ts.base)
		results := attack(t, u.Host, nil, hello, conns, interval, func() {
			checkServing(t, ts.base, tlsClient(leaf))
		})
		for i, r := range results {
			if !r.closed {
				t.Errorf("connection %d: not closed by the server (%d bytes sent): %v", i, r.sent, r.err)
			}
			if r.sent >= len(hello) {
				t.Errorf("connection %d: sent the whole hello (%d bytes) before the server closed it", i, r.sent)
			}
		}
	})
}

// attack runs n slow clients against addr and, once every one of them has
// connected (and sent its first byte or is about to), runs during; it returns what became of each client.
func attack(t *testing.T, addr string, prefix, msg []byte, n int, interval time.Duration, during func()) []slowResult {
	t.Helper()
	// Generous: the header timeout is two seconds.
	deadline := time.Now().Add(60 * time.Second)
	results := make([]slowResult, n)
	var started, done sync.WaitGroup
	started.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			results[i] = slowClient(addr, prefix, msg, interval, deadline, started.Done)
		}()
	}
	started.Wait()
	during()
	done.Wait()
	return results
}

// checkServing asserts that the server at base answers GetAgentCard and
// SendMessage on both bindings.
func checkServing(t *testing.T, base string, hc *http.Client) {
	t.Helper()
	for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON} {
		c, err := client.New(t.Context(), base, client.WithBindings(binding), client.WithHTTPClient(hc))
		if err != nil {
			t.Errorf("%s: GetAgentCard during the attack: %v", binding, err)
			continue
		}
		if _, err := c.SendMessage(t.Context(), textRequest("still here")); err != nil {
			t.Errorf("%s: SendMessage during the attack: %v", binding, err)
		}
	}
	resp, err := hc.Get(base + server.WellKnownCardPath)
	if err != nil {
		t.Errorf("card during the attack: %v", err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("card during the attack: %d", resp.StatusCode)
	}
}

// TestServeBodyTimeoutSparesStreams: --body-timeout ends once the body is
// in; a stream that lasts longer is not cut, over HTTP/1.1 and HTTP/2 and
// on both bindings. (Raw requests: the client library would hide a cut by
// resuming the stream.)
func TestServeBodyTimeoutSparesStreams(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"HTTP/1.1", "HTTP/2"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dataDir := t.TempDir()
			args := []string{"--exec", `sh -c 'sleep 2; echo done'`, "--store", "memory", "--body-timeout", "500ms", "--data-dir", dataDir}
			if mode == "HTTP/2" {
				args = append(args, "--tls-self-signed")
			}
			ts := startServe(t, args...)
			hc := http.DefaultClient
			if mode == "HTTP/2" {
				pemBytes, err := os.ReadFile(filepath.Join(dataDir, "tls", "self-signed.crt"))
				if err != nil {
					t.Fatal(err)
				}
				block, _ := pem.Decode(pemBytes)
				leaf, err := x509.ParseCertificate(block.Bytes)
				if err != nil {
					t.Fatal(err)
				}
				hc = tlsClient(leaf)
			}
			for _, tc := range []struct{ binding, url, body string }{
				{"JSON-RPC", ts.base + "/a2a/jsonrpc", strings.Replace(sendJSONRPC, `"SendMessage"`, `"SendStreamingMessage"`, 1)},
				{"HTTP+JSON", ts.base + "/a2a/rest/message:stream", sendREST},
			} {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, tc.url, strings.NewReader(tc.body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "text/event-stream")
				req.Header.Set("A2A-Version", "1.0")
				resp, err := hc.Do(req)
				if err != nil {
					t.Fatalf("%s: %v", tc.binding, err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("%s: stream cut: %d %v\n%s", tc.binding, resp.StatusCode, err, b)
				}
				if !strings.Contains(string(b), "TASK_STATE_COMPLETED") || !strings.Contains(string(b), "done") {
					t.Errorf("%s: the stream did not reach the end:\n%s", tc.binding, b)
				}
				if (mode == "HTTP/2") != (resp.ProtoMajor == 2) {
					t.Errorf("%s: served over %s", tc.binding, resp.Proto)
				}
			}
		})
	}
}
