// Package taskjson encodes tasks the way the durable stores keep them: the
// snapshot, and the StreamResponse event that creates the task, from one
// encoding.
package taskjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/goa2a/a2a/a2a"
)

// Encoded is a task as a store keeps it: its snapshot and the event that
// carries it.
type Encoded struct {
	Snapshot []byte // JSON of the a2a.Task
	Payload  []byte // JSON of the a2a.StreamResponse holding it
}

// taskMember is how the JSON of a StreamResponse that holds a task starts.
var taskMember = []byte(`{"task":`)

// Encode encodes task once: the event that carries it is the snapshot
// wrapped as {"task":...}, the same bytes a store's Append keeps.
func Encode(task *a2a.Task) (Encoded, error) {
	p, err := a2a.StreamResponse{Event: task}.AppendJSON(nil)
	if err != nil {
		return Encoded{}, fmt.Errorf("encoding task %q: %w", task.ID, err)
	}
	if bytes.HasPrefix(p, taskMember) && p[len(p)-1] == '}' {
		return Encoded{Snapshot: p[len(taskMember) : len(p)-1], Payload: p}, nil
	}
	snap, err := json.Marshal(task)
	if err != nil {
		return Encoded{}, fmt.Errorf("encoding task %q: %w", task.ID, err)
	}
	return Encoded{Snapshot: snap, Payload: p}, nil
}

// EncodeAll encodes tasks, on every CPU when they are many.
func EncodeAll(tasks []*a2a.Task) ([]Encoded, error) {
	enc := make([]Encoded, len(tasks))
	workers := min(runtime.GOMAXPROCS(0), len(tasks)/256+1)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	per := (len(tasks) + workers - 1) / workers
	for w := range workers {
		wg.Go(func() {
			for i := w * per; i < min((w+1)*per, len(tasks)); i++ {
				if enc[i], errs[w] = Encode(tasks[i]); errs[w] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	return enc, errors.Join(errs...)
}
