package client_test

import (
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/server"
)

// TestOperations runs every operation against our server, over each
// binding.
func TestOperations(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		run  func(t *testing.T, c *client.Client)
	}{
		{"SendMessage task", func(t *testing.T, c *client.Client) {
			task := send(t, c, "hello", false)
			if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Text() != "echo: hello" {
				t.Errorf("task = %+v", task)
			}
			if len(task.History) == 0 || task.History[0].Text() != "hello" {
				t.Errorf("history = %+v", task.History)
			}
		}},
		{"SendMessage direct reply", func(t *testing.T, c *client.Client) {
			resp, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("reply hi")})
			if err != nil {
				t.Fatal(err)
			}
			m, ok := resp.Result.(*a2a.Message)
			if !ok || m.Text() != "re: hi" || m.Role != a2a.RoleAgent {
				t.Errorf("result = %#v", resp.Result)
			}
		}},
		{"SendMessage multi-turn", func(t *testing.T, c *client.Client) {
			task := send(t, c, "ask", false)
			if task.Status.State != a2a.TaskStateInputRequired || task.Status.Message.Text() != "what is the answer?" {
				t.Fatalf("first turn: %+v", task.Status)
			}
			m := client.TextMessage("42")
			m.TaskID, m.ContextID = task.ID, task.ContextID
			resp, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m})
			if err != nil {
				t.Fatal(err)
			}
			done := resp.Result.(*a2a.Task)
			if done.ID != task.ID || done.Status.State != a2a.TaskStateCompleted || done.Artifacts[0].Text() != "answer: 42" {
				t.Errorf("second turn: %+v", done)
			}
		}},
		{"SendStreamingMessage", func(t *testing.T, c *client.Client) {
			evs := collect(t, c.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("hi")}))
			want := []string{"task SUBMITTED", "status WORKING", "artifact echo echo: hi", "status COMPLETED"}
			if got := describe(evs); !reflect.DeepEqual(got, want) {
				t.Errorf("events = %q, want %q", got, want)
			}
		}},
		{"SendStreamingMessage direct reply", func(t *testing.T, c *client.Client) {
			evs := collect(t, c.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("reply yo")}))
			if got := describe(evs); !reflect.DeepEqual(got, []string{"message re: yo"}) {
				t.Errorf("events = %q", got)
			}
		}},
		{"GetTask", func(t *testing.T, c *client.Client) {
			task := send(t, c, "hello", false)
			got, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted || len(got.History) == 0 {
				t.Errorf("GetTask = %+v", got)
			}
			got, err = c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID, HistoryLength: a2a.Ptr[int32](0)})
			if err != nil {
				t.Fatal(err)
			}
			if got.History != nil {
				t.Errorf("historyLength 0: history = %+v", got.History)
			}
		}},
		{"ListTasks", func(t *testing.T, c *client.Client) {
			task := send(t, c, "hello", false)
			page, err := c.ListTasks(t.Context(), &a2a.ListTasksRequest{
				ContextID: task.ContextID, Status: a2a.TaskStateCompleted,
				PageSize: a2a.Ptr[int32](10), IncludeArtifacts: a2a.Ptr(true), HistoryLength: a2a.Ptr[int32](1),
				StatusTimestampAfter: a2a.TimestampOf(task.Status.Timestamp.Add(-1)),
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Tasks) != 1 || page.Tasks[0].ID != task.ID || page.TotalSize != 1 || page.NextPageToken != "" {
				t.Fatalf("page = %+v", page)
			}
			if len(page.Tasks[0].Artifacts) != 1 || len(page.Tasks[0].History) != 1 {
				t.Errorf("task in page = %+v", page.Tasks[0])
			}
		}},
		{"CancelTask", func(t *testing.T, c *client.Client) {
			task := send(t, c, "hang", true)
			got, err := c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: task.ID, Metadata: map[string]any{"why": "test"}})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status.State != a2a.TaskStateCanceled {
				t.Errorf("state = %v", got.Status.State)
			}
		}},
		{"SubscribeToTask", func(t *testing.T, c *client.Client) {
			task := send(t, c, "hang", true)
			var got []a2a.Event
			for ev, err := range c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: task.ID}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ev)
				if len(got) == 1 {
					if _, err := c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
						t.Fatal(err)
					}
				}
			}
			// The snapshot may already say working; the stream ends with
			// the cancel.
			d := describe(got)
			if d[0] != "task WORKING" && d[0] != "task SUBMITTED" || d[len(d)-1] != "status CANCELED" {
				t.Errorf("events = %q", d)
			}
		}},
		{"push config CRUD", func(t *testing.T, c *client.Client) {
			task := send(t, c, "hang", true)
			defer c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: task.ID})
			cfg, err := c.CreateTaskPushNotificationConfig(t.Context(), &a2a.TaskPushNotificationConfig{
				TaskID: task.ID, URL: "https://hooks.example.com/a2a", Token: "tok",
				Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"},
			})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.ID == "" || cfg.TaskID != task.ID || cfg.URL != "https://hooks.example.com/a2a" {
				t.Fatalf("created = %+v", cfg)
			}
			got, err := c.GetTaskPushNotificationConfig(t.Context(), &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: cfg.ID})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, cfg) {
				t.Errorf("Get = %+v, want %+v", got, cfg)
			}
			if _, err := c.CreateTaskPushNotificationConfig(t.Context(), &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "second", URL: "https://hooks.example.com/2"}); err != nil {
				t.Fatal(err)
			}
			list, err := c.ListTaskPushNotificationConfigs(t.Context(), &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID, PageSize: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.Configs) != 1 || list.NextPageToken == "" {
				t.Fatalf("first page = %+v", list)
			}
			rest, err := c.ListTaskPushNotificationConfigs(t.Context(), &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID, PageToken: list.NextPageToken})
			if err != nil {
				t.Fatal(err)
			}
			if len(rest.Configs) != 1 || rest.Configs[0].ID == list.Configs[0].ID {
				t.Fatalf("second page = %+v", rest)
			}
			for range 2 { // idempotent
				if err := c.DeleteTaskPushNotificationConfig(t.Context(), &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: cfg.ID}); err != nil {
					t.Fatal(err)
				}
			}
			_, err = c.GetTaskPushNotificationConfig(t.Context(), &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: cfg.ID})
			if !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("Get after Delete: %v", err)
			}
		}},
		{"GetExtendedAgentCard", func(t *testing.T, c *client.Client) {
			card, err := c.GetExtendedAgentCard(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if card.Description != "The extended card." || c.Card().Description != card.Description {
				t.Errorf("extended card = %q, card in use %q", card.Description, c.Card().Description)
			}
		}},
		{"AllTasks early stop", func(t *testing.T, c *client.Client) {
			send(t, c, "one", false)
			send(t, c, "two", false)
			n := 0
			for task, err := range c.AllTasks(t.Context(), &a2a.ListTasksRequest{PageSize: a2a.Ptr[int32](1)}) {
				if err != nil || task == nil {
					t.Fatal(err)
				}
				n++
				break
			}
			if n != 1 {
				t.Errorf("n = %d", n)
			}
		}},
		{"path values escaped", func(t *testing.T, c *client.Client) {
			// A colon and a slash in an id must stay data: the answer is
			// about the task, not a missing route.
			_, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "a:cancel/b c"})
			if !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("err = %v, want TaskNotFound", err)
			}
		}},
	}
	ts := newTestServer(t, serverOpts{})
	for _, b := range bindings {
		c := newClient(t, ts.URL, b)
		for _, tc := range cases {
			t.Run(b+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				tc.run(t, c)
			})
		}
	}
}

