package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
)

// TestBindings drives the three bindings of the echo agent briefly: every
// request must succeed, each check included (the warmup's responses are
// all decoded in full), and every request must have made one task.
func TestBindings(t *testing.T) {
	for _, name := range []string{"goa2a", "goa2a-rest", "goa2a-grpc"} {
		t.Run(name, func(t *testing.T) {
			ts, err := starts[name]()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := ts.close(ctx); err != nil {
					t.Error(err)
				}
			})
			cfg := &loadConfig{concurrency: 3, warmup: 200 * time.Millisecond, duration: 200 * time.Millisecond,
				text: "hello, agent", runID: "test", grpcConns: 2}
			res, err := drive(ts, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors != 0 {
				t.Fatalf("%d errors, first: %s", res.Errors, res.FirstError)
			}
			if res.Requests == 0 || res.RespBytes == 0 {
				t.Fatalf("requests %d, response bytes %d: want both above 0", res.Requests, res.RespBytes)
			}
			if res.TasksStored != int(res.TotalSent) {
				t.Fatalf("%d tasks stored for %d requests sent", res.TasksStored, res.TotalSent)
			}
		})
	}
}

// TestBindingChecks shows that each binding's checks refuse a response
// that does not hold the expected artifact, in both the quick and the
// full form, and pass it otherwise.
func TestBindingChecks(t *testing.T) {
	for _, name := range []string{"goa2a", "goa2a-rest", "goa2a-grpc"} {
		ts, err := starts[name]()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		for _, full := range []bool{false, true} {
			if err := send1(ctx, ts, full, "hello, agent"); err != nil {
				t.Errorf("%s full=%v: %v", name, full, err)
			}
			err := send1(ctx, ts, full, "another text")
			if err == nil || !strings.Contains(err.Error(), "artifact") {
				t.Errorf("%s full=%v: error %v, want one about the artifact", name, full, err)
			}
		}
		if err := ts.close(ctx); err != nil {
			t.Error(err)
		}
		cancel()
	}
}

// send1 sends one "hello, agent" to ts with a fresh worker that expects
// the echo of want.
func send1(ctx context.Context, ts *testServer, full bool, want string) error {
	var cc *grpc.ClientConn
	if ts.binding == bindGRPC {
		conns, err := dialGRPC(ts.url, 1)
		if err != nil {
			return err
		}
		defer closeGRPC(conns)
		cc = conns[0]
	}
	w, err := newWorker(ctx, 0, &http.Client{}, cc, &loadConfig{concurrency: 1, text: "hello, agent", runID: "check"}, ts)
	if err != nil {
		return err
	}
	w.art = "echo: " + want
	w.echoArt, _ = json.Marshal(w.art)
	return w.do(full)
}
