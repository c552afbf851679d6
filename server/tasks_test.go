package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

func TestGetTask(t *testing.T) {
	t.Parallel()
	clock := newClock(time.Second)
	h := newHandler(t, nil, scripted, server.WithClock(clock.Now))
	ctx := v1(testCtx(t))
	sent := sendTask(t, h, ctx, newRequest("artifact"))

	t.Run("found", func(t *testing.T) {
		got := getTask(t, h, ctx, sent.ID)
		if got.ID != sent.ID || got.ContextID != sent.ContextID || got.Status.State != a2a.TaskStateCompleted {
			t.Errorf("GetTask = %s/%s %v, want %s/%s completed", got.ID, got.ContextID, got.Status.State, sent.ID, sent.ContextID)
		}
		if len(got.Artifacts) != 1 || got.Artifacts[0].Text() != "result" {
			t.Errorf("artifacts %+v, want the one emitted", got.Artifacts)
		}
		if ts := got.Status.Timestamp; ts.IsZero() || !ts.Time.Equal(ts.Truncate(time.Millisecond)) || ts.Year() != 2026 {
			t.Errorf("status timestamp %v, want one from the Handler's clock", ts)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		_, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
		if e := wantErr(t, err, a2a.ErrTaskNotFound); e.Metadata["taskId"] != "no-such-task" {
			t.Errorf("metadata taskId %q", e.Metadata["taskId"])
		}
	})
	t.Run("no id", func(t *testing.T) {
		_, err := h.GetTask(ctx, &a2a.GetTaskRequest{})
		wantViolation(t, err, "id")
	})
}

// createTasks sends one blocking message per text, in order, and returns
// the tasks.
func createTasks(t *testing.T, h *server.Handler, ctx context.Context, texts ...string) []*a2a.Task {
	t.Helper()
	out := make([]*a2a.Task, len(texts))
	for i, text := range texts {
		out[i] = sendTask(t, h, ctx, newRequest(text))
	}
	return out
}

func ids(tasks []a2a.Task) []string {
	out := make([]string, len(tasks))
	for i := range tasks {
		out[i] = tasks[i].ID
	}
	return out
}

func TestListTasksNewestStatusFirst(t *testing.T) {
	t.Parallel()
	clock := newClock(time.Second)
	h := newHandler(t, nil, scripted, server.WithClock(clock.Now))
	ctx := testCtx(t)
	ts := createTasks(t, h, ctx, "input", "complete", "complete")
	a, b, c := ts[0], ts[1], ts[2]
	// A was created first, but its status changes last.
	sendTask(t, h, ctx, continueRequest(a.ID, "complete"))

	res, err := h.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{a.ID, c.ID, b.ID}; !slices.Equal(ids(res.Tasks), want) {
		t.Errorf("order %q, want %q (newest status first)", ids(res.Tasks), want)
	}
	for i, task := range res.Tasks {
		if got := getTask(t, h, ctx, task.ID); !got.Status.Timestamp.Equal(task.Status.Timestamp.Time) {
			t.Errorf("listed timestamp %v of %s differs from GetTask's %v", task.Status.Timestamp, task.ID, got.Status.Timestamp)
		}
		if i > 0 && !res.Tasks[i-1].Status.Timestamp.After(task.Status.Timestamp.Time) {
			t.Errorf("task %d timestamp %v is not older than the one before", i, task.Status.Timestamp)
		}
	}
}

func TestListTasksPaging(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		tasks     int
		pageSize  *int32
		step      time.Duration // clock step; 0 gives every status the same time
		wantPages []int
	}{
		{"empty", 0, nil, time.Second, []int{0}},
		{"one page", 3, nil, time.Second, []int{3}},
		{"exact pages", 6, a2a.Ptr[int32](3), time.Second, []int{3, 3}},
		{"partial last page", 7, a2a.Ptr[int32](3), time.Second, []int{3, 3, 1}},
		{"pages of one", 3, a2a.Ptr[int32](1), time.Second, []int{1, 1, 1}},
		{"default 50", 55, nil, time.Millisecond, []int{50, 5}},
		{"maximum 100", 120, a2a.Ptr[int32](100), time.Millisecond, []int{100, 20}},
		{"same timestamps", 25, a2a.Ptr[int32](4), 0, []int{4, 4, 4, 4, 4, 4, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHandler(t, nil, scripted, server.WithClock(newClock(tc.step).Now))
			ctx := testCtx(t)
			created := map[string]bool{}
			for range tc.tasks {
				created[sendTask(t, h, ctx, newRequest("complete")).ID] = true
			}
			wantSize := int32(server.DefaultPageSize)
			if tc.pageSize != nil {
				wantSize = *tc.pageSize
			}
			seen := map[string]bool{}
			var last *a2a.Task
			token := ""
			for page := 0; ; page++ {
				if page == len(tc.wantPages) {
					t.Fatalf("more than the %d pages expected", len(tc.wantPages))
				}
				res, err := h.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: tc.pageSize, PageToken: token})
				if err != nil {
					t.Fatalf("page %d: %v", page, err)
				}
				if len(res.Tasks) != tc.wantPages[page] {
					t.Errorf("page %d has %d tasks, want %d", page, len(res.Tasks), tc.wantPages[page])
				}
				if res.TotalSize != int32(tc.tasks) {
					t.Errorf("page %d totalSize %d, want %d", page, res.TotalSize, tc.tasks)
				}
				if res.PageSize != wantSize {
					t.Errorf("page %d pageSize %d, want the size used, %d", page, res.PageSize, wantSize)
				}
				for i := range res.Tasks {
					task := &res.Tasks[i]
					if seen[task.ID] {
						t.Errorf("task %s listed twice", task.ID)
					}
					seen[task.ID] = true
					if last != nil && (task.Status.Timestamp.After(last.Status.Timestamp.Time) ||
						task.Status.Timestamp.Equal(last.Status.Timestamp.Time) && task.ID > last.ID) {
						t.Errorf("task %s (%v) listed after %s (%v): not newest first", task.ID, task.Status.Timestamp, last.ID, last.Status.Timestamp)
					}
					last = task
				}
				isLast := page == len(tc.wantPages)-1
				if isLast != (res.NextPageToken == "") {
					t.Fatalf("page %d of %d: nextPageToken %q", page+1, len(tc.wantPages), res.NextPageToken)
				}
				if isLast {
					break
				}
				token = res.NextPageToken
			}
			if len(seen) != len(created) {
				t.Errorf("walked %d tasks, created %d", len(seen), len(created))
			}
			for id := range created {
				if !seen[id] {
					t.Errorf("task %s never listed", id)
				}
			}
		})
	}
}

