package server_test

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

func TestPushConfigCRUD(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := v1(testCtx(t))
	task := sendTask(t, h, ctx, newRequest("input"))

	generated, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{
		TaskID: task.ID, URL: "https://example.com/hook", Token: "tok",
		Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if generated.ID == "" || generated.TaskID != task.ID || generated.URL != "https://example.com/hook" || generated.Token != "tok" ||
		generated.Authentication == nil || generated.Authentication.Credentials != "secret" {
		t.Errorf("created %+v, want the config with a new id", generated)
	}
	given, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "mine", URL: "http://example.com/other"})
	if err != nil {
		t.Fatal(err)
	}
	if given.ID != "mine" {
		t.Errorf("created id %q, want the given %q", given.ID, "mine")
	}
	if generated.ID == given.ID {
		t.Error("generated id collides")
	}

	get := func(id string) (*a2a.TaskPushNotificationConfig, error) {
		return h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: id})
	}
	for _, want := range []*a2a.TaskPushNotificationConfig{generated, given} {
		got, err := get(want.ID)
		if err != nil {
			t.Fatalf("get %s: %v", want.ID, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("get %s = %+v, want %+v", want.ID, got, want)
		}
	}
	list := func() []string {
		t.Helper()
		res, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if res.NextPageToken != "" {
			t.Errorf("nextPageToken %q without a page size", res.NextPageToken)
		}
		var out []string
		for _, c := range res.Configs {
			out = append(out, c.ID)
		}
		slices.Sort(out)
		return out
	}
	if got, want := list(), sorted(generated.ID, "mine"); !slices.Equal(got, want) {
		t.Errorf("list %q, want %q", got, want)
	}

	// Creating with an existing id replaces the config.
	if _, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "mine", URL: "https://example.com/replaced"}); err != nil {
		t.Fatal(err)
	}
	if got, err := get("mine"); err != nil || got.URL != "https://example.com/replaced" {
		t.Errorf("after replacing: %+v, %v", got, err)
	}

	del := func(id string) error {
		return h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: id})
	}
	if err := del("mine"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := del("mine"); err != nil {
		t.Errorf("delete again: %v, want success", err)
	}
	if err := del("never-existed"); err != nil {
		t.Errorf("delete of an unknown config: %v, want success", err)
	}
	_, err = get("mine")
	if e := wantErr(t, err, a2a.ErrTaskNotFound); e.Metadata["taskId"] != task.ID || e.Metadata["configId"] != "mine" {
		t.Errorf("metadata %v, want taskId and configId", e.Metadata)
	}
	if got, want := list(), []string{generated.ID}; !slices.Equal(got, want) {
		t.Errorf("list after delete %q, want %q", got, want)
	}
	// A config belongs to its task.
	other := sendTask(t, h, ctx, newRequest("input"))
	_, err = h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: other.ID, ID: generated.ID})
	wantErr(t, err, a2a.ErrTaskNotFound)
}

func sorted(s ...string) []string {
	slices.Sort(s)
	return s
}

func TestPushConfigUnknownTask(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := testCtx(t)
	const id = "no-such-task"
	calls := map[string]func() error{
		"Create": func() error {
			_, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: id, URL: "https://example.com/hook"})
			return err
		},
		"Get": func() error {
			_, err := h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: id, ID: "cfg"})
			return err
		},
		"List": func() error {
			_, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: id})
			return err
		},
		"Delete": func() error {
			return h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: id, ID: "cfg"})
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if e := wantErr(t, call(), a2a.ErrTaskNotFound); e.Metadata["taskId"] != id {
				t.Errorf("metadata taskId %q, want %q", e.Metadata["taskId"], id)
			}
		})
	}
}

