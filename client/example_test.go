package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/agents/echo"
	"github.com/goa2a/a2a/client"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/server/a2ahttp"
)

// startEcho serves the echo agent on 127.0.0.1 and returns its base URL
// and a function that stops it.
func startEcho() (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	card := echo.Card(base+a2ahttp.JSONRPCPath, base+a2ahttp.RESTPath)
	h, err := server.NewHandler(card, echo.Agent{})
	if err != nil {
		log.Fatal(err)
	}
	mux, err := a2ahttp.NewMux(h, a2ahttp.Options{})
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	return base, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = h.Close(ctx)
	}
}

// Send a message and switch on the result: a task or a direct reply.
func Example() {
	base, stop := startEcho()
	defer stop()
	ctx := context.Background()

	c, err := client.New(ctx, base)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("agent:", c.Card().Name, "over", c.Binding())

	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("hello")})
	if err != nil {
		log.Fatal(err)
	}
	switch r := resp.Result.(type) {
	case *a2a.Task:
		fmt.Println("task", r.Status.State, "with", r.Artifacts[0].Text())
	case *a2a.Message:
		fmt.Println("reply:", r.Text())
	}
	// Output:
	// agent: echo over JSONRPC
	// task TASK_STATE_COMPLETED with echo: hello
}

// Stream what the agent does with a message. Breaking out of the loop
// would close the stream.
func ExampleClient_SendStreamingMessage() {
	base, stop := startEcho()
	defer stop()
	ctx := context.Background()

	c, err := client.New(ctx, base, client.WithBindings(a2a.BindingHTTPJSON))
	if err != nil {
		log.Fatal(err)
	}
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage("hi")}) {
		if err != nil {
			log.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			fmt.Println("task", e.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			fmt.Println("status", e.Status.State)
		case *a2a.TaskArtifactUpdateEvent:
			fmt.Println("artifact", e.Artifact.Text())
		case *a2a.Message:
			fmt.Println("message", e.Text())
		}
	}
	// Output:
	// task TASK_STATE_SUBMITTED
	// status TASK_STATE_WORKING
	// artifact echo: hi
	// status TASK_STATE_COMPLETED
}

// Start a task without waiting, then follow it to its end. Follow
// reconnects if the stream drops, and polls agents that do not stream.
func ExampleClient_Follow() {
	base, stop := startEcho()
	defer stop()
	ctx := context.Background()

	c, err := client.New(ctx, base)
	if err != nil {
		log.Fatal(err)
	}
	resp, err := c.SendMessage(ctx, &a2a.SendMessageRequest{
		Message:       client.TextMessage("later"),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true},
	})
	if err != nil {
		log.Fatal(err)
	}
	task := resp.Result.(*a2a.Task)
	var last a2a.TaskState
	for ev, err := range c.Follow(ctx, task.ID) {
		if err != nil {
			log.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			last = e.Status.State
		case *a2a.TaskStatusUpdateEvent:
			last = e.Status.State
		}
	}
	fmt.Println("ended in", last)
	// Output:
	// ended in TASK_STATE_COMPLETED
}

// Walk every page of ListTasks.
func ExampleClient_AllTasks() {
	base, stop := startEcho()
	defer stop()
	ctx := context.Background()

	c, err := client.New(ctx, base)
	if err != nil {
		log.Fatal(err)
	}
	for _, text := range []string{"one", "two", "three"} {
		if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: client.TextMessage(text)}); err != nil {
			log.Fatal(err)
		}
	}
	n := 0
	for _, err := range c.AllTasks(ctx, &a2a.ListTasksRequest{PageSize: a2a.Ptr[int32](2)}) {
		if err != nil {
			log.Fatal(err)
		}
		n++
	}
	fmt.Println(n, "tasks")
	// Output:
	// 3 tasks
}

// Errors from the agent are *a2a.Error values of a kind, whichever the
// binding; anything else means the call did not complete.
func Example_errors() {
	base, stop := startEcho()
	defer stop()
	ctx := context.Background()

	for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON} {
		c, err := client.New(ctx, base, client.WithBindings(binding))
		if err != nil {
			log.Fatal(err)
		}
		_, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
		var ae *a2a.Error
		switch {
		case errors.Is(err, a2a.ErrTaskNotFound):
			fmt.Println(binding+":", "not found")
		case errors.As(err, &ae):
			fmt.Println(binding+":", "the agent said", ae.Code)
		case err != nil:
			fmt.Println(binding+":", "no answer:", err)
		}
	}
	// Output:
	// JSONRPC: not found
	// HTTP+JSON: not found
}