func TestListTasksInvalid(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := v1(testCtx(t))
	createTasks(t, h, ctx, "complete", "complete")
	token := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	tests := []struct {
		name  string
		req   *a2a.ListTasksRequest
		field string
	}{
		{"pageSize 0", &a2a.ListTasksRequest{PageSize: a2a.Ptr[int32](0)}, "pageSize"},
		{"pageSize 101", &a2a.ListTasksRequest{PageSize: a2a.Ptr[int32](101)}, "pageSize"},
		{"pageSize -1", &a2a.ListTasksRequest{PageSize: a2a.Ptr[int32](-1)}, "pageSize"},
		{"historyLength -1", &a2a.ListTasksRequest{HistoryLength: a2a.Ptr[int32](-1)}, "historyLength"},
		{"unknown status", &a2a.ListTasksRequest{Status: a2a.TaskState(42)}, "status"},
		{"garbage pageToken", &a2a.ListTasksRequest{PageToken: "not a token!"}, "pageToken"},
		{"pageToken not JSON", &a2a.ListTasksRequest{PageToken: base64.RawURLEncoding.EncodeToString([]byte("hello"))}, "pageToken"},
		{"pageToken without id", &a2a.ListTasksRequest{PageToken: token(map[string]string{"ts": "2026-10-06T09:00:00.000Z"})}, "pageToken"},
		{"pageToken bad time", &a2a.ListTasksRequest{PageToken: token(map[string]string{"ts": "yesterday", "id": "x"})}, "pageToken"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := h.ListTasks(ctx, tc.req)
			wantViolation(t, err, tc.field)
		})
	}
	for _, n := range []int32{1, 100} {
		if _, err := h.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: &n}); err != nil {
			t.Errorf("pageSize %d: %v", n, err)
		}
	}
}

