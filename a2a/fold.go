package a2a

import "slices"

// Apply returns the task after ev, the next event of its log: a status
// update, an artifact update or a client message that continued the task.
// t is not modified. Any other event (the *Task that creates a task) leaves
// it as it is.
//
// The status message moves into history only when a newer status replaces
// it (A2A §3.7). An artifact update with Append adds its parts to the
// artifact of the same id (and takes its name and description when set);
// without Append it replaces that artifact; an unknown id starts a new one.
//
// This is the one place where a log folds into a task: the server folds
// what it appends, and stores that keep a snapshot of an older seq fold the
// events after it when they read a task.
//
// Snapshots share backing arrays: the result may extend t's history and
// artifact parts in place, past their length, which older snapshots never
// look at. This keeps a long stream of chunks linear instead of quadratic,
// and asks one thing of callers: fold a log forward, never branch it. Apply
// at most one event to a given snapshot (its successor is the snapshot to
// apply the next one to); to derive two different snapshots from one, give
// Apply a copy whose slices are clipped (slices.Clip) for the second.
func (t *Task) Apply(ev Event) *Task {
	n := *t
	switch e := ev.(type) {
	case *TaskStatusUpdateEvent:
		if t.Status.Message != nil {
			n.History = append(t.History, *t.Status.Message)
		}
		n.Status = e.Status
	case *TaskArtifactUpdateEvent:
		i := slices.IndexFunc(t.Artifacts, func(a Artifact) bool { return a.ArtifactID == e.Artifact.ArtifactID })
		switch {
		case i < 0:
			n.Artifacts = append(t.Artifacts, e.Artifact)
		case e.Append:
			n.Artifacts = slices.Clone(t.Artifacts)
			a := &n.Artifacts[i]
			a.Parts = append(a.Parts, e.Artifact.Parts...)
			if e.Artifact.Name != "" {
				a.Name = e.Artifact.Name
			}
			if e.Artifact.Description != "" {
				a.Description = e.Artifact.Description
			}
		default:
			n.Artifacts = slices.Clone(t.Artifacts)
			n.Artifacts[i] = e.Artifact
		}
	case *Message:
		n.History = append(t.History, *e)
	}
	return &n
}
