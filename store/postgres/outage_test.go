//go:build unix

package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/goa2a/a2a/a2a"
	"github.com/goa2a/a2a/internal/pgtest"
	"github.com/goa2a/a2a/store"
	"github.com/goa2a/a2a/store/postgres"
)

// TestOutage stops a PostgreSQL server of the test's own under an open
// store: every operation then fails with an error that wraps
// store.ErrUnavailable (and that a2a.AsError answers Unavailable, with a
// retry delay), Probe says so too, and once the server is back the same
// store serves again.
func TestOutage(t *testing.T) {
	t.Parallel()
	srv := pgtest.Start(t)
	ctx := t.Context()
	s, err := postgres.Open(ctx, srv.DSN(), postgres.Options{})
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, srv.Log())
	}
	t.Cleanup(func() { s.Close() })
	task := newTask("outage-1", a2a.TaskStateWorking, 0)
	create(t, s, scopeA, task)
	if err := s.Probe(ctx); err != nil {
		t.Fatalf("Probe with the server up: %v", err)
	}

	srv.Stop(t)
	next := withStatus(task, a2a.TaskStateCompleted, "done")
	ops := []struct {
		name string
		call func(context.Context) error
	}{
		{"Get", func(ctx context.Context) error { _, _, err := s.Get(ctx, scopeA, task.ID); return err }},
		{"Append", func(ctx context.Context) error {
			return s.Append(ctx, scopeA, task.ID, 1, []store.Event{statusEvent(2, next)}, next)
		}},
		{"create", func(ctx context.Context) error {
			t2 := newTask("outage-2", a2a.TaskStateSubmitted, 1)
			return s.Append(ctx, scopeA, t2.ID, 0, []store.Event{{Seq: 1, Payload: t2}}, t2)
		}},
		{"List", func(ctx context.Context) error {
			_, err := s.List(ctx, scopeA, store.ListQuery{Limit: 10})
			return err
		}},
		{"Events", func(ctx context.Context) error { _, err := s.Events(ctx, scopeA, task.ID, 0); return err }},
		{"GetPushConfig", func(ctx context.Context) error { _, err := s.GetPushConfig(ctx, scopeA, task.ID, "p"); return err }},
		{"Orphans", func(ctx context.Context) error {
			_, err := s.Orphans(ctx, []a2a.TaskState{a2a.TaskStateWorking}, 10)
			return err
		}},
		{"Message", func(ctx context.Context) error { _, err := s.Message(ctx, scopeA, "m-1"); return err }},
		{"PutReply", func(ctx context.Context) error {
			return s.PutReply(ctx, scopeA, store.MessageRecord{ID: "m-2", Digest: []byte{1}, Reply: []byte(`{}`)})
		}},
		{"ForgetMessages", func(ctx context.Context) error { _, err := s.ForgetMessages(ctx, time.Now(), 10); return err }},
		{"Probe", s.Probe},
		{"Check", s.Check},
	}
	for _, op := range ops {
		// Twice: the first call may meet a pooled connection the stop
		// broke, the second has to connect.
		for i := range 2 {
			octx, cancel := context.WithTimeout(ctx, time.Minute)
			err := op.call(octx)
			cancel()
			if !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("%s (call %d) with the server stopped: %v, want an error that wraps store.ErrUnavailable", op.name, i+1, err)
				continue
			}
			e := a2a.AsError(err)
			if e.Code != a2a.CodeUnavailable || e.RetryAfter <= 0 {
				t.Errorf("%s: a2a.AsError gives %v (retry after %v), want Unavailable with a retry delay", op.name, e, e.RetryAfter)
			}
		}
	}

	srv.Start(t)
	// The pool connects again; a connection it still holds from before
	// the stop fails once, as an outage.
	deadline := time.Now().Add(time.Minute)
	for {
		err := s.Probe(ctx)
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("Probe after the restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		err := s.Append(ctx, scopeA, task.ID, 1, []store.Event{statusEvent(2, next)}, next)
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("Append after the restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	got, seq, err := s.Get(ctx, scopeA, task.ID)
	if err != nil || seq != 2 || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("Get after the restart: %v at %d, %v; want completed at 2", got, seq, err)
	}
	// Errors of the request stay what they were.
	if _, _, err := s.Get(ctx, scopeA, "missing"); !errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Get of a missing task: %v, want ErrNotFound alone", err)
	}
	err = s.Append(ctx, scopeA, task.ID, 1, []store.Event{statusEvent(2, next)}, next)
	if !errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Append at an old seq: %v, want ErrConflict alone", err)
	}
}

// TestClassify checks which errors count as an outage.
func TestClassify(t *testing.T) {
	t.Parallel()
	opErr := &net.OpError{Op: "dial", Net: "unix", Err: errors.New("connect: no such file or directory")}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&pgconn.PgError{Code: "57P01", Severity: "FATAL"}, true},
		{&pgconn.PgError{Code: "57P03"}, true},
		{&pgconn.PgError{Code: "08006"}, true},
		{&pgconn.PgError{Code: "53300"}, true},
		{&pgconn.PgError{Code: "25006"}, true},
		{fmt.Errorf("postgres: connecting: %w", &pgconn.ConnectError{}), true},
		{fmt.Errorf("reading: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("reading: %w", pgconn.ErrConnClosed), true},
		{opErr, true},
		{&pgconn.PgError{Code: "23505"}, false}, // unique violation
		{&pgconn.PgError{Code: "28P01"}, false}, // wrong password
		{&pgconn.PgError{Code: "42P01"}, false}, // no such table
		{&pgconn.PgError{Code: "57014"}, false}, // statement timeout
		{context.Canceled, false},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{errors.New("postgres: bad data"), false},
		{postgres.ErrClosed, false},
	} {
		if got := postgres.Classify(c.err); errors.Is(got, store.ErrUnavailable) != c.want {
			t.Errorf("classify(%v) = %v, outage %v; want %v", c.err, got, !c.want, c.want)
		}
		if got := postgres.Classify(c.err); !errors.Is(got, c.err) {
			t.Errorf("classify(%v) = %v, which no longer wraps it", c.err, got)
		}
	}
}
