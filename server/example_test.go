package server_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

// exampleCard is the card of the examples; serve.New fills in the
// interfaces of a real server.
func exampleCard() *a2a.AgentCard {
	return &a2a.AgentCard{Name: "example", Version: "1.0.0", Description: "An example agent.",
		SupportedInterfaces: []a2a.AgentInterface{{URL: "http://127.0.0.1:8080/a2a/jsonrpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.ProtocolVersion}},
		Capabilities:        a2a.AgentCapabilities{Streaming: a2a.Ptr(true)}}
}

// exampleMessage is a user's message with text.
func exampleMessage(id, text string) *a2a.Message {
	return &a2a.Message{MessageID: id, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(text)}}
}

// An agent that streams its answer: it works, sends the answer as chunks of
// one artifact, and completes. A client of SendStreamingMessage gets each
// chunk as it is written; the Handler is called in process here, as the
// bindings call it.
func ExampleAgentFunc_streaming() {
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.Working(ctx, "writing"); err != nil {
			return err
		}
		words := strings.Fields("an answer in four chunks")
		for i, word := range words {
			art := a2a.Artifact{ArtifactID: "answer", Parts: []a2a.Part{a2a.TextPart(word + " ")}}
			if err := w.ArtifactChunk(ctx, art, i > 0, i == len(words)-1); err != nil {
				return err
			}
		}
		return w.Complete(ctx, "done")
	})
	h, err := server.NewHandler(exampleCard(), agent)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(context.Background())

	for ev, err := range h.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: exampleMessage("m1", "go")}) {
		if err != nil {
			log.Fatal(err)
		}
		switch e := ev.Event.(type) {
		case *a2a.Task:
			fmt.Println("task", e.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			fmt.Println("status", e.Status.State)
		case *a2a.TaskArtifactUpdateEvent:
			fmt.Printf("chunk %q\n", e.Artifact.Parts[0].Content)
		}
	}
	// Output:
	// task TASK_STATE_SUBMITTED
	// status TASK_STATE_WORKING
	// chunk "an "
	// chunk "answer "
	// chunk "in "
	// chunk "four "
	// chunk "chunks "
	// status TASK_STATE_COMPLETED
}

// An agent that asks for input: the task stops at input-required with the
// question, and the client's answer, sent with the task's id, runs the
// agent again with the task as it stood.
func ExampleWriter_RequireInput() {
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if req.Task == nil { // a new exchange: ask
			if err := w.Submit(ctx); err != nil {
				return err
			}
			return w.RequireInput(ctx, "Which branch?")
		}
		return w.Complete(ctx, "comparing against "+req.Message.Text())
	})
	h, err := server.NewHandler(exampleCard(), agent)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(context.Background())
	ctx := context.Background()

	res, err := h.SendMessage(ctx, &a2a.SendMessageRequest{Message: exampleMessage("m1", "review this")})
	if err != nil {
		log.Fatal(err)
	}
	task := res.Result.(*a2a.Task)
	fmt.Println(task.Status.State, task.Status.Message.Text())

	answer := exampleMessage("m2", "main")
	answer.TaskID = task.ID
	if res, err = h.SendMessage(ctx, &a2a.SendMessageRequest{Message: answer}); err != nil {
		log.Fatal(err)
	}
	task = res.Result.(*a2a.Task)
	fmt.Println(task.Status.State, task.Status.Message.Text())
	// Output:
	// TASK_STATE_INPUT_REQUIRED Which branch?
	// TASK_STATE_COMPLETED comparing against main
}

// An agent that replies directly, with a message and no task: for answers
// that need no tracking.
func ExampleWriter_Reply() {
	agent := server.AgentFunc(func(ctx context.Context, req *server.Request, w *server.Writer) error {
		return w.Reply(ctx, a2a.TextPart("hello, "+req.Message.Text()))
	})
	h, err := server.NewHandler(exampleCard(), agent)
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(context.Background())

	res, err := h.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: exampleMessage("m1", "world")})
	if err != nil {
		log.Fatal(err)
	}
	msg := res.Result.(*a2a.Message)
	fmt.Println(msg.Role, msg.Text())
	// Output:
	// ROLE_AGENT hello, world
}
