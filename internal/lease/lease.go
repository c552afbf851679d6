// Package lease identifies the process that writes to a durable store, so
// that another process can tell, after a crash, which unfinished tasks
// nobody runs any more.
//
// Every open store registers a runner: a random id, the host name, the
// process id and a heartbeat it renews. A runner is dead when its
// heartbeat is older than the lease, or, sooner, when it ran on this host
// and its process is gone: a server restarted after kill -9 recovers its
// tasks at once instead of waiting for the lease to run out.
package lease

import (
	"os"
	"time"

	"github.com/goa2a/a2a/internal/uuid"
)

// DefaultTTL is how long a runner's heartbeat stays valid. Stores renew it
// every TTL/3.
const DefaultTTL = 30 * time.Second

// Runner is one process's registration with a store.
type Runner struct {
	ID   string
	Host string
	PID  int
}

// Self returns a new runner for this process. Each store opened by the
// process gets its own id.
func Self() Runner {
	host, _ := os.Hostname()
	return Runner{ID: uuid.New(), Host: host, PID: os.Getpid()}
}

// Dead reports whether runner r, seen with heartbeat hb, is certainly no
// longer running at time now. self is the caller's own runner, never dead.
func Dead(r Runner, hb time.Time, self Runner, ttl time.Duration, now time.Time) bool {
	if r.ID == self.ID {
		return false
	}
	if now.Sub(hb) > ttl {
		return true
	}
	// Same host: the process table is authoritative. A runner of our own
	// process under another id (a store opened twice) is alive.
	return r.Host == self.Host && r.PID != self.PID && !processExists(r.PID)
}
