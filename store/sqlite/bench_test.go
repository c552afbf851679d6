package sqlite_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/sqlite"
)

// BenchmarkAppendParallel: each operation creates a task and appends three
// status events to it, from parallel goroutines (GOMAXPROCS of them, or 16
// per GOMAXPROCS, as a server with many tasks running), so one op is four
// Appends. It reports commits per append, which group commit keeps below 1.
func BenchmarkAppendParallel(b *testing.B) {
	for _, d := range []sqlite.Durability{sqlite.ProcessCrash, sqlite.PowerLoss} {
		for _, p := range []int{1, 16} {
			b.Run(fmt.Sprintf("%v/p%d", d, p), func(b *testing.B) {
				benchmarkAppend(b, d, p)
			})
		}
	}
}

func benchmarkAppend(b *testing.B, d sqlite.Durability, parallelism int) {
	s := openStore(b, newPath(b), sqlite.Options{Durability: d})
	var n atomic.Int64
	before := s.Stats()
	b.ReportAllocs()
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			task := newTask(fmt.Sprintf("task-%d", n.Add(1)), a2a.TaskStateSubmitted, 0)
			if err := s.Append(b.Context(), scope, task.ID, 0, []store.Event{{Seq: 1, Payload: task}}, task); err != nil {
				b.Error(err)
				return
			}
			for k := range 3 {
				var err error
				if task, err = step(b.Context(), s, scope, task, int64(k+1), a2a.TaskStateWorking, "m"); err != nil {
					b.Error(err)
					return
				}
			}
		}
	})
	b.StopTimer()
	st := s.Stats()
	if appends := st.Appends - before.Appends; appends > 0 {
		b.ReportMetric(float64(st.Commits-before.Commits)/float64(appends), "commits/append")
	}
}

// BenchmarkAppendNewTasks is the store's share of a blocking SendMessage:
// each operation is one Append that creates a task and ends it (its
// creation, a working status, an artifact and the completed status, with
// their Data encoded as the server encodes them), with random task and
// context ids, from 32 goroutines per GOMAXPROCS. It reports commits per
// append.
func BenchmarkAppendNewTasks(b *testing.B) {
	s := openStore(b, newPath(b), sqlite.Options{})
	before := s.Stats()
	w0, cpu0 := wchar(b), cpuTime()
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id, ctxID := rand.Text(), rand.Text()
			now := time.Now()
			task := &a2a.Task{ID: id, ContextID: ctxID,
				Status:  a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: a2a.TimestampOf(now)},
				History: []a2a.Message{*a2a.NewTextMessage(a2a.RoleUser, rand.Text(), "hello, agent")}}
			working := a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: a2a.TimestampOf(now)}
			art := a2a.Artifact{ArtifactID: rand.Text(), Parts: []a2a.Part{a2a.TextPart("hello, agent")}}
			done := a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: a2a.TimestampOf(now)}
			evs := []store.Event{
				{Seq: 1, Payload: task},
				{Seq: 2, Payload: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: ctxID, Status: working}},
				{Seq: 3, Payload: &a2a.TaskArtifactUpdateEvent{TaskID: id, ContextID: ctxID, Artifact: art, LastChunk: true}},
				{Seq: 4, Payload: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: ctxID, Status: done}},
			}
			for i := range evs {
				data, err := evs[i].Encode()
				if err != nil {
					b.Error(err)
					return
				}
				evs[i].Data = data
			}
			final := *task
			final.Status, final.Artifacts = done, []a2a.Artifact{art}
			if err := s.Append(b.Context(), scope, id, 0, evs, &final); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	st := s.Stats()
	if appends := st.Appends - before.Appends; appends > 0 {
		b.ReportMetric(float64(st.Commits-before.Commits)/float64(appends), "commits/append")
		b.ReportMetric(float64(wchar(b)-w0)/float64(appends), "wbytes/append")
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(appends), "cpu-µs/append")
	}
}

// cpuTime returns the CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// wchar returns the bytes the process has written with system calls.
func wchar(b *testing.B) int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
