package push_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/push"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/memory"
)

// claimHookStore runs onClaim (once, when set) after ClaimPush has claimed
// and before it returns the jobs: the moment at which another goroutine's
// DeleteTaskPushNotificationConfig can run in a real server.
type claimHookStore struct {
	*memory.Store
	onClaim atomic.Pointer[func([]store.PushJob)]
}

func (s *claimHookStore) ClaimPush(ctx context.Context, now time.Time, lease time.Duration, limit int, skip ...store.Scope) ([]store.PushJob, error) {
	jobs, err := s.Store.ClaimPush(ctx, now, lease, limit, skip...)
	if f := s.onClaim.Load(); f != nil && len(jobs) > 0 {
		(*f)(jobs)
	}
	return jobs, err
}

// TestDeleteBetweenClaimAndFlight: a config deleted after ClaimPush
// returned it but before Deliverer.claim registered its flight must not
// be called once DeleteTaskPushNotificationConfig has returned (it was:
// Deleted found no flight, and the worker then called it).
func TestDeleteBetweenClaimAndFlight(t *testing.T) {
	t.Parallel()
	st := &claimHookStore{Store: memory.New()}
	r := newRig(t, st, newGated(0), push.WithWorkers(1))
	deleted := newHook(t, nil)
	control := newHook(t, nil)
	taskID := r.start(t, &a2a.TaskPushNotificationConfig{ID: "a-goes", URL: deleted.url()})
	if _, err := r.h.CreateTaskPushNotificationConfig(r.ctx, &a2a.TaskPushNotificationConfig{TaskID: taskID, ID: "b-stays", URL: control.url()}); err != nil {
		t.Fatal(err)
	}
	var returned atomic.Pointer[time.Time]
	hook := func(jobs []store.PushJob) {
		for _, j := range jobs {
			if j.Config.ID != "a-goes" || returned.Load() != nil {
				continue
			}
			if err := r.h.DeleteTaskPushNotificationConfig(r.ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: taskID, ID: "a-goes"}); err != nil {
				t.Error(err)
			}
			now := time.Now()
			returned.Store(&now)
		}
	}
	st.onClaim.Store(&hook)
	r.agent.allow(1) // working
	// One worker: the config claimed first ("a-goes" sorts first) is
	// done with before "b-stays" is served.
	control.waitFor(t, 1)
	at := returned.Load()
	if at == nil {
		t.Fatal("the deleted config was never claimed")
	}
	for i, x := range deleted.got() {
		if x.at.After(*at) {
			t.Errorf("notification %d reached the deleted config %v after DeleteTaskPushNotificationConfig returned", i+1, x.at.Sub(*at))
		}
	}
	r.agent.allow(r.agent.updates() - 1)
	waitState(t, r, taskID, a2a.TaskStateCompleted)
}

// TestReplaceWhileSending: a config replaced (created again with its
// id) while its worker is calling the webhook has its claim cleared; the
// next claim, made while the worker still sends, is handed to that worker.
// The worker must take it on from where the store stands then, not from
// the claim's copy: it used to send an event again, after the events that
// followed it.
func TestReplaceWhileSending(t *testing.T) {
	t.Parallel()
	st := memory.New()
	r := newRig(t, st, newGated(1))
	release := make(chan struct{})
	k := newHook(t, func(n int, w http.ResponseWriter) bool {
		if n == 1 {
			<-release
		}
		return false
	})
	cfg := &a2a.TaskPushNotificationConfig{ID: "c", URL: k.url()}
	taskID := r.start(t, cfg)
	r.agent.allow(1) // working: the webhook call hangs
	deadline := time.Now().Add(e2eTimeout)
	for k.callsSoFar() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the webhook was never called")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := r.h.CreateTaskPushNotificationConfig(r.ctx, &a2a.TaskPushNotificationConfig{TaskID: taskID, ID: "c", URL: k.url()}); err != nil {
		t.Fatal(err)
	}
	// Wait for the claim that follows the replacement.
	for {
		s, err := st.PushState(context.Background(), store.Scope{}, taskID, "c")
		if err != nil {
			t.Fatal(err)
		}
		if !s.NextAttempt.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the replaced config was never claimed again")
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	r.agent.allow(r.agent.updates() - 1)
	waitState(t, r, taskID, a2a.TaskStateCompleted)
	want := pushed(t, st, taskID)
	k.waitFor(t, len(want))
	// Let the deliverer settle: stopping it waits for every worker.
	r.stop()
	got := k.got()
	checkBodies(t, "the replaced config", got, want)
	for i, x := range got[min(len(got), len(want)):] {
		t.Errorf("extra notification %d (%s): %s", len(want)+i+1, x.header.Get(push.DeliveryIDHeader), x.body)
	}
}

// callsSoFar counts the calls the hook has begun to handle.
func (k *hook) callsSoFar() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.calls
}

// TestRedirectToGetFailsAtOnce: a redirect the guard does not follow (a
// 302 would turn the POST into a GET) marks the config failing at once, as
// the Deliverer's doc says; it used to be retried WithMaxAttempts times.
func TestRedirectToGetFailsAtOnce(t *testing.T) {
	t.Parallel()
	st := memory.New()
	results := make(chan push.Result, 100)
	r := newRig(t, st, newGated(0), push.WithResultHook(func(res push.Result) { results <- res }))
	k := newHook(t, func(n int, w http.ResponseWriter) bool {
		w.Header().Set("Location", "/elsewhere")
		w.WriteHeader(http.StatusFound)
		return true
	})
	r.start(t, &a2a.TaskPushNotificationConfig{ID: "c", URL: k.url()})
	r.agent.allow(1)
	select {
	case res := <-results:
		if res.Err == nil || !res.Failing {
			t.Errorf("first result after a 302: attempt %d, failing %v, err %v; want the config failing at once", res.Attempt, res.Failing, res.Err)
		}
	case <-time.After(e2eTimeout):
		t.Fatal("no webhook result")
	}
	r.agent.allow(1)
}