func TestListTasksFilters(t *testing.T) {
	t.Parallel()
	clock := newClock(time.Second)
	h := newHandler(t, nil, scripted, server.WithClock(clock.Now))
	ctx := testCtx(t)
	in := func(contextID, text string) *a2a.Task {
		r := newRequest(text)
		r.Message.ContextID = contextID
		return sendTask(t, h, ctx, r)
	}
	t1 := in("c1", "complete")
	t2 := in("c1", "input")
	t3 := in("c2", "complete")
	t4 := in("c2", "fail")
	t5 := in("c1", "complete")
	at := func(task *a2a.Task, d time.Duration) a2a.Timestamp {
		return a2a.Timestamp{Time: task.Status.Timestamp.Add(d)}
	}
	tests := []struct {
		name string
		req  a2a.ListTasksRequest
		want []*a2a.Task
	}{
		{"no filter", a2a.ListTasksRequest{}, []*a2a.Task{t5, t4, t3, t2, t1}},
		{"contextId", a2a.ListTasksRequest{ContextID: "c1"}, []*a2a.Task{t5, t2, t1}},
		{"unknown contextId", a2a.ListTasksRequest{ContextID: "c3"}, nil},
		{"status", a2a.ListTasksRequest{Status: a2a.TaskStateCompleted}, []*a2a.Task{t5, t3, t1}},
		{"status interrupted", a2a.ListTasksRequest{Status: a2a.TaskStateInputRequired}, []*a2a.Task{t2}},
		{"status with no task", a2a.ListTasksRequest{Status: a2a.TaskStateWorking}, nil},
		{"contextId and status", a2a.ListTasksRequest{ContextID: "c1", Status: a2a.TaskStateCompleted}, []*a2a.Task{t5, t1}},
		{"after is inclusive", a2a.ListTasksRequest{StatusTimestampAfter: at(t3, 0)}, []*a2a.Task{t5, t4, t3}},
		{"after, a millisecond later", a2a.ListTasksRequest{StatusTimestampAfter: at(t3, time.Millisecond)}, []*a2a.Task{t5, t4}},
		{"after, a millisecond earlier", a2a.ListTasksRequest{StatusTimestampAfter: at(t3, -time.Millisecond)}, []*a2a.Task{t5, t4, t3}},
		{"after the last", a2a.ListTasksRequest{StatusTimestampAfter: at(t5, time.Millisecond)}, nil},
		{"all filters", a2a.ListTasksRequest{ContextID: "c2", Status: a2a.TaskStateFailed, StatusTimestampAfter: at(t3, 0)}, []*a2a.Task{t4}},
		{"filters with paging", a2a.ListTasksRequest{ContextID: "c1", PageSize: a2a.Ptr[int32](2)}, []*a2a.Task{t5, t2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := h.ListTasks(ctx, &tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, task := range tc.want {
				want = append(want, task.ID)
			}
			if got := ids(res.Tasks); !slices.Equal(got, want) {
				t.Errorf("tasks %q, want %q", got, want)
			}
			if res.Tasks == nil {
				t.Error("tasks is nil, want an empty list")
			}
		})
	}
	t.Run("totalSize counts every match", func(t *testing.T) {
		t.Parallel()
		res, err := h.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: "c1", PageSize: a2a.Ptr[int32](1)})
		if err != nil {
			t.Fatal(err)
		}
		if res.TotalSize != 3 || len(res.Tasks) != 1 || res.NextPageToken == "" {
			t.Errorf("totalSize %d, %d tasks, next %q; want 3, 1 and a token", res.TotalSize, len(res.Tasks), res.NextPageToken)
		}
		next, err := h.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: "c1", PageSize: a2a.Ptr[int32](5), PageToken: res.NextPageToken})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{t2.ID, t1.ID}; !slices.Equal(ids(next.Tasks), want) || next.TotalSize != 3 || next.NextPageToken != "" {
			t.Errorf("second page %q total %d next %q, want %q 3 \"\"", ids(next.Tasks), next.TotalSize, next.NextPageToken, want)
		}
	})
}

