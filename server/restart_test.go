package server_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store/sqlite"
)

// A restart on a durable store: tasks waiting for input survive and are
// continued by the next process; finished ones are intact; and a page
// token minted before the restart is still accepted after it.
func TestRestartOnSQLite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "tasks.db")
	ctx := testCtx(t)
	open := func() (*server.Handler, *sqlite.Store) {
		st, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		h, err := server.NewHandler(testCard(), server.AgentFunc(scripted), server.WithStore(st))
		if err != nil {
			t.Fatal(err)
		}
		return h, st
	}
	stop := func(h *server.Handler, st *sqlite.Store) {
		if err := h.Close(context.Background()); err != nil {
			t.Error(err)
		}
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	}

	h1, st1 := open()
	waiting := sendTask(t, h1, ctx, newRequest("input"))
	done := sendTask(t, h1, ctx, newRequest("artifact"))
	sendTask(t, h1, ctx, newRequest("complete"))
	page, err := h1.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: a2a.Ptr[int32](1)})
	if err != nil || page.NextPageToken == "" {
		t.Fatalf("first page: %v, token %q", err, page.NextPageToken)
	}
	stop(h1, st1)

	h2, st2 := open()
	defer stop(h2, st2)
	if got := getTask(t, h2, ctx, done.ID); got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != 1 || got.Artifacts[0].Text() != "result" {
		t.Errorf("finished task after the restart: %v, artifacts %v", got.Status.State, got.Artifacts)
	}
	if got := getTask(t, h2, ctx, waiting.ID).Status.State; got != a2a.TaskStateInputRequired {
		t.Fatalf("interrupted task is %v after the restart", got)
	}
	if got := sendTask(t, h2, ctx, continueRequest(waiting.ID, "complete")); got.Status.State != a2a.TaskStateCompleted || len(got.History) < 2 {
		t.Errorf("continuing after the restart: %v with %d history messages", got.Status.State, len(got.History))
	}
	next, err := h2.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: a2a.Ptr[int32](1), PageToken: page.NextPageToken})
	if err != nil {
		t.Fatalf("a page token from before the restart: %v", err)
	}
	if len(next.Tasks) != 1 || next.TotalSize != 3 {
		t.Errorf("second page: %d tasks, total %d", len(next.Tasks), next.TotalSize)
	}
}
