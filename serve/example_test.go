package serve_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/client/grpcclient"
	"github.com/goa2a/a2a/serve"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store/sqlite"
)

// The README's library example: an agent served with SQLite, push delivery
// and the three bindings, until Ctrl-C. TestReadmeExample holds the README
// to this body, less the line marked as the test's.
func Example() {
	card := &a2a.AgentCard{Name: "greeter", Version: "1.0.0", Description: "Greets whoever writes to it.",
		Capabilities: a2a.AgentCapabilities{Streaming: a2a.Ptr(true)}}
	greet := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		return w.Complete(ctx, "hello, "+req.Message.Text())
	})
	st, err := sqlite.Open(context.Background(), filepath.Join(os.TempDir(), "greeter.db"), sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	srv, err := serve.New(card, greet, serve.WithStore(st), serve.WithPush(serve.Push{}),
		serve.WithAddr("127.0.0.1:0"), serve.WithGRPC("127.0.0.1:0")) // JSON-RPC, HTTP+JSON, gRPC
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("serving %s (card at %s%s)", srv.URL(), srv.URL(), server.WellKnownCardPath)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go callThenInterrupt(srv) // test only: a client, then Ctrl-C
	if err := srv.Run(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// JSONRPC: hello, world
	// HTTP+JSON: hello, world
	// GRPC: hello, world
	// push notifications: true
}

// callThenInterrupt stands for the user of the example: it says hello over
// each binding the card lists, then interrupts the server as Ctrl-C would.
func callThenInterrupt(srv *serve.Server) {
	defer syscall.Kill(os.Getpid(), syscall.SIGINT)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, in := range srv.Card().SupportedInterfaces {
		c, err := client.New(ctx, srv.URL(), client.WithBindings(in.ProtocolBinding), grpcclient.Transport())
		if err != nil {
			fmt.Println(in.ProtocolBinding, err)
			continue
		}
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("world")})
		if err != nil {
			fmt.Println(in.ProtocolBinding, err)
			continue
		}
		if task, ok := res.Result.(*a2a.Task); ok && task.Status.Message != nil {
			fmt.Printf("%s: %s\n", in.ProtocolBinding, task.Status.Message.Text())
		} else {
			fmt.Printf("%s: unexpected answer %#v\n", in.ProtocolBinding, res.Result)
		}
	}
	fmt.Println("push notifications:", srv.Card().Capabilities.SupportsPush())
}