// TestErrors checks that each error kind comes back typed over each
// binding.
func TestErrors(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, serverOpts{})
	noPush := newTestServer(t, serverOpts{card: func(c *a2a.AgentCard) {
		c.Capabilities.PushNotifications = nil
		c.Capabilities.Streaming = nil
		c.Capabilities.ExtendedAgentCard = nil
	}})
	// A proxy that rewrites the version, so the server rejects every call.
	oldVersion := newTestServer(t, serverOpts{wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != server.WellKnownCardPath {
				r.Header.Set("A2A-Version", "0.3")
			}
			next.ServeHTTP(w, r)
		})
	}})
	cases := []struct {
		name   string
		server *testServer
		want   *a2a.Error
		call   func(t *testing.T, c *client.Client) error
	}{
		{"TaskNotFound", ts, a2a.ErrTaskNotFound, func(t *testing.T, c *client.Client) error {
			_, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "nope"})
			return err
		}},
		{"TaskNotCancelable", ts, a2a.ErrTaskNotCancelable, func(t *testing.T, c *client.Client) error {
			task := send(t, c, "hello", false)
			_, err := c.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: task.ID})
			return err
		}},
		{"UnsupportedOperation on send", ts, a2a.ErrUnsupportedOperation, func(t *testing.T, c *client.Client) error {
			task := send(t, c, "hello", false)
			m := client.TextMessage("more")
			m.TaskID = task.ID
			_, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m})
			return err
		}},
		{"UnsupportedOperation on subscribe", ts, a2a.ErrUnsupportedOperation, func(t *testing.T, c *client.Client) error {
			task := send(t, c, "hello", false)
			for _, err := range c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: task.ID}) {
				return err
			}
			return nil
		}},
		{"UnsupportedOperation without streaming", noPush, a2a.ErrUnsupportedOperation, func(t *testing.T, c *client.Client) error {
			for _, err := range c.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: client.TextMessage("x")}) {
				return err
			}
			return nil
		}},
		{"InvalidParams", ts, a2a.ErrInvalidParams, func(t *testing.T, c *client.Client) error {
			_, err := c.ListTasks(t.Context(), &a2a.ListTasksRequest{PageSize: a2a.Ptr[int32](500)})
			var ae *a2a.Error
			if errors.As(err, &ae) && (len(ae.Violations) != 1 || ae.Violations[0].Field != "pageSize") {
				t.Errorf("violations = %+v", ae.Violations)
			}
			return err
		}},
		{"InvalidParams empty message", ts, a2a.ErrInvalidParams, func(t *testing.T, c *client.Client) error {
			_, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m", Role: a2a.RoleUser}})
			return err
		}},
		{"ContentTypeNotSupported", ts, a2a.ErrContentTypeNotSupported, func(t *testing.T, c *client.Client) error {
			m := client.TextMessage("x")
			m.Parts = append(m.Parts, a2a.Part{Content: a2a.Raw("png"), MediaType: "image/png"})
			_, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: m})
			return err
		}},
		{"PushNotificationNotSupported", noPush, a2a.ErrPushNotificationNotSupported, func(t *testing.T, c *client.Client) error {
			_, err := c.ListTaskPushNotificationConfigs(t.Context(), &a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t"})
			return err
		}},
		{"UnsupportedOperation extended card", noPush, a2a.ErrUnsupportedOperation, func(t *testing.T, c *client.Client) error {
			_, err := c.GetExtendedAgentCard(t.Context())
			return err
		}},
		{"VersionNotSupported", oldVersion, a2a.ErrVersionNotSupported, func(t *testing.T, c *client.Client) error {
			_, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "x"})
			return err
		}},
		{"VersionNotSupported on a stream", oldVersion, a2a.ErrVersionNotSupported, func(t *testing.T, c *client.Client) error {
			for _, err := range c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: "x"}) {
				return err
			}
			return nil
		}},
	}
	for _, b := range bindings {
		for _, tc := range cases {
			t.Run(b+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				c := newClient(t, tc.server.URL, b)
				err := tc.call(t, c)
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want.Code)
				}
				if got := errorKind(t, err); got != tc.want.Code {
					t.Errorf("kind = %v", got)
				}
				if !strings.HasPrefix(err.Error(), "a2a: "+tc.want.Code.String()) {
					t.Errorf("message = %q", err.Error())
				}
			})
		}
	}
}