func TestPushConfigValidation(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := testCtx(t)
	task := sendTask(t, h, ctx, newRequest("input")).ID
	create := func(c a2a.TaskPushNotificationConfig) func() error {
		return func() error {
			_, err := h.CreateTaskPushNotificationConfig(ctx, &c)
			return err
		}
	}
	list := func(r a2a.ListTaskPushNotificationConfigsRequest) func() error {
		return func() error {
			_, err := h.ListTaskPushNotificationConfigs(ctx, &r)
			return err
		}
	}
	tests := []struct {
		name  string
		call  func() error
		field string
	}{
		{"create without taskId", create(a2a.TaskPushNotificationConfig{URL: "https://example.com/hook"}), "taskId"},
		{"create without url", create(a2a.TaskPushNotificationConfig{TaskID: task}), "url"},
		{"create with relative url", create(a2a.TaskPushNotificationConfig{TaskID: task, URL: "/hook"}), "url"},
		{"create with mailto url", create(a2a.TaskPushNotificationConfig{TaskID: task, URL: "mailto:me@example.com"}), "url"},
		{"create with scheme-less auth", create(a2a.TaskPushNotificationConfig{TaskID: task, URL: "https://example.com/hook", Authentication: &a2a.AuthenticationInfo{Credentials: "x"}}), "authentication.scheme"},
		{"get without taskId", func() error {
			_, err := h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{ID: "cfg"})
			return err
		}, "taskId"},
		{"get without id", func() error {
			_, err := h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task})
			return err
		}, "id"},
		{"delete without taskId", func() error {
			return h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{ID: "cfg"})
		}, "taskId"},
		{"delete without id", func() error {
			return h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task})
		}, "id"},
		{"list without taskId", list(a2a.ListTaskPushNotificationConfigsRequest{}), "taskId"},
		{"list with negative pageSize", list(a2a.ListTaskPushNotificationConfigsRequest{TaskID: task, PageSize: -1}), "pageSize"},
		{"list with pageSize 101", list(a2a.ListTaskPushNotificationConfigsRequest{TaskID: task, PageSize: 101}), "pageSize"},
		{"list with garbage pageToken", list(a2a.ListTaskPushNotificationConfigsRequest{TaskID: task, PageToken: "not a token!"}), "pageToken"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantViolation(t, tc.call(), tc.field)
		})
	}
}

func TestPushConfigPaging(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := testCtx(t)
	task := sendTask(t, h, ctx, newRequest("input")).ID
	all := []string{"c1", "c2", "c3", "c4", "c5"}
	for _, id := range all {
		if _, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task, ID: id, URL: "https://example.com/" + id}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		pageSize int32
		pages    [][]string
	}{
		{0, [][]string{all}},
		{1, [][]string{{"c1"}, {"c2"}, {"c3"}, {"c4"}, {"c5"}}},
		{2, [][]string{{"c1", "c2"}, {"c3", "c4"}, {"c5"}}},
		{3, [][]string{{"c1", "c2", "c3"}, {"c4", "c5"}}},
		{5, [][]string{all}},
		{100, [][]string{all}},
	}
	for _, tc := range tests {
		t.Run("pageSize "+strconv.Itoa(int(tc.pageSize)), func(t *testing.T) {
			t.Parallel()
			token := ""
			for i, want := range tc.pages {
				res, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task, PageSize: tc.pageSize, PageToken: token})
				if err != nil {
					t.Fatalf("page %d: %v", i, err)
				}
				var got []string
				for _, c := range res.Configs {
					got = append(got, c.ID)
				}
				if !slices.Equal(got, want) {
					t.Errorf("page %d: %q, want %q", i, got, want)
				}
				if last := i == len(tc.pages)-1; last != (res.NextPageToken == "") {
					t.Fatalf("page %d of %d: nextPageToken %q", i+1, len(tc.pages), res.NextPageToken)
				}
				token = res.NextPageToken
			}
		})
	}
}

