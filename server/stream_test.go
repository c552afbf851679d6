package server_test

import (
	"context"
	"iter"
	"reflect"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
)

// checkFrames checks that frames belong to task, carry strictly increasing
// ids "taskID:seq" starting after from, and returns the last seq.
func checkFrames(t *testing.T, task *a2a.Task, from int64, frames []server.StreamEvent) int64 {
	t.Helper()
	last := from
	for _, f := range frames {
		seq := seqOf(t, task.ID, f)
		if seq <= last {
			t.Errorf("frame %s after seq %d: ids must increase", f.ID, last)
		}
		last = seq
		switch e := f.Event.(type) {
		case *a2a.TaskStatusUpdateEvent:
			if e.TaskID != task.ID || e.ContextID != task.ContextID || e.Status.Timestamp.IsZero() {
				t.Errorf("status frame %s: taskId %q contextId %q timestamp %v", f.ID, e.TaskID, e.ContextID, e.Status.Timestamp)
			}
		case *a2a.TaskArtifactUpdateEvent:
			if e.TaskID != task.ID || e.ContextID != task.ContextID {
				t.Errorf("artifact frame %s: taskId %q contextId %q", f.ID, e.TaskID, e.ContextID)
			}
		default:
			t.Errorf("frame %s is %T, want a status or artifact update", f.ID, f.Event)
		}
	}
	return last
}

func TestSendStreamingMessageReply(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := testCtx(t)
	req := newRequest("reply")
	req.Message.ContextID = "ctx-1"
	st := openStream(t, ctx, h.SendStreamingMessage(v1(ctx), req))
	f := st.Next()
	m, ok := f.Event.(*a2a.Message)
	if !ok {
		t.Fatalf("frame is %T, want *a2a.Message", f.Event)
	}
	if m.ContextID != "ctx-1" || m.TaskID != "" || m.Role != a2a.RoleAgent || m.Text() != "hello" {
		t.Errorf("message contextId %q taskId %q role %v text %q", m.ContextID, m.TaskID, m.Role, m.Text())
	}
	if f.ID != "" {
		t.Errorf("message frame id %q, want none (it is in no task's log)", f.ID)
	}
	st.End()
}

func TestSendStreamingMessageTask(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.Working(ctx, "working"); err != nil {
			return err
		}
		if err := w.ArtifactChunk(ctx, a2a.Artifact{ArtifactID: "log", Parts: []a2a.Part{a2a.TextPart("one ")}}, false, false); err != nil {
			return err
		}
		if err := w.ArtifactChunk(ctx, a2a.Artifact{ArtifactID: "log", Parts: []a2a.Part{a2a.TextPart("two")}}, true, true); err != nil {
			return err
		}
		return w.Complete(ctx, "done")
	})
	ctx := testCtx(t)
	req := newRequest("go")
	st := openStream(t, ctx, h.SendStreamingMessage(ctx, req))
	first := st.Next()
	task := asTask(t, first)
	if task.Status.State != a2a.TaskStateSubmitted || task.ID == "" || task.ContextID == "" {
		t.Errorf("first frame: task %q context %q state %v, want a submitted task", task.ID, task.ContextID, task.Status.State)
	}
	if len(task.History) != 1 || task.History[0].MessageID != req.Message.MessageID {
		t.Errorf("first frame history %+v, want the user message", task.History)
	}
	if first.ID != task.ID+":1" {
		t.Errorf("first frame id %q, want %q", first.ID, task.ID+":1")
	}
	rest := st.Rest()
	checkFrames(t, task, 1, rest)
	if len(rest) != 4 {
		t.Fatalf("%d frames after the task, want 4", len(rest))
	}
	if s := asStatus(t, rest[0]).Status; s.State != a2a.TaskStateWorking || s.Message.Text() != "working" {
		t.Errorf("frame 2: %v %q", s.State, s.Message.Text())
	}
	if a := asArtifact(t, rest[1]); a.Append || a.LastChunk || a.Artifact.Text() != "one " {
		t.Errorf("frame 3: append %v last %v %q", a.Append, a.LastChunk, a.Artifact.Text())
	}
	if a := asArtifact(t, rest[2]); !a.Append || !a.LastChunk || a.Artifact.Text() != "two" {
		t.Errorf("frame 4: append %v last %v %q", a.Append, a.LastChunk, a.Artifact.Text())
	}
	if s := asStatus(t, rest[3]).Status; s.State != a2a.TaskStateCompleted {
		t.Errorf("frame 5: %v, want completed", s.State)
	}
	final := getTask(t, h, ctx, task.ID)
	if len(final.Artifacts) != 1 || final.Artifacts[0].Text() != "one two" {
		t.Errorf("folded artifacts %+v, want one artifact \"one two\"", final.Artifacts)
	}
}

