package push_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// BenchmarkDeliver delivers b.N notifications through a Deliverer on the
// memory store to an httptest receiver on 127.0.0.1 that answers 200. The
// timed part is everything from the first task to the last receipt: the
// appends (tasks of ten notifications: working, eight artifact chunks,
// completed, each its own append, with the snapshot the store keeps), the
// Appended calls, and the delivery running beside them. ns/op is per
// notification; events/s is b.N over the elapsed time.
func BenchmarkDeliver(b *testing.B) {
	const perTask = 10
	var got atomic.Int64
	all := make(chan struct{})
	target := int64(b.N)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Header.Get(push.DeliveryIDHeader) == "" {
			http.Error(w, "no event id", http.StatusBadRequest) // fails the config: caught below
			return
		}
		if got.Add(1) == target {
			close(all)
		}
	}))
	defer rcv.Close()

	st := memory.New()
	g, err := push.NewGuard(push.WithAllow("127.0.0.1"))
	if err != nil {
		b.Fatal(err)
	}
	d, err := push.NewDeliverer(st, push.WithGuard(g))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		d.Run(ctx)
	}()
	defer func() {
		cancel()
		<-ran
	}()

	var scope store.Scope
	b.ReportAllocs()
	b.ResetTimer()
	for i, left := 0, b.N; left > 0; i++ {
		id := "task-" + strconv.Itoa(i)
		task := &a2a.Task{ID: id, ContextID: "ctx", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: a2a.TimestampOf(time.Now())}}
		if err := st.Append(ctx, scope, id, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
			b.Fatal(err)
		}
		cfg := &a2a.TaskPushNotificationConfig{ID: "hook", TaskID: id, URL: rcv.URL, Token: "t"}
		if err := st.PutPushConfig(ctx, scope, cfg); err != nil {
			b.Fatal(err)
		}
		n := min(perTask, left)
		for j := range n {
			next := *task
			var ev a2a.Event
			switch j {
			case 0, perTask - 1:
				state := a2a.TaskStateWorking
				if j > 0 {
					state = a2a.TaskStateCompleted
				}
				next.Status = a2a.TaskStatus{State: state, Timestamp: a2a.TimestampOf(time.Now())}
				ev = &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: "ctx", Status: next.Status}
			default:
				art := a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("chunk " + strconv.Itoa(j))}}
				if len(task.Artifacts) > 0 {
					art.Parts = append(append([]a2a.Part(nil), task.Artifacts[0].Parts...), art.Parts...)
				}
				next.Artifacts = []a2a.Artifact{art}
				ev = &a2a.TaskArtifactUpdateEvent{TaskID: id, ContextID: "ctx", Artifact: a2a.Artifact{ArtifactID: "a", Parts: art.Parts[len(art.Parts)-1:]},
					Append: j > 1, LastChunk: j == perTask-2}
			}
			seq := int64(j) + 2
			if err := st.Append(ctx, scope, id, seq-1, []store.Event{{Seq: seq, Payload: ev}}, &next); err != nil {
				b.Fatal(err)
			}
			d.Appended(scope, id, seq)
			task = &next
		}
		left -= n
	}
	select {
	case <-all:
	case <-time.After(2 * time.Minute):
		b.Fatalf("received %d of %d notifications in two minutes; deliverer %+v", got.Load(), b.N, d.Stats())
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	// The Deliverer counts an event after its receiver answered: poll.
	deadline := time.Now().Add(10 * time.Second)
	for d.Stats().Delivered < int64(b.N) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if s := d.Stats(); s.Delivered != int64(b.N) || s.Failed != 0 || s.Failing != 0 || got.Load() != int64(b.N) {
		b.Fatalf("received %d, deliverer %+v; want %d delivered, none failed", got.Load(), s, b.N)
	}
}
