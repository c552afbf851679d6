package server_test

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// gatedStore holds every Append after the first `free` ones until open is
// closed, and counts the Appends and the events they carry.
type gatedStore struct {
	*memory.Store
	free    int32
	open    chan struct{}
	appends atomic.Int32
	events  atomic.Int32
}

func (s *gatedStore) Append(ctx context.Context, scope store.Scope, id string, after int64, evs []store.Event, t *a2a.Task) error {
	if s.appends.Add(1) > s.free {
		<-s.open
	}
	s.events.Add(int32(len(evs)))
	return s.Store.Append(ctx, scope, id, after, evs, t)
}

// waitFor polls cond until it holds, failing the test after a generous
// limit.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func chunk(i int) a2a.Artifact {
	return a2a.Artifact{ArtifactID: "out", Parts: []a2a.Part{a2a.TextPart("c" + strconv.Itoa(i))}}
}

// An agent's writes do not wait for the store: while the store is stuck,
// they queue, and what queued meanwhile is stored in one Append, in order.
func TestWritesCoalesce(t *testing.T) {
	t.Parallel()
	const chunks = 100
	st := &gatedStore{Store: memory.New(), free: 1, open: make(chan struct{})}
	written := make(chan string, 1)
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		for i := range chunks {
			if err := w.ArtifactChunk(ctx, chunk(i), i > 0, i == chunks-1); err != nil {
				return err
			}
		}
		written <- req.TaskID
		return w.Complete(ctx, "done")
	}, server.WithStore(st))
	ctx := testCtx(t)
	done := sendAsync(h, ctx, newRequest("go"))
	id := recv(t, written) // every write returned while the store held the second Append
	close(st.open)
	r := recv(t, done)
	if r.err != nil {
		t.Fatal(r.err)
	}
	task := r.res.Result.(*a2a.Task)
	if task.ID != id || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task %s %v, want %s completed", task.ID, task.Status.State, id)
	}
	if got := len(task.Artifacts[0].Parts); got != chunks {
		t.Fatalf("%d parts, want %d", got, chunks)
	}
	for i, p := range task.Artifacts[0].Parts {
		if got, want := partText(p), "c"+strconv.Itoa(i); got != want {
			t.Fatalf("part %d is %q, want %q", i, got, want)
		}
	}
	// The task and its first event or two, then the rest together (the
	// completion may come in its own Append).
	if n := st.appends.Load(); n > 4 {
		t.Errorf("%d Appends for %d events, want at most 4", n, st.events.Load())
	}
	if n := st.events.Load(); n != chunks+2 {
		t.Errorf("%d events stored, want %d", n, chunks+2)
	}
}

// A store that is stuck stops the agent once the task's queue is full:
// memory does not grow with what the agent writes.
func TestWritesQueueIsBounded(t *testing.T) {
	t.Parallel()
	const chunks = 3 * server.MaxQueued
	st := &gatedStore{Store: memory.New(), free: 1, open: make(chan struct{})}
	var returned atomic.Int32
	ids := make(chan string, 1)
	h := newHandler(t, nil, func(ctx context.Context, req *server.Request, w *server.Writer) error {
		ids <- req.TaskID
		for i := range chunks {
			if err := w.ArtifactChunk(ctx, chunk(i), i > 0, false); err != nil {
				return err
			}
			returned.Add(1)
		}
		return w.Complete(ctx, "done")
	}, server.WithStore(st))
	ctx := testCtx(t)
	done := sendAsync(h, ctx, newRequest("go"))
	id := recv(t, ids)
	// The second Append is stuck; the agent fills the queue behind it and
	// waits.
	waitFor(t, "a full queue behind a stuck Append", func() bool {
		q, inflight := server.Queued(h, id)
		return st.appends.Load() == 2 && inflight > 0 && q >= server.MaxQueued
	})
	q, inflight := server.Queued(h, id)
	stored := int(st.events.Load()) - 1 // the first Append: the task and some chunks
	if q > server.MaxQueued {
		t.Errorf("%d writes queued, want at most %d", q, server.MaxQueued)
	}
	if n := int(returned.Load()); n != stored+inflight+q || n >= chunks {
		t.Errorf("%d writes returned with %d stored, %d in the stuck Append and %d queued", n, stored, inflight, q)
	}
	close(st.open)
	r := recv(t, done)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if got := len(r.res.Result.(*a2a.Task).Artifacts[0].Parts); got != chunks {
		t.Errorf("%d parts, want %d", got, chunks)
	}
}