func TestStreamEnds(t *testing.T) {
	t.Parallel()
	// Streams close at terminal states and at input-required.
	tests := []a2a.TaskState{
		a2a.TaskStateCompleted,
		a2a.TaskStateFailed,
		a2a.TaskStateRejected,
		a2a.TaskStateCanceled,
		a2a.TaskStateInputRequired,
	}
	for _, end := range tests {
		t.Run(end.String(), func(t *testing.T) {
			t.Parallel()
			subscribed, release := make(chan struct{}), make(chan struct{})
			h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
				if err := w.Working(ctx, ""); err != nil {
					return err
				}
				if err := await(ctx, subscribed); err != nil {
					return err
				}
				if err := w.Status(ctx, end, nil); err != nil {
					return err
				}
				<-release // a stream must not wait for the agent to return
				return nil
			})
			defer close(release)
			ctx := testCtx(t)
			sst := openStream(t, ctx, h.SendStreamingMessage(ctx, newRequest("go")))
			task := asTask(t, sst.Next())
			if s := asStatus(t, sst.Next()).Status.State; s != a2a.TaskStateWorking {
				t.Fatalf("second frame %v, want working", s)
			}
			sub := openStream(t, ctx, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}))
			if s := asTask(t, sub.Next()).Status.State; s != a2a.TaskStateWorking {
				t.Fatalf("snapshot %v, want working", s)
			}
			close(subscribed)
			for name, st := range map[string]*stream{"SendStreamingMessage": sst, "SubscribeToTask": sub} {
				if s := asStatus(t, st.Next()).Status.State; s != end {
					t.Errorf("%s: frame %v, want %v", name, s, end)
				}
				st.End()
			}
		})
	}
}

func TestStreamStaysOpenThroughAuthRequired(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	authRequired, authorized := make(chan string, 1), make(chan struct{})
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		if err := w.RequireAuth(ctx, "Sign in at https://example.com/login"); err != nil {
			return err
		}
		authRequired <- req.TaskID
		// The credential arrives out of band.
		if err := await(ctx, authorized); err != nil {
			return err
		}
		if err := w.Working(ctx, "authorized"); err != nil {
			return err
		}
		return w.Complete(ctx, "done")
	})
	sst := openStream(t, ctx, h.SendStreamingMessage(ctx, newRequest("go")))
	task := asTask(t, sst.Next())
	if s := asStatus(t, sst.Next()).Status; s.State != a2a.TaskStateAuthRequired || s.Message == nil {
		t.Fatalf("frame %v (message %v), want auth-required with a message", s.State, s.Message)
	}
	recv(t, authRequired)
	sub := openStream(t, ctx, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}))
	snap := sub.Next()
	if s := asTask(t, snap).Status.State; s != a2a.TaskStateAuthRequired {
		t.Fatalf("snapshot %v, want auth-required", s)
	}
	close(authorized)
	for name, st := range map[string]*stream{"SendStreamingMessage": sst, "SubscribeToTask": sub} {
		frames := st.Rest()
		if got, want := states(frames), []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted}; !slices.Equal(got, want) {
			t.Errorf("%s: states after authorization %v, want %v", name, got, want)
		}
	}
}

