package store

import (
	"strconv"
	"strings"
)

// EventID is the id of a task's event everywhere it leaves the server: the
// SSE id of a stream frame (which a client sends back as Last-Event-ID to
// resume after it) and the delivery id of a push notification. It is
// "<task id>:<seq>".
func EventID(taskID string, seq int64) string {
	return taskID + ":" + strconv.FormatInt(seq, 10)
}

// ParseEventID reads an [EventID]: the task id and a seq of at least 1. The
// seq follows the last colon, so that a task id holding one (ids are the
// server's, but an imported task's may be anything) still parses.
func ParseEventID(id string) (taskID string, seq int64, ok bool) {
	i := strings.LastIndexByte(id, ':')
	if i < 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(id[i+1:], 10, 64)
	if err != nil || seq < 1 {
		return "", 0, false
	}
	return id[:i], seq, true
}