func TestPushNotSupported(t *testing.T) {
	t.Parallel()
	for _, push := range []*bool{nil, a2a.Ptr(false)} {
		name := "absent"
		if push != nil {
			name = "false"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			h := newHandler(t, testCard(func(c *a2a.AgentCard) { c.Capabilities.PushNotifications = push }), func(ctx context.Context, req *server.Request, w *server.Writer) error {
				calls.Add(1)
				return scripted(ctx, req, w)
			})
			ctx := v1(testCtx(t))
			task := sendTask(t, h, ctx, newRequest("input")).ID
			withHook := func(r *a2a.SendMessageRequest) *a2a.SendMessageRequest {
				r.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: "https://example.com/hook"}}
				return r
			}
			calls.Store(0)
			tests := map[string]func() error{
				"Create": func() error {
					_, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task, URL: "https://example.com/hook"})
					return err
				},
				"Get": func() error {
					_, err := h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task, ID: "cfg"})
					return err
				},
				"List": func() error {
					_, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task})
					return err
				},
				"Delete": func() error {
					return h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task, ID: "cfg"})
				},
				"SendMessage": func() error {
					_, err := h.SendMessage(ctx, withHook(newRequest("complete")))
					return err
				},
				"SendMessage continuing": func() error {
					_, err := h.SendMessage(ctx, withHook(continueRequest(task, "complete")))
					return err
				},
				"SendStreamingMessage": func() error {
					return firstErr(h.SendStreamingMessage(ctx, withHook(newRequest("complete"))))
				},
			}
			for name, call := range tests {
				t.Run(name, func(t *testing.T) {
					wantErr(t, call(), a2a.ErrPushNotificationNotSupported)
				})
			}
			if n := calls.Load(); n != 0 {
				t.Errorf("the agent was called %d times", n)
			}
			if got := getTask(t, h, ctx, task); got.Status.State != a2a.TaskStateInputRequired {
				t.Errorf("task is %v, want untouched", got.Status.State)
			}
		})
	}
}

func TestSendMessageRegistersPushConfig(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := testCtx(t)
	configs := func(task string) []a2a.TaskPushNotificationConfig {
		t.Helper()
		res, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task})
		if err != nil {
			t.Fatal(err)
		}
		return res.Configs
	}
	req := newRequest("input")
	req.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{
		URL: "https://example.com/hook", Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "s"},
	}}
	task := sendTask(t, h, ctx, req)
	cs := configs(task.ID)
	if len(cs) != 1 || cs[0].ID == "" || cs[0].TaskID != task.ID || cs[0].URL != "https://example.com/hook" || cs[0].Authentication.Credentials != "s" {
		t.Fatalf("configs %+v, want the one sent, with an id, for the new task", cs)
	}
	if req.Configuration.TaskPushNotificationConfig.TaskID != "" || req.Configuration.TaskPushNotificationConfig.ID != "" {
		t.Error("SendMessage modified the caller's push config")
	}

	// A continuation may register another.
	cont := continueRequest(task.ID, "complete")
	cont.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{ID: "second", URL: "https://example.com/second"}}
	sendTask(t, h, ctx, cont)
	var ids []string
	for _, c := range configs(task.ID) {
		ids = append(ids, c.ID)
	}
	if !slices.Contains(ids, "second") || len(ids) != 2 {
		t.Errorf("configs %q after the continuation, want the first and %q", ids, "second")
	}
}

