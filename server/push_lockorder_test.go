package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/server"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// nopPusher is a Pusher that does nothing; a Handler with one takes the
// live task's lock in CreateTaskPushNotificationConfig.
type nopPusher struct{}

func (nopPusher) Appended(store.Scope, string, int64)                  {}
func (nopPusher) Deleted(context.Context, store.Scope, string, string) {}

// gatedPutStore holds PutPushConfig of the config with id gateID until
// release is closed, after closing entered.
type gatedPutStore struct {
	*memory.Store
	gateID  string
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *gatedPutStore) PutPushConfig(ctx context.Context, scope store.Scope, cfg *a2a.TaskPushNotificationConfig) error {
	if cfg.ID == s.gateID && s.armed.CompareAndSwap(true, false) {
		close(s.entered)
		<-s.release
	}
	return s.Store.PutPushConfig(ctx, scope, cfg)
}

const lockOrderChildEnv = "A2A_TEST_LOCKORDER_CHILD"

// TestPushConfigLockOrder: CreateTaskPushNotificationConfig and a
// SendMessage continuing the same task with a push config, run together,
// must not deadlock. They did: the first took the push-config stripe lock
// and then, with a Pusher, the task's lock; the second the task's lock and
// then the stripe. The scenario runs in a child process, since a deadlock
// there would hold a package-wide stripe lock for good.
func TestPushConfigLockOrder(t *testing.T) {
	if os.Getenv(lockOrderChildEnv) == "1" {
		lockOrderScenario()
		return
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestPushConfigLockOrder$", "-test.count=1")
	cmd.Env = append(os.Environ(), lockOrderChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the scenario failed (%v):\n%s", err, out)
	}
}

// lockOrderScenario exits the process with status 3 on a deadlock.
func lockOrderScenario() {
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
		os.Exit(3)
	}
	st := &gatedPutStore{Store: memory.New(), gateID: "b", entered: make(chan struct{}), release: make(chan struct{})}
	h, err := server.NewHandler(testCard(), server.AgentFunc(scripted), server.WithStore(st), server.WithPusher(nopPusher{}))
	if err != nil {
		fail("NewHandler: %v", err)
	}
	ctx, cancel := context.WithTimeout(v1(context.Background()), 20*time.Second)
	defer cancel()
	res, err := h.SendMessage(ctx, newRequest("input"))
	if err != nil {
		fail("SendMessage: %v", err)
	}
	task, ok := res.Result.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateInputRequired {
		fail("want an input-required task, got %#v", res.Result)
	}

	st.armed.Store(true)
	created := make(chan error, 1)
	go func() {
		_, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "b", URL: "https://example.com/b"})
		created <- err
	}()
	<-st.entered // B holds the stripe lock of the task

	sent := make(chan error, 1)
	go func() {
		req := continueRequest(task.ID, "input")
		req.Configuration = &a2a.SendMessageConfiguration{
			TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{ID: "a", URL: "https://example.com/a"},
		}
		_, err := h.SendMessage(ctx, req)
		sent <- err
	}()
	// Wait until A holds the task's lock and waits for the stripe lock.
	deadline := time.Now().Add(10 * time.Second)
	for !goroutineIn("server.(*Handler).lockPushConfigs", "server.(*Handler).continueTask") {
		if time.Now().After(deadline) {
			fail("SendMessage never reached lockPushConfigs")
		}
		time.Sleep(time.Millisecond)
	}
	close(st.release)

	timeout := time.After(5 * time.Second)
	for range 2 {
		select {
		case err := <-created:
			if err != nil {
				fail("CreateTaskPushNotificationConfig: %v", err)
			}
		case err := <-sent:
			if err != nil {
				fail("SendMessage: %v", err)
			}
		case <-timeout:
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			fail("deadlock: CreateTaskPushNotificationConfig and SendMessage with a push config on the same task did not return within 5s\n%s", buf)
		}
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer ccancel()
	h.Close(cctx)
}

// goroutineIn reports whether some goroutine's stack holds every one of
// frames.
func goroutineIn(frames ...string) bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		all := true
		for _, f := range frames {
			if !strings.Contains(g, f) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}
