package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/bench/bare"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/jsonrpc"
	"github.com/goa2a/a2a/server/rest"
)

// jsonrpcPath is where both servers take requests, so routing costs the
// same on both sides.
const jsonrpcPath = "/a2a/jsonrpc"

// restPath is where the goa2a-rest target serves the HTTP+JSON binding,
// as a2a serve does; its SendMessage is POST restPath+"/message:send".
const restPath = "/a2a/rest"

// binding is the protocol binding a target is driven over.
type binding int

const (
	bindJSONRPC binding = iota // POST of a JSON-RPC envelope to url
	bindREST                   // HTTP+JSON: POST of the params object to url
	bindGRPC                   // gRPC: SendMessage of lf.a2a.v1.A2AService at url ("host:port")
)

// testServer is one of the servers under load.
type testServer struct {
	name    string
	url     string  // the SendMessage endpoint; "host:port" for gRPC
	binding binding // how clients call it
	srv     *http.Server
	a2a     *server.Handler // nil for bare
	close   func(context.Context) error

	// Set by targets whose load or checks differ from the echo agent's
	// (bench/push.go); zero for the others.
	art    string // the artifact text of each response; "" for "echo: <text>"
	params []byte // more members of each SendMessage's params, after a comma
	// after is called by a client after each checked response, with its
	// body, before the client's next request.
	after func(ctx context.Context, body []byte) error
	// window is told the measured window before the load starts.
	window func(start, end time.Time)
	// finish completes the result after the load stopped; cpu is the
	// process CPU time of the measured window.
	finish func(res *result, cpu time.Duration) error
}

// listen opens a loopback listener on a free port. The servers never listen
// anywhere else.
func listen() (net.Listener, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	return ln, "http://" + ln.Addr().String(), nil
}

func serve(name string, ln net.Listener, base string, mux *http.ServeMux) *testServer {
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic(fmt.Sprintf("%s server: %v", name, err))
		}
	}()
	return &testServer{name: name, url: base + jsonrpcPath, srv: srv, close: srv.Shutdown}
}

func startBare() (*testServer, error) {
	ln, base, err := listen()
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+jsonrpcPath, bare.Handler)
	return serve("bare", ln, base, mux), nil
}

// startGoa2a serves the echo agent through our stack: server.Handler with
// its default in-memory store behind the JSON-RPC binding.
func startGoa2a() (*testServer, error) { return startStack("goa2a", echo.Agent{}) }

// startGoa2aForget is startGoa2a with the diagnostic forgetStore.
func startGoa2aForget() (*testServer, error) {
	return startStack("goa2a-forget", echo.Agent{}, server.WithStore(newForgetStore()))
}

// startStack serves agent through server.Handler behind the JSON-RPC
// binding, with the echo agent's card.
func startStack(name string, agent server.Agent, opts ...server.Option) (*testServer, error) {
	ln, base, err := listen()
	if err != nil {
		return nil, err
	}
	h, err := server.NewHandler(echo.Card(base+jsonrpcPath, base+restPath), agent, opts...)
	if err != nil {
		ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+jsonrpcPath, jsonrpc.NewHandler(h))
	ts := serve(name, ln, base, mux)
	ts.a2a = h
	ts.close = func(ctx context.Context) error {
		return errors.Join(ts.srv.Shutdown(ctx), h.Close(ctx))
	}
	return ts, nil
}

// startGoa2aREST serves the goa2a target's Handler (echo agent, default
// memory store) behind the HTTP+JSON binding instead of JSON-RPC.
func startGoa2aREST() (*testServer, error) {
	ln, base, err := listen()
	if err != nil {
		return nil, err
	}
	h, err := server.NewHandler(echo.Card(base+jsonrpcPath, base+restPath), echo.Agent{})
	if err != nil {
		ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(restPath+"/", http.StripPrefix(restPath, rest.NewHandler(h)))
	ts := serve("goa2a-rest", ln, base, mux)
	ts.url = base + restPath + "/message:send"
	ts.binding = bindREST
	ts.a2a = h
	ts.close = func(ctx context.Context) error {
		return errors.Join(ts.srv.Shutdown(ctx), h.Close(ctx))
	}
	return ts, nil
}

// storedTasks counts the tasks the goa2a server's store holds.
func storedTasks(h *server.Handler) (int, error) {
	res, err := h.ListTasks(context.Background(), &a2a.ListTasksRequest{PageSize: a2a.Ptr[int32](1)})
	if err != nil {
		return 0, err
	}
	return int(res.TotalSize), nil
}