func TestStreamingNotDeclared(t *testing.T) {
	t.Parallel()
	for _, streaming := range []*bool{nil, a2a.Ptr(false)} {
		name := "absent"
		if streaming != nil {
			name = "false"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			h := newHandler(t, testCard(func(c *a2a.AgentCard) { c.Capabilities.Streaming = streaming }), func(ctx context.Context, req *server.Request, w *server.Writer) error {
				calls.Add(1)
				return scripted(ctx, req, w)
			})
			ctx := v1(testCtx(t))
			task := sendTask(t, h, ctx, newRequest("input"))
			wantErr(t, openStream(t, ctx, h.SendStreamingMessage(ctx, newRequest("complete"))).Err(), a2a.ErrUnsupportedOperation)
			wantErr(t, openStream(t, ctx, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID})).Err(), a2a.ErrUnsupportedOperation)
			if n := calls.Load(); n != 1 {
				t.Errorf("agent called %d times, want once (not for the stream)", n)
			}
		})
	}
}

func TestSendStreamingMessageContinuation(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := testCtx(t)
	first := sendTask(t, h, ctx, newRequest("input"))
	st := openStream(t, ctx, h.SendStreamingMessage(ctx, continueRequest(first.ID, "artifact")))
	f := st.Next()
	task := asTask(t, f)
	if task.ID != first.ID || task.Status.State != a2a.TaskStateWorking {
		t.Errorf("first frame %s %v, want %s working", task.ID, task.Status.State, first.ID)
	}
	if want := []string{"input", "Which one?", "artifact"}; !slices.Equal(texts(task.History), want) {
		t.Errorf("first frame history %q, want %q", texts(task.History), want)
	}
	rest := st.Rest()
	checkFrames(t, task, seqOf(t, task.ID, f), rest)
	if len(rest) != 2 || asArtifact(t, rest[0]).Artifact.ArtifactID != "out" || asStatus(t, rest[1]).Status.State != a2a.TaskStateCompleted {
		t.Errorf("frames after the task: %v, want the artifact and completed", states(rest))
	}
}

// stepper is an agent whose task moves one event per signal on next: it
// reports working, then emits an artifact per signal, and completes on the
// last. Each event is acknowledged on done.
type stepper struct {
	artifacts int
	next      chan struct{}
	done      chan int64 // the seq of the event just written
}

func newStepper(artifacts int) *stepper {
	return &stepper{artifacts: artifacts, next: make(chan struct{}), done: make(chan int64, 1)}
}

// Execute: seq 1 is the task, 2 working, 3.. artifacts, then completed.
func (s *stepper) Execute(ctx context.Context, req *server.Request, w *server.Writer) error {
	if err := w.Working(ctx, "working"); err != nil {
		return err
	}
	if err := w.Flush(ctx); err != nil {
		return err
	}
	s.done <- 2
	for i := range s.artifacts + 1 {
		if err := await(ctx, s.next); err != nil {
			return err
		}
		var err error
		if i < s.artifacts {
			err = w.Artifact(ctx, a2a.Artifact{ArtifactID: "a" + strconv.Itoa(i), Parts: []a2a.Part{a2a.TextPart(strconv.Itoa(i))}})
		} else {
			err = w.Complete(ctx, "done")
		}
		if err == nil {
			err = w.Flush(ctx)
		}
		if err != nil {
			return err
		}
		s.done <- int64(i + 3)
	}
	return nil
}

// step moves the agent one event on.
func (s *stepper) step(t *testing.T) int64 {
	t.Helper()
	select {
	case s.next <- struct{}{}:
	case <-t.Context().Done():
	}
	return recv(t, s.done)
}

