//go:build unix

package cli

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/client/grpcclient"
	"github.com/goa2a/a2a/internal/grpcpb"
)

// TestGRPCShutdownEndsStreams: a gRPC stream on a
// task that outlives the grace period does not hold a2a serve's shutdown
// past it, the stream ends, and no new gRPC call is served meanwhile.
func TestGRPCShutdownEndsStreams(t *testing.T) {
	ts := startServe(t, "--exec", "sleep 30", "--grace", "2s", "--grpc-addr", "127.0.0.1:0")
	c, err := client.New(t.Context(), ts.base, grpcclient.Transport(), client.WithBindings(a2a.BindingGRPC))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.WithoutCancel(t.Context())
	streamc := make(chan streamResult, 1)
	go func() {
		var r streamResult
		for ev, err := range c.SendStreamingMessage(ctx, textRequest("stream")) {
			if err != nil {
				r.err = err
				break
			}
			r.last = ev
		}
		streamc <- r
	}()
	waitFor(t, "a running task", func() bool { return ts.run.srv.Running() == 1 })
	// A connection made before the shutdown, idle during it.
	conn, err := grpc.NewClient(ts.run.srv.GRPCAddr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	api := grpcpb.NewA2AServiceClient(conn)
	mdCtx := metadata.AppendToOutgoingContext(ctx, "a2a-version", "1.0")
	if _, err := api.ListTasks(mdCtx, &grpcpb.ListTasksRequest{}); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	ts.cancel()
	waitFor(t, "readiness to drop", func() bool { return !ts.run.srv.Ready() })
	waitFor(t, "new gRPC calls to be refused", func() bool {
		callCtx, cancel := context.WithTimeout(mdCtx, time.Second)
		defer cancel()
		_, err := api.ListTasks(callCtx, &grpcpb.ListTasksRequest{})
		return err != nil
	})
	select {
	case r := <-streamc:
		t.Fatalf("the stream ended (%v, %v) before new calls were refused", r.last, r.err)
	default: // still draining: the refusal came during the drain
	}
	r := receive(t, "the gRPC stream", streamc)
	code := ts.stop(t)
	// Far above the 2 s grace, for a busy machine: what it catches is a
	// server that waits for the stream rather than its grace.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("shutdown took %v with a 2s grace", d)
	}
	t.Logf("stream ended with last=%v err=%v; exit %d", r.last, r.err, code)
}
