package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/goa2a/a2a/store"
)

// The change feed. Every commit of Appends notifies the store's channel
// (writer.go); Follow LISTENs to it on one connection of the store's own,
// opened with the first follower and kept until Close, whatever the number
// of followers, and hands each line of each notification to them. The
// connection is not one of the pool's: it waits for notifications all its
// life. When it breaks, the listener connects again (100 ms, doubling up
// to 5 s between attempts) and, once it LISTENs again, sends a resync
// (store.Change with no task id): what was committed meanwhile was heard
// by nobody. It sends one after its first LISTEN too, for the commits
// between Follow and then.

// Follow implements [store.Feed]: fn hears of the Appends of every process
// that shares the schema, this one's included, as their transactions
// commit.
func (s *Store) Follow(fn func(store.Change)) (stop func()) {
	stop = s.feed.Follow(fn)
	s.listenOnce.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		s.stopListen = cancel
		go s.listen(ctx)
	})
	return stop
}

// Listening reports whether the store's change feed is connected: when it
// is not, other processes' Appends reach this one's readers only by their
// slow poll. A store nobody follows does not listen.
func (s *Store) Listening() bool { return s.listening.Load() }

// listen runs the feed's connection until ctx ends.
func (s *Store) listen(ctx context.Context) {
	defer close(s.listenDone)
	cfg := s.pool.Config().ConnConfig.Copy()
	listen := "LISTEN " + pgx.Identifier{s.channel}.Sanitize()
	const minDelay, maxDelay = 100 * time.Millisecond, 5 * time.Second
	delay := minDelay
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			if _, err = conn.Exec(ctx, listen); err != nil {
				conn.Close(context.Background())
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("change feed: cannot listen; retrying", "channel", s.channel, "in", delay, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
			delay = min(2*delay, maxDelay)
			continue
		}
		delay = minDelay
		s.listening.Store(true)
		s.feed.Send(store.Change{}) // resync: nobody heard what came before
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("change feed: connection lost; listening again", "channel", s.channel, "err", err)
				}
				break
			}
			s.feed.Send(parseChanges(n.Payload)...)
		}
		s.listening.Store(false)
		conn.Close(context.Background())
	}
}

// parseChanges reads a notification's payload: lines "<task id>:<seq>"
// separated by "\n", task ids possibly with colons (each line splits at
// its last one). Lines that do not parse are skipped.
func parseChanges(payload string) []store.Change {
	out := make([]store.Change, 0, strings.Count(payload, "\n")+1)
	for line := range strings.SplitSeq(payload, "\n") {
		i := strings.LastIndexByte(line, ':')
		if i <= 0 {
			continue
		}
		seq, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil || seq < 1 {
			continue
		}
		out = append(out, store.Change{TaskID: line[:i], Seq: seq})
	}
	return out
}