func TestSubscribeToTask(t *testing.T) {
	t.Parallel()
	ag := newStepper(3)
	h := newHandler(t, nil, ag.Execute)
	ctx := testCtx(t)
	task := sendTask(t, h, ctx, immediate(newRequest("go")))
	recv(t, ag.done)
	ag.step(t) // seq 3: the first artifact

	st := openStream(t, ctx, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}))
	f := st.Next()
	snap := asTask(t, f)
	if f.ID != task.ID+":3" {
		t.Errorf("snapshot id %q, want %s:3", f.ID, task.ID)
	}
	if snap.ID != task.ID || snap.Status.State != a2a.TaskStateWorking || len(snap.Artifacts) != 1 {
		t.Errorf("snapshot %s %v with %d artifacts, want the task working with 1", snap.ID, snap.Status.State, len(snap.Artifacts))
	}
	if want := []string{"go"}; !slices.Equal(texts(snap.History), want) || snap.Status.Message.Text() != "working" {
		t.Errorf("snapshot history %q status message %q", texts(snap.History), snap.Status.Message.Text())
	}
	var frames []server.StreamEvent
	for want := int64(4); want <= 6; want++ {
		if got := ag.step(t); got != want {
			t.Fatalf("agent wrote seq %d, want %d", got, want)
		}
		f := st.Next()
		if f.ID != task.ID+":"+strconv.FormatInt(want, 10) {
			t.Errorf("frame id %q, want %s:%d", f.ID, task.ID, want)
		}
		frames = append(frames, f)
	}
	st.End()
	checkFrames(t, task, 3, frames)
	if got := states(frames); !slices.Equal(got, []a2a.TaskState{a2a.TaskStateCompleted}) {
		t.Errorf("states %v, want only completed", got)
	}

}

func TestSubscribeToTaskErrors(t *testing.T) {
	t.Parallel()
	h := newHandler(t, nil, scripted)
	ctx := v1(testCtx(t))
	canceled := sendTask(t, h, ctx, newRequest("input"))
	if _, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: canceled.ID}); err != nil {
		t.Fatal(err)
	}
	terminal := map[string]a2a.TaskState{
		sendTask(t, h, ctx, newRequest("complete")).ID: a2a.TaskStateCompleted,
		sendTask(t, h, ctx, newRequest("fail")).ID:     a2a.TaskStateFailed,
		sendTask(t, h, ctx, newRequest("reject")).ID:   a2a.TaskStateRejected,
		canceled.ID: a2a.TaskStateCanceled,
	}
	for id, state := range terminal {
		t.Run(state.String(), func(t *testing.T) {
			t.Parallel()
			err := openStream(t, ctx, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id})).Err()
			if e := wantErr(t, err, a2a.ErrUnsupportedOperation); e.Metadata["state"] != state.String() || e.Metadata["taskId"] != id {
				t.Errorf("metadata %v, want the task and its state", e.Metadata)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		t.Parallel()
		err := openStream(t, ctx, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: "no-such-task"})).Err()
		wantErr(t, err, a2a.ErrTaskNotFound)
	})
	t.Run("no id", func(t *testing.T) {
		t.Parallel()
		wantViolation(t, openStream(t, ctx, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{})).Err(), "id")
	})
}

func TestSubscribeToInterruptedTask(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"input", "auth"} {
		t.Run(text, func(t *testing.T) {
			t.Parallel()
			h := newHandler(t, nil, scripted)
			ctx := testCtx(t)
			task := sendTask(t, h, ctx, newRequest(text))
			st := openStream(t, ctx, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}))
			f := st.Next()
			if snap := asTask(t, f); snap.Status.State != task.Status.State {
				t.Fatalf("snapshot %v, want %v", snap.Status.State, task.Status.State)
			}
			// The client answers; the subscriber sees the task resume and
			// finish (the client's message is in the log, not a frame).
			sendTask(t, h, ctx, continueRequest(task.ID, "artifact"))
			rest := st.Rest()
			checkFrames(t, task, seqOf(t, task.ID, f), rest)
			if got, want := states(rest), []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted}; !slices.Equal(got, want) {
				t.Errorf("states %v, want %v", got, want)
			}
			if len(rest) != 3 {
				t.Errorf("%d frames, want working, the artifact and completed", len(rest))
			}
		})
	}
}

