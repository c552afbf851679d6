package deployer

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// approval is the hand-off between the execution that waits in
// auth-required and the operator's POST /approve/{taskId}.
//
// The entry lives in [Agent.pending] from before the task asks for
// approval until the waiting execution returns. An operator claims it
// (once: a second approval finds it claimed and gets 404), then hands the
// waiter a reply channel on approve; the waiter moves the task back to
// working and answers with the result, so the operator's response says
// whether the deploy really resumed. done is closed when the waiting
// execution returns, which releases an operator still trying to hand over
// an approval to a waiter that gave up (its task was canceled).
type approval struct {
	claimed bool // guarded by Agent.mu
	approve chan chan<- error
	done    chan struct{}
}

var errPending = errors.New("deployer: the task already waits for an approval")

// register records that the task of id waits for an approval.
func (a *Agent) register(id string) (*approval, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.pending[id] != nil {
		return nil, errPending
	}
	return a.registerLocked(id), nil
}

// registerLocked is register for a caller that holds a.mu and has checked
// that no entry exists.
func (a *Agent) registerLocked(id string) *approval {
	if a.pending == nil {
		a.pending = make(map[string]*approval)
	}
	ap := &approval{approve: make(chan chan<- error), done: make(chan struct{})}
	a.pending[id] = ap
	return ap
}

// unregister removes the entry of the waiting execution that is returning.
func (a *Agent) unregister(id string, ap *approval) {
	a.mu.Lock()
	if a.pending[id] == ap {
		delete(a.pending, id)
	}
	a.mu.Unlock()
	close(ap.done)
}

// claim marks the waiting entry of id as approved by one operator, or
// returns nil when no deploy of that id waits for an approval.
func (a *Agent) claim(id string) *approval {
	a.mu.Lock()
	defer a.mu.Unlock()
	ap := a.pending[id]
	if ap == nil || ap.claimed {
		return nil
	}
	ap.claimed = true
	return ap
}

func (a *Agent) unclaim(ap *approval) {
	a.mu.Lock()
	ap.claimed = false
	a.mu.Unlock()
}

// Approve resumes the deploy of task id that waits for an operator, as POST
// /approve/{id} does. It reports false when no deploy of that id waits: the
// id is unknown, the task already ended (for example it was canceled), or
// another approval came first. It returns once the task is back in working.
func (a *Agent) Approve(id string) bool {
	ok, _ := a.approve(nil, id)
	return ok
}

// approve hands an approval to the waiter of id. A non-nil stop (the
// operator's request ending) abandons the hand-off; aborted reports that.
func (a *Agent) approve(stop <-chan struct{}, id string) (ok, aborted bool) {
	ap := a.claim(id)
	if ap == nil {
		return false, false
	}
	answer := make(chan error, 1)
	select {
	case ap.approve <- answer:
	case <-ap.done:
		return false, false
	case <-stop:
		a.unclaim(ap)
		return false, true
	}
	return <-answer == nil, false
}

// ApprovalHandler returns the operator's approval endpoint, to be mounted
// at [ApprovePath] on the server whose base is [Agent.BaseURL]. It stands
// for an approval channel outside A2A, as the kit's does:
//
//   - POST /approve/{taskId} resumes the deploy that waits for approval and
//     answers 200 with {"approved": true, "taskId": ...} once the task is
//     back in working;
//   - it answers 404 when no deploy of that id waits for approval (unknown
//     id, finished or canceled task, or already approved);
//   - any other method gets 405.
//
// Like the kit's, the endpoint checks no credentials, so anyone who can
// reach it and knows the task id can approve. A real deployment puts its
// operators' authentication in front of it.
func (a *Agent) ApprovalHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := strings.CutPrefix(r.URL.Path, ApprovePath)
		if !ok || id == "" || strings.Contains(id, "/") {
			writeJSON(w, http.StatusNotFound, map[string]any{"error": "not found; approve with POST " + ApprovePath + "{taskId}"})
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": "approve with POST"})
			return
		}
		approved, aborted := a.approve(r.Context().Done(), id)
		switch {
		case aborted:
			return // the operator is gone
		case !approved:
			writeJSON(w, http.StatusNotFound, map[string]any{"approved": false, "taskId": id, "error": "no deploy waits for approval as this task"})
		default:
			writeJSON(w, http.StatusOK, approvedBody{Approved: true, TaskID: id})
		}
	})
}

// approvedBody keeps the kit's member order.
type approvedBody struct {
	Approved bool   `json:"approved"`
	TaskID   string `json:"taskId"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
