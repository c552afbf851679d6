package a2agrpc_test

import (
	"context"
	"log"
	"net"
	"net/http"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/auth"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2agrpc"
)

// Serve the echo agent over gRPC, with API keys checked by the same
// middleware as the HTTP bindings. In production, add TLS with
// a2agrpc.WithServerOptions(grpc.Creds(...)).
func ExampleNewServer() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	card := echo.Card("http://127.0.0.1:8080/a2a/jsonrpc", "http://127.0.0.1:8080/a2a/rest")
	// The interface URL of the gRPC binding is host:port, without a scheme.
	card.SupportedInterfaces = append(card.SupportedInterfaces, a2a.AgentInterface{
		URL: ln.Addr().String(), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.ProtocolVersion,
	})
	card.SecuritySchemes = map[string]a2a.SecurityScheme{"apiKey": auth.APIKeyScheme()}
	h, err := server.NewHandler(card, echo.Agent{})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(context.Background())

	keys := map[string]string{"secret-key-1": "alice"}
	srv := a2agrpc.NewServer(h, a2agrpc.WithHTTPAuth(func(next http.Handler) http.Handler {
		return auth.APIKey(keys, next)
	}))
	go func() {
		if err := srv.Serve(ln); err != nil {
			log.Print(err)
		}
	}()
	// ... serve until it is time to stop, then:
	srv.GracefulStop()
}