// TestPushConfigHeaderInjection checks that what travels in the headers of
// a notification cannot add headers of its own (REQUIREMENTS B4), on both
// ways of registering a webhook, and that the error does not repeat the
// secret.
func TestPushConfigHeaderInjection(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := testCtx(t)
	task := sendTask(t, h, ctx, newRequest("input")).ID
	auth := func(scheme, credentials string) *a2a.AuthenticationInfo {
		return &a2a.AuthenticationInfo{Scheme: scheme, Credentials: credentials}
	}
	tests := []struct {
		name  string
		cfg   a2a.TaskPushNotificationConfig
		field string
	}{
		{"CRLF in token", a2a.TaskPushNotificationConfig{Token: "tok-SECRET\r\nX-Evil: 1"}, "token"},
		{"LF in token", a2a.TaskPushNotificationConfig{Token: "tok-SECRET\nX-Evil: 1"}, "token"},
		{"NUL in token", a2a.TaskPushNotificationConfig{Token: "tok-SECRET\x00"}, "token"},
		{"DEL in token", a2a.TaskPushNotificationConfig{Token: "tok-SECRET\x7f"}, "token"},
		{"C1 control in token", a2a.TaskPushNotificationConfig{Token: "tok-SECRET\u0085"}, "token"},
		{"bad UTF-8 in token", a2a.TaskPushNotificationConfig{Token: "tok-SECRET\xff"}, "token"},
		{"space around token", a2a.TaskPushNotificationConfig{Token: " tok-SECRET"}, "token"},
		{"CRLF in credentials", a2a.TaskPushNotificationConfig{Authentication: auth("Bearer", "cred-SECRET\r\nX-Evil: 1")}, "authentication.credentials"},
		{"CR in credentials", a2a.TaskPushNotificationConfig{Authentication: auth("Bearer", "cred-SECRET\r")}, "authentication.credentials"},
		{"tab in credentials", a2a.TaskPushNotificationConfig{Authentication: auth("Bearer", "cred\t-SECRET")}, "authentication.credentials"},
		{"space after credentials", a2a.TaskPushNotificationConfig{Authentication: auth("Bearer", "cred-SECRET ")}, "authentication.credentials"},
		{"CRLF in scheme", a2a.TaskPushNotificationConfig{Authentication: auth("Bearer\r\nX-Evil:", "cred-SECRET")}, "authentication.scheme"},
		{"space in scheme", a2a.TaskPushNotificationConfig{Authentication: auth("Bearer cred-SECRET", "")}, "authentication.scheme"},
		{"colon in scheme", a2a.TaskPushNotificationConfig{Authentication: auth("X-Evil:", "cred-SECRET")}, "authentication.scheme"},
		{"url without host", a2a.TaskPushNotificationConfig{URL: "http:///hook"}, "url"},
		{"url with empty host", a2a.TaskPushNotificationConfig{URL: "https://:8443/hook"}, "url"},
		{"opaque url", a2a.TaskPushNotificationConfig{URL: "http:example.com/hook"}, "url"},
		{"file url", a2a.TaskPushNotificationConfig{URL: "file:///etc/passwd"}, "url"},
		{"url with CRLF", a2a.TaskPushNotificationConfig{URL: "https://example.com/hook\r\nX-Evil: 1"}, "url"},
		{"url too long", a2a.TaskPushNotificationConfig{URL: "https://example.com/" + strings.Repeat("a", 5000)}, "url"},
	}
	for _, tc := range tests {
		if tc.cfg.URL == "" {
			tc.cfg.URL = "https://example.com/hook"
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := tc.cfg
			c.TaskID = task
			_, err := h.CreateTaskPushNotificationConfig(ctx, &c)
			wantViolation(t, err, tc.field)
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("error %q repeats the secret", err)
			}

			send := newRequest("complete")
			c = tc.cfg
			send.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &c}
			_, err = h.SendMessage(ctx, send)
			wantViolation(t, err, "configuration.taskPushNotificationConfig."+tc.field)
		})
	}
	res, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task})
	if err != nil || len(res.Configs) != 0 {
		t.Errorf("configs %+v (%v), want none registered", res, err)
	}
}

// TestPushConfigAccepted checks configs that must pass registration: the
// address of a webhook is judged when it is called (push.Guard), not here,
// so a loopback webhook registers.
func TestPushConfigAccepted(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := testCtx(t)
	task := sendTask(t, h, ctx, newRequest("input")).ID
	for _, c := range []a2a.TaskPushNotificationConfig{
		{URL: "http://127.0.0.1:9999/hook", Token: "tok"},
		{URL: "http://[::1]:9999/hook"},
		{URL: "https://hooks.example.com:8443/a2a?x=1", Token: "abc.DEF-123_~+/="},
		{URL: "https://example.com/hook", Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "eyJhbGciOi.x.y"}},
		{URL: "https://example.com/hook", Authentication: &a2a.AuthenticationInfo{Scheme: "Digest", Credentials: `username="a", realm="b"`}},
		{URL: "https://example.com/hook", Authentication: &a2a.AuthenticationInfo{Scheme: "x-custom!#$%&'*+-.^_`|~1"}},
		{URL: "https://example.com/hook", Token: "jeton-été"},
	} {
		c.TaskID = task
		if _, err := h.CreateTaskPushNotificationConfig(ctx, &c); err != nil {
			t.Errorf("config %+v refused: %v", c, err)
		}
	}
}