// TestRequiredIDs checks that an empty path value is refused the same way
// on both bindings (locally on HTTP+JSON, where it would name another
// route).
func TestRequiredIDs(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, serverOpts{})
	for _, b := range bindings {
		c := newClient(t, ts.URL, b)
		_, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{})
		if !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("%s: GetTask without id: %v", b, err)
		}
		err = c.DeleteTaskPushNotificationConfig(t.Context(), &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: "t"})
		if !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("%s: Delete without id: %v", b, err)
		}
		if _, err := c.GetTask(t.Context(), nil); err == nil || errors.As(err, new(*a2a.Error)) {
			t.Errorf("%s: nil request: %v", b, err)
		}
	}
}

// TestAllTasks walks 120 tasks in pages of 50, passing each token exactly.
func TestAllTasks(t *testing.T) {
	t.Parallel()
	for _, b := range bindings {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			ts := newTestServer(t, serverOpts{wrap: rec.wrap})
			c := newClient(t, ts.URL, b)
			// Blocking sends: each task has ended, and keeps its place in
			// the list, before the next is sent. Sent with
			// returnImmediately, the last tasks were still working on a
			// loaded machine when the pages were read, and moved to the
			// front as they completed, between ListTasks and AllTasks's
			// pages.
			want := map[string]bool{}
			for i := range 120 {
				task := send(t, c, "task "+string(rune('a'+i%26)), false)
				if !task.Status.State.Terminal() {
					t.Fatalf("a blocking send returned task %s %v", task.ID, task.Status.State)
				}
				want[task.ID] = true
			}
			first, err := c.ListTasks(t.Context(), &a2a.ListTasksRequest{PageSize: a2a.Ptr[int32](50)})
			if err != nil {
				t.Fatal(err)
			}
			before := len(rec.all())
			got := map[string]bool{}
			var order []string
			for task, err := range c.AllTasks(t.Context(), &a2a.ListTasksRequest{PageSize: a2a.Ptr[int32](50), HistoryLength: a2a.Ptr[int32](0)}) {
				if err != nil {
					t.Fatal(err)
				}
				if got[task.ID] {
					t.Fatalf("task %s listed twice", task.ID)
				}
				got[task.ID] = true
				order = append(order, task.ID)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("listed %d tasks, want the %d sent", len(got), len(want))
			}
			if !slices.Equal(order[:50], ids(first.Tasks)) {
				t.Errorf("the first page differs from ListTasks'")
			}
			reqs := rec.all()[before:]
			if len(reqs) != 3 {
				t.Fatalf("%d requests, want 3 pages", len(reqs))
			}
			// The second request carries the first page's token, as sent.
			if !strings.Contains(reqs[1].query+reqs[1].body, first.NextPageToken) {
				t.Errorf("second request %q %q lacks token %q", reqs[1].query, reqs[1].body, first.NextPageToken)
			}
		})
	}
}

func ids(tasks []a2a.Task) []string {
	var out []string
	for _, t := range tasks {
		out = append(out, t.ID)
	}
	return out
}