func TestSubscribersSeeTheSameFrames(t *testing.T) {
	t.Parallel()
	const subscribers, artifacts = 4, 10
	ag := newStepper(artifacts)
	h := newHandler(t, nil, ag.Execute)
	ctx := testCtx(t)
	task := sendTask(t, h, ctx, immediate(newRequest("go")))
	recv(t, ag.done)
	streams := make([]*stream, subscribers)
	for i := range streams {
		streams[i] = openStream(t, ctx, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}))
		if f := streams[i].Next(); f.ID != task.ID+":2" {
			t.Fatalf("subscriber %d snapshot id %q, want %s:2", i, f.ID, task.ID)
		}
	}
	// One subscriber leaves early; the others are not affected.
	streams[0].stop()
	for range artifacts + 1 {
		ag.step(t)
	}
	var want []server.StreamEvent
	for i, st := range streams[1:] {
		got := st.Rest()
		if i == 0 {
			want = got
			checkFrames(t, task, 2, got)
			if len(got) != artifacts+1 {
				t.Errorf("%d frames, want %d", len(got), artifacts+1)
			}
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("subscriber %d saw different frames than subscriber 1", i+1)
		}
	}
}

func TestSlowSubscriberCatchesUp(t *testing.T) {
	t.Parallel()
	// A consumer that reads nothing while 50 events happen (more than any
	// buffer) receives every event exactly once when it reads again.
	const artifacts = 50
	for _, resume := range []bool{false, true} {
		name := "SubscribeToTask"
		if resume {
			name += " resuming"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ready, release := make(chan struct{}), make(chan struct{})
			emitted := make(chan struct{})
			finish := make(chan struct{})
			h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
				// seq 1 the task, 2 an artifact; then the burst.
				if err := w.Artifact(ctx, a2a.Artifact{ArtifactID: "before", Parts: []a2a.Part{a2a.TextPart("x")}}); err != nil {
					return err
				}
				close(ready)
				if err := await(ctx, release); err != nil {
					return err
				}
				for i := range artifacts {
					if err := w.Artifact(ctx, a2a.Artifact{ArtifactID: strconv.Itoa(i), Parts: []a2a.Part{a2a.TextPart("x")}}); err != nil {
						return err
					}
				}
				close(emitted)
				if err := await(ctx, finish); err != nil {
					return err
				}
				return w.Complete(ctx, "done")
			})
			ctx := testCtx(t)
			task := sendTask(t, h, ctx, immediate(newRequest("go")))
			recv(t, ready)
			suffix := ""
			if resume {
				suffix = ":1" // from the task's creation: no snapshot
			}
			st := openStream(t, ctx, subscribe(suffix)(h, ctx, task.ID))
			// The snapshot, or on resuming the artifact after seq 1; either
			// way the stream now follows the task, and its consumer stops
			// reading.
			first := st.Next()
			if want := task.ID + ":2"; first.ID != want {
				t.Fatalf("first frame %s, want %s", first.ID, want)
			}
			if _, isTask := first.Event.(*a2a.Task); isTask == resume {
				t.Fatalf("first frame is %T; resuming %v", first.Event, resume)
			}
			close(release)
			recv(t, emitted) // all 50 written while the consumer was away
			close(finish)
			frames := st.Rest()
			checkFrames(t, task, seqOf(t, task.ID, first), frames)
			if len(frames) != artifacts+1 {
				t.Fatalf("%d frames, want %d", len(frames), artifacts+1)
			}
			for i, f := range frames[:artifacts] {
				if id := asArtifact(t, f).Artifact.ArtifactID; id != strconv.Itoa(i) {
					t.Errorf("frame %d is artifact %s, want %d", i, id, i)
				}
			}
		})
	}
	t.Run("SendStreamingMessage", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		emitted := make(chan struct{})
		h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
			if err := w.Submit(ctx); err != nil {
				return err
			}
			if err := await(ctx, release); err != nil {
				return err
			}
			for i := range artifacts {
				if err := w.Artifact(ctx, a2a.Artifact{ArtifactID: strconv.Itoa(i), Parts: []a2a.Part{a2a.TextPart("x")}}); err != nil {
					return err
				}
			}
			close(emitted)
			return w.Complete(ctx, "done")
		})
		ctx := testCtx(t)
		st := openStream(t, ctx, h.SendStreamingMessage(ctx, newRequest("go")))
		task := asTask(t, st.Next())
		close(release)
		recv(t, emitted)
		frames := st.Rest()
		checkFrames(t, task, 1, frames)
		if len(frames) != artifacts+1 {
			t.Fatalf("%d frames, want %d", len(frames), artifacts+1)
		}
	})
}

