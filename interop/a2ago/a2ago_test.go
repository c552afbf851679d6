// Package a2ago tests goa2a against the official Go SDK
// (github.com/a2aproject/a2a-go/v2), in a module of its own so that the
// library's go.mod does not list it. The main module's interop tests run
// it (interop/a2ago_test.go).
//
// Both directions, on the three bindings: the SDK's client against our
// server (sdkclient_test.go), our client against the SDK's server
// (sdkserver_test.go). Where the SDK departs from the spec, the test says
// so where it asserts what the SDK does; docs/security.md sums them up.
package a2ago

import (
	"sync"
	"time"
)

// holdText is the message text that makes an agent, ours or theirs, start
// a task that reports working and then waits until the test opens its
// gate (then it adds an artifact and completes) or the task is canceled.
// It is how the tests get a task that is still running when they
// subscribe to it or cancel it, with no timing involved.
const holdText = "hold"

// releasedText is the text of the artifact a held task adds once its gate
// opens.
const releasedText = "released"

// callTimeout bounds each test's calls: far more than any of them needs,
// so that a hang fails the test instead of waiting for go test's timeout.
const callTimeout = time.Minute

// gates are the per-task gates of the held tasks: the agent waits on
// wait(taskID), the test calls open(taskID). Either may come first.
type gates struct{ m sync.Map } // task id -> *gate

type gate struct {
	once sync.Once
	ch   chan struct{}
}

func (g *gates) get(taskID string) *gate {
	v, _ := g.m.LoadOrStore(taskID, &gate{ch: make(chan struct{})})
	return v.(*gate)
}

// wait returns the channel that is closed when the gate of taskID opens.
func (g *gates) wait(taskID string) <-chan struct{} { return g.get(taskID).ch }

// open opens the gate of taskID; opening it again does nothing.
func (g *gates) open(taskID string) {
	gt := g.get(taskID)
	gt.once.Do(func() { close(gt.ch) })
}
