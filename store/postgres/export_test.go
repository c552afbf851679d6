package postgres

import "github.com/goa2a/a2a/store"

// Crash simulates the death of the store's process: the heartbeat stops
// and the connections close, but the runner row stays behind, as after
// kill -9. Close does nothing afterwards.
func (s *Store) Crash() {
	s.closeOnce.Do(func() {
		s.stop()
		<-s.done
		if s.ownsPool {
			s.pool.Close()
		}
	})
}

// RunnerID returns the id the store registered as a runner.
func (s *Store) RunnerID() string { return s.self.ID }

// ListSQL returns the statement List runs for q, and its arguments.
func (s *Store) ListSQL(scope store.Scope, q store.ListQuery) (string, []any) {
	return s.listSQL(scope, q)
}