func TestSubscribeToTaskResume(t *testing.T) {
	t.Parallel()
	resumeCtx := func(ctx context.Context, lastEventID string) context.Context {
		return server.WithServiceParams(ctx, server.ServiceParams{Version: "1.0", LastEventID: lastEventID})
	}

	t.Run("finished task", func(t *testing.T) {
		t.Parallel()
		ag := newStepper(2) // 1 task, 2 working, 3-4 artifacts, 5 completed
		h := newHandler(t, nil, ag.Execute)
		ctx := testCtx(t)
		task := sendTask(t, h, ctx, immediate(newRequest("go")))
		recv(t, ag.done)
		for range 3 {
			ag.step(t)
		}
		waitState(t, h, ctx, task.ID, a2a.TaskStateCompleted)
		tests := []struct {
			last string
			want []int64 // nil with wantErr
			err  *a2a.Error
		}{
			{task.ID + ":1", []int64{2, 3, 4, 5}, nil},
			{task.ID + ":3", []int64{4, 5}, nil},
			{task.ID + ":5", []int64{}, nil},
			// Not a position in this task's log: an ordinary subscription,
			// refused because the task is finished.
			{task.ID + ":6", nil, a2a.ErrUnsupportedOperation},
			{task.ID + ":0", nil, a2a.ErrUnsupportedOperation},
			{task.ID + ":x", nil, a2a.ErrUnsupportedOperation},
			{"other-task:1", nil, a2a.ErrUnsupportedOperation},
			{"garbage", nil, a2a.ErrUnsupportedOperation},
		}
		for _, tc := range tests {
			t.Run(tc.last, func(t *testing.T) {
				t.Parallel()
				ctx := testCtx(t)
				st := openStream(t, ctx, h.SubscribeToTask(resumeCtx(ctx, tc.last), &a2a.SubscribeToTaskRequest{ID: task.ID}))
				if tc.err != nil {
					wantErr(t, st.Err(), tc.err)
					return
				}
				frames := st.Rest()
				got := []int64{}
				for _, f := range frames {
					got = append(got, seqOf(t, task.ID, f))
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("resumed at %s: seqs %v, want %v", tc.last, got, tc.want)
				}
				checkFrames(t, task, 0, frames)
			})
		}
	})

	t.Run("live task", func(t *testing.T) {
		t.Parallel()
		ag := newStepper(2)
		h := newHandler(t, nil, ag.Execute)
		ctx := testCtx(t)
		task := sendTask(t, h, ctx, immediate(newRequest("go")))
		recv(t, ag.done)
		ag.step(t) // seq 3
		st := openStream(t, ctx, h.SubscribeToTask(resumeCtx(ctx, task.ID+":1"), &a2a.SubscribeToTaskRequest{ID: task.ID}))
		for _, want := range []int64{2, 3} {
			if f := st.Next(); seqOf(t, task.ID, f) != want {
				t.Fatalf("frame %s (%T), want seq %d: no snapshot on resume", f.ID, f.Event, want)
			}
		}
		ag.step(t)
		ag.step(t)
		frames := st.Rest()
		var got []int64
		for _, f := range frames {
			got = append(got, seqOf(t, task.ID, f))
		}
		if !slices.Equal(got, []int64{4, 5}) {
			t.Errorf("live seqs %v, want [4 5]", got)
		}
	})

	t.Run("ahead of the log", func(t *testing.T) {
		t.Parallel()
		h := newHandler(t, nil, scripted)
		ctx := testCtx(t)
		task := sendTask(t, h, ctx, newRequest("input"))
		// A position the task has not reached: subscribe afresh.
		st := openStream(t, ctx, h.SubscribeToTask(resumeCtx(ctx, task.ID+":99"), &a2a.SubscribeToTaskRequest{ID: task.ID}))
		if snap := asTask(t, st.Next()); snap.Status.State != a2a.TaskStateInputRequired {
			t.Errorf("snapshot %v, want input-required", snap.Status.State)
		}
	})
}

