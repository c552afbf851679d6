package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

// A Handler keeps its tasks in a SQLite file; what it answered is there
// after the process (here, the store) closes and opens again.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "a2a-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tasks.db")
	ctx := context.Background()

	st, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	card := &a2a.AgentCard{Name: "example", Version: "1.0.0",
		SupportedInterfaces: []a2a.AgentInterface{{URL: "http://127.0.0.1:8080/a2a/jsonrpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}}}
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		return w.Complete(ctx, "kept")
	})
	h, err := server.NewHandler(card, agent, server.WithStore(st))
	if err != nil {
		log.Fatal(err)
	}
	res, err := h.SendMessage(ctx, &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hi")}}})
	if err != nil {
		log.Fatal(err)
	}
	id := res.Result.(*a2a.Task).ID
	h.Close(ctx)
	st.Close()

	again, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer again.Close()
	task, seq, err := again.Get(ctx, store.Scope{}, id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.Status.State, task.Status.Message.Text(), "after", seq, "events")
	// Output:
	// TASK_STATE_COMPLETED kept after 2 events
}