func TestListTasksArtifacts(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted, server.WithClock(newClock(time.Second).Now))
	ctx := testCtx(t)
	ts := createTasks(t, h, ctx, "artifact", "complete")
	with, without := ts[0].ID, ts[1].ID
	tests := []struct {
		name    string
		include *bool
	}{
		{"unset", nil},
		{"false", a2a.Ptr(false)},
		{"true", a2a.Ptr(true)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res, err := h.ListTasks(ctx, &a2a.ListTasksRequest{IncludeArtifacts: tc.include})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tasks) != 2 {
				t.Fatalf("%d tasks, want 2", len(res.Tasks))
			}
			for _, task := range res.Tasks {
				b, err := json.Marshal(task)
				if err != nil {
					t.Fatal(err)
				}
				inJSON := strings.Contains(string(b), `"artifacts"`)
				if tc.include == nil || !*tc.include {
					if task.Artifacts != nil || inJSON {
						t.Errorf("task %s has artifacts %#v (in JSON: %v), want them omitted", task.ID, task.Artifacts, inJSON)
					}
					continue
				}
				switch task.ID {
				case with:
					if len(task.Artifacts) != 1 || task.Artifacts[0].ArtifactID != "out" {
						t.Errorf("artifacts %+v, want the task's one", task.Artifacts)
					}
				case without:
					if task.Artifacts == nil || len(task.Artifacts) != 0 || !strings.Contains(string(b), `"artifacts":[]`) {
						t.Errorf("artifacts %#v (JSON %s), want present and empty", task.Artifacts, b)
					}
				}
			}
		})
	}
	// Whatever ListTasks left out, GetTask still has.
	if got := getTask(t, h, ctx, with); len(got.Artifacts) != 1 {
		t.Errorf("GetTask has %d artifacts after ListTasks, want 1", len(got.Artifacts))
	}
}

func TestCancelTask(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	started := make(chan string, 1)
	observed := make(chan error, 1)
	writes := make(chan [2]error, 1)
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.Working(ctx, "working"); err != nil {
			return err
		}
		if err := w.Flush(ctx); err != nil {
			return err
		}
		started <- req.TaskID
		<-ctx.Done()
		observed <- ctx.Err()
		// Too late: the task is canceled.
		writes <- [2]error{
			w.Complete(context.Background(), "finished anyway"),
			w.Artifact(context.Background(), a2a.Artifact{Parts: []a2a.Part{a2a.TextPart("late")}}),
		}
		return ctx.Err()
	})
	blocked := sendAsync(h, ctx, newRequest("work"))
	id := recv(t, started)
	st := openStream(t, ctx, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}))
	st.Next() // the snapshot

	task, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id, Metadata: map[string]any{"reason": "changed my mind"}})
	if err != nil {
		t.Fatal(err)
	}
	if task.ID != id || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask returned %s %v, want %s canceled", task.ID, task.Status.State, id)
	}
	if m := task.Status.Message; m == nil || m.Text() == "" || m.Role != a2a.RoleAgent || m.TaskID != id || m.ContextID != task.ContextID || m.MessageID == "" {
		t.Errorf("canceled status message %+v, want an agent message of the task saying why", m)
	}
	if want := []string{"work", "working"}; !slices.Equal(texts(task.History), want) {
		t.Errorf("history %q, want %q", texts(task.History), want)
	}
	if err := recv(t, observed); !errors.Is(err, context.Canceled) {
		t.Errorf("agent context ended with %v, want context.Canceled", err)
	}
	for i, err := range recv(t, writes) {
		if !errors.Is(err, server.ErrTaskClosed) {
			t.Errorf("write %d after cancel: %v, want ErrTaskClosed", i, err)
		}
	}
	r := recv(t, blocked)
	if r.err != nil {
		t.Fatalf("blocking SendMessage: %v", r.err)
	}
	if got := r.res.Result.(*a2a.Task).Status.State; got != a2a.TaskStateCanceled {
		t.Errorf("blocking SendMessage returned %v, want canceled", got)
	}
	// The stream carries the cancellation, with its metadata, and ends.
	u := asStatus(t, st.Next())
	if u.Status.State != a2a.TaskStateCanceled || u.Metadata["reason"] != "changed my mind" {
		t.Errorf("stream frame %v with metadata %v, want canceled with the request's metadata", u.Status.State, u.Metadata)
	}
	st.End()
	if got := getTask(t, h, ctx, id); got.Status.State != a2a.TaskStateCanceled || got.Status.Message.Text() != task.Status.Message.Text() {
		t.Errorf("GetTask %v %q, want what CancelTask returned", got.Status.State, got.Status.Message.Text())
	}

	t.Run("again", func(t *testing.T) {
		_, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id})
		e := wantErr(t, err, a2a.ErrTaskNotCancelable)
		if e.Metadata["taskId"] != id || e.Metadata["state"] != a2a.TaskStateCanceled.String() {
			t.Errorf("metadata %v, want the task and its state", e.Metadata)
		}
	})
}

