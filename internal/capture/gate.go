package capture

import (
	"context"
	"sync"
	"time"
)

// Gate holds a paced agent (kit/testrunner's Pace hook) at one step, so a
// replay can look at a task mid-run exactly where a recording did.
type Gate struct {
	mu      sync.Mutex
	at      int // step to hold at; 0 = off
	reached chan struct{}
	release chan struct{}
}

// Arm makes the next Pace call for step hold until Open.
func (g *Gate) Arm(step int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.at, g.reached, g.release = step, make(chan struct{}), make(chan struct{})
}

// Pace is the hook to give the agent.
func (g *Gate) Pace(ctx context.Context, _ string, step int) error {
	g.mu.Lock()
	hold := g.at != 0 && g.at == step
	var reached, release chan struct{}
	if hold {
		g.at = 0
		reached, release = g.reached, g.release
	}
	g.mu.Unlock()
	if !hold {
		return nil
	}
	close(reached)
	select {
	case <-release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Reached waits up to limit for the agent to reach the armed step.
func (g *Gate) Reached(limit time.Duration) bool {
	g.mu.Lock()
	reached := g.reached
	g.mu.Unlock()
	select {
	case <-reached:
		return true
	case <-time.After(limit):
		return false
	}
}

// Open lets the held agent go on.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.release)
}

// KitEpoch is where the A2A 101 kit's clock starts.
var KitEpoch = time.Date(2026, 10, 6, 9, 0, 0, 0, time.UTC)

// KitTick is how far the kit's clock moves per stamp.
const KitTick = 250 * time.Millisecond

// KitClock returns a clock that stamps as the kit's does: it moves KitTick,
// then reads, so the first stamp is 09:00:00.250. Safe for concurrent use.
func KitClock() func() time.Time {
	var mu sync.Mutex
	now := KitEpoch
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(KitTick)
		return now
	}
}
