package jsonrpc_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/bench/bare"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/jsonrpc"
)

// BenchmarkJSONRPCSendMessage measures blocking SendMessage with the echo
// agent through the JSON-RPC binding, beside the baseline of DESIGN.md (the
// bare handler of package bench/bare), which must not be more than twice as
// fast:
//
//	go test -run='^$' -bench=JSONRPCSendMessage -benchmem ./server/jsonrpc
//
// recorder calls ServeHTTP with an httptest.ResponseRecorder: the binding
// and the Handler without any network. loopback goes through a real
// net/http server on 127.0.0.1 with a keep-alive client, one request at a
// time; loopback-parallel does the same from GOMAXPROCS goroutines. The
// client's costs are included in loopback, and are the same for both
// handlers.
func BenchmarkJSONRPCSendMessage(b *testing.B) {
	handlers := []struct {
		name string
		new  func(b *testing.B) http.Handler
	}{
		{"bare", func(*testing.B) http.Handler { return http.HandlerFunc(bare.Handler) }},
		{"goa2a", newGoa2a},
	}
	for _, h := range handlers {
		b.Run("handler="+h.name, func(b *testing.B) {
			b.Run("recorder", func(b *testing.B) { benchRecorder(b, h.new(b)) })
			b.Run("loopback", func(b *testing.B) { benchLoopback(b, h.new(b), false) })
			b.Run("loopback-parallel", func(b *testing.B) { benchLoopback(b, h.new(b), true) })
		})
	}
}

const benchPath = "/a2a/jsonrpc"

func newGoa2a(b *testing.B) http.Handler {
	h, err := server.NewHandler(echo.Card("http://127.0.0.1"+benchPath, "http://127.0.0.1/a2a/rest"), echo.Agent{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			b.Error(err)
		}
	})
	return jsonrpc.NewHandler(h)
}

// appendRequest appends a SendMessage request with JSON-RPC id and message
// id n to dst.
func appendRequest(dst []byte, n int64) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = strconv.AppendInt(dst, n, 10)
	dst = append(dst, `,"method":"SendMessage","params":{"message":{"messageId":"m-`...)
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, `","role":"ROLE_USER","parts":[{"text":"hello, agent"}]}}}`...)
}

var (
	resultTask = []byte(`"result":{"task":{`)
	completed  = []byte(`"state":"TASK_STATE_COMPLETED"`)
)

// checkResponse reports what is wrong with a response, "" if it carries a
// completed task.
func checkResponse(status int, body []byte) string {
	switch {
	case status != http.StatusOK:
		return "HTTP " + strconv.Itoa(status) + ": " + string(body)
	case !bytes.Contains(body, resultTask) || !bytes.Contains(body, completed):
		return "not a completed task: " + string(body)
	}
	return ""
}

func benchRecorder(b *testing.B, h http.Handler) {
	var body []byte
	var n int64
	b.ReportAllocs()
	for b.Loop() {
		n++
		body = appendRequest(body[:0], n)
		req := httptest.NewRequest(http.MethodPost, benchPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", a2a.ProtocolVersion)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if msg := checkResponse(rec.Code, rec.Body.Bytes()); msg != "" {
			b.Fatal(msg)
		}
	}
}

// benchLoopback serves h on 127.0.0.1 and sends it requests over keep-alive
// connections.
func benchLoopback(b *testing.B, h http.Handler, parallel bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+benchPath, h)
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 256, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	url := srv.URL + benchPath

	var next atomic.Int64
	send := func(body []byte, resp *bytes.Buffer) string {
		n := next.Add(1)
		body = appendRequest(body[:0], n)
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err.Error()
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", a2a.ProtocolVersion)
		res, err := client.Do(req)
		if err != nil {
			return err.Error()
		}
		resp.Reset()
		_, err = resp.ReadFrom(res.Body)
		res.Body.Close()
		if err != nil {
			return err.Error()
		}
		return checkResponse(res.StatusCode, resp.Bytes())
	}

	b.ReportAllocs()
	if !parallel {
		body := make([]byte, 0, 256)
		var resp bytes.Buffer
		for b.Loop() {
			if msg := send(body, &resp); msg != "" {
				b.Fatal(msg)
			}
		}
		return
	}
	b.RunParallel(func(pb *testing.PB) {
		body := make([]byte, 0, 256)
		var resp bytes.Buffer
		for pb.Next() {
			if msg := send(body, &resp); msg != "" {
				b.Error(msg)
				return
			}
		}
	})
}