// A task of 100,000 events streams whole and in order to a client that
// follows it live, and to one that subscribes when it is half done.
func TestHugeTaskStreams(t *testing.T) {
	t.Parallel()
	const chunks = 100_000
	half := make(chan struct{})
	h := newHandler(t, testCard(func(c *a2a.AgentCard) { c.Capabilities.Streaming = a2a.Ptr(true) }),
		func(ctx context.Context, req *server.Request, w *server.Writer) error {
			for i := range chunks {
				if err := w.ArtifactChunk(ctx, chunk(i), i > 0, i == chunks-1); err != nil {
					return err
				}
				if i == chunks/2 {
					if err := w.Flush(ctx); err != nil {
						return err
					}
					close(half)
				}
			}
			return w.Complete(ctx, "done")
		})
	// 100,000 chunks take seconds under the race detector on a busy
	// machine: a generous limit, not the usual one.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	// check reads a stream to its end: the artifact chunks from first on,
	// each once and in order, then the completion.
	check := func(name string, frames func(yield func(server.StreamEvent, error) bool), first int) error {
		next, seq := first, int64(0)
		for ev, err := range frames {
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			switch e := ev.Event.(type) {
			case *a2a.Task:
				if len(e.Artifacts) > 0 {
					next = len(e.Artifacts[0].Parts)
				}
			case *a2a.TaskArtifactUpdateEvent:
				if got, want := partText(e.Artifact.Parts[0]), "c"+strconv.Itoa(next); got != want {
					return fmt.Errorf("%s: chunk %q, want %q", name, got, want)
				}
				next++
			case *a2a.TaskStatusUpdateEvent:
				if e.Status.State == a2a.TaskStateCompleted && next != chunks {
					return fmt.Errorf("%s: completed after %d chunks, want %d", name, next, chunks)
				}
			}
			if s := seqTail(ev.ID); s <= seq {
				return fmt.Errorf("%s: frame %s after seq %d", name, ev.ID, seq)
			} else {
				seq = s
			}
		}
		if next != chunks {
			return fmt.Errorf("%s: ended after %d chunks", name, next)
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	ids := make(chan string, 1)
	wg.Go(func() {
		frames := h.SendStreamingMessage(ctx, newRequest("go"))
		errs <- check("the sender's stream", func(yield func(server.StreamEvent, error) bool) {
			for ev, err := range frames {
				if t, ok := ev.Event.(*a2a.Task); ok {
					ids <- t.ID
				}
				if !yield(ev, err) {
					return
				}
			}
		}, 0)
	})
	id := recv(t, ids)
	<-half
	wg.Go(func() {
		errs <- check("a late subscriber", h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}), -1)
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	task := getTask(t, h, ctx, id)
	if got := len(task.Artifacts[0].Parts); got != chunks {
		t.Errorf("GetTask: %d parts, want %d", got, chunks)
	}
}

// seqTail returns the seq of an SSE id "taskId:seq".
func seqTail(id string) int64 {
	for i := len(id) - 1; i >= 0; i-- {
		if id[i] == ':' {
			n, _ := strconv.ParseInt(id[i+1:], 10, 64)
			return n
		}
	}
	return 0
}

func partText(p a2a.Part) string {
	s, _ := p.Content.(a2a.Text)
	return string(s)
}

// eventsCounter is a memory store that counts the log reads.
type eventsCounter struct {
	*memory.Store
	reads atomic.Int32
}

func (s *eventsCounter) Events(ctx context.Context, scope store.Scope, id string, after int64) ([]store.Event, error) {
	s.reads.Add(1)
	return s.Store.Events(ctx, scope, id, after)
}

// TestStalledStreamCatchesUp stalls streams while the agent writes far
// more than their channels hold: they are cut off, then catch up from the
// task's recent events in memory, batch by batch, without reading the
// store, and get every chunk once and in order. With 50 streams the
// chunks outweigh what one stream keeps in memory (recentBytes): the task
// keeps more for each stream that follows it, cut off or not.
func TestStalledStreamCatchesUp(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ streams, chunks int }{{1, 1000}, {50, 3000}} {
		t.Run(fmt.Sprintf("%d streams", c.streams), func(t *testing.T) {
			t.Parallel()
			st := &eventsCounter{Store: memory.New()}
			attached, written, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
			h := newHandler(t, testCard(func(c *a2a.AgentCard) { c.Capabilities.Streaming = a2a.Ptr(true) }),
				func(ctx context.Context, req *server.Request, w *server.Writer) error {
					if err := w.Working(ctx, "working"); err != nil {
						return err
					}
					if err := w.Flush(ctx); err != nil {
						return err
					}
					<-attached
					for i := range c.chunks {
						if err := w.ArtifactChunk(ctx, chunk(i), i > 0, false); err != nil {
							return err
						}
					}
					if err := w.Flush(ctx); err != nil {
						return err
					}
					close(written)
					<-release
					return w.Complete(ctx, "done")
				}, server.WithStore(st))
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			var (
				wg       sync.WaitGroup
				finished atomic.Int32
				ids      = make(chan string, 1)
				errs     = make(chan error, c.streams)
				ready    = make(chan struct{}, c.streams)
			)
			// read reads a stream, stalled at its first frame until every
			// chunk is stored and published.
			read := func(frames iter.Seq2[server.StreamEvent, error]) error {
				next, seq, first := 0, int64(0), true
				for ev, err := range frames {
					if err != nil {
						return err
					}
					if first {
						first = false
						if task, ok := ev.Event.(*a2a.Task); ok && seq == 0 {
							select {
							case ids <- task.ID:
							default:
							}
						}
						ready <- struct{}{}
						<-written
					}
					if s := seqTail(ev.ID); s <= seq {
						return fmt.Errorf("frame %s after seq %d", ev.ID, seq)
					} else {
						seq = s
					}
					switch e := ev.Event.(type) {
					case *a2a.TaskArtifactUpdateEvent:
						if got, want := partText(e.Artifact.Parts[0]), "c"+strconv.Itoa(next); got != want {
							return fmt.Errorf("chunk %q, want %q", got, want)
						}
						if next++; next == c.chunks && finished.Add(1) == int32(c.streams) {
							close(release)
						}
					case *a2a.TaskStatusUpdateEvent:
						if e.Status.State == a2a.TaskStateCompleted && next != c.chunks {
							return fmt.Errorf("completed after %d chunks, want %d", next, c.chunks)
						}
					}
				}
				if next != c.chunks {
					return fmt.Errorf("the stream ended after %d chunks, want %d", next, c.chunks)
				}
				return nil
			}
			wg.Go(func() { errs <- read(h.SendStreamingMessage(ctx, newRequest("go"))) })
			id := recv(t, ids)
			for range c.streams - 1 {
				wg.Go(func() { errs <- read(h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id})) })
			}
			for range c.streams {
				recv(t, ready)
			}
			before := st.reads.Load() // what opening the streams read
			close(attached)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			if n := st.reads.Load() - before; n != 0 {
				t.Errorf("the streams read the store's log %d times, want none (the recent events hold what they missed)", n)
			}
		})
	}
}
