package serve

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

// BenchmarkInflight is the cost of the interceptor a Server adds to every
// call (it counts calls in flight for the shutdown): a Handler answering
// SendMessage in process with a direct reply, without and with it.
func BenchmarkInflight(b *testing.B) {
	card := &a2a.AgentCard{Name: "b", Version: "1",
		SupportedInterfaces: []a2a.AgentInterface{{URL: "http://127.0.0.1/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}}}
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		return w.Reply(ctx, a2a.TextPart("ok"))
	})
	for _, bc := range []struct {
		name string
		opts []server.Option
	}{
		{"bare", nil},
		{"inflight", []server.Option{server.WithInterceptors(&inflight{})}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h, err := server.NewHandler(card, agent, bc.opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close(context.Background())
			var n atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					m := &a2a.Message{MessageID: "m" + strconv.FormatInt(n.Add(1), 10), Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hi")}}
					if _, err := h.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: m}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
