package store

import (
	"sync"
	"sync/atomic"
)

// Change is one entry of a store's change feed: the log of task TaskID now
// ends at Seq, or further. A Change with an empty TaskID is a resync: the
// feed may have missed changes (its connection to the database broke and
// is back), and every reader must look at the logs it follows again.
type Change struct {
	TaskID string
	Seq    int64
}

// Feed is implemented by stores that tell their readers when a task's log
// grows, so that a reader (a stream, a blocking wait) in any process that
// shares the store follows a task that another process appends to, without
// polling: it is woken by the feed and reads what it missed with Events.
// store/memory and store/sqlite feed the Appends made through the same
// Store value; store/postgres those of every process on the schema,
// through LISTEN/NOTIFY on one connection per Store.
//
// A Change is a wake-up, not a transport: it tells where a log ends, and
// the reader reads the events. Changes arrive after the Append they report
// is durable and visible to Events. They may come more than once, and a
// reader that knows a later seq ignores an earlier one.
type Feed interface {
	// Follow calls fn with each change until stop is called; stop
	// returns once fn is no longer running and will not be called again.
	// fn is called from one goroutine at a time and must not block or
	// call the store: it hands the work to another goroutine.
	Follow(fn func(Change)) (stop func())
}

// Followers is a set of Follow callbacks: a helper for stores that feed
// changes from one goroutine at a time (their writer). The zero value is
// ready to use.
type Followers struct {
	mu   sync.Mutex // held while calling: Follow's stop waits on it
	fns  map[int]func(Change)
	next int
	n    atomic.Int32 // len(fns), read without the lock by Active
}

// Follow adds fn; the returned stop removes it.
func (f *Followers) Follow(fn func(Change)) (stop func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fns == nil {
		f.fns = make(map[int]func(Change))
	}
	id := f.next
	f.next++
	f.fns[id] = fn
	f.n.Store(int32(len(f.fns)))
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			delete(f.fns, id)
			f.n.Store(int32(len(f.fns)))
			f.mu.Unlock()
		})
	}
}

// Send calls every follower with each change, in order.
func (f *Followers) Send(changes ...Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fn := range f.fns {
		for _, c := range changes {
			fn(c)
		}
	}
}

// Active reports whether anybody follows; a store may skip building the
// changes of a commit when nobody does. It needs no lock, and may be out
// of date by a Follow in flight, which then misses at most that commit:
// readers that start to follow read the log once after Follow returns.
func (f *Followers) Active() bool { return f.n.Load() > 0 }