func TestPushConfigCap(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := testCtx(t)
	task := sendTask(t, h, ctx, newRequest("input")).ID
	create := func(id string) error {
		_, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task, ID: id, URL: "https://example.com/" + id})
		return err
	}
	for i := range server.MaxPushConfigsPerTask {
		if err := create("c" + strconv.Itoa(i)); err != nil {
			t.Fatalf("config %d: %v", i, err)
		}
	}
	for _, id := range []string{"one-more", ""} {
		e := wantErr(t, create(id), a2a.ErrResourceExhausted)
		if e.Metadata["limit"] != "maxPushConfigsPerTask" || e.Metadata["value"] != strconv.Itoa(server.MaxPushConfigsPerTask) ||
			!strings.Contains(e.Message, strconv.Itoa(server.MaxPushConfigsPerTask)) {
			t.Errorf("error %q %v, want the limit named", e.Message, e.Metadata)
		}
	}
	if err := create("c3"); err != nil {
		t.Errorf("replacing a config at the cap: %v", err)
	}
	if err := h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task, ID: "c0"}); err != nil {
		t.Fatal(err)
	}
	if err := create("after-delete"); err != nil {
		t.Errorf("creating after a delete: %v", err)
	}
	// Another task has a cap of its own.
	other := sendTask(t, h, ctx, newRequest("input")).ID
	if _, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: other, URL: "https://example.com/x"}); err != nil {
		t.Errorf("another task: %v", err)
	}
}

// TestPushConfigCapConcurrent checks that concurrent creates cannot pass
// the cap together.
func TestPushConfigCapConcurrent(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := testCtx(t)
	task := sendTask(t, h, ctx, newRequest("input")).ID
	var wg sync.WaitGroup
	var ok atomic.Int32
	for range 3 * server.MaxPushConfigsPerTask {
		wg.Go(func() {
			if _, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task, URL: "https://example.com/hook"}); err == nil {
				ok.Add(1)
			}
		})
	}
	wg.Wait()
	res, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Configs); n != server.MaxPushConfigsPerTask || int(ok.Load()) != n {
		t.Errorf("%d configs stored, %d creates succeeded; want %d of each", n, ok.Load(), server.MaxPushConfigsPerTask)
	}
}

func TestPushDeliveryHeader(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := v1(testCtx(t))
	task := sendTask(t, h, ctx, newRequest("input"))
	c, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, URL: "https://example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	get := func(extensions ...string) *responseMetadata {
		md := &responseMetadata{fields: map[string]string{}}
		ctx := server.WithServiceParams(testCtx(t), server.ServiceParams{Version: a2a.ProtocolVersion, Extensions: extensions, Response: md})
		if _, err := h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: c.ID}); err != nil {
			t.Fatal(err)
		}
		return md
	}
	if md := get(); len(md.fields) != 0 || len(md.activated) != 0 {
		t.Errorf("without the extension the answer has metadata %+v", md)
	}
	md := get("https://other.example/ext", server.PushDeliveryExtension)
	if got, want := md.fields[server.PushDeliveryHeader], "delivered=2; attempts=0; last=2"; got != want {
		t.Errorf("%s = %q, want %q (a new config starts at the task's last event)", server.PushDeliveryHeader, got, want)
	}
	if len(md.activated) != 1 || md.activated[0] != server.PushDeliveryExtension {
		t.Errorf("activated %q, want the extension", md.activated)
	}

	// A config registered on a task that has ended has nothing to send,
	// and the header says so rather than look delivered.
	done := sendTask(t, h, ctx, newRequest("complete"))
	late, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: done.ID, URL: "https://example.com/hook"})
	if err != nil {
		t.Fatal(err)
	}
	md = &responseMetadata{fields: map[string]string{}}
	gctx := server.WithServiceParams(testCtx(t), server.ServiceParams{Version: a2a.ProtocolVersion, Extensions: []string{server.PushDeliveryExtension}, Response: md})
	if _, err := h.GetTaskPushNotificationConfig(gctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: done.ID, ID: late.ID}); err != nil {
		t.Fatal(err)
	}
	if got, want := md.fields[server.PushDeliveryHeader], "delivered=2; attempts=0; last=2; ended; nothing-to-send"; got != want {
		t.Errorf("on an ended task: %s = %q, want %q", server.PushDeliveryHeader, got, want)
	}
}

// responseMetadata records what the Handler adds to an answer.
type responseMetadata struct {
	activated []string
	fields    map[string]string
}

func (m *responseMetadata) ActivateExtension(uri string) { m.activated = append(m.activated, uri) }
func (m *responseMetadata) Set(key, value string)        { m.fields[key] = value }
