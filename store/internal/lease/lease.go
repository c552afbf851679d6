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
	"context"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goa2a/a2a/internal/uuid"
)

// DefaultTTL is how long a runner's heartbeat stays valid. Stores renew it
// every TTL/3.
const DefaultTTL = 30 * time.Second

// Runner is one process's registration with a store.
type Runner struct {
	// ID is random, then "@" and the runner's name (see Self), so that
	// whoever finds the runner's tasks orphaned can say which process
	// left them.
	ID string
	// Host names the process table the PID belongs to: the host name,
	// and on Linux the kernel's boot id and the PID namespace, so that
	// containers sharing a host name (host networking, every one called
	// localhost) never judge each other by PIDs they cannot see.
	Host string
	PID  int
}

// Self returns a new runner for this process, called name (by default
// the host name and the process id, "web-1:4242"). Each store opened by
// the process gets its own id.
func Self(name string) Runner {
	return Runner{ID: uuid.New() + "@" + NameOrDefault(name), Host: hostIdentity(), PID: os.Getpid()}
}

// NameOrDefault returns name, or when it is empty the default name of
// this process: its host name and process id, as HOST:PID.
func NameOrDefault(name string) string {
	if name != "" {
		return name
	}
	host, _ := os.Hostname()
	return host + ":" + strconv.Itoa(os.Getpid())
}

// Name returns the name of the runner with the given id, and "" for an id
// of a release that named no runner.
func Name(id string) string {
	_, name, _ := strings.Cut(id, "@")
	return name
}

// hostIdentity is the host name, plus where available the boot id and the
// PID namespace of this process.
func hostIdentity() string {
	id, _ := os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/random/boot_id"); err == nil {
		id += "/" + strings.TrimSpace(string(b))
	}
	if ns, err := os.Readlink("/proc/self/ns/pid"); err == nil {
		id += "/" + ns
	}
	return id
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

// Renew calls each step every ttl/3 (at most once a millisecond), each
// bounded by ttl/3, until ctx is done, and reports each step's failure to
// failed unless ctx ended meanwhile. The SQL stores renew their heartbeat
// with it (and PostgreSQL compacts its task counts).
func Renew(ctx context.Context, ttl time.Duration, failed func(step int, err error), steps ...func(context.Context) error) {
	every := max(ttl/3, time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for i, step := range steps {
			sctx, cancel := context.WithTimeout(ctx, every)
			err := step(sctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				failed(i, err)
			}
		}
	}
}