func TestStreamReleasedWhenConsumerStops(t *testing.T) {
	t.Parallel()
	// Each case reads some frames, then stops: by breaking out of the loop
	// or by ending the stream's context. Its subscription must be gone.
	tests := []struct {
		name string
		// open returns the stream of task id; "" asks SendStreamingMessage
		// to start a task.
		open   func(h *server.Handler, ctx context.Context, id string) iter.Seq2[server.StreamEvent, error]
		frames int // frames to read before stopping
	}{
		{"SendStreamingMessage after the task", nil, 1},
		{"SendStreamingMessage after an update", nil, 2},
		{"SubscribeToTask after the snapshot", subscribe(""), 1},
		{"SubscribeToTask after an update", subscribe(""), 2},
		{"SubscribeToTask resuming", subscribe(":1"), 1},
	}
	for _, tc := range tests {
		for _, how := range []string{"break", "context"} {
			t.Run(tc.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				started := make(chan string, 1)
				more := make(chan struct{})
				h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
					if err := w.Working(ctx, "working"); err != nil {
						return err
					}
					started <- req.TaskID
					for { // an artifact per signal, until the Handler closes
						if err := await(ctx, more); err != nil {
							return err
						}
						if err := w.Artifact(ctx, a2a.Artifact{Parts: []a2a.Part{a2a.TextPart("x")}}); err != nil {
							return err
						}
					}
				})
				ctx := testCtx(t)
				streamCtx, cancel := context.WithCancel(ctx)
				defer cancel()
				var seq iter.Seq2[server.StreamEvent, error]
				id := ""
				if tc.open == nil {
					seq = h.SendStreamingMessage(streamCtx, newRequest("go"))
				} else {
					id = sendTask(t, h, ctx, immediate(newRequest("go"))).ID
					recv(t, started)
					seq = tc.open(h, streamCtx, id)
				}
				n := 0
				for _, err := range seq {
					if err != nil {
						t.Fatal(err)
					}
					n++
					if n == 1 {
						if id == "" {
							id = recv(t, started)
						}
						more <- struct{}{} // one more event after this frame
					}
					if n == tc.frames {
						if how == "break" {
							break
						}
						cancel() // the stream ends at its next wait
					}
				}
				if n < tc.frames || how == "break" && n != tc.frames {
					t.Fatalf("read %d frames, want %d", n, tc.frames)
				}
				if c := server.Subscribers(h, id); c != 0 {
					t.Errorf("%d subscribers on task %s after the consumer stopped, want 0", c, id)
				}
				// The task is unaffected, and can still be followed.
				st := openStream(t, ctx, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}))
				if s := asTask(t, st.Next()).Status.State; s != a2a.TaskStateWorking {
					t.Errorf("task %v after the consumer left, want working", s)
				}
			})
		}
	}
}

// subscribe opens SubscribeToTask, resuming after id+lastEventSuffix when
// the suffix is not "".
func subscribe(lastEventSuffix string) func(h *server.Handler, ctx context.Context, id string) iter.Seq2[server.StreamEvent, error] {
	return func(h *server.Handler, ctx context.Context, id string) iter.Seq2[server.StreamEvent, error] {
		if lastEventSuffix != "" {
			ctx = server.WithServiceParams(ctx, server.ServiceParams{Version: "1.0", LastEventID: id + lastEventSuffix})
		}
		return h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id})
	}
}

// TestStreamFailsOnClose: a stream cut by Close ends with Unavailable, not
// silently, since a clean end would mean the task is done.
func TestStreamFailsOnClose(t *testing.T) {
	ctx := t.Context()
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		return w.RequireInput(ctx, "which branch?")
	})
	task := sendTask(t, h, ctx, newRequest("input"))
	st := openStream(t, ctx, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}))
	if _, ok := st.Next().Event.(*a2a.Task); !ok {
		t.Fatal("first frame is not the task")
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	wantErr(t, st.Err(), a2a.ErrUnavailable)
}
