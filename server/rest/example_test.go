package rest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/rest"
)

// Mount the binding under a prefix with http.StripPrefix, send a message,
// and read the task back.
func Example() {
	card := echo.Card("http://127.0.0.1:8080/a2a/jsonrpc", "http://127.0.0.1:8080/a2a/rest")
	h, err := server.NewHandler(card, echo.Agent{})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(context.Background())

	mux := http.NewServeMux()
	mux.Handle("/a2a/rest/", http.StripPrefix("/a2a/rest", rest.NewHandler(h)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	call := func(method, path, body string) (int, string, []byte) {
		req, err := http.NewRequest(method, srv.URL+"/a2a/rest"+path, strings.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		req.Header.Set("A2A-Version", "1.0")
		if body != "" {
			req.Header.Set("Content-Type", "application/a2a+json")
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			log.Fatal(err)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), b
	}

	// SendMessage blocks until the task is done (A2A §3.2.2).
	status, ct, body := call("POST", "/message:send",
		`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`)
	var sent a2a.SendMessageResponse
	if err := json.Unmarshal(body, &sent); err != nil {
		log.Fatal(err)
	}
	task := sent.Result.(*a2a.Task)
	fmt.Println(status, ct)
	fmt.Println(task.Status.State, task.Artifacts[0].Text())

	// GetTask without history.
	status, _, body = call("GET", "/tasks/"+task.ID+"?historyLength=0", "")
	var got a2a.Task
	if err := json.Unmarshal(body, &got); err != nil {
		log.Fatal(err)
	}
	fmt.Println(status, got.ID == task.ID, len(got.History))

	// Errors are google.rpc.Status JSON (A2A §11.6).
	status, _, body = call("GET", "/tasks/no-such-task", "")
	fmt.Println(status, string(body))

	// Output:
	// 200 application/a2a+json
	// TASK_STATE_COMPLETED echo: hello
	// 200 true 0
	// 404 {"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"no-such-task"}}]}}
}
