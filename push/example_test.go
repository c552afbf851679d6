package push_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/goa2a/a2a/push"
)

// A Go webhook: the receiver checks each notification's signature (here
// against the sender's Signer; across processes, WithJWKSURL fetches the
// sender's published keys), drops repeats, and hands the event over.
func ExampleNewReceiver() {
	signer, err := push.GenerateSigner("push-example")
	if err != nil {
		log.Fatal(err)
	}
	recv, err := push.NewReceiver(func(ctx context.Context, ev push.Event) error {
		fmt.Printf("task %s: %T\n", ev.TaskID, ev.Event)
		return nil
	}, push.WithSigner(signer), push.WithTasks("task-1"))
	if err != nil {
		log.Fatal(err)
	}
	hook := httptest.NewServer(recv)
	defer hook.Close()

	// What a push.Deliverer sends for one status update.
	body := []byte(`{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"}}}`)
	post := func() int {
		jwt, err := signer.SignEvent("task-1", "task-1:2", body, time.Now())
		if err != nil {
			log.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, hook.URL, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/a2a+json")
		req.Header.Set(push.SignatureHeader, jwt)
		req.Header.Set(push.DeliveryIDHeader, "task-1:2")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	fmt.Println(post())
	fmt.Println(post()) // a retry of the same event: acknowledged, not handed over again
	// Output:
	// task task-1: *a2a.TaskStatusUpdateEvent
	// 200
	// 200
}
