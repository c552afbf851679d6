package cli

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/grpcpb"
)

// TestServeGRPC: a2a serve --grpc-addr lists the gRPC interface after the
// JSON ones, and serves it behind the same API-key authentication:
// without the key UNAUTHENTICATED with the challenge, with it the task is
// the principal's on every binding.
func TestServeGRPC(t *testing.T) {
	ts := startServe(t, "--agent", "test-runner", "--store", "memory", "--grpc-addr", "127.0.0.1:0", "--api-key", "alice=key-a", "--api-key", "bob=key-b")
	card := ts.run.srv.Card()
	ifs := card.SupportedInterfaces
	if len(ifs) != 3 || ifs[2].ProtocolBinding != a2a.BindingGRPC || ifs[2].URL != ts.run.srv.GRPCAddr().String() {
		t.Fatalf("interfaces %+v, want JSON-RPC, HTTP+JSON, then GRPC at the listener", ifs)
	}
	conn, err := grpc.NewClient(ifs[2].URL, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := grpcpb.NewA2AServiceClient(conn)
	ctx := metadata.AppendToOutgoingContext(t.Context(), "a2a-version", "1.0")
	var req grpcpb.SendMessageRequest
	if err := grpcpb.ToProto(textRequest("Run the unit tests for payments-api at commit a41d7c3"), &req); err != nil {
		t.Fatal(err)
	}

	var hdr metadata.MD
	_, err = c.SendMessage(ctx, &req, grpc.Header(&hdr))
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("without a key: %v, want UNAUTHENTICATED", err)
	}
	if ch := hdr.Get("www-authenticate"); len(ch) == 0 {
		t.Errorf("no www-authenticate challenge in %v", hdr)
	}

	alice := metadata.AppendToOutgoingContext(ctx, "x-api-key", "key-a")
	res, err := c.SendMessage(alice, &req)
	if err != nil {
		t.Fatalf("with alice's key: %v", err)
	}
	task := res.GetTask()
	if task.GetStatus().GetState() != grpcpb.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("SendMessage over gRPC = %v, want a completed task", res)
	}
	// The task is alice's on every binding, and no one else's.
	bob := metadata.AppendToOutgoingContext(ctx, "x-api-key", "key-b")
	_, err = c.GetTask(bob, &grpcpb.GetTaskRequest{Id: task.GetId()})
	if status.Code(err) != codes.NotFound {
		t.Errorf("GetTask of alice's task as bob: %v, want NOT_FOUND", err)
	}
	if got, err := c.GetTask(alice, &grpcpb.GetTaskRequest{Id: task.GetId()}); err != nil || got.GetId() != task.GetId() {
		t.Errorf("GetTask as alice over gRPC: %v %v", got, err)
	}
	// The CLI over gRPC, as alice.
	var out, errOut syncBuffer
	if code := Main(t.Context(), []string{"get", "--binding", "grpc", "--header", "X-API-Key: key-a", "--json", ts.base, task.GetId()}, &out, &errOut); code != ExitOK {
		t.Fatalf("a2a get --binding grpc: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), task.GetId()) || !strings.Contains(out.String(), "TASK_STATE_COMPLETED") {
		t.Errorf("a2a get --binding grpc printed %s", out.String())
	}
	errOut = syncBuffer{}
	if code := Main(t.Context(), []string{"get", "--binding", "grpc", "--header", "X-API-Key: key-b", ts.base, task.GetId()}, &out, &errOut); code == ExitOK ||
		!strings.Contains(errOut.String(), "TaskNotFound") {
		t.Errorf("a2a get --binding grpc as bob: exit %d: %s", code, errOut.String())
	}
	// a2a push get over gRPC shows the delivery state too (the extension's
	// header travels as header metadata).
	cfgRes, err := c.CreateTaskPushNotificationConfig(alice, &grpcpb.TaskPushNotificationConfig{TaskId: task.GetId(), Url: "https://hooks.example/a2a"})
	if err != nil {
		t.Fatal(err)
	}
	out = syncBuffer{}
	if code := Main(t.Context(), []string{"push", "get", "--binding", "grpc", "--header", "X-API-Key: key-a", ts.base, task.GetId(), cfgRes.GetId()}, &out, &errOut); code != ExitOK {
		t.Fatalf("a2a push get --binding grpc: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "delivery  nothing to deliver: the task had ended when the config was created") {
		t.Errorf("a2a push get --binding grpc printed:\n%s", out.String())
	}
	m := ts.metrics(t)
	for key, want := range map[string]float64{
		`a2a_grpc_requests_total{code="Unauthenticated",method="SendMessage"}`: 1,
		`a2a_grpc_requests_total{code="OK",method="SendMessage"}`:              1,
		`a2a_grpc_requests_total{code="NotFound",method="GetTask"}`:            2,
		`a2a_grpc_request_duration_seconds_count{method="SendMessage"}`:        2,
	} {
		if m[key] != want {
			t.Errorf("/metrics %s = %v, want %v", key, m[key], want)
		}
	}
	code, body := httpPostJSON(t, ts.base+"/a2a/jsonrpc", map[string]string{"X-API-Key": "key-a", "A2A-Version": "1.0"},
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+task.GetId()+`"}}`)
	if code != 200 || !strings.Contains(body, `"result"`) {
		t.Errorf("GetTask as alice over JSON-RPC: %d %s", code, body)
	}
}

func httpPostJSON(t *testing.T, url string, headers map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