func TestCancelTaskStates(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := v1(testCtx(t))
	tests := []struct {
		text string
		want *a2a.Error // nil: canceled
	}{
		{"input", nil},
		{"auth", nil},
		{"complete", a2a.ErrTaskNotCancelable},
		{"fail", a2a.ErrTaskNotCancelable},
		{"reject", a2a.ErrTaskNotCancelable},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			t.Parallel()
			task := sendTask(t, h, ctx, newRequest(tc.text))
			got, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
			if tc.want != nil {
				wantErr(t, err, tc.want)
				if after := getTask(t, h, ctx, task.ID); after.Status.State != task.Status.State {
					t.Errorf("state %v after a refused cancel, want %v", after.Status.State, task.Status.State)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.State != a2a.TaskStateCanceled {
				t.Errorf("state %v, want canceled", got.Status.State)
			}
			// The question the agent asked is kept in history.
			if n := len(got.History); n != 2 {
				t.Errorf("%d history messages, want the user's and the agent's question", n)
			}
			_, err = h.SendMessage(ctx, continueRequest(task.ID, "complete"))
			wantErr(t, err, a2a.ErrUnsupportedOperation)
		})
	}
	t.Run("unknown", func(t *testing.T) {
		t.Parallel()
		_, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: "no-such-task"})
		if e := wantErr(t, err, a2a.ErrTaskNotFound); e.Metadata["taskId"] != "no-such-task" {
			t.Errorf("metadata taskId %q", e.Metadata["taskId"])
		}
	})
	t.Run("no id", func(t *testing.T) {
		t.Parallel()
		_, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{})
		wantViolation(t, err, "id")
	})
}

func TestCancelTaskStopsEveryExecution(t *testing.T) {
	t.Parallel()
	// An agent still waiting after auth-required, and a second call of the
	// agent for the client's message: canceling the task stops both.
	ctx := testCtx(t)
	running := make(chan struct{}, 2)
	stopped := make(chan error, 2)
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Task == nil {
			if err := w.RequireAuth(ctx, "Sign in, please."); err != nil {
				return err
			}
		} else if err := w.Working(ctx, "continuing"); err != nil {
			return err
		}
		running <- struct{}{}
		<-ctx.Done()
		stopped <- ctx.Err()
		return ctx.Err()
	})
	task := sendTask(t, h, ctx, newRequest("go"))
	recv(t, running)
	sendTask(t, h, ctx, immediate(continueRequest(task.ID, "here is more")))
	recv(t, running)
	if _, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := recv(t, stopped); !errors.Is(err, context.Canceled) {
			t.Errorf("execution ended with %v, want context.Canceled", err)
		}
	}
}
