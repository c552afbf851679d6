package client_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/client"
)

// TestStrictAnswers: an answer whose members repeat, or match a field
// only when case is ignored, reads differently to other readers (the
// first or the exact member): the client refuses it as an invalid agent
// response naming the member, on both JSON bindings, in results, push
// configs and stream events alike. Well-formed twins of each answer are
// read, so the test shows the member is what is refused.
func TestStrictAnswers(t *testing.T) {
	t.Parallel()
	const rest, rpc = a2a.BindingHTTPJSON, a2a.BindingJSONRPC
	rpcResult := func(result string) string { return `{"jsonrpc":"2.0","id":1,"result":` + result + `}` }
	const (
		config      = `{"id":"c1","taskId":"t1","url":"https://hooks.example/a","token":"tok"}`
		configTwice = `{"id":"c1","taskId":"t1","url":"https://hooks.example/a","url":"https://evil.example/b"}`
		configCase  = `{"id":"c1","taskId":"t1","URL":"https://hooks.example/a"}`
		task        = `{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}`
		taskTwice   = `{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING","state":"TASK_STATE_COMPLETED"}}`
		taskCase    = `{"id":"t1","ContextId":"c1","status":{"state":"TASK_STATE_WORKING"}}`
	)
	getConfig := func(c *client.Client) error {
		_, err := c.GetTaskPushNotificationConfig(t.Context(), &a2a.GetTaskPushNotificationConfigRequest{TaskID: "t1", ID: "c1"})
		return err
	}
	listConfigs := func(c *client.Client) error {
		_, err := c.ListTaskPushNotificationConfigs(t.Context(), &a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t1"})
		return err
	}
	getTask := func(c *client.Client) error {
		_, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t1"})
		return err
	}
	subscribe := func(c *client.Client) error {
		for _, err := range c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: "t1"}) {
			if err != nil {
				return err
			}
		}
		return nil
	}
	cases := []struct {
		name, binding string
		call          func(*client.Client) error
		good, bad     string // the answer's body; for streams, one frame's data
		member        string // "" for a good answer
		stream        bool
	}{
		{"REST push config, member twice", rest, getConfig, config, configTwice, `"url"`, false},
		{"REST push config, member in another case", rest, getConfig, config, configCase, `"URL"`, false},
		{"REST push config list, member twice", rest, listConfigs, `{"configs":[` + config + `],"nextPageToken":""}`, `{"configs":[` + configTwice + `],"nextPageToken":""}`, `"url"`, false},
		{"REST task, nested member twice", rest, getTask, task, taskTwice, `"state"`, false},
		{"REST task, member in another case", rest, getTask, task, taskCase, `"ContextId"`, false},
		{"REST stream event", rest, subscribe, `{"task":` + task + `}`, `{"task":` + taskTwice + `}`, `"state"`, true},
		{"JSON-RPC push config, member twice", rpc, getConfig, rpcResult(config), rpcResult(configTwice), `"url"`, false},
		{"JSON-RPC push config, member in another case", rpc, getConfig, rpcResult(config), rpcResult(configCase), `"URL"`, false},
		{"JSON-RPC task, member in another case", rpc, getTask, rpcResult(task), rpcResult(taskCase), `"ContextId"`, false},
		{"JSON-RPC envelope, result twice", rpc, getTask, rpcResult(task), `{"jsonrpc":"2.0","id":1,"result":` + task + `,"result":` + task + `}`, `"result"`, false},
		{"JSON-RPC envelope, id in another case", rpc, getTask, rpcResult(task), `{"jsonrpc":"2.0","id":1,"ID":2,"result":` + task + `}`, `"ID"`, false},
		{"JSON-RPC stream event", rpc, subscribe, rpcResult(`{"task":` + task + `}`), rpcResult(`{"task":` + taskCase + `}`), `"ContextId"`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, body := range []string{tc.good, tc.bad} {
				h := answer(200, "application/json", body)
				if tc.stream {
					h = sse("data: " + body + "\n\n")
				}
				c, err := client.New(t.Context(), fakePeer(t, tc.binding, nil, h))
				if err != nil {
					t.Fatal(err)
				}
				err = tc.call(c)
				if body == tc.good {
					if err != nil {
						t.Fatalf("the well-formed answer %s: %v", body, err)
					}
					continue
				}
				if !errors.Is(err, a2a.ErrInvalidAgentResponse) || !strings.Contains(err.Error(), tc.member) {
					t.Errorf("answer %s: %v, want an invalid agent response naming %s", body, err, tc.member)
				}
			}
		})
	}
}
