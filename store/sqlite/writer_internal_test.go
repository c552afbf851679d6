package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goa2a/a2a/store"
)

// TestBatchWithoutSavepoints: a batch runs without savepoints; a request
// that fails without having changed a row, with an error of the store's
// own, leaves the others be; one that fails otherwise (a write, then an
// error; or an error of SQLite) makes the batch run again, each request in
// a savepoint, and is the only one undone. The kept counts of a request
// count only if it succeeds.
func TestBatchWithoutSavepoints(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "tasks.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sc := store.Scope{Tenant: "t", Owner: "o"}
	runs := make(map[string]int)
	put := func(name string, fail error, count int64) writeFunc {
		return func(w *wtx) error {
			runs[name]++
			if errors.Is(fail, store.ErrNotFound) {
				return fail // before any write
			}
			if _, err := w.exec(s.ws.insertSecret, name, []byte(name)); err != nil {
				return err
			}
			w.addTasks(sc, count, 1)
			return fail
		}
	}
	boom := errors.New("boom")
	for _, c := range []struct {
		name   string
		state  int64
		fns    []writeFunc
		want   []error
		kept   []string
		reruns int64
	}{
		{"all succeed", 1, []writeFunc{put("a1", nil, 1), put("a2", nil, 1)}, []error{nil, nil}, []string{"a1", "a2"}, 0},
		{"own error before writing", 2, []writeFunc{put("b1", nil, 2), put("b2", store.ErrNotFound, 2), put("b3", nil, 2)},
			[]error{nil, store.ErrNotFound, nil}, []string{"b1", "b3"}, 0},
		{"other error after writing", 3, []writeFunc{put("c1", nil, 3), put("c2", boom, 3), put("c3", nil, 3)},
			[]error{nil, boom, nil}, []string{"c1", "c3"}, 1},
		{"own error after writing", 4, []writeFunc{put("d1", store.ErrConflict, 4), put("d2", nil, 4)},
			[]error{store.ErrConflict, nil}, []string{"d2"}, 1},
		{"alone", 5, []writeFunc{put("e1", boom, 5)}, []error{boom}, nil, 0},
	} {
		clear(runs)
		before := s.Stats()
		var batch []*request
		for _, fn := range c.fns {
			batch = append(batch, &request{ctx: context.Background(), fn: fn, done: make(chan error, 1)})
		}
		results := s.runBatch(batch, nil)
		for i, err := range results {
			if !errors.Is(err, c.want[i]) || (c.want[i] == nil) != (err == nil) {
				t.Errorf("%s: request %d: %v, want %v", c.name, i, err, c.want[i])
			}
		}
		var kept []string
		for _, name := range []string{"a1", "a2", "b1", "b2", "b3", "c1", "c2", "c3", "d1", "d2", "e1"} {
			if runs[name] == 0 {
				continue
			}
			var v []byte
			if err := s.rdb.QueryRowContext(t.Context(), "SELECT value FROM secrets WHERE name = ?", name).Scan(&v); err == nil {
				kept = append(kept, name)
			}
		}
		if !slices.Equal(kept, c.kept) {
			t.Errorf("%s: kept %v, want %v", c.name, kept, c.kept)
		}
		// Each case counts its tasks in a state of its own.
		var n int64
		if err := s.rdb.QueryRowContext(t.Context(), "SELECT coalesce(sum(n), 0) FROM task_counts WHERE tenant = 't' AND owner = 'o' AND state = ?",
			c.state).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != int64(len(c.kept)) {
			t.Errorf("%s: counted %d, want %d (the requests that succeeded)", c.name, n, len(c.kept))
		}
		if got := s.Stats().Reruns - before.Reruns; got != c.reruns {
			t.Errorf("%s: %d reruns, want %d", c.name, got, c.reruns)
		}
		// In a batch that ran again, the requests up to the one that
		// failed ran twice.
		if c.reruns > 0 {
			for _, name := range []string{"c1", "c2", "d1"} {
				if runs[name] != 0 && runs[name] != 2 {
					t.Errorf("%s: %s ran %d times, want 2 (the batch ran again)", c.name, name, runs[name])
				}
			}
		}
	}
}
